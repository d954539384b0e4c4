// read_ahead.h - read-ahead for sequential direct reads (opt-in:
// HYBRIDIO_READ_AHEAD=32M, or on for 32 MiB per stream).
//
// One thread reading a file direct in 4 MiB calls keeps at most one call's
// chunks in flight, and the device idles between calls: on the development
// VM that read 1.4-1.6 GB/s where fio with eight 4 MiB reads in flight read
// 2.7-3.2 GB/s.  Once two direct reads of a file follow each other, the
// window keeps the next requests of the same size in flight (up to
// HYBRIDIO_READ_AHEAD bytes) in aligned staging buffers from the NUMA-local
// pool, on a ring of the file's own; a read that matches the front of the
// window waits for it and copies it out.  Anything else - a read elsewhere,
// of another size, a failed or short read-ahead - gives the window up and
// the read is done as without read-ahead, so errors and EOF are reported
// exactly by the caller's own read.
//
// Coherence, and why it is opt-in: a direct read returns the file's bytes
// at the time of the call; data read ahead is from earlier.  The window is
// only used while the file has not visibly changed since it was started:
// every read from it first compares the file's change time (st_ctim) and
// size with those seen at the start, and a window only starts on a file
// unchanged for kQuietSeconds (longer than any filesystem's timestamp
// resolution: a tick on ext4, 2 s on FAT), so that any later write, truncate
// or hole punch - by any process, through any path, the library's own
// included - gives a different change time.  What this cannot see is a
// write that set the change time before the window started and was still
// copying its data afterwards (one buffered write call held up for seconds
// by writeback throttling).  So read-ahead is for files that nobody writes
// while they are read - a checkpoint being restored, dataset shards - and
// the caller turns it on.
//
// Memory: staging is bounded per process (kProcessLimit); a window that
// cannot get its buffers simply reads ahead less.
//
// Thread-safety: all calls may come from any thread; they serialise on the
// window.  fork(): a child gives up the parent's window without touching it
// (its ring is shared with the parent; its lock may be held by a parent
// thread) and starts its own; the abandoned buffers are the child's copy.
#pragma once

#include <atomic>
#include <cstdint>

namespace hybridio {

class Stats;

class ReadAhead {
 public:
  // Staging memory of all windows of the process together.
  static constexpr uint64_t kProcessLimit = 256ULL << 20;
  // A window starts only on a file whose change time is this much in the past.
  static constexpr int64_t kQuietSeconds = 3;

  ReadAhead() = default;
  ~ReadAhead();
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // Serves the direct read [offset, offset + len) into `buf` from the window:
  // `len` when it did, 0 when the caller must read it itself (the window is
  // then given up, unless it was empty).  `fd` is any descriptor of the file
  // (for its change time and size), `dfd` its O_DIRECT one.
  uint64_t serve(int fd, int dfd, char* buf, uint64_t len, uint64_t offset, Stats& stats);

  // After a direct read of [offset, offset + len) that transferred all of it
  // (served or not): when it continues the previous one, keeps up to `ahead`
  // bytes of the following requests of the same size in flight on the
  // O_DIRECT descriptor `dfd`.
  void advance(int fd, int dfd, uint64_t len, uint64_t offset, uint64_t ahead, Stats& stats);

  // Waits for the window's reads in flight and releases its buffers.
  void drop();

  // Testing: the quiet time before a window may start (kQuietSeconds when < 0).
  static void set_quiet_ns_for_testing(int64_t ns);
  // Testing: staging bytes held by all windows of the process.
  static uint64_t staged_bytes();

 private:
  struct Window;
  Window* window();  // this process's window (a forked child replaces the parent's)

  std::atomic<Window*> window_{nullptr};
};

}  // namespace hybridio
