// OnceMap: a key's value is computed once however many threads ask at the
// same time, and every asker gets that value; other keys are their own.
#include "base/once_map.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace lexpack::base {
namespace {

TEST(OnceMap, ThreadsAskingAtOnceWaitForOneComputation) {
  OnceMap<std::string> map;
  std::atomic<int> computed{0};
  std::vector<std::string> got(8);
  std::vector<std::thread> threads;
  for (std::string& g : got) {
    threads.emplace_back([&] {
      g = map.get("cc1plus", [&] {
        ++computed;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the others arrive meanwhile
        return std::string("digest");
      });
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(computed.load(), 1);
  for (const std::string& g : got) EXPECT_EQ(g, "digest");
  // Later asks take the kept value; another key is computed for itself.
  EXPECT_EQ(map.get("cc1plus", [] { return std::string("again"); }), "digest");
  EXPECT_EQ(map.get("cc1", [] { return std::string("other"); }), "other");
}

}  // namespace
}  // namespace lexpack::base
