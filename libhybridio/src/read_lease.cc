// read_lease.cc - see read_lease.h.
#include "read_lease.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>

#include "library_thread.h"
#include "private_fd.h"
#include "syscall_table.h"

namespace hybridio {

// One lease descriptor, known to the watcher.  `generation` moves on at
// every lease taken and every break or invalidation; `held` says whether
// the descriptor carries a lease the watcher must release when it breaks.
struct ReadLease::Entry {
  int fd = -1;
  std::atomic<uint64_t> generation{1};
  std::atomic<bool> held{false};
  Entry* next = nullptr;
  Entry* prev = nullptr;
};

namespace {

// The fcntl(2) system call itself: under the LD_PRELOAD shim libc's fcntl
// is the shim's wrapper, and these calls are the library's own.
long raw_fcntl(int fd, int cmd, long arg = 0) { return syscall(SYS_fcntl, fd, cmd, arg); }

// Every lease descriptor of the process, and the watcher.  g_mu is held
// while a lease is taken and while the watcher releases one, so a lease is
// never taken between the watcher's check and its release.
std::mutex g_mu;
ReadLease::Entry* g_head = nullptr;
pid_t g_watcher_pid = 0;            // the process the watcher runs in (0: none)
std::atomic<pid_t> g_watcher_tid{0};
std::atomic<uint64_t> g_breaks{0};
pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;

void link(ReadLease::Entry* e) {
  e->prev = nullptr;
  e->next = g_head;
  if (g_head) g_head->prev = e;
  g_head = e;
}

void unlink(ReadLease::Entry* e) {
  if (e->prev) e->prev->next = e->next;
  if (e->next) e->next->prev = e->prev;
  if (g_head == e) g_head = e->next;
  e->next = e->prev = nullptr;
}

// Releases every lease the kernel is breaking (or has broken): first the
// generation moves on, so no read from now on is served under it, then the
// lease is released, which lets the breaker go on.  Under g_mu.
void release_broken() {
  for (ReadLease::Entry* e = g_head; e; e = e->next) {
    if (!e->held.load(std::memory_order_acquire)) continue;
    if (raw_fcntl(e->fd, F_GETLEASE) == F_RDLCK) continue;
    e->generation.fetch_add(1, std::memory_order_acq_rel);
    raw_fcntl(e->fd, F_SETLEASE, F_UNLCK);
    e->held.store(false, std::memory_order_release);
    g_breaks.fetch_add(1, std::memory_order_relaxed);
  }
}

void watch(void*) {
  g_watcher_tid.store(static_cast<pid_t>(syscall(SYS_gettid)), std::memory_order_release);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, ReadLease::lease_signal());
  for (;;) {
    siginfo_t si;
    // A periodic sweep as well: a notification the kernel could not queue
    // (RLIMIT_SIGPENDING) is then noticed within a second.
    const timespec period{1, 0};
    const int sig = sigtimedwait(&set, &si, &period);
    if (sig > 0 && si.si_code <= 0) {
      // Sent by a process (kill, sigqueue, tgkill), not a lease break: the
      // program's own signal, taken because this thread waits for that
      // number.  Pass it on to the main thread with its siginfo unchanged.
      syscall(SYS_rt_tgsigqueueinfo, getpid(), getpid(), sig, &si);
      continue;
    }
    std::lock_guard<std::mutex> lock(g_mu);
    release_broken();
  }
}

void atfork_prepare() { g_mu.lock(); }
void atfork_parent() { g_mu.unlock(); }
void atfork_child() {
  // The child shares the parent's open files, leases included.  Its copies
  // of the lease descriptors are closed (the leases stay the parent's), its
  // entries are forgotten (their windows are the parent's) and it has no
  // watcher until it takes a lease of its own.
  for (ReadLease::Entry* e = g_head; e; e = e->next) syscall(SYS_close, e->fd);
  g_head = nullptr;
  g_watcher_pid = 0;
  g_watcher_tid.store(0, std::memory_order_relaxed);
  g_mu.unlock();
}

void register_atfork() { pthread_atfork(atfork_prepare, atfork_parent, atfork_child); }

// The watcher thread (its stack is kept for a forked child's watcher).
LibraryThread g_watcher;

// The watcher's thread id, starting it if this process has none.  0 when
// no thread can be started.  Under g_mu.
pid_t watcher_tid() {
  const pid_t me = getpid();
  if (g_watcher_pid == me) return g_watcher_tid.load(std::memory_order_acquire);
  pthread_once(&g_atfork_once, register_atfork);
  g_watcher_tid.store(0, std::memory_order_relaxed);
  // The lease signal is blocked there (library_thread.h) and waits for sigtimedwait.
  if (g_watcher.start("hybridio-lease", watch, nullptr) != 0) return 0;
  g_watcher_pid = me;
  pid_t tid;
  while ((tid = g_watcher_tid.load(std::memory_order_acquire)) == 0) {
    const timespec pause{0, 20000};
    nanosleep(&pause, nullptr);
  }
  return tid;
}

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

}  // namespace

int ReadLease::lease_signal() { return SIGRTMAX - 3; }

uint64_t ReadLease::breaks_seen() { return g_breaks.load(std::memory_order_relaxed); }

ReadLease::~ReadLease() { release(); }

int ReadLease::fd() const { return entry_ ? entry_->fd : -1; }

bool ReadLease::held() const { return entry_ && entry_->held.load(std::memory_order_acquire); }

bool ReadLease::hold(int fd, File* owner, uint64_t* generation) {
  if (refused_) return false;
  if (entry_ && entry_->held.load(std::memory_order_acquire)) {
    *generation = entry_->generation.load(std::memory_order_acquire);
    return true;
  }
  if (!entry_) {
    // A read-only O_DIRECT descriptor of the same inode (a read lease needs
    // one opened read-only), keeping the program's O_NOATIME.
    struct stat before, after;
    const long status = raw_fcntl(fd, F_GETFL);
    if (status < 0 || sys().fstat(fd, &before) != 0) return false;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int lfd = sys().open(path, O_RDONLY | O_DIRECT | O_CLOEXEC | (static_cast<int>(status) & O_NOATIME), 0);
    if (lfd < 0) {
      refused_ = errno != EMFILE && errno != ENFILE && errno != ENOMEM;
      return false;
    }
    if (sys().fstat(lfd, &after) != 0 || !same_file(before, after)) {
      sys().close(lfd);  // the number was reused meanwhile: try again next time
      return false;
    }
    Entry* e = new (std::nothrow) Entry;
    if (!e) {
      sys().close(lfd);
      return false;
    }
    lfd = adopt_private_fd(lfd, owner);
    if (lfd < 0) {
      delete e;
      return false;
    }
    e->fd = lfd;
    std::lock_guard<std::mutex> lock(g_mu);
    link(e);
    entry_ = e;
  }
  std::lock_guard<std::mutex> lock(g_mu);
  // Where a break is reported, set before every lease: releasing a lease
  // clears the descriptor's owner and signal (the kernel's lease_modify),
  // and a lease taken without an owner would make the process, not the
  // watcher, the owner - and the program's threads could get the signal.
  const pid_t tid = watcher_tid();
  f_owner_ex to{F_OWNER_TID, tid};
  if (tid == 0 || raw_fcntl(entry_->fd, F_SETSIG, lease_signal()) != 0 ||
      raw_fcntl(entry_->fd, F_SETOWN_EX, reinterpret_cast<long>(&to)) != 0) {
    refused_ = true;
    return false;
  }
  if (raw_fcntl(entry_->fd, F_SETLEASE, F_RDLCK) != 0) {
    // EAGAIN: open for writing somewhere, or a break in progress - maybe
    // not for long.  Anything else (EACCES, EINVAL, ENOLCK) stays so.
    if (errno != EAGAIN) refused_ = true;
    return false;
  }
  *generation = entry_->generation.fetch_add(1, std::memory_order_acq_rel) + 1;
  entry_->held.store(true, std::memory_order_release);
  return true;
}

bool ReadLease::valid(uint64_t generation) const {
  return entry_ && entry_->generation.load(std::memory_order_acquire) == generation &&
         raw_fcntl(entry_->fd, F_GETLEASE) == F_RDLCK;
}

void ReadLease::invalidate() {
  if (entry_) entry_->generation.fetch_add(1, std::memory_order_acq_rel);
}

void ReadLease::release() {
  if (!entry_) return;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    unlink(entry_);
  }
  if (entry_->held.load(std::memory_order_acquire)) raw_fcntl(entry_->fd, F_SETLEASE, F_UNLCK);
  release_private_fd(entry_->fd);
  sys().close(entry_->fd);
  delete entry_;
  entry_ = nullptr;
}

bool ReadLease::forget(int fd) {
  if (!entry_ || entry_->fd != fd) return false;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    unlink(entry_);
  }
  release_private_fd(fd);
  delete entry_;
  entry_ = nullptr;
  return true;
}

}  // namespace hybridio
