// Small length-prefixed binary encoding for the records above the store
// (closure and scan memos, action payloads, file summaries, identity memo):
// integers as LEB128 varints, because these records are mostly small numbers
// and paths. The store's own index records use cache/records.h instead
// (fixed width, read in place and sealed by a checksum). Readers never trust
// their input: a truncated or corrupt record reads as failure, a miss.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "base/file_stat.h"

namespace lexpack::base {

class VarintWriter {
 public:
  void u8(uint8_t v) { out_.push_back(char(v)); }
  void u64(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(char(uint8_t(v) | 0x80));
      v >>= 7;
    }
    out_.push_back(char(v));
  }
  void i64(int64_t v) { u64(uint64_t(v)); }
  void str(std::string_view s) {
    u64(s.size());
    out_.append(s);
  }
  // Room for `n` more bytes, so a large record is not regrown as it is written.
  void reserve(size_t n) { out_.reserve(out_.size() + n); }
  void raw(std::string_view s) { out_.append(s); }
  const std::string& bytes() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class VarintReader {
 public:
  explicit VarintReader(std::string_view in) : in_(in) {}
  bool u8(uint8_t* v) {
    if (pos_ >= in_.size()) return fail();
    *v = uint8_t(in_[pos_++]);
    return true;
  }
  bool u64(uint64_t* v) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= in_.size()) return fail();
      uint8_t b = uint8_t(in_[pos_++]);
      result |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) {
        *v = result;
        return true;
      }
    }
    return fail();
  }
  bool i64(int64_t* v) {
    uint64_t u;
    if (!u64(&u)) return false;
    *v = int64_t(u);
    return true;
  }
  bool str(std::string* s) {
    uint64_t n;
    if (!u64(&n) || n > in_.size() - pos_) return fail();
    s->assign(in_.substr(pos_, n));
    pos_ += n;
    return true;
  }
  // Steps over n bytes (a string read in place by the caller).
  bool skip(uint64_t n) {
    if (n > in_.size() - pos_) return fail();
    pos_ += n;
    return true;
  }
  size_t pos() const { return pos_; }
  bool done() const { return ok_ && pos_ == in_.size(); }
  bool ok() const { return ok_; }

 private:
  bool fail() {
    ok_ = false;
    return false;
  }
  std::string_view in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// A stat signature as five numbers, the one layout every record uses.
inline void write_signature(VarintWriter* w, const base::StatSignature& s) {
  w->u64(s.dev);
  w->u64(s.ino);
  w->u64(s.size);
  w->i64(s.mtime_ns);
  w->i64(s.ctime_ns);
}

inline bool read_signature(VarintReader* r, base::StatSignature* s) {
  return r->u64(&s->dev) && r->u64(&s->ino) && r->u64(&s->size) && r->i64(&s->mtime_ns) &&
         r->i64(&s->ctime_ns);
}

}  // namespace lexpack::base
