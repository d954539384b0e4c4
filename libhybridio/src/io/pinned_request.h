// pinned_request.h - one direct-bound request of the LD_PRELOAD shim, held
// on the program's open file from its start to its end.
//
// Under the shim (transparent mode, uring_engine.h) the engine owns no
// descriptor.  A request the policy sends direct runs inside a
// PinnedRequest, on the calling thread's ring:
//  - begin() puts the open file that the program's descriptor refers to
//    *now* into fixed-file slot 0.  Like the kernel's fdget() for one
//    system call, every piece of the request then works on that open file,
//    even if another thread closes the number and reuses it meanwhile;
//  - open_twin() reopens the file with O_DIRECT into slot 1, for this
//    request only.  An open into a fixed slot never enters the program's
//    descriptor table: no number is taken, RLIMIT_NOFILE is not touched,
//    nothing shows in /proc/self/fd, and its release is an fput(), not a
//    close(), so the process's POSIX record locks on the file survive (a
//    close(2) of any descriptor of a file drops them all);
//  - buffered() and direct() run one kernel request each on those slots;
//  - the destructor releases both slots.
// Costs: a pin and unpin are two fixed-file updates; a twin is an open (run
// in an io-wq worker) and a close, small beside a direct write of MiBs.
//
// One PinnedRequest at a time per thread: it owns the thread ring's fixed
// slots.  current() hands the calling thread's request to the engine
// (file/execute.cc), which then routes every piece through it.  Errors are -errno.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "hybridio/policy.h"
#include "io/ring_loop.h"

namespace hybridio {

class PinnedRequest {
 public:
  PinnedRequest() = default;
  ~PinnedRequest();
  PinnedRequest(const PinnedRequest&) = delete;
  PinnedRequest& operator=(const PinnedRequest&) = delete;

  // Pins the open file behind `fd`, which the caller found to be inode
  // (`dev`, `ino`) with F_GETFL `status_flags` (the twin copies its access
  // mode, O_SYNC/O_DSYNC and O_NOATIME).  0, -EBADF when `fd` is not open,
  // -EOPNOTSUPP when no usable ring is available.
  int begin(int fd, int status_flags, dev_t dev, ino_t ino);

  // One read or write of the pinned open file at `offset`, with RWF_*
  // flags `rwf` (0, RWF_NOWAIT, RWF_DONTCACHE).  Bytes or -errno.
  ssize_t buffered(hio_op op, char* buf, size_t len, uint64_t offset, int rwf);

  // Opens the O_DIRECT twin if it is not open yet: 0 or -errno (-EINVAL:
  // the filesystem refuses O_DIRECT; -ESTALE: the descriptor number was
  // closed and reused meanwhile, so the twin would be of another file).
  int open_twin();

  // One direct transfer of at most 1 GiB on the twin.  Bytes or -errno.
  ssize_t direct(hio_op op, char* buf, size_t len, uint64_t offset);
  // The same in two halves, so that the caller can copy the next staged
  // chunk while this one is in flight: at most one at a time.  start_direct
  // returns 0 or -errno; finish_direct waits and returns bytes or -errno
  // (a transfer the kernel asks to retry is resubmitted and waited for).
  int start_direct(hio_op op, char* buf, size_t len, uint64_t offset);
  ssize_t finish_direct();

  // Direct reads do not update the access time on every filesystem (btrfs
  // skips it; ext4 and xfs do it), where the program's own read always
  // asks for it.  The engine notes each direct read; finish_reads() then
  // reads at `eof` through the pinned open file: no byte and no I/O, but
  // the kernel's access-time update by the file's own rules (O_NOATIME,
  // noatime, relatime).
  void note_direct_read() { direct_read_ = true; }
  void finish_reads(uint64_t eof);

  // The twin's fixed-file slot in the calling thread's ring, for transfers
  // the engine submits itself (parallel_direct with fixed_file).
  static int twin_slot();

  // The calling thread's request in progress, or nullptr.
  static PinnedRequest* current();

 private:
  // Submits the prepared SQEs and waits for all of them; results in order.
  int run(unsigned count, int* results);
  io_uring_sqe* next_sqe();
  // The completion of the transfer start_direct() submitted.
  void note_completion(int res);
  void prep_transfer(unsigned slot, hio_op op, char* buf, size_t len, uint64_t offset, int rwf);
  // One read or write of fixed slot `slot`, resubmitted while the kernel
  // asks to retry (-EINTR; -EAGAIN unless RWF_NOWAIT asked for it).
  ssize_t transfer(unsigned slot, hio_op op, char* buf, size_t len, uint64_t offset, int rwf);
  void end();

  io_uring* ring_ = nullptr;
  RingLoop loop_;  // the ring's submissions and completions (ring_loop.h)
  int fd_ = -1;
  int status_flags_ = 0;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  bool pinned_ = false;
  bool twin_ = false;
  bool direct_read_ = false;
  int twin_error_ = 0;  // an open_twin() that failed is not retried within the request
  int pinned_fds_[1] = {-1};
  struct InFlight {
    bool active = false;
    hio_op op = HIO_OP_READ;
    char* buf = nullptr;
    size_t len = 0;
    uint64_t offset = 0;
    bool completed = false;  // its completion has been reaped
    int res = 0;
  } in_flight_;
  char twin_path_[40] = {};
};

}  // namespace hybridio
