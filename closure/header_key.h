// The key a header's evaluation is kept by (preprocessor::Host::file_key):
// the path as found, where in the search, and the stat signature of the
// file read. Two keys are equal only for the same file at the same place
// with the same signature.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "closure/resolution.h"

namespace lexpack::closure {

std::string header_key(const Resolution& where);

// Whether the file `key` names had settled by `now` on the file clock
// (base::signature_is_settled): false for a string header_key() did not make.
bool header_key_settled(std::string_view key, int64_t now);

}  // namespace lexpack::closure
