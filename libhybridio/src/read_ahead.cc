// read_ahead.cc - see read_ahead.h.
#include "read_ahead.h"

#include <liburing.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <new>

#include "buffer_pool.h"
#include "checked_copy.h"
#include "memory_headroom.h"
#include "process_id.h"
#include "read_lease.h"
#include "ring_loop.h"
#include "ring_submitter.h"
#include "stats.h"
#include "syscall_table.h"
#include "uring_engine.h"

namespace hybridio {
namespace {

std::atomic<uint64_t> g_staged{0};  // staging bytes of every window of the process
std::atomic<int> g_windows_in_flight{0};  // windows of the process with reads in flight
std::atomic<bool> g_windows_overlapped{false};  // two of them had reads in flight at once

// What all windows together may stage: a quarter of the memory the process
// could still take (memory_headroom.h) plus what they hold already, at most
// ReadAhead::kProcessLimit.  In a small container a restore reads ahead
// less instead of being OOM-killed for memory it did not ask for.
uint64_t staging_budget() {
  const uint64_t headroom = memory_headroom_bytes();
  if (headroom >= 4 * ReadAhead::kProcessLimit) return ReadAhead::kProcessLimit;
  return std::min(ReadAhead::kProcessLimit, (headroom + g_staged.load(std::memory_order_relaxed)) / 4);
}

constexpr unsigned kRingEntries = 64;  // the most blocks a window keeps in flight
// Blocks are whole 2 MiB huge pages (buffer_pool.cc backs buffers of that
// size with transparent huge pages): a read into scattered 4 KiB pages
// needs a DMA segment per page, and virtio-blk's 254 segments split every
// 1 MiB read in two.  A 3 GiB cold read in 4 MiB calls, 32 MiB ahead, on
// the development VM: 1.2-1.7 GB/s with 1 MiB blocks, 2.2-2.8 with 2 MiB
// ones; with THP off both read 1.6.
constexpr uint64_t kMinBlock = 2 << 20;
// A read that starts at most this far past the end of the previous one
// continues the stream: the calls between them were too small to go direct
// (a record's header, a small tensor) and went through the page cache.
constexpr uint64_t kStreamGap = 1 << 20;

// A direct read this large at the file's beginning is read through a
// window of its own (ReadAhead::begin()), when the file holds two more such
// requests after it: the kernel's readahead, too, takes a read at offset 0
// for the start of a stream.  Otherwise the stream's first two requests are
// read alone, into the caller's memory, and the third waits for the
// window's whole first fill: on the development VM a 1152 MiB file read in
// 64 MiB calls spent 150-290 ms of its 450-550 on its first three calls
// that way (its 4 KiB pages are one DMA segment each, 254 a request, where
// the window reads into 2 MiB huge pages).  Started at the first read,
// hybridio bench read it direct at 2.60-2.91 GB/s against 2.22-2.70, and
// hybrid at 0.97-1.00 of the best fixed policy against 0.82-0.92 (4
// interleaved pairs, results/regret/window-at-file-start-ab-2026-11-28-18.txt).
// What it costs when no stream follows: up to a window of reads (128 MiB
// for such requests) that the next read elsewhere waits for.  Smaller
// requests lose little by waiting for the second read.
constexpr uint64_t kFileStartRead = 16 << 20;

// The window reads blocks of this size at multiples of it (aligned for any
// direct I/O alignment up to 2 MiB): 2 MiB, or more when the window is
// larger than 32 of them (64 MiB).
uint64_t block_size(uint64_t ahead) {
  uint64_t block = kMinBlock;
  while (block * (kRingEntries / 2) < ahead) block <<= 1;
  return block;
}

}  // namespace

struct ReadAhead::Window {
  struct Slot {
    uint64_t offset = 0;
    uint64_t len = 0;
    PoolBuffer buf;
    bool done = false;
    bool checked = false;  // res has been through chunk_result()
    int res = 0;
  };

  explicit Window(pid_t owner) : pid(owner) {}

  const pid_t pid;
  std::mutex mu;
  io_uring ring{};
  RemoteRing remote;           // the ring's submissions, by the submitter thread (ensure_ring())
  RingLoop loop;
  bool ring_ok = false;
  bool ring_failed = false;    // no ring (io_uring unusable, no memory): never read ahead
  bool broken = false;         // the ring refused work (ring_loop.h): never read ahead again
  // The reads in flight, in file order: a fixed ring of slots (nothing is
  // allocated on the read path); index 0 = the next read expected.
  Slot slots[kRingEntries];
  unsigned first = 0;          // position of index 0 in `slots`
  unsigned count = 0;
  unsigned in_flight = 0;      // slots not done yet (ReadAhead::windows_in_flight())
  uint64_t front_seq = 0;      // user_data of index 0
  PoolBuffer spare[kRingEntries];  // released staging buffers of the current size
  unsigned nspare = 0;
  std::atomic<uint64_t> staged{0};
  uint64_t block = 0;          // bytes of every slot's read (block_size())
  // How far past the stream the window reads now: it starts at two blocks
  // (or two requests) and doubles with every read of the stream, up to the
  // `ahead` asked for.  A window that put all of 32 MiB in flight at once
  // got its first block only when the device had served them all together
  // (12 ms on the development VM, docs/performance.md), and the stream's
  // next read waited for it.
  uint64_t reach = 0;
  uint64_t stream_end = ~0ULL;  // where the previous direct read ended
  ReadLease lease;             // what keeps the window's bytes current (read_ahead.h)
  uint64_t lease_generation = 0;  // the lease generation everything in the window was read under
  uint64_t size = 0;           // the file's size under that lease

  Slot& at(size_t i) { return slots[(first + i) % kRingEntries]; }
  Slot& front() { return at(0); }
  Slot& back() { return at(count - 1); }
  bool empty() const { return count == 0; }
  void push_back(Slot&& s) {
    if (in_flight++ == 0 && g_windows_in_flight.fetch_add(1, std::memory_order_relaxed) >= 1)
      g_windows_overlapped.store(true, std::memory_order_relaxed);
    at(count++) = std::move(s);
  }
  void pop_front() {
    front() = Slot{};
    first = (first + 1) % kRingEntries;
    --count;
    ++front_seq;
  }
  void drop_spares() {
    while (nspare) spare[--nspare].reset();
  }

  bool acquire(uint64_t len, PoolBuffer* out) {
    if (g_staged.fetch_add(len, std::memory_order_relaxed) + len > staging_budget()) {
      g_staged.fetch_sub(len, std::memory_order_relaxed);
      return false;
    }
    if (nspare && spare[nspare - 1].size() >= len) {
      *out = std::move(spare[--nspare]);
    } else {
      *out = BufferPool::get().acquire(len);
    }
    if (*out) {
      staged.fetch_add(len, std::memory_order_relaxed);
      return true;
    }
    g_staged.fetch_sub(len, std::memory_order_relaxed);
    return false;
  }

  void release(Slot& s) {
    g_staged.fetch_sub(s.len, std::memory_order_relaxed);
    staged.fetch_sub(s.len, std::memory_order_relaxed);
    if (s.buf.size() >= s.len && nspare < kRingEntries) spare[nspare++] = std::move(s.buf);
    s.buf.reset();
  }

  // A completion of the window's ring (a no-op nobody waits for has no slot).
  void complete(uint64_t user_data, int res) {
    const uint64_t k = user_data - front_seq;
    if (k < count) {
      if (!at(k).done && --in_flight == 0) g_windows_in_flight.fetch_sub(1, std::memory_order_relaxed);
      at(k).done = true;
      at(k).res = res;
    }
  }

  // Reaps completions until slot `i` is done (submitting whatever a busy
  // ring left unsubmitted).  false: it never will be - the ring failed and
  // gave every read its result, or nothing of it is in flight.
  bool wait(size_t i) {
    while (!at(i).done) {
      if (broken || loop.idle()) return false;
      if (loop.pump([this](uint64_t data, int res) { complete(data, res); }) < 0) broken = true;
    }
    return true;
  }

  // Gives the window up: waits for what is in flight, keeps the buffers.
  // Once wait() is done nothing of a slot is in the kernel's hands.
  void clear() {
    for (size_t i = 0; i < count; ++i) wait(i);
    while (!empty()) {
      release(front());
      pop_front();
    }
  }

  // Gives a window that did not serve the stream up (counted).
  void drop_unused(Stats& stats) {
    clear();
    stats.add(stats.read_ahead_dropped);
  }

  // Whether a direct read at `offset` continues the stream (starts at or
  // up to kStreamGap after the previous one's end).
  bool continues(uint64_t offset) const {
    return stream_end != ~0ULL && offset >= stream_end && offset - stream_end <= kStreamGap;
  }

  // Where the window's reads stop for a stream read ending at `end`:
  // `ahead` past it, or `reach` or `limit` if less, within the size seen
  // at the start (a block at the end of the file reads short, and only what
  // it read is served).  advance() and serve()'s refill both go this far.
  uint64_t until(uint64_t end, uint64_t ahead, uint64_t limit, uint64_t reach_now) const {
    return std::min(end + std::min({limit, ahead, reach_now}), size);
  }

  // Puts blocks in flight from `next` (the end of the window) up to
  // `stop`, as far as the ring and the staging budget allow, and submits
  // them; returns where what is in flight ends.  A ring that refuses work gave every read
  // its result (ring_loop.h): the window is then given up, for good.
  uint64_t fill(uint64_t next, uint64_t stop) {
    const int lfd = lease.fd();
    unsigned queued = 0;
    while (count < kRingEntries && next < stop) {
      io_uring_sqe* sqe = loop.get_sqe();
      if (!sqe) break;
      Slot s;
      if (!acquire(block, &s.buf)) {
        // No memory for it: hand the entry back as a no-op nobody waits for.
        io_uring_prep_nop(sqe);
        io_uring_sqe_set_data64(sqe, ~0ULL);
        ++queued;
        break;
      }
      s.offset = next;
      s.len = block;
      io_uring_prep_read(sqe, lfd, s.buf.data(), static_cast<unsigned>(block), next);
      io_uring_sqe_set_data64(sqe, front_seq + count);
      push_back(std::move(s));
      next += block;
      ++queued;
    }
    // Busy: left in the ring, submitted by the next wait.
    if (queued && loop.submit([this](uint64_t data, int res) { complete(data, res); }) < 0) {
      broken = true;
      clear();
    }
    return next;
  }

  // Starts an empty window for a stream of `len`-byte reads, `ahead`
  // bytes ahead: under a read lease of the file behind `fd` (taken now),
  // within the size the file has under it.  False: no window (no lease,
  // no ring).
  bool start(int fd, File* owner, uint64_t len, uint64_t ahead) {
    if (broken || !ensure_ring()) return false;  // never again on this file
    uint64_t generation;
    if (!lease.hold(fd, owner, &generation)) return false;
    struct stat st;
    if (sys().fstat(lease.fd(), &st) != 0) return false;
    lease_generation = generation;
    size = static_cast<uint64_t>(st.st_size);
    const uint64_t want = block_size(ahead);
    if (block != want) drop_spares();
    block = want;
    reach = std::max(2 * block, 2 * len);
    return true;
  }

  // The window's ring, opened and submitted to by the library's submitter
  // thread: its reads are in flight between the program's calls, and
  // neither their completions nor the ring's teardown may flag a program
  // thread as having a signal pending (ring_submitter.h).  A shared ring:
  // any thread may wait on it, and close it.
  bool ensure_ring() {
    if (ring_ok) return true;
    if (ring_failed || !uring_usable()) return false;
    auto open = [](void* self) { return open_shared_ring(&static_cast<Window*>(self)->ring, kRingEntries); };
    if (!ring_submitter_ready() || call_on_submitter_thread(open, this) != 0) {
      ring_failed = true;
      return false;
    }
    ring_ok = true;
    loop.reset(&ring, &remote);
    return true;
  }

  ~Window() {
    clear();
    drop_spares();
    loop.settle();  // the submitter thread is done with the ring
    if (ring_ok) close_ring(&ring);
    lease.release();
  }
};

ReadAhead::~ReadAhead() {
  Window* w = window_.load(std::memory_order_acquire);
  if (w && w->pid == current_pid()) delete w;
}

ReadAhead::Window* ReadAhead::window() {
  const pid_t me = current_pid();
  Window* w = window_.load(std::memory_order_acquire);
  if (w && w->pid == me) return w;
  Window* fresh = new (std::nothrow) Window(me);
  if (!fresh) return nullptr;
  if (!window_.compare_exchange_strong(w, fresh, std::memory_order_acq_rel)) {
    delete fresh;  // another thread of this process got there first
    return w && w->pid == me ? w : nullptr;
  }
  if (w) {
    // Inherited from the parent across fork(): its lock may be held by a
    // thread that does not exist here and its ring is the parent's too.
    // Unmap our view of the ring; leave the rest (the child's copy) alone.
    // Its lease descriptor the child has closed already (read_lease.h).
    g_staged.fetch_sub(w->staged.load(std::memory_order_relaxed), std::memory_order_relaxed);
    if (w->in_flight) g_windows_in_flight.fetch_sub(1, std::memory_order_relaxed);
    if (w->ring_ok) close_ring(&w->ring);
  }
  return fresh;
}

uint64_t ReadAhead::serve(char* buf, uint64_t len, uint64_t offset, Stats& stats, const Refill* refill) {
  Window* w = window_.load(std::memory_order_acquire);
  if (!w || w->pid != current_pid()) return 0;  // no window yet (or the parent's)
  std::lock_guard<std::mutex> lock(w->mu);
  if (w->empty()) return 0;
  const uint64_t end = offset + len;
  if (end > w->size) {
    w->clear();  // past the end of the file as the lease saw it: the caller's read says where it ends
    return 0;
  }
  // Only a read the window holds all of: anything else (a read elsewhere,
  // past what is in flight) gives it up.
  if (offset < w->front().offset || end > w->back().offset + w->back().len) {
    w->drop_unused(stats);
    return 0;
  }
  // Blocks wholly behind the read: the stream has gone past them (served,
  // or skipped over calls that went through the page cache).
  while (w->front().offset + w->front().len <= offset) {
    if (!w->wait(0)) {
      w->drop_unused(stats);
      return 0;
    }
    w->release(w->front());
    w->pop_front();
  }
  // Every block it needs must have read all of its part: a failed or short
  // read (EOF) is the caller's own read's to report.
  size_t needed = 0;
  while (needed < w->count && w->at(needed).offset < end) ++needed;
  for (size_t i = 0; i < needed; ++i) {
    Window::Slot& b = w->at(i);
    if (!w->wait(i)) {
      w->drop_unused(stats);
      return 0;
    }
    if (!b.checked) b.res = chunk_result(HIO_OP_READ, w->lease.fd(), b.buf.data(), b.len, b.offset, b.res, stats);
    b.checked = true;  // a block serves several reads: its failure is retried or injected once
    const int res = b.res;
    if (res < 0 || b.offset + static_cast<uint64_t>(res) < std::min(end, b.offset + b.len)) {
      w->drop_unused(stats);
      return 0;
    }
  }
  // The lease it was read under must still be held (read_ahead.h has the
  // argument): checked after this read began, before anything is copied.
  if (!w->lease.valid(w->lease_generation)) {
    w->drop_unused(stats);
    return 0;
  }
  // What advance() will put in flight after this read, now, under the same
  // lease (just checked), as far as it reaches at its next doubling.
  if (refill && refill->limit && refill->ahead >= 2 * len && w->continues(offset)) {
    const uint64_t reach = std::min(refill->ahead, 2 * w->reach);
    w->fill(w->back().offset + w->back().len, w->until(end, refill->ahead, refill->limit, reach));
    if (w->broken) return 0;  // given up (fill()): the caller reads it
  }
  for (size_t i = 0; i < needed; ++i) {
    Window::Slot& b = w->at(i);
    const uint64_t from = std::max(offset, b.offset), to = std::min(end, b.offset + b.len);
    char* src = b.buf.data() + (from - b.offset);
    char* dst = buf + (from - offset);
    if (transparent_mode()) {
      if (copy_checked(src, dst, to - from, false) != to - from) {
        w->drop_unused(stats);  // the caller's memory ends: its own read reports where
        return 0;
      }
    } else {
      memcpy(dst, src, to - from);
    }
  }
  while (!w->empty() && w->front().offset + w->front().len <= end) {
    w->release(w->front());
    w->pop_front();
  }
  stats.add(stats.read_ahead_hits);
  stats.add(stats.read_ahead_bytes, len);
  return len;
}

bool ReadAhead::in_flight() {
  Window* w = window_.load(std::memory_order_acquire);
  if (!w || w->pid != current_pid()) return false;
  std::lock_guard<std::mutex> lock(w->mu);
  return w->in_flight > 0;
}

bool ReadAhead::busy() {
  Window* w = window_.load(std::memory_order_acquire);
  if (!w || w->pid != current_pid()) return false;
  std::lock_guard<std::mutex> lock(w->mu);
  return !w->empty();
}

void ReadAhead::advance(int fd, uint64_t len, uint64_t offset, uint64_t ahead, Stats& stats, uint64_t limit) {
  Window* w = window();
  if (!w) return;
  std::lock_guard<std::mutex> lock(w->mu);
  const bool sequential = w->continues(offset);
  w->stream_end = offset + len;
  if (limit == 0 && sequential) return;
  // A window of fewer than two requests does no better than the request's
  // own chunks in flight.
  if (!sequential || ahead < 2 * len) {
    if (!w->empty()) w->drop_unused(stats);
    return;
  }
  if (w->broken || !w->ensure_ring()) return;  // never again on this file
  // What was read under a lease that is gone is of no use any more.
  if (!w->empty() && !w->lease.valid(w->lease_generation)) w->drop_unused(stats);
  bool starting = false;
  if (w->empty()) {
    // Start: only under a read lease, and within the size the file has
    // under it (it cannot change without breaking the lease).
    if (!w->start(fd, owner_, len, ahead)) return;
    starting = true;
  } else {
    w->reach = std::min(ahead, 2 * w->reach);
  }
  // From the block the read ended in (the next read may start there).
  const uint64_t from = w->empty() ? (offset + len) / w->block * w->block : w->back().offset + w->back().len;
  const uint64_t next = w->fill(from, w->until(offset + len, ahead, limit, w->reach));
  if (starting && w->count) {
    start_offset_.store(offset, std::memory_order_relaxed);
    primed_end_.store(next, std::memory_order_relaxed);
  }
}

void ReadAhead::begin(int fd, uint64_t len, uint64_t offset, uint64_t ahead, uint64_t limit) {
  if (offset != 0 || len < kFileStartRead || ahead < 2 * len || limit < 2 * len) return;
  Window* w = window();
  if (!w) return;
  std::lock_guard<std::mutex> lock(w->mu);
  if (!w->empty() || !w->start(fd, owner_, len, ahead)) return;
  if (w->size < 3 * len) return;  // not two more such requests: the read goes alone
  // The read itself and what advance() would keep after it, as far as the
  // window reaches at its start; the read at 0 continues the stream.
  w->stream_end = 0;
  const uint64_t next = w->fill(0, w->until(0, ahead, limit, w->reach));
  if (w->count) {
    start_offset_.store(0, std::memory_order_relaxed);
    primed_end_.store(next, std::memory_order_relaxed);
  }
}

bool ReadAhead::pipeline_available(int fd) {
  Window* w = window();
  if (!w) return false;
  std::lock_guard<std::mutex> lock(w->mu);
  if (w->broken || w->ring_failed) return false;
  if (w->lease.held()) return true;
  uint64_t generation;
  return w->lease.hold(fd, owner_, &generation);
}

void ReadAhead::invalidate() {
  Window* w = window_.load(std::memory_order_acquire);
  if (!w || w->pid != current_pid()) return;
  std::lock_guard<std::mutex> lock(w->mu);
  w->lease.invalidate();
}

bool ReadAhead::forget_fd(int fd) {
  Window* w = window_.load(std::memory_order_acquire);
  if (!w || w->pid != current_pid()) return false;
  std::lock_guard<std::mutex> lock(w->mu);
  if (w->lease.fd() != fd) return false;
  w->clear();  // reads in flight hold the open file, not the number: nothing of them is lost
  w->lease.forget(fd);
  return true;
}

void ReadAhead::drop() {
  Window* w = window_.load(std::memory_order_acquire);
  if (!w || w->pid != current_pid()) return;
  std::lock_guard<std::mutex> lock(w->mu);
  w->clear();
  w->drop_spares();
  w->stream_end = ~0ULL;
  w->lease.release();
}

uint64_t ReadAhead::staged_bytes() { return g_staged.load(std::memory_order_relaxed); }

int ReadAhead::windows_in_flight() { return g_windows_in_flight.load(std::memory_order_relaxed); }

bool ReadAhead::windows_overlapped() { return g_windows_overlapped.load(std::memory_order_relaxed); }

void ReadAhead::forget_overlap() { g_windows_overlapped.store(false, std::memory_order_relaxed); }

}  // namespace hybridio
