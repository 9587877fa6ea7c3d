// Runs one work function on `n` threads at once, the calling thread being one
// of them, and returns when all are done: the worker pools of the scan, the
// prefetch and `lexpack warm`, which share their work through an atomic index.
#pragma once

#include <thread>
#include <vector>

namespace lexpack::base {

template <typename F>
void run_on_threads(int n, F& work) {
  std::vector<std::thread> threads;
  for (int t = 1; t < n; ++t) threads.emplace_back([&work] { work(); });
  work();
  for (std::thread& t : threads) t.join();
}

}  // namespace lexpack::base
