// The remote memo's format, shared by its encoding (remote_memo.cpp) and
// the checks that take it on another machine (remote_memo_check.cpp).
// Internal to this folder.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/hash/hash.h"
#include "closure/key_relocation.h"
#include "compiler/search_list.h"

namespace lexpack::closure {

constexpr std::string_view kRemoteMemoTag = "lexpack-remote-memo-2";

constexpr uint64_t kRemoteUsesDate = 1;
constexpr uint64_t kRemoteComputedInclude = 2;
constexpr uint64_t kRemotePresenceEvaluated = 4;
constexpr uint64_t kRemoteComputedEvaluated = 8;
constexpr uint64_t kRemoteRelocated = 16;
constexpr uint8_t kRemotePresenceOnly = 1;
constexpr uint8_t kRemoteAbsolute = 2;

// A memo as read: its names whole, flags, key and search list.
struct RemoteMemoView {
  cache::Hash128 action_key;
  uint64_t flags = 0;
  compiler::SearchList list;
  struct Named {
    std::string_view name;  // into `names`
    uint8_t flags = 0;
  };
  std::vector<Named> files, probes;
  std::string names;  // every name, whole, one after the other
  // The compiler's answer to the compile's base question, when it may
  // travel (compiler/derived_search_list.h: shareable_base_answer).
  std::optional<compiler::SearchList> base_answer;
  // Set by LocalFacts::learn(): per name, in order, the facts it found for
  // it (files[0], the source, has none), kept by the facts numbered
  // `learned_by` (per facts and working directory, never reused; 0: none);
  // taking the memo with those facts then looks no name up.
  std::vector<void*> learned_files, learned_probes;
  uint64_t learned_by = 0;
};

// False when `bytes` are not a memo of this version.
bool decode_remote_memo(std::string_view bytes, RemoteMemoView* d);

// `list` with every directory named as `relocation` names paths.
compiler::SearchList named_search_list(const compiler::SearchList& list,
                                       const KeyRelocation& relocation);

// The path this machine's compiler gives a file the memo names `name`; ""
// when the name does not come back to itself here.
std::string path_here(const std::string& name, bool absolute, const KeyRelocation& relocation);

}  // namespace lexpack::closure
