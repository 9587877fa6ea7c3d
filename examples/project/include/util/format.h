#pragma once
#include <string>
#include <string_view>

namespace util {
std::string fixed(double value, int digits);
std::string pad_right(std::string_view text, std::size_t width);
}  // namespace util
