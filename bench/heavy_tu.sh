# Sourced by the benchmarks that time one heavy translation unit: writes to
# $1 a C++ source that includes fifty standard headers (about 400 in all).
write_heavy_tu() {
  for h in algorithm any array atomic bitset chrono complex condition_variable deque \
           exception filesystem fstream functional future iomanip ios iostream istream \
           iterator limits list locale map memory mutex numeric optional ostream queue \
           random ratio regex set shared_mutex sstream stack stdexcept streambuf string \
           string_view system_error thread tuple type_traits typeindex unordered_map \
           unordered_set utility valarray variant vector; do
    echo "#include <$h>"
  done > "$1"
  echo 'int heavy() { std::vector<int> v{1, 2}; return int(v.size()); }' >> "$1"
}

# Writes to $1 a C++ source that includes Boost (string algorithms,
# lexical_cast, variant, optional: computed includes and deep relative
# includes, so tens of thousands of candidates are missing) plus a few
# standard headers, and one header from each of three -I dirs made beside it
# (i1, i2, i3): the TU to use with `-Ii1 -Ii2 -Ii3`.
write_boost_tu() {
  dir=$(dirname "$1")
  for i in 1 2 3; do
    mkdir -p "$dir/i$i"
    echo "#define I$i $i" > "$dir/i$i/h$i.h"
  done
  cat > "$1" <<'EOT'
#include <boost/algorithm/string.hpp>
#include <boost/lexical_cast.hpp>
#include <boost/optional.hpp>
#include <boost/variant.hpp>
#include <iostream>
#include <map>
#include <regex>
#include <string>
#include <vector>
#include "h1.h"
#include "h2.h"
#include "h3.h"
int boost_tu() {
  boost::optional<int> o = boost::lexical_cast<int>("12");
  boost::variant<int, std::string> v = std::string("x");
  return *o + I1 + I2 + I3 + int(boost::get<std::string>(v).size());
}
EOT
}
