// interpose.cc - the symbols libhybridio_preload.so exports in place of
// libc's.  Each wrapper either passes the call straight to libc (the common
// case: small requests, other file types, re-entry from the engine) or
// hands it to the shim (shim.h).  Wrappers keep libc's conventions: -1 and
// errno on failure, errno untouched on success.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <climits>
#include <cstdint>

#include "io/lease_guard.h"
#include "preload/copy_offload.h"
#include "preload/exact_call.h"
#include "preload/real_libc.h"
#include "preload/shim.h"

using hybridio::preload::accel_stdio;
using hybridio::preload::candidate_size;
using hybridio::preload::Guard;
using hybridio::preload::lookup;
using hybridio::preload::real;
using hybridio::preload::TrackedRef;
namespace shim = hybridio::preload;

#define HIO_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

ssize_t finish(ssize_t r, int saved_errno) {
  if (r < 0) {
    errno = static_cast<int>(-r);
    return -1;
  }
  errno = saved_errno;
  return r;
}

// Tries the accelerated path; returns false (and leaves *out alone) to fall
// through to libc.  Whatever libc would refuse (a bad element count, an
// iovec array at a null address, lengths that overflow) goes to libc,
// which gives the kernel's own error.
bool try_io(int fd, bool write, const iovec* iov, int count, off_t at, ssize_t* out) {
  if (count <= 0 || count > IOV_MAX || reinterpret_cast<uintptr_t>(iov) < 4096) return false;
  if (shim::is_ignored(fd)) return false;  // pipes, sockets, terminals: no look at the iovecs at all
  size_t total = 0;
  for (int i = 0; i < count; ++i) {
    if (iov[i].iov_len > static_cast<size_t>(SSIZE_MAX) - total) return false;  // EINVAL
    total += iov[i].iov_len;
  }
  if (total < candidate_size(write)) return false;
  Guard guard;
  if (!guard.entered()) return false;
  int saved = errno;
  TrackedRef t = lookup(fd);
  ssize_t r;
  if (!t || !shim::exact_call(t, fd, write, iov, count, at, total, &r)) {
    errno = saved;
    return false;
  }
  shim::after_accelerated_call();
  *out = finish(r, saved);
  return true;
}

int mode_arg(int flags, va_list ap) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, int) : 0;
}

int after_open(int fd) {
  if (fd >= 0) shim::on_opened(fd);
  return fd;
}

int real_open(const char* path, int flags, int mode) {
  return real().open ? real().open(path, flags, mode) : static_cast<int>(syscall(SYS_openat, AT_FDCWD, path, flags, mode));
}

int real_openat(int dirfd, const char* path, int flags, int mode) {
  return real().openat ? real().openat(dirfd, path, flags, mode)
                       : static_cast<int>(syscall(SYS_openat, dirfd, path, flags, mode));
}

ssize_t real_read(int fd, void* buf, size_t n) {
  return real().read ? real().read(fd, buf, n) : syscall(SYS_read, fd, buf, n);
}

ssize_t real_write(int fd, const void* buf, size_t n) {
  return real().write ? real().write(fd, buf, n) : syscall(SYS_write, fd, buf, n);
}

ssize_t real_pread(int fd, void* buf, size_t n, off_t off) {
  return real().pread ? real().pread(fd, buf, n, off) : syscall(SYS_pread64, fd, buf, n, off);
}

ssize_t real_pwrite(int fd, const void* buf, size_t n, off_t off) {
  return real().pwrite ? real().pwrite(fd, buf, n, off) : syscall(SYS_pwrite64, fd, buf, n, off);
}

int real_close(int fd) { return real().close ? real().close(fd) : static_cast<int>(syscall(SYS_close, fd)); }

}  // namespace

// ---- opens -------------------------------------------------------------

HIO_EXPORT int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int mode = mode_arg(flags, ap);
  va_end(ap);
  return after_open(real_open(path, flags, mode));
}

HIO_EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int mode = mode_arg(flags, ap);
  va_end(ap);
  return after_open(real_openat(dirfd, path, flags, mode));
}

// _FORTIFY_SOURCE variants: no mode argument (O_CREAT without one is caught at compile time).
HIO_EXPORT int __open_2(const char* path, int flags) { return after_open(real_open(path, flags, 0)); }
HIO_EXPORT int __openat_2(int dirfd, const char* path, int flags) {
  return after_open(real_openat(dirfd, path, flags, 0));
}

HIO_EXPORT int creat(const char* path, mode_t mode) {
  return after_open(real_open(path, O_CREAT | O_WRONLY | O_TRUNC, static_cast<int>(mode)));
}

// ---- reads and writes --------------------------------------------------

HIO_EXPORT ssize_t read(int fd, void* buf, size_t n) {
  iovec iov{buf, n};
  ssize_t r;
  if (try_io(fd, false, &iov, 1, -1, &r)) return r;
  return real_read(fd, buf, n);
}

HIO_EXPORT ssize_t write(int fd, const void* buf, size_t n) {
  iovec iov{const_cast<void*>(buf), n};
  ssize_t r;
  if (try_io(fd, true, &iov, 1, -1, &r)) return r;
  return real_write(fd, buf, n);
}

HIO_EXPORT ssize_t pread(int fd, void* buf, size_t n, off_t off) {
  iovec iov{buf, n};
  ssize_t r;
  if (off >= 0 && try_io(fd, false, &iov, 1, off, &r)) return r;
  return real_pread(fd, buf, n, off);
}

HIO_EXPORT ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  iovec iov{const_cast<void*>(buf), n};
  ssize_t r;
  if (off >= 0 && try_io(fd, true, &iov, 1, off, &r)) return r;
  return real_pwrite(fd, buf, n, off);
}


HIO_EXPORT ssize_t readv(int fd, const iovec* iov, int count) {
  ssize_t r;
  if (try_io(fd, false, iov, count, -1, &r)) return r;
  return real().readv(fd, iov, count);
}

HIO_EXPORT ssize_t writev(int fd, const iovec* iov, int count) {
  ssize_t r;
  if (try_io(fd, true, iov, count, -1, &r)) return r;
  return real().writev(fd, iov, count);
}

HIO_EXPORT ssize_t preadv(int fd, const iovec* iov, int count, off_t off) {
  ssize_t r;
  if (off >= 0 && try_io(fd, false, iov, count, off, &r)) return r;
  return real().preadv(fd, iov, count, off);
}

HIO_EXPORT ssize_t pwritev(int fd, const iovec* iov, int count, off_t off) {
  ssize_t r;
  if (off >= 0 && try_io(fd, true, iov, count, off, &r)) return r;
  return real().pwritev(fd, iov, count, off);
}


// With RWF_* flags the caller asked for specific semantics: passed through.
HIO_EXPORT ssize_t preadv2(int fd, const iovec* iov, int count, off_t off, int flags) {
  ssize_t r;
  if (flags == 0 && off >= -1 && try_io(fd, false, iov, count, off, &r)) return r;
  return real().preadv2(fd, iov, count, off, flags);
}

HIO_EXPORT ssize_t pwritev2(int fd, const iovec* iov, int count, off_t off, int flags) {
  ssize_t r;
  if (flags == 0 && off >= -1 && try_io(fd, true, iov, count, off, &r)) return r;
  return real().pwritev2(fd, iov, count, off, flags);
}


// _FORTIFY_SOURCE checked reads.
extern "C" void __chk_fail(void) __attribute__((noreturn));
HIO_EXPORT ssize_t __read_chk(int fd, void* buf, size_t n, size_t buflen) {
  if (n > buflen) __chk_fail();
  return read(fd, buf, n);
}
HIO_EXPORT ssize_t __pread_chk(int fd, void* buf, size_t n, off_t off, size_t buflen) {
  if (n > buflen) __chk_fail();
  return pread(fd, buf, n, off);
}

// ---- syncs -------------------------------------------------------------

HIO_EXPORT int fsync(int fd) { return shim::timed_sync(fd, false); }
HIO_EXPORT int fdatasync(int fd) { return shim::timed_sync(fd, true); }

// ---- copies the kernel would make without the shim (copy_offload.h) ---

namespace {
const shim::CopyIo kCopyIo{&read, &write, &pread, &pwrite};
}

HIO_EXPORT ssize_t copy_file_range(int in, off_t* in_off, int out, off_t* out_off, size_t len, unsigned flags) {
  const int saved = errno;
  const ssize_t r = real().copy_file_range ? real().copy_file_range(in, in_off, out, out_off, len, flags)
                                           : syscall(SYS_copy_file_range, in, in_off, out, out_off, len, flags);
  if (r >= 0 || errno != EXDEV || shim::passthrough()) return r;
  ssize_t copied;
  if (!shim::copy_across_filesystems(in, in_off, out, out_off, len, kCopyIo, &copied)) {
    errno = EXDEV;
    return -1;
  }
  return finish(copied, saved);
}

HIO_EXPORT ssize_t sendfile(int out, int in, off_t* offset, size_t count) {
  const int saved = errno;
  ssize_t r;
  if (!shim::passthrough() && shim::sendfile_between_files(out, in, offset, count, kCopyIo, &r)) return finish(r, saved);
  errno = saved;
  return real().sendfile ? real().sendfile(out, in, offset, count) : syscall(SYS_sendfile, out, in, offset, count);
}

// ---- stdio: glibc's FILE calls its internal write/read, never the symbols above.

HIO_EXPORT size_t fwrite(const void* buf, size_t size, size_t count, FILE* stream) {
  if (size && count && size * count >= candidate_size(true)) {
    Guard guard;
    if (guard.entered()) {
      int saved = errno;
      size_t r = accel_stdio(true, const_cast<void*>(buf), size, count, stream);
      if (r != static_cast<size_t>(-1)) return r;
      errno = saved;
    }
  }
  return real().fwrite(buf, size, count, stream);
}

HIO_EXPORT size_t fread(void* buf, size_t size, size_t count, FILE* stream) {
  if (size && count && size * count >= candidate_size(false)) {
    Guard guard;
    if (guard.entered()) {
      int saved = errno;
      size_t r = accel_stdio(false, buf, size, count, stream);
      if (r != static_cast<size_t>(-1)) return r;
      errno = saved;
    }
  }
  return real().fread(buf, size, count, stream);
}

HIO_EXPORT int fclose(FILE* stream) {
  int fd = stream ? fileno(stream) : -1;
  if (fd >= 0) shim::on_close(fd);  // fclose closes with libc's internal close
  return real().fclose(stream);
}

// ---- descriptor life ---------------------------------------------------

HIO_EXPORT int close(int fd) {
  shim::on_close(fd);
  return real_close(fd);
}

HIO_EXPORT int close_range(unsigned first, unsigned last, int flags) {
  if (!(flags & CLOSE_RANGE_CLOEXEC)) shim::on_close_range(first, last);
  return real().close_range ? real().close_range(first, last, flags)
                            : static_cast<int>(syscall(SYS_close_range, first, last, flags));
}

HIO_EXPORT void closefrom(int low) {
  if (low >= 0) shim::on_close_range(static_cast<unsigned>(low), ~0U);
  real().closefrom(low);
}

HIO_EXPORT int dup(int fd) { return after_open(real().dup(fd)); }

HIO_EXPORT int dup2(int fd, int target) {
  if (fd != target) shim::on_replaced(target);
  return after_open(real().dup2(fd, target));
}

HIO_EXPORT int dup3(int fd, int target, int flags) {
  if (fd != target) shim::on_replaced(target);
  return after_open(real().dup3(fd, target, flags));
}

// The third argument is an int or a pointer depending on cmd; both travel
// in one register, so it is forwarded as a pointer-sized value.
HIO_EXPORT int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
    return after_open(real().fcntl(fd, cmd, static_cast<int>(reinterpret_cast<intptr_t>(arg))));
  // A lease waits for the library's opens of other threads to end, and
  // none starts while it is held (lease_guard.h).
  if (cmd == F_SETLEASE) return hybridio::set_lease(fd, static_cast<int>(reinterpret_cast<intptr_t>(arg)), real().fcntl);
  int r = real().fcntl(fd, cmd, arg);
  // New status flags (O_APPEND, O_DIRECT, ...) on this open file: look at it afresh.
  if (cmd == F_SETFL && r == 0) shim::on_replaced(fd);
  return r;
}

HIO_EXPORT void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  if (fd >= 0 && !(flags & MAP_ANONYMOUS)) {
    Guard guard;
    if (guard.entered()) {
      int saved = errno;
      shim::on_mapped(fd);
      errno = saved;
    }
  }
  return real().mmap(addr, len, prot, flags, fd, off);
}


// ---- seccomp ------------------------------------------------------------
// A program entering a seccomp mode through libc: the shim finishes what
// it has in flight and passes everything through from then on
// (shim::before_sandbox).  syscall(2) is variadic and its arguments are
// six longs in registers: forwarded as six longs, whatever the number.

namespace {

// syscall(2) without libc, for the moment the table is being resolved.
long raw_syscall6(long n, long a, long b, long c, long d, long e, long f) {
#if defined(__x86_64__)
  long r;
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  __asm__ volatile("syscall"
                   : "=a"(r)
                   : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
#elif defined(__aarch64__)
  register long x8 __asm__("x8") = n;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  register long x3 __asm__("x3") = d;
  register long x4 __asm__("x4") = e;
  register long x5 __asm__("x5") = f;
  __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
  long r = x0;
#else
#error "raw_syscall6: add this architecture"
#endif
  if (r < 0 && r > -4096) {
    errno = static_cast<int>(-r);
    return -1;
  }
  return r;
}

bool enters_seccomp(long number, long a) {
  return (number == SYS_seccomp && (a == SECCOMP_SET_MODE_STRICT || a == SECCOMP_SET_MODE_FILTER)) ||
         (number == SYS_prctl && a == PR_SET_SECCOMP);
}

}  // namespace

HIO_EXPORT long syscall(long number, ...) {
  va_list ap;
  va_start(ap, number);
  long a[6];
  for (long& v : a) v = va_arg(ap, long);
  va_end(ap);
  auto call = [&] {
    return real().syscall ? real().syscall(number, a[0], a[1], a[2], a[3], a[4], a[5])
                          : raw_syscall6(number, a[0], a[1], a[2], a[3], a[4], a[5]);
  };
  if (!enters_seccomp(number, a[0])) return call();
  const bool turned_on = shim::before_sandbox();
  const long r = call();
  shim::after_sandbox(turned_on, r == 0);
  return r;
}

HIO_EXPORT int prctl(int option, ...) {
  va_list ap;
  va_start(ap, option);
  unsigned long a[4];
  for (unsigned long& v : a) v = va_arg(ap, unsigned long);
  va_end(ap);
  auto call = [&] {
    return real().prctl ? real().prctl(option, a[0], a[1], a[2], a[3])
                        : static_cast<int>(raw_syscall6(SYS_prctl, option, static_cast<long>(a[0]), static_cast<long>(a[1]),
                                                        static_cast<long>(a[2]), static_cast<long>(a[3]), 0));
  };
  if (option != PR_SET_SECCOMP) return call();
  const bool turned_on = shim::before_sandbox();
  const int r = call();
  shim::after_sandbox(turned_on, r == 0);
  return r;
}

// ---- exit without atexit handlers ---------------------------------------

HIO_EXPORT void _exit(int status) {
  shim::before_exit();
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

HIO_EXPORT void _Exit(int status) { _exit(status); }

// ---- the 64-bit names ----------------------------------------------------
// On LP64 glibc, off_t is 64 bits and the *64 functions are the same
// functions under a second name: so are ours.

#define HIO_ALIAS(name, target) HIO_EXPORT __typeof__(target) name __attribute__((alias(#target)))
HIO_ALIAS(open64, open);
HIO_ALIAS(openat64, openat);
HIO_ALIAS(__open64_2, __open_2);
HIO_ALIAS(__openat64_2, __openat_2);
HIO_ALIAS(creat64, creat);
HIO_ALIAS(pread64, pread);
HIO_ALIAS(pwrite64, pwrite);
HIO_ALIAS(preadv64, preadv);
HIO_ALIAS(pwritev64, pwritev);
HIO_ALIAS(preadv64v2, preadv2);
HIO_ALIAS(pwritev64v2, pwritev2);
HIO_ALIAS(__pread64_chk, __pread_chk);
HIO_ALIAS(fcntl64, fcntl);
HIO_ALIAS(mmap64, mmap);
HIO_ALIAS(sendfile64, sendfile);
static_assert(sizeof(off_t) == 8, "the *64 aliases assume a 64-bit off_t");

// ---- start-up ----------------------------------------------------------

__attribute__((constructor)) static void hybridio_preload_init() { shim::initialize(); }
