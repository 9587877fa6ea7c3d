// The closure memo's record format: the one layout every memo is written in
// and read back from, and MemoView, a memo whose paths are views, which the
// check, the union and the encoder share so that a hit builds no string.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_stat.h"
#include "cache/hash/hash.h"
#include "closure/closure_memo.h"

namespace lexpack::closure {

// A probe as stored: its name within `dir` (which base::dir_of(probe) returned).
std::string_view probe_name(std::string_view dir, std::string_view probe);

// A memo whose paths are views: into the stored bytes on a hit (no string
// built per path), or into a ClosureMemo.
struct MemoView {
  struct Dependency {
    std::string_view path;
    base::StatSignature stat;
    cache::Hash128 content;
  };
  struct ProbedDir {
    std::string_view dir;
    bool exists = false;
    bool check_each = false;
    base::StatSignature stat;
    size_t first_probe = 0;  // into probes
    size_t probe_count = 0;
  };
  std::vector<Dependency> dependencies;
  std::vector<ProbedDir> probed_dirs;
  std::vector<std::string_view> probes;  // names within their ProbedDir's dir
  std::vector<std::string_view> absent_dirs;
  // Pairs of search dirs, dropped then kept (SearchList::same_dirs).
  std::vector<std::string_view> same_dirs;
  struct Vouched {
    std::string_view ancestor;
    base::StatSignature stat;
    size_t first_dir = 0;  // into vouched_dirs
    size_t dir_count = 0;
  };
  std::vector<Vouched> vouched;
  std::vector<std::string_view> vouched_dirs;
  // Empty again, each vector keeping its room for the next memo.
  void clear() {
    dependencies.clear();
    probed_dirs.clear();
    probes.clear();
    absent_dirs.clear();
    same_dirs.clear();
    vouched.clear();
    vouched_dirs.clear();
  }
};

// The one writer of the layout decode_closure_memo() and
// check_encoded_closure_memo() read.
std::string encode_view(const MemoView& m, const cache::Hash128& action_key, bool uses_date);

// The view of a memo given field by field (its paths are views into `m`).
MemoView view_of(const ClosureMemo& m);

// The fields of encoded memo `bytes` as views into it; false when it is not
// a memo.
bool parse_view(std::string_view bytes, MemoView* out, cache::Hash128* action_key, bool* uses_date);
// The head of an encoded memo alone: its action key and whether its closure
// uses __DATE__. False when `bytes` does not start as a memo.
bool parse_head(std::string_view bytes, cache::Hash128* action_key, bool* uses_date);
// The first dependency of an encoded memo alone (its path a view into
// `bytes`). False when `bytes` does not start as a memo naming one.
bool parse_first_dependency(std::string_view bytes, MemoView::Dependency* first);

}  // namespace lexpack::closure
