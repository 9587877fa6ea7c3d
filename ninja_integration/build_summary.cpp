// Counting one build: snapshot the store's shared counters before and after
// ninja runs, and turn the difference into one line.
#include "ninja_integration/build_summary.h"

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "cache/store.h"
#include "ninja_integration/build_counts.h"

namespace lexpack::ninja_integration {
namespace {

// Causes by how many misses each had, most first (equal counts as they were).
void most_first(std::vector<std::pair<std::string, int64_t>>* causes) {
  std::stable_sort(causes->begin(), causes->end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
}

int64_t value(const Counters& c, const std::string& name) {
  auto it = c.find(name);
  return it == c.end() ? 0 : it->second;
}

std::string plural(int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string seconds(int64_t us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", double(us) / 1e6);
  return buf;
}

}  // namespace

std::optional<Counters> read_store_counters() {
  cache::StoreOptions options;
  auto store = cache::Store::open(options);
  if (!store.ok()) {
    options.read_only = true;
    store = cache::Store::open(options);
  }
  if (!store.ok()) return std::nullopt;
  auto stats = store.value()->stats();
  if (!stats.ok()) return std::nullopt;
  return stats->counters;
}

BuildSummary summarize_build(const Counters& before, const Counters& after) {
  BuildSummary s;
  auto delta = [&](const std::string& name) { return value(after, name) - value(before, name); };
  s.hits = delta("hits");
  s.misses = delta("misses");
  s.failed = delta("compile_failed");
  s.time_saved_us = delta("time_saved_us");
  s.link_hits = delta("link_hits");
  s.link_time_saved_us = delta("link_time_saved_us");
  s.link_misses = delta("link_misses");
  for (const auto& [name, v] : after) {
    if (std::string_view(name).starts_with(kMissCausePrefix) && v - value(before, name) > 0) {
      s.miss_causes.emplace_back(name.substr(kMissCausePrefix.size()), v - value(before, name));
    }
    if (std::string_view(name).starts_with("uncacheable_"))
      s.uncacheable += v - value(before, name);
    if (std::string_view(name).starts_with("link_uncacheable_"))
      s.link_uncacheable += v - value(before, name);
  }
  most_first(&s.miss_causes);
  return s;
}

BuildSummary summarize_misses(const std::vector<std::string_view>& cause_names) {
  BuildSummary s;
  s.misses = int64_t(cause_names.size());
  std::map<std::string, int64_t, std::less<>> by_cause;
  for (std::string_view name : cause_names) ++by_cause[std::string(name)];
  s.miss_causes.assign(by_cause.begin(), by_cause.end());
  most_first(&s.miss_causes);
  return s;
}

std::string format_miss_causes(const BuildSummary& s) {
  if (s.misses == 0 || s.miss_causes.empty()) return {};
  std::string out = "lexpack: " + plural(s.misses, "miss", "misses") + ": ";
  constexpr size_t kShown = 3;  // the few files that explain most of a rebuild
  int64_t shown = 0;
  for (size_t i = 0; i < s.miss_causes.size() && i < kShown; ++i) {
    const auto& [what, n] = s.miss_causes[i];
    if (i > 0) out += ", ";
    if (what == "new") {
      out += plural(n, "new compile", "new compiles") + " (or arguments changed)";
    } else if (what == "other") {
      out += std::to_string(n) + " for other reasons (lexpack explain says which)";
    } else {
      out += std::to_string(n) + " because " + what + " changed";
    }
    shown += n;
  }
  if (s.miss_causes.size() > kShown) out += ", " + std::to_string(s.misses - shown) + " more";
  return out;
}

std::string format_link_summary(const BuildSummary& s) {
  if (s.link_steps() == 0) return {};
  return "lexpack: " + plural(s.link_steps(), "archive/link step", "archive/link steps") + ", " +
         plural(s.link_hits, "hit", "hits") + ", " + plural(s.link_misses, "miss", "misses") +
         ", " + std::to_string(s.link_uncacheable) + " uncacheable, " +
         seconds(s.link_time_saved_us) + " of link time saved";
}

std::string format_summary(const BuildSummary& s, int64_t wall_us) {
  std::string causes = format_miss_causes(s);
  if (!causes.empty()) causes += "\n";
  return causes + "lexpack: " + plural(s.compiles(), "compile", "compiles") + ", " +
         plural(s.hits, "hit", "hits") + ", " + plural(s.misses, "miss", "misses") + ", " +
         std::to_string(s.uncacheable) + " uncacheable, " + std::to_string(s.failed) + " failed, " +
         seconds(s.time_saved_us) + " of compiler CPU saved (build " + seconds(wall_us) + ")";
}

}  // namespace lexpack::ninja_integration
