// read_lease.h - a kernel read lease (fcntl F_SETLEASE F_RDLCK) on a file,
// held on a read-only O_DIRECT descriptor of the library's own: the proof
// that nobody can have written the file since the lease was taken.
//
// What the kernel guarantees (fcntl(2) "Leases", F_GETLEASE(2const)):
//  - a read lease is refused (EAGAIN) while the file is open for writing
//    anywhere - any process, any descriptor, a shared writable mapping
//    (which keeps its open file) included;
//  - it is broken by every later open(2) for writing and every truncate(2)
//    of the file, by any process, ours included.  The breaker waits (up to
//    /proc/sys/fs/lease-break-time, 45 s by default) until the holder
//    releases the lease; from the moment the break starts F_GETLEASE on the
//    holder's descriptor says F_UNLCK;
//  - write(2), ftruncate(2), fallocate(2) (hole punching included),
//    copy_file_range(2) into the file and stores through a shared mapping
//    all need a descriptor open for writing.
// So while valid() is true, no write, truncate, fallocate or mapped store
// to the file through the kernel's file interfaces can have completed since
// the lease was taken.  Not covered: writes that bypass the file (to the
// block device under the filesystem, another host on a network filesystem
// whose client has no leases: there the lease is refused and nothing is
// read ahead).
//
// Notification: the kernel tells the holder of a break with a signal.  The
// library's watcher thread (one per process, started with the first lease)
// takes it: every lease descriptor is set to a realtime signal
// (lease_signal(), F_SETSIG) directed at the watcher thread alone
// (F_SETOWN_EX F_OWNER_TID), which blocks it and waits for it with
// sigwaitinfo.  The program's threads, masks and handlers never see it
// (SIGIO, whose default action kills, is never used).  For each break the
// watcher first moves the lease's generation on (no read started afterwards
// is served under the old lease), then releases the lease (F_UNLCK), and
// only that lets the breaker's open or truncate go on.  A signal of the
// same number that the program itself sends to the process and that the
// watcher happens to take is passed on, unchanged, to the main thread.
//
// Who cannot hold a lease (not the file's owner and no CAP_LEASE,
// fs.leases-enable = 0, a filesystem without leases, the file open for
// writing): hold() says false and the caller reads as without a lease.
//
// fork(): the lease belongs to the open file description, which a child
// shares.  The child closes its copies of every lease descriptor (so a
// child that outlives its parent does not keep a lease nobody watches) and
// starts its own leases and watcher when it needs them; the parent's lease
// and its notifications are unaffected.
//
// Thread-safety: one ReadLease is used by one thread at a time (the
// read-ahead window's lock); the watcher runs concurrently with it.
#pragma once

#include <atomic>
#include <cstdint>

namespace hybridio {

class File;

class ReadLease {
 public:
  ReadLease() = default;
  ~ReadLease();  // release()
  ReadLease(const ReadLease&) = delete;
  ReadLease& operator=(const ReadLease&) = delete;

  // Holds a read lease on the file behind `fd` (opening the lease
  // descriptor on first use, a private descriptor of `owner`, private_fd.h)
  // and sets *generation to the lease's generation.  false: no lease now
  // (see above); a refusal that will not change (no permission, no lease
  // support, no descriptor) is remembered and not retried.
  bool hold(int fd, File* owner, uint64_t* generation);
  // Whether the lease of `generation` is still held: nothing has broken or
  // invalidated it since hold() gave that generation.  One fcntl(2).
  bool valid(uint64_t generation) const;
  // Whether a lease is held now, without a system call (may be stale by a
  // break in progress; valid() is the exact answer).
  bool held() const;
  // Gives every generation up (an in-process write): the next hold() takes
  // a new lease generation.
  void invalidate();
  // Releases the lease and closes the descriptor.
  void release();
  // The program closed the lease descriptor (private_fd.h): forget it
  // without closing it; the lease went with it.
  bool forget(int fd);
  // The lease descriptor (read-only, O_DIRECT), or -1.
  int fd() const;

  // The realtime signal that lease breaks are reported with.
  static int lease_signal();
  // Testing: breaks noticed by the watcher in this process.
  static uint64_t breaks_seen();

  struct Entry;

 private:
  Entry* entry_ = nullptr;
  bool refused_ = false;  // permanently: no permission, no support, no descriptor
};

}  // namespace hybridio
