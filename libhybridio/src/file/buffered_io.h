// buffered_io.h - the transfers of an open file (file.h) through the page
// cache, and the calling thread's memory that direct bodies and bounced
// reads are staged in.
//
// The transfers return what the system call would: bytes, or -1 with
// errno set.  The buffers are the calling thread's own (thread_local),
// kept between calls until release_thread_buffers().
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "hybridio/policy.h"

#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080  // Linux 6.14+ uapi value
#endif

namespace hybridio {

// Largest piece handed to one direct system call: Linux caps a single
// read/write at 0x7ffff000 bytes; stay well below and page aligned.
constexpr uint64_t kMaxDirectChunk = 1ULL << 30;

// One pread/pwrite on `fd`, or preadv2/pwritev2 with the flags `rwf`.
ssize_t sys_io(hio_op op, int fd, char* buf, size_t len, uint64_t offset, int rwf);

// A buffered transfer on the program's open file: through the request's
// pin under the shim (pinned_request.h), else on `fd`.
ssize_t buffered_io(hio_op op, int fd, char* buf, size_t len, uint64_t offset, int rwf);

// A buffered read as buffered_io(); reads that File::bounces_read() names
// go through the thread's bounce buffer at a harmless copy distance
// (checked_copy.h), stopping where the kernel's read would.
ssize_t buffered_read(int fd, char* buf, size_t len, uint64_t offset, int rwf);

// buffered_io(), with reads through buffered_read().
ssize_t cached_io(hio_op op, int fd, char* buf, size_t len, uint64_t offset, int rwf);

// The calling thread's bounce buffer: at least `size` bytes, aligned to
// `alignment` (at least 4096), grown on demand; nullptr without memory.
char* bounce_buffer(uint64_t size, uint32_t alignment);

// The calling thread's staging slot i (0 or 1) for misaligned direct
// bodies under the shim, at least `size` bytes; nullptr without memory.
char* staging_slot(int i, uint64_t size);

// Gives the calling thread's staging slots back to the pool and frees its
// bounce buffer.
void release_thread_buffers();

// The system's page size.
uint32_t page_bytes();

}  // namespace hybridio
