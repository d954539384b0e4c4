// drop_behind.h - uncached writes whose writeback and page drop run behind
// the call, in the kernel's io_uring workers.
//
// A write with RWF_DONTCACHE copies into the page cache, then submits the
// range's writeback before it returns.  Where that submission waits for
// room in the device queue (ext4), the call lasts about as long as the
// device takes, of which the copy is a fraction, and the program's own work
// between its writes (a CRC of the next record) never overlaps the device
// (docs/performance.md).  A drop-behind write is
// a buffered write of the program's own, then handed to the library's
// worker thread (hybridio-drop), which runs four requests for it on a ring
// of its own, linked so that each runs after the one before it, in the
// kernel's io_uring workers:
//   a read-only open of the file into a fixed-file slot,
//   sync_file_range(WAIT_BEFORE | WRITE | WAIT_AFTER) of the range written,
//   posix_fadvise(POSIX_FADV_DONTNEED) of it (its pages are clean now),
//   the close of the slot.
// The call returns once the write is handed over.  A thread of the
// library's own submits them because a ring's completions run as task work
// of the submitting thread, which the kernel flags as a pending signal: a
// program thread with requests in flight would see reads of /dev/zero or
// a pipe come back short.
//
// What the program sees is a buffered write's: the bytes are in the page
// cache when the call returns, for every reader; durability comes from its
// own fsync, which writes back and waits for every page of the file,
// whoever started the writeback.  The requests run on an open file of the
// library's own, opened through /proc/self/fd/N into a fixed-file slot (no
// descriptor number, as the O_DIRECT twins; it resolves the number when it
// runs, and the shim's close of the number first waits for the opens of
// the writes through it (drop_behind_before_close()); a number closed
// without the shim seeing it and reused meanwhile gets the range of its
// new file written back and dropped early, and nothing more), so
// the writeback error that sync_file_range's wait consumes is that file's:
// the program's own file still reports it at its fsync.  (The kernel's
// legacy AS_EIO/AS_ENOSPC flags are cleared by that wait, as by any fsync;
// ext4, xfs and btrfs report through the error sequence.)  The open file
// shows as another open and close to inotify, as a twin does.
//
// Memory: the bytes written this way and not yet dropped are bounded per
// process (drop_behind_limit, 1 GiB); a write beyond it first waits for
// earlier ones, as RWF_DONTCACHE would have waited.  exit() waits for
// every write handed over to be dropped (an atexit handler; the shim's
// _exit() does the same), so that a program's last writes leave the cache
// as its earlier ones did.  A forked child starts a worker of its own when
// it first needs one.
//
// Where the kernel has no such ring (before 5.19) or no thread can be
// made, begin() says no and the caller writes with RWF_DONTCACHE.  A file
// that cannot be opened again (its permissions changed since the program
// opened it) keeps the pages of the write cached, as a plain buffered
// write does (drop_behind.refused).
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace hybridio {

class Stats;

class DropBehind {
 public:
  // `limit`: the bytes written this way and not yet dropped, per process
  // (the drop_behind_limit setting); the writes are counted in `stats`,
  // which outlives the process's last drop-behind write.
  DropBehind(uint64_t limit, Stats& stats) : limit_(limit), stats_(stats) {}

  // Prepares a drop-behind write of `len` bytes through descriptor `fd`:
  // waits for room under the limit.  false: not possible (the caller then
  // writes uncached itself).
  bool begin(int fd, uint64_t len);
  // The write of begin() moved `done` bytes at `offset` (0: nothing, or it
  // failed): it is handed to the worker, which submits its requests.
  void finish(uint64_t offset, uint64_t done);

  ~DropBehind();  // an unfinished begin() ends with nothing written
  DropBehind(const DropBehind&) = delete;
  DropBehind& operator=(const DropBehind&) = delete;

 private:
  const uint64_t limit_;
  Stats& stats_;
  int fd_ = -1;  // the write's descriptor between begin() and finish()
  dev_t dev_ = 0;  // and its file
  ino_t ino_ = 0;
};

// Whether writes of `len` bytes are large enough to drop behind: `min`
// is the drop_behind setting (0: off); begin() says whether it can run.
bool drop_behind_wanted(uint64_t len, uint64_t min);

// The program is about to close descriptors [first, last]: waits until
// the worker has opened the file of every write handed over through one
// of them.  Its open resolves the number when it runs, so a write whose
// open ran after the close would keep its pages cached.
void drop_behind_before_close(unsigned first, unsigned last);

// The program is about to fsync (fdatasync) descriptor `fd`: waits until
// every write to its file handed over is dropped.  A writeback the fsync
// starts while a write's sync_file_range runs can leave that request
// returning before the range is written, and the fadvise after it finding
// the pages locked or under writeback: they would stay cached.
void drop_behind_before_sync(int fd);

// Waits until every drop-behind write handed over is dropped.
void drop_behind_drain();
// drop_behind_drain(), then ends the worker thread and closes its ring:
// from then on begin() says no in this process (uncached writes take
// RWF_DONTCACHE).  For a process about to enter a seccomp mode, where the
// thread would outlive the program's last one (strict mode leaves only
// exit(2), which ends one thread).
void drop_behind_stop();

}  // namespace hybridio
