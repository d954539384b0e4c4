// drop_behind.cc - see drop_behind.h.
#include "io/drop_behind.h"

#include <fcntl.h>
#include <liburing.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

#include "io/lease_guard.h"
#include "io/uring_engine.h"
#include "platform/fork_order.h"
#include "platform/library_thread.h"
#include "platform/log.h"
#include "platform/stats.h"
#include "platform/syscall_table.h"

namespace hybridio {
namespace {

// Whether a worker was ever started in the process (or its parent): until
// then there is no write to wait for.
std::atomic<bool> g_started{false};

// Writes whose requests may be in flight together: each holds a fixed-file
// slot of the ring until its close has completed.
constexpr unsigned kSlots = 32;
constexpr unsigned kRingEntries = 4 * kSlots;  // four linked entries per write
// Writes handed over and not yet in flight.
constexpr unsigned kQueue = 64;
// While writes are in flight the worker looks for new ones this often (a
// writer cannot wake a wait inside the ring, and a descriptor to do it
// with would be one the program can see).
constexpr long kPollNs = 1000 * 1000;

enum Stage : uint64_t { kOpen = 0, kSync = 1, kAdvise = 2, kClose = 3 };
uint64_t tag(unsigned slot, Stage stage) { return (static_cast<uint64_t>(slot) << 2) | stage; }

struct Write {
  int fd = -1;
  dev_t dev = 0;  // the file's
  ino_t ino = 0;
  uint64_t offset = 0;
  uint64_t len = 0;
  Stats* stats = nullptr;  // the DropBehind's counters
  uint64_t seq = 0;        // the how-manieth handed over (hand_over() sets it)
};

// The process's drop-behind writes, and the worker thread that owns the
// ring their requests run on.  A thread of its own, not the writer's: the
// completions of a ring's requests are run as task work of the thread that
// submitted them, which the kernel signals with TIF_NOTIFY_SIGNAL, and a
// program thread with that flag set sees its pending "signal" (a read of
// /dev/zero or a pipe comes back short).  One per process
// (process_instance()).
class Worker {
 public:
  // Waits for room for `len` more bytes (and starts the worker in this
  // process first); false when drop-behind cannot run.
  bool reserve(uint64_t len, uint64_t limit, Stats& stats) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!start(lock)) return false;
    bool waited = false;
    while (!failed_ && (queued_ == kQueue || (backlog_ > 0 && backlog_ + len > limit))) {
      waited = true;
      room_.wait(lock);
    }
    if (waited) stats.add(stats.drop_behind_waits);
    return !failed_;
  }

  // Hands a write over (after reserve()); false when the worker has
  // failed meanwhile (the write's pages stay cached, as a buffered write's).
  bool hand_over(const Write& w) {
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_ || !running_) return false;
    Write& queued = queue_[(head_ + queued_) % kQueue];
    queued = w;
    queued.seq = ++handed_;
    ++queued_;
    backlog_ += w.len;
    work_.notify_one();
    return true;
  }

  // Waits until no write through a descriptor in [first, last] is still to
  // be opened by the worker (queued, or its open not yet completed).
  void wait_opened(unsigned first, unsigned last) {
    wait_while([&](const Write& w, bool opened) {
      return !opened && static_cast<unsigned>(w.fd) >= first && static_cast<unsigned>(w.fd) <= last;
    });
  }

  // Waits until every write to file (dev, ino) handed over so far is
  // dropped (not those handed over meanwhile: other threads may go on
  // writing).
  void wait_dropped(dev_t dev, ino_t ino) {
    uint64_t last;
    {
      std::lock_guard<std::mutex> lock(mu_);
      last = handed_;
    }
    wait_while([&](const Write& w, bool) { return w.seq <= last && w.dev == dev && w.ino == ino; });
  }

  void drain() {
    std::unique_lock<std::mutex> lock(mu_);
    while (running_ && backlog_ > 0) room_.wait(lock);
  }

  // drain(), then the worker's ring is closed and its thread returns; none
  // starts again in this process (its stack would be the one the old
  // thread may still be leaving).
  void stop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (running_ && !failed_ && backlog_ > 0) room_.wait(lock);
    failed_ = true;
    stopping_ = true;
    work_.notify_all();
    while (running_ && ready_) room_.wait(lock);
  }

  // fork(2): the lock is taken before and released in both processes; the
  // child has no worker (threads do not survive fork) and starts afresh.
  static constexpr ForkLevel kForkLevel = ForkLevel::kDropBehind;
  void before_fork() { mu_.lock(); }
  void after_fork_parent() { mu_.unlock(); }
  void after_fork_child() {
    // The parent's worker waits on work_, and the copies of the condition
    // variables count it as a waiter that does not exist here: a signal
    // would wait for it forever.  New ones (the old ones are not destroyed:
    // glibc waits for their waiters to leave).
    new (&room_) std::condition_variable();
    new (&work_) std::condition_variable();
    if (ring_ok_) close_fdless_ring(&ring_);  // the parent's; its kernel side stays theirs
    ring_ok_ = false;
    for (Slot& s : slots_) s = Slot{};
    busy_ = head_ = queued_ = 0;
    backlog_ = 0;
    running_ = failed_ = ready_ = stopping_ = false;
    mu_.unlock();
  }

 private:
  struct Slot {
    bool busy = false;
    bool opened = false;  // its open has completed (whatever it returned)
    Write write;
    char path[32] = {};  // the open's path, alive until it is submitted
  };

  // Starts the worker thread if this process has none; false when it
  // cannot run (no thread, no ring).
  bool start(std::unique_lock<std::mutex>& lock) {
    if (failed_) return false;
    if (!running_) {
      static std::once_flag at_exit;
      std::call_once(at_exit, [] {
        atexit(drain_at_exit);
        g_started.store(true, std::memory_order_release);
      });
      running_ = true;
      if (int rc = thread_.start("hybridio-drop", &Worker::main, this); rc != 0) {
        HIO_INFO("drop-behind writes unavailable (no thread: %s); uncached writes use RWF_DONTCACHE", strerror(rc));
        running_ = false;
        failed_ = true;
        return false;
      }
    }
    while (!ready_ && !failed_) room_.wait(lock);
    return !failed_;
  }

  // Waits while `pending(write, opened)` holds for a write queued or in
  // flight.
  template <class Pending>
  void wait_while(Pending pending) {
    std::unique_lock<std::mutex> lock(mu_);
    auto any = [&] {
      for (unsigned i = 0; i < queued_; ++i)
        if (pending(queue_[(head_ + i) % kQueue], false)) return true;
      for (const Slot& slot : slots_)
        if (slot.busy && pending(slot.write, slot.opened)) return true;
      return false;
    };
    while (running_ && !failed_ && any()) room_.wait(lock);
  }

  static void main(void* self) { static_cast<Worker*>(self)->run(); }
  static void drain_at_exit();

  void run() {
    const bool ok = open_ring();
    {
      std::lock_guard<std::mutex> lock(mu_);
      ready_ = true;
      failed_ = !ok;
      room_.notify_all();
    }
    if (!ok) return;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        while (queued_ == 0 && busy_ == 0 && !stopping_) work_.wait(lock);
        if (stopping_ && queued_ == 0 && busy_ == 0) {
          if (ring_ok_) close_fdless_ring(&ring_);
          ring_ok_ = false;
          running_ = ready_ = false;
          room_.notify_all();
          return;
        }
        while (queued_ > 0 && busy_ < kSlots) {
          prepare(queue_[head_]);
          head_ = (head_ + 1) % kQueue;
          --queued_;
        }
      }
      __kernel_timespec poll{0, kPollNs};
      io_uring_cqe* cqe = nullptr;
      const int rc = io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &poll, nullptr);
      if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
        HIO_WARN("drop-behind ring failed (%s); uncached writes use RWF_DONTCACHE from now on", strerror(-rc));
        give_up();
        return;
      }
      reap();
    }
  }

  bool open_ring() {
    if (int rc = open_fdless_ring(&ring_, kRingEntries, kSlots); rc != 0) {
      HIO_INFO("drop-behind writes unavailable (no ring: %s); uncached writes use RWF_DONTCACHE", strerror(-rc));
      return false;
    }
    if (!fdless_ring_supports(&ring_, {IORING_OP_OPENAT, IORING_OP_SYNC_FILE_RANGE, IORING_OP_FADVISE,
                                       IORING_OP_CLOSE})) {
      HIO_INFO("drop-behind writes unavailable (the kernel's io_uring lacks an operation); uncached writes use RWF_DONTCACHE");
      close_fdless_ring(&ring_);
      return false;
    }
    ring_ok_ = true;
    return true;
  }

  // The four hard-linked requests of write `w`, in a free slot (under mu_).
  void prepare(const Write& w) {
    unsigned s = 0;
    while (slots_[s].busy) ++s;
    Slot& slot = slots_[s];
    slot.busy = true;
    slot.write = w;
    ++busy_;
    snprintf(slot.path, sizeof slot.path, "/proc/self/fd/%d", w.fd);
    io_uring_sqe* open = io_uring_get_sqe(&ring_);
    io_uring_sqe* sync = io_uring_get_sqe(&ring_);
    io_uring_sqe* advise = io_uring_get_sqe(&ring_);
    io_uring_sqe* close = io_uring_get_sqe(&ring_);
    // Never short: a slot holds four of the ring's entries, and every
    // round submits what it prepared.
    if (!open || !sync || !advise || !close) return;
    // Hard links: each runs whatever the one before it returned.  The open
    // is read-only whatever the program's access (the close of a file
    // opened for writing tells inotify watchers it was finished); no
    // O_CLOEXEC: a fixed slot has none (EINVAL).  It resolves the number
    // when it runs: if the program has closed and reused it meanwhile, the
    // range of the new file is written back and dropped early, nothing more.
    io_uring_prep_openat_direct(open, AT_FDCWD, slot.path, O_RDONLY | O_LARGEFILE, 0, s);
    io_uring_sqe_set_flags(open, IOSQE_IO_HARDLINK);
    io_uring_sqe_set_data64(open, tag(s, kOpen));
    io_uring_prep_sync_file_range(sync, s, static_cast<unsigned>(w.len), w.offset,
                                  SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
    io_uring_sqe_set_flags(sync, IOSQE_FIXED_FILE | IOSQE_IO_HARDLINK);
    io_uring_sqe_set_data64(sync, tag(s, kSync));
    io_uring_prep_fadvise(advise, s, w.offset, static_cast<off_t>(w.len), POSIX_FADV_DONTNEED);
    io_uring_sqe_set_flags(advise, IOSQE_FIXED_FILE | IOSQE_IO_HARDLINK);
    io_uring_sqe_set_data64(advise, tag(s, kAdvise));
    io_uring_prep_close_direct(close, s);
    io_uring_sqe_set_data64(close, tag(s, kClose));
  }

  void reap() {
    io_uring_cqe* cqe;
    unsigned head, seen = 0, closed = 0;
    uint64_t done = 0;
    if (io_uring_cq_ready(&ring_) == 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    io_uring_for_each_cqe(&ring_, head, cqe) {
      ++seen;
      const uint64_t data = io_uring_cqe_get_data64(cqe);
      const unsigned s = static_cast<unsigned>(data >> 2);
      if (s >= kSlots) continue;
      switch (static_cast<Stage>(data & 3)) {
        case kOpen:
          // Not to be opened again (its permissions changed, say): its
          // pages stay cached, as a plain buffered write leaves them.
          if (cqe->res < 0) slots_[s].write.stats->add(slots_[s].write.stats->drop_behind_refused);
          slots_[s].opened = true;
          break;
        case kClose:
          done += slots_[s].write.len;
          slots_[s] = Slot{};
          ++closed;
          twin_closed(false);
          break;
        case kSync:
        case kAdvise:
          break;  // a failed writeback is the program's fsync's to report
      }
    }
    io_uring_cq_advance(&ring_, seen);
    busy_ -= closed;
    backlog_ -= done;
    room_.notify_all();  // writers waiting for room, closes for opens
  }

  // The ring refused work: what is in flight stays with the kernel, which
  // finishes it; the writers are told, and take RWF_DONTCACHE.
  void give_up() {
    std::lock_guard<std::mutex> lock(mu_);
    // Whatever the kernel still runs ends by itself; none of it is counted
    // as a library open any more (lease_guard.h).
    for (unsigned i = 0; i < queued_ + busy_; ++i) twin_closed(false);
    failed_ = true;
    queued_ = busy_ = 0;
    backlog_ = 0;
    room_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable room_;  // writers: room under the limit, the worker ready
  std::condition_variable work_;  // the worker: writes handed over
  Write queue_[kQueue];
  unsigned head_ = 0, queued_ = 0;
  uint64_t backlog_ = 0;  // bytes handed over and not yet dropped
  uint64_t handed_ = 0;   // writes handed over
  bool running_ = false, ready_ = false, failed_ = false, stopping_ = false;
  LibraryThread thread_;  // the worker (library_thread.h)
  // The worker's ring; the slots and busy_ change under mu_.
  io_uring ring_{};
  bool ring_ok_ = false;
  Slot slots_[kSlots];
  unsigned busy_ = 0;
};

Worker& worker() { return process_instance<Worker>(); }

// exit() ends the ring, and with it the requests still linked behind a
// running one: the last writes' pages would stay cached.
void Worker::drain_at_exit() { worker().drain(); }

}  // namespace

bool drop_behind_wanted(uint64_t len, uint64_t min) {
  return min != 0 && len >= min;
}

bool DropBehind::begin(int fd, uint64_t len) {
  if (fd_ >= 0) return false;
  // The worker's reopen is an open of the inode, which would break the
  // program's lease: none while one is held or being set (lease_guard.h).
  // Counted until the worker has closed it (or it is never made).
  struct stat st;
  if (sys().fstat(fd, &st) != 0 || !twin_may_open(fd, st.st_dev, st.st_ino, false)) return false;
  if (!worker().reserve(len, limit_, stats_)) {
    twin_closed(false);
    return false;
  }
  fd_ = fd;
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  return true;
}

void DropBehind::finish(uint64_t offset, uint64_t done) {
  if (fd_ < 0) return;
  const int fd = fd_;
  fd_ = -1;
  if (done == 0 || !worker().hand_over(Write{fd, dev_, ino_, offset, done, &stats_})) {
    twin_closed(false);
    return;
  }
  stats_.add(stats_.drop_behind_writes);
  stats_.add(stats_.drop_behind_bytes, done);
}

DropBehind::~DropBehind() { finish(0, 0); }

void drop_behind_before_close(unsigned first, unsigned last) {
  if (g_started.load(std::memory_order_acquire)) worker().wait_opened(first, last);
}

void drop_behind_before_sync(int fd) {
  if (!g_started.load(std::memory_order_acquire)) return;
  struct stat st;
  if (sys().fstat(fd, &st) == 0) worker().wait_dropped(st.st_dev, st.st_ino);
}

void drop_behind_drain() {
  if (g_started.load(std::memory_order_acquire)) worker().drain();
}

void drop_behind_stop() { worker().stop(); }

}  // namespace hybridio
