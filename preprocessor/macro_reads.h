// The macro names one translation unit's evaluation looked up, as a Bloom
// filter of their hashes (macro_name_hash): a name looked up is always
// reported as read; a name never looked up is reported as read only on a
// collision (none of 60 new names on a TU of the Boost benchmark, 2 of 60
// with half the bits and two probes: bench/launcher/inert_defines.sh). A
// source edit that defines or undefines only names its last evaluation
// never read cannot change that evaluation (closure_snapshot.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace lexpack::preprocessor {

class MacroReads {
 public:
  static constexpr size_t kBits = size_t(1) << 18;  // 32 KiB
  static constexpr int kProbes = 3;

  MacroReads() : bits_(kBits / 8, '\0') {}
  // A filter kept as bytes (bits()).
  explicit MacroReads(std::string bits) : bits_(std::move(bits)) {}
  void add(size_t hash) {
    for (int k = 0; k < kProbes; ++k) set(spot(hash, k));
  }
  bool may_have_read(size_t hash) const { return may_have_read(bits_, hash); }
  // The same for the bytes of a filter (bits()); true for bytes that are
  // not one: whatever cannot be told was read.
  static bool may_have_read(std::string_view bits, size_t hash) {
    if (bits.size() != kBits / 8) return true;
    for (int k = 0; k < kProbes; ++k) {
      const size_t i = spot(hash, k);
      if (!(static_cast<unsigned char>(bits[i / 8]) & (1u << (i % 8)))) return false;
    }
    return true;
  }
  const std::string& bits() const { return bits_; }

 private:
  // The k-th bit of a name: double hashing, the step odd.
  static size_t spot(size_t hash, int k) {
    const uint64_t step = ((uint64_t(hash) * 0x9E3779B97F4A7C15ull) >> 23) | 1;
    return size_t((uint64_t(hash) + uint64_t(k) * step) % kBits);
  }
  void set(size_t i) {
    bits_[i / 8] = char(static_cast<unsigned char>(bits_[i / 8]) | (1u << (i % 8)));
  }
  std::string bits_;
};

}  // namespace lexpack::preprocessor
