// private_fd.cc - see private_fd.h.  The registry is a small vector under a
// mutex: it holds one entry per open O_DIRECT twin, and the common lookup
// (no private descriptor at all) is one atomic load, without the lock.
#include "platform/private_fd.h"

#include "platform/fork_order.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <utility>
#include <vector>

namespace hybridio {
namespace {

std::mutex g_mu;
using Entries = std::vector<std::pair<int, PrivateFdOwner*>>;
Entries* g_entries = new Entries();  // never freed
std::atomic<int> g_count{0};

int private_floor() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 60000;
  if (rl.rlim_cur < 64) return -1;
  // The top eighth of the descriptor space, capped so that the kernel's
  // descriptor table does not grow to millions of slots.
  rlim_t floor = rl.rlim_cur - rl.rlim_cur / 8;
  return static_cast<int>(std::min<rlim_t>(floor, 60000));
}

// fork(2): the registry lock is taken before fork and released in both
// processes after it, so a child never inherits it locked (fork_order.h).
void lock_for_fork() { g_mu.lock(); }
void unlock_after_fork() { g_mu.unlock(); }
pthread_once_t g_fork_once = PTHREAD_ONCE_INIT;
void install_for_fork() {
  ForkHandlers h;
  h.prepare = lock_for_fork;
  h.parent = h.child = unlock_after_fork;
  install_fork_handlers(ForkLevel::kPrivateFds, h);
}

}  // namespace

int adopt_private_fd(int fd, PrivateFdOwner* owner) {
  pthread_once(&g_fork_once, install_for_fork);  // before the first entry: only entries take the lock
  int floor = private_floor();
  if (floor > fd) {
    int high = fcntl(fd, F_DUPFD_CLOEXEC, floor);
    if (high >= 0) {
      close(fd);
      fd = high;
    }
  }
  std::lock_guard<std::mutex> lock(g_mu);
  try {
    g_entries->emplace_back(fd, owner);
  } catch (...) {  // no memory to record it: not usable as a private descriptor
    close(fd);
    return -ENOMEM;
  }
  g_count.store(static_cast<int>(g_entries->size()), std::memory_order_release);
  return fd;
}

void release_private_fd(int fd) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto& v = *g_entries;
  v.erase(std::remove_if(v.begin(), v.end(), [fd](const auto& e) { return e.first == fd; }), v.end());
  g_count.store(static_cast<int>(v.size()), std::memory_order_release);
}

PrivateFdOwner* private_fd_owner(int fd) {
  if (g_count.load(std::memory_order_acquire) == 0) return nullptr;
  std::lock_guard<std::mutex> lock(g_mu);
  for (const auto& e : *g_entries)
    if (e.first == fd) return e.second;
  return nullptr;
}

void forget_private_fds(unsigned first, unsigned last) {
  if (g_count.load(std::memory_order_acquire) == 0) return;
  // In batches, into a fixed array (this runs inside the shim's close_range
  // and must not allocate); forget_direct_fd removes each entry, so every
  // pass finds only the ones not yet forgotten.
  for (;;) {
    std::pair<int, PrivateFdOwner*> hit[32];
    size_t n = 0;
    {
      std::lock_guard<std::mutex> lock(g_mu);
      for (const auto& e : *g_entries)
        if (static_cast<unsigned>(e.first) >= first && static_cast<unsigned>(e.first) <= last && n < 32) hit[n++] = e;
    }
    if (n == 0) return;
    // Outside the lock: forget_direct_fd releases the entry itself.
    const int before = g_count.load(std::memory_order_acquire);
    for (size_t i = 0; i < n; ++i) hit[i].second->forget_direct_fd(hit[i].first);
    // A full batch may have left more behind; stop when a pass removed nothing.
    if (n < 32 || g_count.load(std::memory_order_acquire) >= before) return;
  }
}

}  // namespace hybridio
