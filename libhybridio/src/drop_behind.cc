// drop_behind.cc - see drop_behind.h.
#include "drop_behind.h"

#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "log.h"
#include "ring_loop.h"
#include "runtime.h"
#include "stats.h"
#include "uring_engine.h"

namespace hybridio {
namespace {

// Writes of one thread whose requests may be in flight together: each
// holds a fixed-file slot until its close has completed.
constexpr unsigned kSlots = 16;
// Four linked entries per write.
constexpr unsigned kRingEntries = 4 * kSlots;

enum Stage : uint64_t { kOpen = 0, kSync = 1, kAdvise = 2, kClose = 3 };
uint64_t tag(unsigned slot, Stage stage) { return (static_cast<uint64_t>(slot) << 2) | stage; }

// Bytes written by drop-behind writes of every thread and not yet dropped.
std::atomic<uint64_t> g_backlog{0};
std::once_flag g_atfork_once;

// One slot's write: the bytes its requests cover.
struct Chain {
  bool busy = false;
  uint64_t bytes = 0;  // counted in g_backlog until its close completes
  char path[32] = {};  // the open's path, alive until the open is submitted
};

class ThreadDropRing {
 public:
  ~ThreadDropRing() {
    drain();
    close();
  }

  // The ring, opened on first use; false when it cannot be had.
  bool usable() {
    if (ok_ && generation_ != ring_generation()) {
      // A forked child: the ring, its slots and the writes in flight are
      // the parent's.  Forget them (the child's backlog starts at zero).
      for (Chain& c : chains_) c = Chain{};
      busy_ = 0;
      close();
      failed_ = false;
    }
    if (ok_) return true;
    if (failed_) return false;
    failed_ = true;  // until it works
    if (!uring_usable()) return false;
    std::call_once(g_atfork_once, [] { pthread_atfork(nullptr, nullptr, [] { g_backlog.store(0); }); });
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
    loop_.reset(&ring_);
    ok_ = true;
    failed_ = false;
    generation_ = ring_generation();
    return true;
  }

  // A slot for a write through `fd`, or -1 (the ring failed meanwhile).
  int reserve(int fd, uint64_t len) {
    if (!make_room(len)) return -1;
    unsigned s = 0;
    while (chains_[s].busy) ++s;
    Chain& c = chains_[s];
    c = Chain{};
    c.busy = true;
    ++busy_;
    snprintf(c.path, sizeof c.path, "/proc/self/fd/%d", fd);
    return static_cast<int>(s);
  }

  void finish(unsigned s, uint64_t offset, uint64_t done) {
    if (!ok_ || !chains_[s].busy) return;
    if (done == 0) {
      release(s);
      return;
    }
    io_uring_sqe* open = io_uring_get_sqe(&ring_);
    io_uring_sqe* sync = io_uring_get_sqe(&ring_);
    io_uring_sqe* advise = io_uring_get_sqe(&ring_);
    io_uring_sqe* close = io_uring_get_sqe(&ring_);
    if (!open || !sync || !advise || !close) return;  // never: a write holds 4 of the ring's entries
    // Hard links: each runs whatever the one before it did.  The open is
    // read-only whatever the program's access (a close after a write-only
    // open would tell inotify watchers the file was finished); no
    // O_CLOEXEC: a fixed slot has none (EINVAL).  It resolves the number
    // when it runs: a number the program closed and reused meanwhile opens
    // its new file, whose pages of that range are then written back and
    // dropped early, nothing else.
    io_uring_prep_openat_direct(open, AT_FDCWD, chains_[s].path, O_RDONLY | O_LARGEFILE, 0, s);
    io_uring_sqe_set_flags(open, IOSQE_IO_HARDLINK);
    io_uring_sqe_set_data64(open, tag(s, kOpen));
    io_uring_prep_sync_file_range(sync, s, static_cast<unsigned>(done), offset,
                                  SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
    io_uring_sqe_set_flags(sync, IOSQE_FIXED_FILE | IOSQE_IO_HARDLINK);
    io_uring_sqe_set_data64(sync, tag(s, kSync));
    io_uring_prep_fadvise(advise, s, offset, static_cast<off_t>(done), POSIX_FADV_DONTNEED);
    io_uring_sqe_set_flags(advise, IOSQE_FIXED_FILE | IOSQE_IO_HARDLINK);
    io_uring_sqe_set_data64(advise, tag(s, kAdvise));
    io_uring_prep_close_direct(close, s);
    io_uring_sqe_set_data64(close, tag(s, kClose));
    chains_[s].bytes = done;
    g_backlog.fetch_add(done, std::memory_order_relaxed);
    if (loop_.submit([this](uint64_t d, int r) { on_completion(d, r); }) < 0) fail();
  }

  // Waits for every write of this thread.
  void drain() {
    while (ok_ && busy_ > 0)
      if (!pump()) break;
  }

 private:
  // Waits for the thread's earlier writes while a slot or the limit asks
  // for it; false when the ring failed meanwhile.
  bool make_room(uint64_t len) {
    const uint64_t limit = Runtime::get().config().drop_behind_limit;
    reap();
    bool waited = false;
    while (busy_ == kSlots || (busy_ > 0 && g_backlog.load(std::memory_order_relaxed) + len > limit)) {
      waited = true;
      if (!pump()) return false;
    }
    if (waited) Runtime::get().stats().add(Runtime::get().stats().drop_behind_waits);
    return true;
  }

  void release(unsigned s) {
    chains_[s] = Chain{};
    --busy_;
  }

  void on_completion(uint64_t data, int res) {
    const unsigned s = static_cast<unsigned>(data >> 2);
    if (s >= kSlots) return;
    Chain& c = chains_[s];
    switch (static_cast<Stage>(data & 3)) {
      case kOpen:
        // Not possible to open it again (its permissions changed, say):
        // its pages stay cached, as a plain buffered write leaves them.
        if (res < 0) Runtime::get().stats().add(Runtime::get().stats().drop_behind_refused);
        break;
      case kClose:
        if (!c.busy) break;
        g_backlog.fetch_sub(c.bytes, std::memory_order_relaxed);
        release(s);
        break;
      case kSync:
      case kAdvise:
        break;  // a failed writeback is the program's fsync's to report
    }
  }

  void reap() {
    if (ok_ && busy_ > 0) loop_.reap_ready([this](uint64_t d, int r) { on_completion(d, r); });
  }

  bool pump() {
    if (loop_.pump([this](uint64_t d, int r) { on_completion(d, r); }) < 0) {
      fail();
      return false;
    }
    return true;
  }

  // The ring refused work (ring_loop.h has waited for what was in flight):
  // drop-behind is off for this thread.
  void fail() {
    for (Chain& c : chains_) {
      if (c.busy) g_backlog.fetch_sub(c.bytes, std::memory_order_relaxed);
      c = Chain{};
    }
    busy_ = 0;
    close();
    failed_ = true;
  }

  void close() {
    if (!ok_) return;
    close_fdless_ring(&ring_);
    loop_.reset(nullptr);
    ok_ = false;
  }

  io_uring ring_{};
  RingLoop loop_;
  bool ok_ = false;
  bool failed_ = false;
  uint64_t generation_ = 0;
  Chain chains_[kSlots];
  unsigned busy_ = 0;
};

ThreadDropRing& thread_drop_ring() {
  thread_local ThreadDropRing ring;
  return ring;
}

}  // namespace

bool drop_behind_wanted(uint64_t len) {
  const uint64_t min = Runtime::get().config().drop_behind;
  return min != 0 && len >= min;
}

bool DropBehind::begin(int fd, uint64_t len) {
  ThreadDropRing& r = thread_drop_ring();
  if (slot_ >= 0 || !r.usable()) return false;
  slot_ = r.reserve(fd, len);
  return slot_ >= 0;
}

void DropBehind::finish(uint64_t offset, uint64_t done) {
  if (slot_ < 0) return;
  const unsigned s = static_cast<unsigned>(slot_);
  slot_ = -1;
  thread_drop_ring().finish(s, offset, done);
  if (done > 0) {
    Stats& st = Runtime::get().stats();
    st.add(st.drop_behind_writes);
    st.add(st.drop_behind_bytes, done);
  }
}

DropBehind::~DropBehind() { finish(0, 0); }

void drop_behind_drain() { thread_drop_ring().drain(); }

}  // namespace hybridio
