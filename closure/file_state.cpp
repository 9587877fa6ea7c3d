// The file table side of the fast path: stat, compare with the recorded
// signature, and only on a mismatch read, hash and lex the file again.
#include "closure/file_state.h"

#include "base/file_util.h"
#include "closure/pch_maker.h"
#include "closure/scan_file_cache.h"
#include "lexer/scanner.h"

namespace lexpack::closure {
namespace {
constexpr std::string_view kChangedWhileRead = " changed while it was read";
}  // namespace

base::Status changed_while_read(const std::string& path) {
  return base::Status::error(path + std::string(kChangedWhileRead));
}

bool is_changed_while_read(const base::Status& status) {
  return !status.ok() && status.message().ends_with(kChangedWhileRead);
}

base::Result<FileSummary> FileStates::load(const std::string& path, const std::string& key_path,
                                           const base::StatSignature& sig) {
  if (store_) {
    if (std::optional<cache::FileRecord> rec = store_->get_file(key_path)) {
      if (rec->stat == sig && !rec->scan_result.is_zero()) {
        if (std::optional<std::string_view> blob = store_->get_blob(rec->scan_result)) {
          FileSummary s;
          if (decode_summary(*blob, &s) && s.content == rec->content) return s;
        }
      }
    }
  }
  base::Result<std::string> read = base::read_file(path);
  if (!read.ok()) return read.status();
  ++files_read_;
  base::StatSignature after;
  if (!base::stat_file(path, &after) || !(after == sig)) {
    return changed_while_read(path);
  }
  FileSummary s;
  if (shared_ && shared_->keeps_lexed()) {
    // Kept for the scan's evaluation of the TUs that enter it.
    auto lexed = std::make_shared<LexedFile>();
    lexed->stat = sig;
    lexed->bytes = std::move(read.value());
    // Scanned into the thread's reused result, then copied at its size: the
    // scanner reserves ahead, and a whole-build scan keeps every result.
    thread_local lexer::ScanResult scanned;
    lexer::scan_into(lexed->bytes, *kernel_, &scanned);
    lexed->scan = scanned;
    s = summarize(lexed->scan, cache::hash_bytes(lexed->bytes), lexed->bytes);
    shared_->put_lexed(std::move(lexed));
  } else {
    // Each thread scans into one result whose memory is reused file after file.
    thread_local lexer::ScanResult scanned;
    lexer::scan_into(*read, *kernel_, &scanned);
    s = summarize(scanned, cache::hash_bytes(*read), *read);
  }
  const cache::Hash128 content = s.content;
  if (store_ && base::signature_is_settled(sig, base::now_ns())) {
    base::Result<cache::BlobId> blob = store_->put_blob(encode_summary(s));
    if (blob.ok()) store_->put_file(key_path, cache::FileRecord{sig, content, blob.value()});
  }
  return s;
}

base::Result<std::shared_ptr<const FileSummary>> FileStates::load_shared(
    const std::string& path, const std::string& key_path, const base::StatSignature& sig) {
  if (shared_) {
    if (std::shared_ptr<const FileSummary> s = shared_->find_summary(key_path, sig)) return s;
  }
  base::Result<FileSummary> loaded = load(path, key_path, sig);
  if (!loaded.ok()) return loaded.status();
  auto s = std::make_shared<const FileSummary>(std::move(loaded.value()));
  if (shared_) shared_->put_summary(key_path, sig, s);
  return s;
}

cache::Hash128 FileStates::pch_maker(const cache::Hash128& content) const {
  return closure::pch_maker(store_, content);
}

base::Result<cache::Hash128> FileStates::content_hash(const std::string& path,
                                                      const std::string& key_path,
                                                      const base::StatSignature& sig) {
  if (store_) {
    if (std::optional<cache::FileRecord> rec = store_->get_file(key_path)) {
      if (rec->stat == sig) return rec->content;
    }
  }
  base::Result<std::string> read = base::read_file(path);
  if (!read.ok()) return read.status();
  const std::string& bytes = *read;
  ++files_read_;
  base::StatSignature after;
  if (!base::stat_file(path, &after) || !(after == sig)) {
    return changed_while_read(path);
  }
  cache::Hash128 content = cache::hash_bytes(bytes);
  if (store_ && base::signature_is_settled(sig, base::now_ns())) {
    // Keep a scan result already recorded for this content.
    cache::BlobId scan;
    if (std::optional<cache::FileRecord> rec = store_->get_file(key_path)) {
      if (rec->content == content) scan = rec->scan_result;
    }
    store_->put_file(key_path, cache::FileRecord{sig, content, scan});
  }
  return content;
}

}  // namespace lexpack::closure
