// write_behind.h - opt-in write-behind for direct-bound writes
// (HYBRIDIO_WRITE_BEHIND=on).
//
// The body of a direct-bound write is copied into an aligned staging buffer
// (from the NUMA-local pool) and queued; the call returns, and a process-wide
// writer thread writes it direct, keeping up to HYBRIDIO_QUEUE_DEPTH chunks
// in flight across queued writes (so the device does not idle between them)
// while the caller prepares its next request - the way an asynchronous checkpoint
// writer overlaps serialisation with I/O.  What stays exactly as with
// synchronous writes, for everything done through the library:
//
// - Size: a write that extends the file extends it before the call returns
//   (its last page is written through the page cache, which only ever grows
//   the size, and only the part before it is queued), so fstat(2) is right
//   at once.
// - Ordering and reads: any read or write through the library of a range
//   that overlaps a queued write first waits for it; truncate, fsync, close,
//   set_mapped and the loss of the O_DIRECT twin wait for all of the file's.
// - Errors: a queued write that fails is finished through the page cache
//   if it was short or refused; a real error (EIO, ENOSPC) is kept and
//   reported once, by the next fsync/fdatasync or close of the file - the
//   kernel's writeback error semantics.
// - Memory: staging is bounded (HYBRIDIO_WRITE_BEHIND_LIMIT); a write that
//   would exceed it waits for earlier ones (counted as a stall); a write
//   larger than the limit is done synchronously.
// - Process end: exit() waits for every queued write; fork() waits before
//   forking, so a child never inherits queued writes.
//
// Weaker than buffered I/O (documented in docs/architecture.md): other
// processes see the data only once it is written (until then they read the
// old bytes, or zeros in an extension), and a process killed or ending with
// _exit() loses what is still queued, where buffered data would already be
// in the page cache.  The same holds for calls the library does not see
// made on hio_fd() itself: a fallocate(2) hole punch or zero range there
// may be overwritten by a queued write landing afterwards, so a program
// that mixes them calls hio_fdatasync() first (the exerciser does).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace hybridio {

class Stats;

// The write-behind state of one open file.  Allocates nothing: the ranges
// of its queued writes live in the queue's jobs.  Its waits and deferred
// errors are counted in `stats`, which outlives it.
class WriteBehindFile {
 public:
  explicit WriteBehindFile(Stats& stats) : stats_(stats) {}

  // A queued write's range, linked into its file while queued.
  struct Range {
    uint64_t offset = 0;
    uint64_t len = 0;
    Range* prev = nullptr;
    Range* next = nullptr;
  };

  bool idle() const { return pending_.load(std::memory_order_acquire) == 0; }
  // Waits until no queued write overlaps [offset, offset + len).
  void wait_overlap(uint64_t offset, uint64_t len);
  // Waits until every queued write of the file is done.
  void wait_all();
  // The first deferred error since the last call (errno), or 0; reported once.
  int take_error();

  // For the queue (write_behind.cc): a write was queued / is done.  `r`
  // stays valid until done().
  void add(Range* r);
  void done(Range* r, int error);

 private:
  Stats& stats_;
  std::mutex mu_;
  std::condition_variable cv_;
  Range* ranges_ = nullptr;  // queued [offset, offset + len), doubly linked
  std::atomic<uint32_t> pending_{0};
  int error_ = 0;
};

// Queues a direct write of data[0, len) at `offset` on `dfd`; what the
// direct write leaves (short, refused) is finished on the buffered `fd`.
// Copies the data before returning.  false: not queued (larger than
// `limit`, or no memory) - the caller writes synchronously.  Never throws.
bool write_behind_submit(WriteBehindFile& wb, int dfd, int fd, const char* data, uint64_t len,
                         uint64_t offset, uint64_t limit, Stats& stats);

// Waits until every queued write of the process is done.
void write_behind_drain();

}  // namespace hybridio
