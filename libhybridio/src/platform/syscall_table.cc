// syscall_table.cc - see syscall_table.h.
#include "platform/syscall_table.h"

#include <fcntl.h>
#include <liburing.h>
#include <unistd.h>

namespace hybridio {
namespace {

// Plain functions rather than the libc symbols themselves: open(2) is
// variadic, and fstat and friends may be inline wrappers in some libcs.
ssize_t real_pread(int fd, void* buf, size_t len, off_t offset) { return ::pread(fd, buf, len, offset); }
ssize_t real_pwrite(int fd, const void* buf, size_t len, off_t offset) { return ::pwrite(fd, buf, len, offset); }
ssize_t real_preadv2(int fd, const iovec* iov, int n, off_t offset, int flags) {
  return ::preadv2(fd, iov, n, offset, flags);
}
ssize_t real_pwritev2(int fd, const iovec* iov, int n, off_t offset, int flags) {
  return ::pwritev2(fd, iov, n, offset, flags);
}
ssize_t real_write(int fd, const void* buf, size_t len) { return ::write(fd, buf, len); }
int real_fsync(int fd) { return ::fsync(fd); }
int real_fdatasync(int fd) { return ::fdatasync(fd); }
int real_ftruncate(int fd, off_t length) { return ::ftruncate(fd, length); }
int real_fallocate(int fd, int mode, off_t offset, off_t len) { return ::fallocate(fd, mode, offset, len); }
int real_fstat(int fd, struct stat* st) { return ::fstat(fd, st); }
int real_open(const char* path, int flags, mode_t mode) { return ::open(path, flags, mode); }
int real_close(int fd) { return ::close(fd); }
int real_ring_enter(io_uring* ring, unsigned wait_nr, bool submit) {
  if (submit) return io_uring_submit_and_wait(ring, wait_nr);
  io_uring_cqe* cqe = nullptr;
  return io_uring_wait_cqe_nr(ring, &cqe, wait_nr);
}

constexpr SyscallTable kReal = {
    real_pread, real_pwrite, real_preadv2, real_pwritev2, real_write, real_fsync, real_fdatasync,
    real_ftruncate, real_fallocate, real_fstat, real_open, real_close, real_ring_enter,
};

}  // namespace

namespace detail {
std::atomic<const SyscallTable*> g_syscalls{&kReal};
}

const SyscallTable& real_syscalls() { return kReal; }

void set_syscalls_for_testing(const SyscallTable* table) {
  detail::g_syscalls.store(table ? table : &kReal, std::memory_order_release);
}

}  // namespace hybridio
