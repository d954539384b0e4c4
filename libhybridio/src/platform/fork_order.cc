// fork_order.cc - see fork_order.h.
#include "platform/fork_order.h"

#include <pthread.h>

#include <atomic>

namespace hybridio {
namespace {

constexpr unsigned kLevels = static_cast<unsigned>(ForkLevel::kCount);

struct Level {
  std::atomic<void (*)()> prepare{nullptr}, parent{nullptr}, child{nullptr};
  std::atomic<bool> installed{false};  // set after the three, read before them
};
Level g_levels[kLevels];
// Levels whose handlers the prepare of the fork under way ran (glibc runs
// one fork's handlers at a time, under its atfork lock).
bool g_prepared[kLevels];
pthread_once_t g_once = PTHREAD_ONCE_INIT;

void prepare_all() {
  for (unsigned i = 0; i < kLevels; ++i) {
    g_prepared[i] = g_levels[i].installed.load(std::memory_order_acquire);
    if (!g_prepared[i]) continue;
    if (void (*f)() = g_levels[i].prepare.load(std::memory_order_relaxed)) f();
  }
}

void parent_all() {
  for (unsigned i = kLevels; i-- > 0;) {
    if (!g_prepared[i]) continue;
    if (void (*f)() = g_levels[i].parent.load(std::memory_order_relaxed)) f();
  }
}

void child_all() {
  for (unsigned i = kLevels; i-- > 0;) {
    if (!g_prepared[i]) continue;
    if (void (*f)() = g_levels[i].child.load(std::memory_order_relaxed)) f();
  }
}

void register_once() { pthread_atfork(prepare_all, parent_all, child_all); }

}  // namespace

void install_fork_handlers(ForkLevel level, const ForkHandlers& h) {
  pthread_once(&g_once, register_once);
  Level& l = g_levels[static_cast<unsigned>(level)];
  if (l.installed.load(std::memory_order_relaxed)) return;  // once per level
  l.child.store(h.child, std::memory_order_relaxed);
  l.parent.store(h.parent, std::memory_order_relaxed);
  l.prepare.store(h.prepare, std::memory_order_relaxed);
  l.installed.store(true, std::memory_order_release);
}

}  // namespace hybridio
