// exact_call.cc - see exact_call.h.
#include "preload/exact_call.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include "file/file.h"
#include "io/drop_behind.h"
#include "io/pinned_request.h"
#include "preload/real_libc.h"
#include "runtime/runtime.h"

#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080  // Linux 6.14+ uapi value
#endif

namespace hybridio::preload {
namespace {

constexpr int kInodeLocks = 64;
pthread_rwlock_t g_inode_locks[kInodeLocks];
pthread_once_t g_locks_once = PTHREAD_ONCE_INIT;

// Writers first: a waiting writer (a write of the program's, or fork's
// prepare, which takes them all) keeps new readers out, so threads that
// stream reads cannot starve it.  No thread takes one of these twice: a
// section blocks every signal and makes no call back into the shim.
void init_locks() {
  pthread_rwlockattr_t attr;
  pthread_rwlockattr_init(&attr);
  pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
  for (auto& l : g_inode_locks) pthread_rwlock_init(&l, &attr);
  pthread_rwlockattr_destroy(&attr);
}

pthread_rwlock_t& inode_lock(dev_t dev, ino_t ino) {
  pthread_once(&g_locks_once, init_locks);
  return g_inode_locks[(static_cast<uint64_t>(ino) * 0x9E3779B97F4A7C15ULL ^ dev) % kInodeLocks];
}

// The call as the program made it, to the kernel: -errno on failure.
ssize_t plain_call(int fd, bool write, const iovec* iov, int count, off_t at, int rwf) {
  ssize_t n;
  if (rwf) {
    n = write ? real().pwritev2(fd, iov, count, at, rwf) : real().preadv2(fd, iov, count, at, rwf);
  } else if (at < 0) {
    n = write ? real().writev(fd, iov, count) : real().readv(fd, iov, count);
  } else {
    n = write ? real().pwritev(fd, iov, count, at) : real().preadv(fd, iov, count, at);
  }
  return n < 0 ? -errno : n;
}

// Cancellation held off, every signal blocked and the inode locked, for as
// long as it lives.  Signals are unblocked before the lock is released, so
// a handler that does I/O on the same file never waits for its own thread.
class ExactSection {
 public:
  ExactSection(bool write, dev_t dev, ino_t ino) : lock_(inode_lock(dev, ino)) {
    // The program's call is a cancellation point: act on a pending cancel
    // before anything is done, never in the middle.
    pthread_testcancel();
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state_);
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old_mask_);
    if (write)
      pthread_rwlock_wrlock(&lock_);
    else
      pthread_rwlock_rdlock(&lock_);
  }
  ~ExactSection() {
    pthread_rwlock_unlock(&lock_);
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
    pthread_setcancelstate(cancel_state_, nullptr);
  }
  ExactSection(const ExactSection&) = delete;
  ExactSection& operator=(const ExactSection&) = delete;

 private:
  pthread_rwlock_t& lock_;
  sigset_t old_mask_;
  int cancel_state_ = PTHREAD_CANCEL_ENABLE;
};

enum class Outcome { kDone, kPlain };

// The exact section (a direct call, or a read the engine bounces): returns
// kPlain when the call must go to the kernel as it was made (nothing has
// been done then, the position is untouched).
Outcome run_section(const TrackedRef& t, const File::Plan& plan, int fd, bool write, const iovec* iov, int count,
                   off_t at, uint64_t len, ssize_t* out) {
  ExactSection section(write, t->dev, t->ino);
  const bool positional = at < 0;
  off_t start = at;
  if (positional && (start = lseek(fd, 0, SEEK_CUR)) < 0) return Outcome::kPlain;
  uint64_t want = len;
  uint64_t size = 0;  // reads: the size when the call began
  if (write) {
    want = fsize_allowance(static_cast<uint64_t>(start), len);
  } else {
    struct stat st;
    if (fstat(fd, &st) != 0) return Outcome::kPlain;
    size = static_cast<uint64_t>(st.st_size);
    want = st.st_size > start ? std::min<uint64_t>(len, static_cast<uint64_t>(st.st_size - start)) : 0;
  }
  if (want == 0) return Outcome::kPlain;  // EOF, or beyond RLIMIT_FSIZE: the kernel's own answer

  PinnedRequest pin;
  if (pin.begin(fd, t->status_flags, t->dev, t->ino) != 0) return Outcome::kPlain;
  if (positional) {
    const off_t end = lseek(fd, static_cast<off_t>(want), SEEK_CUR);
    if (end < 0) return Outcome::kPlain;
    const off_t reserved = end - static_cast<off_t>(want);
    // Another user of the open file moved the position between the two
    // lseeks: the range is still ours, but the limit must hold for it.
    if (reserved != start && write && fsize_allowance(static_cast<uint64_t>(reserved), want) < want) {
      lseek(fd, -static_cast<off_t>(want), SEEK_CUR);
      return Outcome::kPlain;
    }
    start = reserved;
  }

  File* file = t->file;
  uint64_t done = 0;
  ssize_t last = 0;
  for (int i = 0; i < count && done < want; ++i) {
    char* base = static_cast<char*>(iov[i].iov_base);
    const uint64_t n = std::min<uint64_t>(iov[i].iov_len, want - done);
    if (n == 0) continue;
    const uint64_t at_offset = static_cast<uint64_t>(start) + done;
    last = file->execute_plan(plan, base, n, at_offset);
    if (last < 0) break;
    done += static_cast<uint64_t>(last);
    if (static_cast<uint64_t>(last) < n) break;  // EOF, a full device, the end of the caller's memory
  }
  if (!write) pin.finish_reads(std::max<uint64_t>(size, static_cast<uint64_t>(start) + done));
  // Give back the part of the reservation that was not used: relative, so
  // that another user's move meanwhile is kept.
  if (positional && done < want) lseek(fd, -static_cast<off_t>(want - done), SEEK_CUR);
  *out = done > 0 || last >= 0 ? static_cast<ssize_t>(done) : last;
  return Outcome::kDone;
}

}  // namespace

bool exact_call(const TrackedRef& t, int fd, bool write, const iovec* iov, int count, off_t at, size_t total,
                ssize_t* out) {
  const int access = t->status_flags & O_ACCMODE;
  if (write ? access == O_RDONLY : access == O_WRONLY) return false;  // the kernel's EBADF
  // O_APPEND: the kernel picks the offset and moves the position with the
  // data, atomically against every other appender.
  if (write && (t->status_flags & O_APPEND)) return false;

  const uint64_t len = std::min<uint64_t>(total, kMaxRwCount);
  off_t offset = at;
  if (at < 0 && (offset = lseek(fd, 0, SEEK_CUR)) < 0) return false;
  File* file = t->file;
  // One buffer: the plan is the call, and may explore (learned thresholds)
  // whatever path it takes.  Several: a direct plan is run element by
  // element, and each of those explores on its own (File::execute_plan).
  const File::Plan plan = file->plan(write ? HIO_OP_WRITE : HIO_OP_READ, static_cast<const char*>(iov[0].iov_base),
                                     static_cast<size_t>(len), static_cast<uint64_t>(offset), count == 1);
  // A read through the cache that the engine copies out through its bounce
  // buffer (File::bounces_read) is run by the engine, in the section.  Not
  // if the open file has become O_DIRECT behind the table's back (F_SETFL
  // by another process sharing it): the kernel's EINVAL for the caller's
  // memory is then the answer, and the bounce buffer would not get it.
  if (!write && count == 1 && plan.decision.path != HIO_PATH_DIRECT &&
      File::bounces_read(static_cast<const char*>(iov[0].iov_base), static_cast<size_t>(len),
                         static_cast<uint64_t>(offset))) {
    const int flags = fcntl(fd, F_GETFL);
    if (flags >= 0 && !(flags & O_DIRECT) && run_section(t, plan, fd, write, iov, count, at, len, out) == Outcome::kDone)
      return true;
  }
  switch (plan.decision.path) {
    case HIO_PATH_DIRECT:
      if (run_section(t, plan, fd, write, iov, count, at, len, out) == Outcome::kDone) return true;
      break;
    case HIO_PATH_DONTCACHE:
      if (write && file->drops_behind(len)) {
        // The call itself, through the cache; its writeback and page drop
        // go behind it (drop_behind.h).
        DropBehind drop(Runtime::get().config().drop_behind_limit, Runtime::get().stats());
        if (drop.begin(fd, len)) {
          const ssize_t n = plain_call(fd, write, iov, count, at, 0);
          drop.finish(static_cast<uint64_t>(offset), n > 0 ? static_cast<uint64_t>(n) : 0);
          file->finish_passthrough(plan, n > 0 ? static_cast<uint64_t>(n) : 0);
          *out = n;
          return true;
        }
      }
      if (!file->dontcache_refused()) {
        ssize_t n = plain_call(fd, write, iov, count, at, RWF_DONTCACHE);
        if (n != -EOPNOTSUPP) {
          file->finish_passthrough(plan, n > 0 ? static_cast<uint64_t>(n) : 0);
          *out = n;
          return true;
        }
        file->note_dontcache_refused();
      }
      break;
    default:
      break;
  }
  // Through the page cache: the call itself.
  File::Plan buffered = plan;
  buffered.decision.path = HIO_PATH_BUFFERED;
  ssize_t n = plain_call(fd, write, iov, count, at, 0);
  file->finish_passthrough(buffered, n > 0 ? static_cast<uint64_t>(n) : 0);
  *out = n;
  return true;
}

void exact_call_atfork_prepare() {
  pthread_once(&g_locks_once, init_locks);
  for (auto& l : g_inode_locks) pthread_rwlock_wrlock(&l);
}

void exact_call_atfork_parent() {
  for (auto& l : g_inode_locks) pthread_rwlock_unlock(&l);
}

void exact_call_atfork_child() {
  // glibc's rwlock remembers the writer's thread id, which the child's
  // thread does not have: start the child's locks afresh (it has one thread).
  init_locks();
}

}  // namespace hybridio::preload
