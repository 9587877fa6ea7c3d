// The header recorder's per-name sequence numbers (see name_sequence_table.h).
#include "preprocessor/name_sequence_table.h"

#include <cstring>
#include <functional>

namespace lexpack::preprocessor {
namespace {

constexpr size_t kBlock = 64 * 1024;

}  // namespace

size_t NameSequenceTable::probe(std::string_view name, size_t hash) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (!s.name.data() || (s.hash == hash && s.name == name)) return i;
  }
}

NameSequenceTable::Seqs NameSequenceTable::get(std::string_view name) const {
  if (size_ == 0) return {};
  const Slot& s = slots_[probe(name, std::hash<std::string_view>{}(name))];
  return s.name.data() ? s.seqs : Seqs{};
}

NameSequenceTable::Seqs& NameSequenceTable::at(std::string_view name, size_t hash) {
  if ((size_ + 1) * 4 > slots_.size() * 3) grow();
  Slot& s = slots_[probe(name, hash)];
  if (!s.name.data()) {
    s.hash = hash;
    s.name = keep(name);
    ++size_;
  }
  return s.seqs;
}

std::string_view NameSequenceTable::keep(std::string_view name) {
  // A name's copy is never empty-addressed, so data() tells a used slot.
  const size_t n = name.size() + 1;
  if (n > block_left_) {
    const size_t size = n > kBlock ? n : kBlock;
    blocks_.push_back(std::make_unique<char[]>(size));
    block_next_ = blocks_.back().get();
    block_left_ = size;
  }
  char* p = block_next_;
  if (!name.empty()) std::memcpy(p, name.data(), name.size());
  block_next_ += n;
  block_left_ -= n;
  return {p, name.size()};
}

void NameSequenceTable::grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 1024 : old.size() * 2, Slot{});
  const size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (!s.name.data()) continue;
    size_t i = s.hash & mask;
    while (slots_[i].name.data()) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

}  // namespace lexpack::preprocessor
