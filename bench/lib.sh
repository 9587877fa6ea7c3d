# Sourced by the whole-build benchmarks (bench/server/warm.sh,
# bench/remote/run.sh): timing, medians and the generated project's sources.

now() { date +%s.%N; }
# The median of the numbers on stdin, one per line.
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# write_std_tu FILE I [LINES]: a TU of a few standard headers (and LINES,
# e.g. more includes) defining t<I>(), which every TU of a project differs in.
write_std_tu() {
  cat > "$1" <<SRC
#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>
${3:-}
std::string t$2(int n) {
  std::map<int, std::string> m;
  std::vector<int> v(n, $2);
  std::sort(v.begin(), v.end());
  std::ostringstream out;
  for (int x : v) { m[x] += std::to_string(x); out << m[x]; }
  return out.str();
}
SRC
}
