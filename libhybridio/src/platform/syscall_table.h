// syscall_table.h - the system calls the engine makes, through one table
// that tests can replace to inject faults (leveldb's EnvWrapper, as a table).
//
// Every pread/pwrite/preadv2/pwritev2/fsync/fdatasync/ftruncate/fallocate/
// fstat/open/close of the engine's own I/O (file/, io/uring_engine.cc,
// io/write_behind.cc) and every entry into an io_uring
// (io/ring_loop.cc) goes through sys().  The default table calls the real
// functions; a test installs a copy of real_syscalls() with some entries
// replaced by functions that fail, shorten or delay a call and otherwise
// call the real one, so the engine runs on real files underneath.  What a
// completed io_uring request returned is injected with set_completion_hook()
// (uring_engine.h) instead: the kernel, not a call, produces it.
//
// Not covered: the LD_PRELOAD shim's interposed libc calls (the shim must
// reach the real libc), and calls made only at set-up (ring creation,
// buffer registration, /proc look-ups).
//
// Conventions are those of the real calls: libc's -1 with errno for the
// POSIX entries, liburing's -errno for ring_enter.  Cost on the fast path:
// one relaxed load and one indirect call per system call.
//
// Thread-safety: the table is read by every thread without a lock; install
// one only while no other thread does I/O through the engine, and keep it
// alive until it is replaced.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>

struct io_uring;

namespace hybridio {

struct SyscallTable {
  ssize_t (*pread)(int fd, void* buf, size_t len, off_t offset);
  ssize_t (*pwrite)(int fd, const void* buf, size_t len, off_t offset);
  ssize_t (*preadv2)(int fd, const iovec* iov, int iovcnt, off_t offset, int flags);
  ssize_t (*pwritev2)(int fd, const iovec* iov, int iovcnt, off_t offset, int flags);
  ssize_t (*write)(int fd, const void* buf, size_t len);
  int (*fsync)(int fd);
  int (*fdatasync)(int fd);
  int (*ftruncate)(int fd, off_t length);
  int (*fallocate)(int fd, int mode, off_t offset, off_t len);
  int (*fstat)(int fd, struct stat* st);
  int (*open)(const char* path, int flags, mode_t mode);
  int (*close)(int fd);
  // Hands the prepared entries of `ring` to the kernel (`submit`) and waits
  // until `wait_nr` completions are ready: io_uring_submit_and_wait(), or
  // without `submit` io_uring_wait_cqe_nr() (which consumes nothing).
  // Entries submitted (>= 0) or -errno.
  int (*ring_enter)(io_uring* ring, unsigned wait_nr, bool submit);
};

namespace detail {
extern std::atomic<const SyscallTable*> g_syscalls;
}

// The table in use.
inline const SyscallTable& sys() { return *detail::g_syscalls.load(std::memory_order_relaxed); }

// The real calls (the default table).
const SyscallTable& real_syscalls();

// Testing: uses `table` from now on (nullptr: the real calls again).
void set_syscalls_for_testing(const SyscallTable* table);

}  // namespace hybridio
