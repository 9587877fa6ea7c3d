// Encoding and checking of the launcher's per-action payload.
#include "ninja_integration/launcher/action_payload.h"

#include "base/byte_codec.h"
#include "base/file_util.h"

namespace lexpack::launcher {

namespace {
constexpr std::string_view kPayloadFormat = "lexpack-payload-1";
}

std::string encode_payload(const ActionPayload& p) {
  base::VarintWriter w;
  w.str(kPayloadFormat);
  w.u64(p.extra_files.size());
  for (const auto& f : p.extra_files) {
    w.str(f.path);
    w.u64(f.content.lo);
    w.u64(f.content.hi);
  }
  w.u64(p.extra_probes.size());
  for (const auto& e : p.extra_probes) {
    w.str(e.path);
    w.u8(e.exists ? 1 : 0);
  }
  return w.take();
}

bool decode_payload(std::string_view bytes, ActionPayload* p) {
  base::VarintReader r(bytes);
  std::string tag;
  uint64_t n = 0;
  if (!r.str(&tag) || tag != kPayloadFormat || !r.u64(&n) || n > bytes.size()) return false;
  p->extra_files.resize(n);
  for (auto& f : p->extra_files) {
    if (!r.str(&f.path) || !r.u64(&f.content.lo) || !r.u64(&f.content.hi)) return false;
  }
  if (!r.u64(&n) || n > bytes.size()) return false;
  p->extra_probes.resize(n);
  for (auto& e : p->extra_probes) {
    uint8_t exists = 0;
    if (!r.str(&e.path) || !r.u8(&exists)) return false;
    e.exists = exists;
  }
  return r.done();
}

std::string check_payload(const ActionPayload& p, closure::FileStates* files,
                          const std::string& cwd) {
  for (const auto& f : p.extra_files) {
    base::StatSignature sig;
    if (!base::stat_file(f.path, &sig)) return "missing: " + f.path;
    base::Result<cache::Hash128> content =
        files->content_hash(f.path, base::absolute_path(f.path, cwd), sig);
    if (!content.ok()) return content.message();
    if (!(content.value() == f.content)) return "changed: " + f.path;
  }
  for (const auto& e : p.extra_probes) {
    base::StatSignature sig;
    if (base::stat_file(e.path, &sig) != e.exists) {
      return (e.exists ? "missing: " : "appeared: ") + e.path;
    }
  }
  return {};
}

}  // namespace lexpack::launcher
