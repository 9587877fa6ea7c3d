#ifndef UTIL_STATS_H
#define UTIL_STATS_H
#include <vector>

namespace util {
struct Summary {
  double min = 0, max = 0, mean = 0, median = 0;
};
Summary summarize(std::vector<double> values);
}  // namespace util
#endif  // UTIL_STATS_H
