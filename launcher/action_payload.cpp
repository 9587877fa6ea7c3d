// Encoding and checking of the launcher's per-action payload.
#include "launcher/action_payload.h"

#include "base/byte_codec.h"
#include "base/file_util.h"
#include "closure/pch_maker.h"

namespace lexpack::launcher {

namespace {
constexpr std::string_view kPayloadFormat = "lexpack-payload-3";
// The format before a maker was kept: read as one without.
constexpr std::string_view kPayloadFormatWithoutMaker = "lexpack-payload-2";
}  // namespace

std::string encode_payload(const ActionPayload& p) {
  base::VarintWriter w;
  w.str(kPayloadFormat);
  w.u64(p.extra_files.size());
  for (const auto& f : p.extra_files) {
    w.str(f.path);
    w.u64(f.content.lo);
    w.u64(f.content.hi);
  }
  w.u64(p.present_probes.size());
  for (const std::string& path : p.present_probes) w.str(path);
  w.str(p.absent_probes);
  w.u64(p.pch_maker.lo);
  w.u64(p.pch_maker.hi);
  return w.take();
}

namespace {

// Everything but the missing candidates, which stay encoded at *absent.
bool decode_payload_head(std::string_view bytes, ActionPayload* p, std::string_view* absent) {
  base::VarintReader r(bytes);
  std::string tag;
  uint64_t n = 0;
  if (!r.str(&tag) || (tag != kPayloadFormat && tag != kPayloadFormatWithoutMaker) || !r.u64(&n) ||
      n > bytes.size()) {
    return false;
  }
  p->extra_files.resize(n);
  for (auto& f : p->extra_files) {
    if (!r.str(&f.path) || !r.u64(&f.content.lo) || !r.u64(&f.content.hi)) return false;
  }
  if (!r.u64(&n) || n > bytes.size()) return false;
  p->present_probes.resize(n);
  for (std::string& path : p->present_probes) {
    if (!r.str(&path)) return false;
  }
  uint64_t size = 0;
  if (!r.u64(&size) || size > bytes.size() - r.pos()) return false;
  *absent = bytes.substr(r.pos(), size);
  if (!r.skip(size)) return false;
  if (tag == kPayloadFormat && (!r.u64(&p->pch_maker.lo) || !r.u64(&p->pch_maker.hi))) {
    return false;
  }
  return r.done();
}

}  // namespace

bool decode_payload(std::string_view bytes, ActionPayload* p) {
  std::string_view absent;
  if (!decode_payload_head(bytes, p, &absent)) return false;
  p->absent_probes.assign(absent);
  return true;
}

namespace {

std::string check_head(const ActionPayload& p, closure::FileStates* files, const std::string& cwd) {
  for (const auto& f : p.extra_files) {
    base::StatSignature sig;
    if (!base::stat_file(f.path, &sig)) return "missing: " + f.path;
    base::Result<cache::Hash128> content =
        files->content_hash(f.path, base::absolute_path(f.path, cwd), sig);
    if (!content.ok()) return content.message();
    if (!(content.value() == f.content)) return "changed: " + f.path;
  }
  for (const std::string& path : p.present_probes) {
    base::StatSignature sig;
    if (!base::stat_file(path, &sig)) return "missing: " + path;
  }
  return {};
}

}  // namespace

std::string check_payload(const ActionPayload& p, closure::FileStates* files,
                          const std::string& cwd) {
  std::string changed = check_head(p, files, cwd);
  if (changed.empty() && !closure::AbsenceProof::check(p.absent_probes, nullptr, &changed)) {
    changed = "unreadable missing candidates";
  }
  return changed;
}

bool check_encoded_payload(std::string_view bytes, closure::FileStates* files,
                           const std::string& cwd, std::string* changed, size_t* extra_files) {
  ActionPayload p;
  std::string_view absent;
  if (!decode_payload_head(bytes, &p, &absent)) return false;
  if (extra_files) *extra_files = p.extra_files.size();
  *changed = check_head(p, files, cwd);
  return !changed->empty() || closure::AbsenceProof::check(absent, nullptr, changed);
}

cache::Hash128 payload_pch_maker(std::string_view bytes) {
  ActionPayload p;
  std::string_view absent;
  if (!decode_payload_head(bytes, &p, &absent)) return cache::Hash128();
  return p.pch_maker;
}

void note_served_pch_maker(cache::Store* store, const cache::ActionRecord& action) {
  for (const cache::ActionRecord::Output& o : action.outputs) {
    if (o.role == "object")
      closure::note_pch_maker(store, o.blob, payload_pch_maker(action.payload));
  }
}

}  // namespace lexpack::launcher
