// lease_guard.cc - see lease_guard.h.
#include "io/lease_guard.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

namespace hybridio {
namespace {

constexpr unsigned kMarks = 256;
std::atomic<uint64_t> g_marks[kMarks];  // 0: free
std::atomic<bool> g_all_marked{false};   // the table was full
std::atomic<unsigned> g_marked{0};       // marks in the table (a fast "none")
std::atomic<long> g_open{0};             // library opens asked for and not yet closed
std::atomic<long> g_setting{0};          // set_lease() calls in progress
__thread long t_open __attribute__((tls_model("initial-exec"))) = 0;  // of them, this thread's

uint64_t key_of(dev_t dev, ino_t ino) {
  uint64_t k = (static_cast<uint64_t>(dev) * 0x9E3779B97F4A7C15ULL) ^ static_cast<uint64_t>(ino);
  return k ? k : 1;
}

bool marked(uint64_t key) {
  if (g_all_marked.load()) return true;
  if (g_marked.load() == 0) return false;
  for (auto& m : g_marks)
    if (m.load() == key) return true;
  return false;
}

// true when this call added the mark (false: it was there, or the table is full).
bool mark(uint64_t key) {
  for (auto& m : g_marks)
    if (m.load() == key) return false;
  for (auto& m : g_marks) {
    uint64_t expected = 0;
    if (m.compare_exchange_strong(expected, key)) {
      g_marked.fetch_add(1);
      return true;
    }
  }
  g_all_marked.store(true);
  return false;
}

void unmark(uint64_t key) {
  for (auto& m : g_marks) {
    uint64_t expected = key;
    if (m.compare_exchange_strong(expected, 0)) g_marked.fetch_sub(1);
  }
}

int raw_getlease(int fd) { return static_cast<int>(syscall(SYS_fcntl, fd, F_GETLEASE)); }

}  // namespace

bool lease_held(int fd, dev_t dev, ino_t ino) {
  const int saved = errno;
  const bool leased = g_setting.load() > 0 || marked(key_of(dev, ino)) || raw_getlease(fd) != F_UNLCK;
  errno = saved;
  return leased;
}

bool twin_may_open(int fd, dev_t dev, ino_t ino, bool this_thread) {
  g_open.fetch_add(1);
  if (this_thread) ++t_open;
  const bool leased = lease_held(fd, dev, ino);
  if (leased) twin_closed(this_thread);
  return !leased;
}

void twin_closed(bool this_thread) {
  if (this_thread) --t_open;
  g_open.fetch_sub(1);
}

int set_lease(int fd, int arg, int (*real_fcntl)(int, int, ...)) {
  struct stat st;
  const int saved = errno;
  if (syscall(SYS_fstat, fd, &st) != 0) {  // not open: the kernel says so
    errno = saved;
    return real_fcntl(fd, F_SETLEASE, arg);
  }
  const uint64_t key = key_of(st.st_dev, st.st_ino);
  if (arg == F_UNLCK) {
    const int r = real_fcntl(fd, F_SETLEASE, arg);
    if (r == 0) {
      const int e = errno;
      unmark(key);
      errno = e;
    }
    return r;
  }
  g_setting.fetch_add(1);
  const bool added = mark(key);
  // Every open counted before the mark ends within its request (or, for
  // drop-behind, once its writeback is done): wait for those of other
  // threads.
  while (g_open.load() > t_open) {
    struct timespec ts = {0, 50 * 1000};
    nanosleep(&ts, nullptr);
  }
  errno = saved;
  const int r = real_fcntl(fd, F_SETLEASE, arg);
  const int e = errno;
  if (r != 0 && added) unmark(key);  // no lease held: the mark was this call's alone
  g_setting.fetch_sub(1);
  errno = e;
  return r;
}

void lease_guard_after_fork_child() {
  g_open.store(0);
  g_setting.store(0);
  t_open = 0;
}

}  // namespace hybridio
