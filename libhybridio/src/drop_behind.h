// drop_behind.h - uncached writes whose writeback and page drop run behind
// the call, in the kernel's io_uring workers.
//
// A write with RWF_DONTCACHE copies into the page cache, then submits the
// range's writeback before it returns.  On ext4 here that submission waits
// for room in the device queue, so the call lasts about as long as the
// device takes: 0.14-0.42 s for a 256 MiB call of torch.save, of which the
// copy is 0.03-0.08, and the program's own work between its writes (a CRC
// of the next record) never overlaps the device.  A drop-behind write is
// a buffered write of the program's own, followed by three requests on a
// ring of the calling thread's, linked so that each runs after the one
// before it, in an io_uring worker:
//   sync_file_range(WAIT_BEFORE | WRITE | WAIT_AFTER) of the range written,
//   posix_fadvise(POSIX_FADV_DONTNEED) of it (its pages are clean now),
//   the close of the open file they ran on.
// The call returns once they are submitted.
//
// What the program sees is a buffered write's: the bytes are in the page
// cache when the call returns, for every reader; durability comes from its
// own fsync, which writes back and waits for every page of the file,
// whoever started the writeback.  The requests run on an open file of the
// library's own, opened before the write through /proc/self/fd/N into a
// fixed-file slot (no descriptor number, as the O_DIRECT twins; checked to
// be the same inode afterwards), so the writeback error that
// sync_file_range's wait consumes is that file's: the program's own file
// still reports it at its fsync.  (The kernel's legacy AS_EIO/AS_ENOSPC
// flags are cleared by that wait, as by any fsync; no filesystem the
// library accelerates reports through them.)  The open file also shows as
// another open to inotify and to a write lease asked for meanwhile, as a
// twin does.
//
// Memory: the bytes written this way and not yet dropped are bounded per
// process (drop_behind_limit, 1 GiB); a write beyond it first waits for
// the calling thread's earlier ones, as RWF_DONTCACHE would have waited.
// A thread waits for its own before it exits.
//
// Where the kernel has no such ring (before 5.19), or the file cannot be
// opened again (permissions changed since it was opened), begin() says no
// and the caller writes with RWF_DONTCACHE.  Errors are -errno.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace hybridio {

class DropBehind {
 public:
  // Prepares a drop-behind write of `len` bytes through descriptor `fd`
  // (which has access mode `access`, O_RDONLY/O_WRONLY/O_RDWR): waits for
  // room under the limit, then opens the library's own file of the same
  // inode.  false: not possible now (the caller writes uncached itself).
  bool begin(int fd, int access, uint64_t len);
  // The write of begin() moved `done` bytes at `offset` (0: nothing, or it
  // failed): their writeback and drop are submitted, and the open file is
  // released after them.
  void finish(uint64_t offset, uint64_t done);

  DropBehind() = default;
  ~DropBehind();  // an unfinished begin() is finished with nothing written
  DropBehind(const DropBehind&) = delete;
  DropBehind& operator=(const DropBehind&) = delete;

 private:
  int slot_ = -1;
};

// Whether writes of `len` bytes under the policy in effect drop behind
// (drop_behind setting, a usable ring).
bool drop_behind_wanted(uint64_t len);

// Waits until every drop-behind write of the calling thread is dropped
// (tests; a thread also does it before it exits).
void drop_behind_drain();

}  // namespace hybridio
