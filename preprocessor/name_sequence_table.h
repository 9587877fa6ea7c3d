// Two sequence numbers per name for the header recorder (when a name was
// last written, and the innermost recording that has read it), in one
// open-addressed table whose names are copied once into blocks the table
// owns: recording a header's reads allocates only for a name new to the TU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

namespace lexpack::preprocessor {

class NameSequenceTable {
 public:
  struct Seqs {
    uint64_t written = 0;  // the last write's sequence number, 0: none
    uint64_t seen = 0;     // the start of the innermost recording that read it, 0: none
    // The name as kept for the whole process when a caller needs it to
    // outlive this table (empty until then).
    std::string_view kept;
  };

  // The numbers of `name`, zero for a name not met yet.
  Seqs get(std::string_view name) const;
  // The numbers of `name`, added as zeros when new; valid until the next at().
  Seqs& at(std::string_view name) { return at(name, std::hash<std::string_view>{}(name)); }
  // The same with the name's std::hash<std::string_view> given.
  Seqs& at(std::string_view name, size_t hash);
  size_t size() const { return size_; }

 private:
  struct Slot {
    size_t hash = 0;
    std::string_view name;  // in blocks_; empty data(): free
    Seqs seqs;
  };
  size_t probe(std::string_view name, size_t hash) const;
  std::string_view keep(std::string_view name);
  void grow();

  std::vector<Slot> slots_;  // a power of two long, at most 3/4 full
  size_t size_ = 0;
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_left_ = 0;
  char* block_next_ = nullptr;
};

}  // namespace lexpack::preprocessor
