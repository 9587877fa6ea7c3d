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
