// Signal-time cleanup of temporary files; see temp_files.h. The handler only
// calls unlink, sigaction and raise, all async-signal-safe, on paths kept in
// fixed buffers.
#include "launcher/temp_files.h"

#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <mutex>

namespace lexpack::launcher {

namespace {

constexpr int kSlots = 8;
constexpr size_t kPathMax = 4096;
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

char g_paths[kSlots][kPathMax];
volatile sig_atomic_t g_used[kSlots];
struct sigaction g_previous[std::size(kSignals)];

void on_signal(int sig) {
  for (int i = 0; i < kSlots; ++i) {
    if (g_used[i]) ::unlink(g_paths[i]);
  }
  // Then as if this handler had never been there.
  for (size_t i = 0; i < std::size(kSignals); ++i) {
    if (kSignals[i] != sig) continue;
    ::sigaction(sig, &g_previous[i], nullptr);
    if (g_previous[i].sa_handler == SIG_DFL) {
      ::raise(sig);
    } else if (g_previous[i].sa_handler != SIG_IGN && !(g_previous[i].sa_flags & SA_SIGINFO)) {
      g_previous[i].sa_handler(sig);
    }
  }
}

void install_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (size_t i = 0; i < std::size(kSignals); ++i) {
      struct sigaction old {};
      ::sigaction(kSignals[i], nullptr, &old);
      g_previous[i] = old;
      // A signal the process ignores (nohup) stays ignored.
      if (old.sa_handler == SIG_IGN) continue;
      struct sigaction sa {};
      sa.sa_handler = on_signal;
      sigemptyset(&sa.sa_mask);
      ::sigaction(kSignals[i], &sa, nullptr);
    }
  });
}

}  // namespace

TempFileGuard::TempFileGuard(const std::string& path) {
  if (path.size() >= kPathMax) return;
  install_once();
  for (int i = 0; i < kSlots; ++i) {
    if (g_used[i]) continue;
    std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    g_used[i] = 1;
    slot_ = i;
    return;
  }
}

TempFileGuard::~TempFileGuard() {
  if (slot_ >= 0) g_used[slot_] = 0;
}

}  // namespace lexpack::launcher
