// read_ahead.h - read-ahead for sequential direct reads (on by default:
// HYBRIDIO_READ_AHEAD=16M per stream; off turns it off).
//
// One thread reading a file direct in 4 MiB calls keeps at most one call's
// chunks in flight, and the device idles between calls: on the development
// VM that read 1.4-1.6 GB/s where fio with eight 4 MiB reads in flight read
// 2.7-3.2 GB/s.  Once two direct reads of a file follow each other (or
// at the first, for a large read at the file's beginning: begin()), the
// window keeps the file's next HYBRIDIO_READ_AHEAD bytes (or two of the
// stream's requests, if more, up to 128 MiB: window_for()) in flight, as
// blocks of 2 MiB (more for windows over 64 MiB) at multiples of the block
// size, in aligned staging buffers from the NUMA-local pool, on a ring of
// the file's own.  A window starts with two blocks (or two requests) in
// flight and doubles that with every read of the stream up to its size, so
// the stream's first reads do not wait for the whole window at once.  A
// stream need not be made of equal, adjacent requests: a checkpoint
// restore reads records of every size with a small header
// between them, and the headers go through the page cache while the
// records come from the window (a read that starts up to 1 MiB past the
// previous one's end continues the stream).  A read the window holds all
// of waits for its blocks, puts the stream's next ones in flight, and
// copies its own out.  Anything else - a read
// elsewhere, past what is in flight, a failed or short read-ahead - gives
// the window up and the read is done as without read-ahead, so errors and
// EOF are reported exactly by the caller's own read.
//
// Coherence: never a stale byte.  A window only runs under a kernel read
// lease (read_lease.h) on a read-only O_DIRECT descriptor of its own, and
// everything in it was read after the lease of its generation was taken.
// A read served from the window checks, after it began and before it
// copies, that this lease is still held and the generation unchanged.  The
// argument, for a write W (or truncate, fallocate, hole punch, store into a
// shared mapping) by any process that returned before a read R began:
//  - W needed a descriptor open for writing (or was a truncate(2)).  If
//    that open (truncate) came before the lease was taken, the descriptor
//    was closed by then - the kernel refuses a read lease while the file is
//    open for writing anywhere - so W had returned before the lease was
//    taken and every byte read ahead under it was read after W;
//  - else the open (truncate) broke the lease before W began, so before R
//    began: R's check sees the break (F_GETLEASE says F_UNLCK from the
//    start of the break on; the watcher moves the generation on before it
//    releases the lease, and a lease taken again has a new generation) and
//    R is done as without read-ahead.
// In-process writes through the library move the generation on as well
// (they also needed a writable open, so this is only belt and braces).
// Without a lease (read_lease.h lists who cannot have one; a file the
// program itself has open for writing is the common case) nothing is read
// ahead and reads behave as without read-ahead.  Not covered: writes that
// bypass the file (the block device under the filesystem).
//
// Memory: staging is bounded per process (kProcessLimit); a window that
// cannot get its buffers simply reads ahead less.  Descriptors: the lease
// descriptor and the ring's, both private (private_fd.h), per file with a
// window.
//
// Thread-safety: all calls may come from any thread; they serialise on the
// window.  fork(): a child gives up the parent's window without touching it
// (its ring is shared with the parent; its lock may be held by a parent
// thread) and starts its own, with a lease of its own; the abandoned
// buffers are the child's copy (read_lease.h: what happens to the lease).
#pragma once

#include <atomic>
#include <cstdint>

namespace hybridio {

class File;
class Stats;

class ReadAhead {
 public:
  // Staging memory of all windows of the process together.
  static constexpr uint64_t kProcessLimit = 256ULL << 20;
  // The most a window grows to hold two requests of a stream of large ones.
  static constexpr uint64_t kLargeRequestWindow = kProcessLimit / 2;

  // The bytes to keep in flight ahead of a stream of `len`-byte reads with
  // HYBRIDIO_READ_AHEAD = `configured` (0: off): at least two requests,
  // up to kLargeRequestWindow, since a window of fewer than two does no
  // better than one request's own chunks in flight.  A cold 64 MiB read
  // stream with a 32 MiB setting otherwise had no window at all and read
  // at about half the rate of uncached reads (regret matrix, 2026-11-24).
  static uint64_t window_for(uint64_t configured, uint64_t len) {
    if (!configured) return 0;
    const uint64_t two = len <= kLargeRequestWindow / 2 ? 2 * len : kLargeRequestWindow;
    return configured > two ? configured : two;
  }
  // `owner` owns the window's private descriptors (private_fd.h).
  explicit ReadAhead(File* owner) : owner_(owner) {}
  ~ReadAhead();
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // What a served read puts in flight before it copies (serve()): the
  // `ahead` and `limit` its advance() will be called with.
  struct Refill {
    uint64_t ahead = 0;
    uint64_t limit = ~0ULL;
  };

  // Serves the direct read [offset, offset + len) into `buf` from the window:
  // `len` when it did, 0 when the caller must read it itself (the window is
  // then given up, unless it was empty).  Under the LD_PRELOAD shim the copy
  // stops at the end of the caller's memory (checked_copy.h), and then the
  // caller's own read reports it.  With `refill`, a read of the stream that
  // the window serves first puts in flight what advance() would put after
  // it, then copies: the device reads on while the read copies out.  16 MiB
  // reads in a 32 MiB window otherwise left it idle for a copy in every
  // two reads (the blocks in flight complete together on the development
  // VM): 2.1-2.5 GB/s against 2.8 with the refill first.
  uint64_t serve(char* buf, uint64_t len, uint64_t offset, Stats& stats, const Refill* refill = nullptr);

  // After a direct read of [offset, offset + len) that transferred all of it
  // (served or not): when it continues the previous one (starts at or up to
  // 1 MiB after its end), keeps the `ahead` bytes after it in flight, under
  // a read lease on the file behind `fd` (taken here when none is held).
  // `limit`: nothing is put in flight that starts `limit` bytes or more
  // past the read's end (the stream goes elsewhere there); blocks already
  // in flight stay, and are still served.  0 holds the window: nothing new
  // is put in flight.
  void advance(int fd, uint64_t len, uint64_t offset, uint64_t ahead, Stats& stats, uint64_t limit = ~0ULL);

  // Before a direct read of [offset, offset + len) that advance() will
  // follow: a read at the file's beginning, of 16 MiB or more, of a file
  // with two more such requests after it, starts the window with itself in
  // it (the blocks from 0 to `ahead`, or `limit` if less), so that serve()
  // reads it from there.  Anything else: nothing.  The read goes on as
  // usual whatever happened (no lease: it is read alone).
  void begin(int fd, uint64_t len, uint64_t offset, uint64_t ahead, uint64_t limit);

  // Whether a read at `offset` belongs to the window's start: it lies
  // between the read that last started the window and the end of the
  // blocks put in flight then (primed_end()).  Those reads pay once per
  // stream for what a stream of direct reads does not pay per byte: the
  // lease, the ring and the staging memory, and the first fill, for which
  // the blocks in flight at once all wait together.  Timed, the first 4 MiB
  // of a window of 64 KiB reads took 1.5-5.8 ns/byte (0.35 in the stream
  // after them); the device serves the blocks past them in turn, at the
  // stream's pace.  The learner does not measure them (file_learning.cc).
  bool priming(uint64_t offset) const {
    return offset >= start_offset_.load(std::memory_order_relaxed) &&
           offset < primed_end_.load(std::memory_order_relaxed);
  }
  uint64_t primed_end() const { return primed_end_.load(std::memory_order_relaxed); }

  // Whether the window has reads in flight or ready to be served.
  bool busy();
  // Whether it has reads in flight (not reaped yet).
  bool in_flight();

  // Whether a window could run for the file behind `fd` now: a read lease
  // is held (taken here if possible).  The policy's HIO_FILE_READ_PIPELINE.
  bool pipeline_available(int fd);

  // An in-process write, truncate or mapping: nothing read ahead before it
  // is served.
  void invalidate();

  // The program closed `fd`; true when it was the window's lease descriptor
  // (the window is then given up; the descriptor is not closed again).
  bool forget_fd(int fd);

  // Waits for the window's reads in flight, releases its buffers and its
  // lease (the file is being closed).
  void drop();

  // Testing: staging bytes held by all windows of the process.
  static uint64_t staged_bytes();
  // Windows of the process (of any file) with reads in flight: submitted
  // and not reaped yet (a window nobody reads from any more keeps counting
  // until the file is closed or read again).
  static int windows_in_flight();
  // Whether two windows of the process have had reads in flight at the same
  // time, ever: the process reads several streams at once (a restore of
  // several ranks).  forget_overlap(): testing, a process that has not.
  static bool windows_overlapped();
  static void forget_overlap();

 private:
  struct Window;
  Window* window();  // this process's window (a forked child replaces the parent's)

  File* const owner_;
  std::atomic<Window*> window_{nullptr};
  // The window's last start (priming()): a torn pair costs one sample at most.
  std::atomic<uint64_t> start_offset_{~0ULL};
  std::atomic<uint64_t> primed_end_{0};
};

}  // namespace hybridio
