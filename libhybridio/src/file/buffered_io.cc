// buffered_io.cc - see buffered_io.h.
#include "file/buffered_io.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "file/file.h"
#include "io/pinned_request.h"
#include "io/uring_engine.h"
#include "memory/aligned_buffer.h"
#include "memory/buffer_pool.h"
#include "memory/checked_copy.h"
#include "platform/syscall_table.h"

namespace hybridio {
namespace {

// The calling thread's bounce buffer, grown on demand and kept for reuse.
thread_local AlignedBuffer t_bounce;

// The calling thread's staging slots for misaligned bodies under the
// shim: pool memory (huge pages, NUMA-local; a 4 MiB direct transfer
// from scattered 4 KiB pages runs at half speed on virtio-blk), kept.
thread_local PoolBuffer t_staging[2];

}  // namespace

ssize_t sys_io(hio_op op, int fd, char* buf, size_t len, uint64_t offset, int rwf) {
  if (rwf == 0) {
    return op == HIO_OP_READ ? sys().pread(fd, buf, len, static_cast<off_t>(offset))
                             : sys().pwrite(fd, buf, len, static_cast<off_t>(offset));
  }
  iovec iov{buf, len};
  return op == HIO_OP_READ ? sys().preadv2(fd, &iov, 1, static_cast<off_t>(offset), rwf)
                           : sys().pwritev2(fd, &iov, 1, static_cast<off_t>(offset), rwf);
}

char* bounce_buffer(uint64_t size, uint32_t alignment) {
  AlignedBuffer& buffer = t_bounce;
  size_t align = std::max<size_t>(alignment, 4096);
  if (buffer.size() < size || reinterpret_cast<uintptr_t>(buffer.data()) % align != 0)
    buffer = AlignedBuffer(size, align);
  return buffer.data();
}

uint32_t page_bytes() {
  static const uint32_t page = static_cast<uint32_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// A buffered transfer on the program's open file: through the request's
// pin under the shim (pinned_request.h), else on the descriptor.  Bytes, or
// -1 with errno set, as the system call.
ssize_t buffered_io(hio_op op, int fd, char* buf, size_t len, uint64_t offset, int rwf) {
  if (PinnedRequest* pin = PinnedRequest::current()) {
    ssize_t n = pin->buffered(op, buf, len, offset, rwf);
    if (n >= 0) return n;
    errno = static_cast<int>(-n);
    return -1;
  }
  return sys_io(op, fd, buf, len, offset, rwf);
}

// A buffered read of `len` bytes at `offset` into `buf`, as buffered_io().
// The kernel copies out of the page cache from the offset's place in a
// page; where that copy is slow at a short distance (checked_copy.h: a
// cached read into a malloc'd buffer, 16 bytes into a page, at a
// page-aligned offset), such reads (File::bounces_read) go through the
// thread's bounce buffer in pieces, placed half a page from the offset's
// place, so that the kernel's copy into it and the copy out of it (checked
// under the shim) are both at harmless distances.  Like the kernel's, the
// read stops at the end of the file, at an error after some bytes
// (returning those), and at the end of the caller's memory (EFAULT when
// nothing was copied).
ssize_t buffered_read(int fd, char* buf, size_t len, uint64_t offset, int rwf) {
  const uint32_t page = page_bytes();
  char* bounce = File::bounces_read(buf, len, offset) ? bounce_buffer(kSlowCopyPiece + page, page) : nullptr;
  if (!bounce) return buffered_io(HIO_OP_READ, fd, buf, len, offset, rwf);
  bounce += harmless_page_offset(offset);
  size_t done = 0;
  while (done < len) {
    const size_t want = std::min(kSlowCopyPiece, len - done);
    const ssize_t n = buffered_io(HIO_OP_READ, fd, bounce, want, offset + done, rwf);
    if (n < 0) {
      if (done == 0) return -1;  // errno set
      break;
    }
    if (n == 0) break;
    const size_t got = static_cast<size_t>(n);
    size_t copied = got;
    if (transparent_mode()) {
      copied = copy_checked(bounce, buf + done, got, false);
    } else {
      memcpy(buf + done, bounce, got);
    }
    done += copied;
    if (copied < got) {
      if (done == 0) {
        errno = EFAULT;
        return -1;
      }
      break;
    }
    if (got < want) break;
  }
  return static_cast<ssize_t>(done);
}

ssize_t cached_io(hio_op op, int fd, char* buf, size_t len, uint64_t offset, int rwf) {
  return op == HIO_OP_READ ? buffered_read(fd, buf, len, offset, rwf) : buffered_io(op, fd, buf, len, offset, rwf);
}


char* staging_slot(int i, uint64_t size) {
  if (t_staging[i].size() < size) t_staging[i] = BufferPool::get().acquire(size);
  return t_staging[i] ? t_staging[i].data() : nullptr;
}

void release_thread_buffers() {
  t_staging[0].reset();
  t_staging[1].reset();
  t_bounce = AlignedBuffer();
}

}  // namespace hybridio
