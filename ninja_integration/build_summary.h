// The one line `lexpack ninja` prints after a build: what the launcher did
// for this build, from the counts its own compiles recorded (build_counts.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lexpack::ninja_integration {

using Counters = std::map<std::string, int64_t>;

struct BuildSummary {
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t uncacheable = 0;    // every "uncacheable_*" counter
  int64_t failed = 0;         // compiles that failed (never cached)
  int64_t time_saved_us = 0;  // compiler CPU time (and link time) the hits did not spend
  // Archive and link steps (ar, ranlib, driver links).
  int64_t link_hits = 0;
  int64_t link_time_saved_us = 0;  // the hits' link time when stored (wall)
  int64_t link_misses = 0;
  int64_t link_uncacheable = 0;  // every "link_uncacheable_*" counter
  // Why the compiles missed, most first: a file whose change made them miss,
  // "new" (no closure memo: first compiles, or arguments changed), "other".
  std::vector<std::pair<std::string, int64_t>> miss_causes;
  int64_t link_steps() const { return link_hits + link_misses + link_uncacheable; }
  int64_t compiles() const { return hits + misses + uncacheable + failed; }
};

// The store's counters now (the store is created if there is none yet, as
// the launcher would); nullopt when it cannot be opened.
std::optional<Counters> read_store_counters();

// The difference of two sets of counters (a build's own: from empty).
BuildSummary summarize_build(const Counters& before, const Counters& after);

// The misses' part of a summary from causes counted one by one (a build's
// record of its misses, miss_cause_name of each cause): as summarize_build
// orders them, most misses first.
BuildSummary summarize_misses(const std::vector<std::string_view>& cause_names);

// "lexpack: 12 compiles, 10 hits, 1 miss, 1 uncacheable, 0 failed, 3.4 s of compiler CPU
// saved (build 5.1 s)", after a line of the misses' causes when they are
// known: "lexpack: 84 misses: 80 because include/foo.h changed, 4 new compiles"
// The archive and link line, printed before the compile line when a build
// had such steps; empty otherwise.
std::string format_link_summary(const BuildSummary& s);

std::string format_summary(const BuildSummary& s, int64_t wall_us);
// The line naming the few causes of most of the misses ("lexpack: 84
// misses: 80 because include/foo.h changed, 4 new compiles ..."); "" when
// there were none.
std::string format_miss_causes(const BuildSummary& s);

}  // namespace lexpack::ninja_integration
