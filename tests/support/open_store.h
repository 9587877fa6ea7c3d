// Opens a cache store in a test's directory; the test fails, and null comes
// back, when it cannot be opened.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "cache/store.h"

namespace lexpack::testing {

inline std::unique_ptr<cache::Store> open_store(const std::string& dir,
                                                cache::StoreOptions options = {}) {
  options.dir = dir;
  auto store = cache::Store::open(options);
  EXPECT_TRUE(store.ok()) << store.message();
  return store.ok() ? std::move(store.value()) : nullptr;
}

}  // namespace lexpack::testing
