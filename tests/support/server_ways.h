// The ways an end-to-end compile reaches `lexpack server`: started as
// `lexpack`, or as `lexpack-client` (what `lexpack ninja` starts when the
// server is on), each with g++ and clang++. For suites built with
// LEXPACK_CLIENT_BIN defined ("" where the client is not built).
#pragma once

#include <gtest/gtest.h>

#include <ostream>
#include <string>

namespace lexpack::testing {

inline constexpr char kServerEnv[] = "LEXPACK_SERVER=1 LEXPACK_SERVER_IDLE=120";
inline constexpr char kClientBin[] = LEXPACK_CLIENT_BIN;
// `lexpack` itself, the front door of the full program (LEXPACK_BIN).
inline constexpr char kFrontBin[] = LEXPACK_FRONT_BIN;

struct Way {
  const char* cxx;
  bool client;  // compiles through lexpack-client
};
inline void PrintTo(const Way& w, std::ostream* os) {
  *os << w.cxx << (w.client ? " through lexpack-client" : "");
}

// Every way, for INSTANTIATE_TEST_SUITE_P(..., kAllWays, WayName).
inline const auto kAllWays = ::testing::Values(Way{"g++", false}, Way{"clang++-14", false},
                                               Way{"g++", true}, Way{"clang++-14", true});
// "gcc", "clang", "gcc_client", "clang_client".
inline std::string WayName(const ::testing::TestParamInfo<Way>& info) {
  std::string name = std::string(info.param.cxx) == "g++" ? "gcc" : "clang";
  return name + (info.param.client ? "_client" : "");
}

}  // namespace lexpack::testing
