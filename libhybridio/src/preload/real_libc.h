// real_libc.h - the C library's own functions, behind the shim's wrappers.
//
// Resolved with dlsym(RTLD_NEXT) once, from the shim's constructor (or on
// the first call that needs them, if that comes earlier).  While a
// resolution is in progress on this thread (dlsym may allocate, and an
// allocator may open files), the wrappers use raw system calls instead.
#pragma once

#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>

namespace hybridio::preload {

struct RealLibc {
  int (*open)(const char*, int, ...);
  int (*openat)(int, const char*, int, ...);
  int (*creat)(const char*, mode_t);
  ssize_t (*read)(int, void*, size_t);
  ssize_t (*write)(int, const void*, size_t);
  ssize_t (*pread)(int, void*, size_t, off_t);
  ssize_t (*pwrite)(int, const void*, size_t, off_t);
  ssize_t (*readv)(int, const struct iovec*, int);
  ssize_t (*writev)(int, const struct iovec*, int);
  ssize_t (*preadv)(int, const struct iovec*, int, off_t);
  ssize_t (*pwritev)(int, const struct iovec*, int, off_t);
  ssize_t (*preadv2)(int, const struct iovec*, int, off_t, int);
  ssize_t (*pwritev2)(int, const struct iovec*, int, off_t, int);
  size_t (*fread)(void*, size_t, size_t, FILE*);
  size_t (*fwrite)(const void*, size_t, size_t, FILE*);
  int (*fclose)(FILE*);
  int (*close)(int);
  int (*close_range)(unsigned, unsigned, int);
  void (*closefrom)(int);
  int (*dup)(int);
  int (*dup2)(int, int);
  int (*dup3)(int, int, int);
  int (*fcntl)(int, int, ...);
  void* (*mmap)(void*, size_t, int, int, int, off_t);
  ssize_t (*copy_file_range)(int, off_t*, int, off_t*, size_t, unsigned);
  ssize_t (*sendfile)(int, int, off_t*, size_t);
  int (*fsync)(int);
  int (*fdatasync)(int);
  int (*prctl)(int, ...);
  long (*syscall)(long, ...);
};

// The resolved table; entries may be null before resolution completes.
const RealLibc& real();
// Resolves every entry (idempotent, thread-safe).
void resolve_real();
// True while this thread is inside dlsym for the table.
bool resolving();

}  // namespace hybridio::preload
