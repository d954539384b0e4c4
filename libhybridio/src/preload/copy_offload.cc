// copy_offload.cc - see copy_offload.h.
#include "preload/copy_offload.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "memory/buffer_pool.h"
#include "preload/exact_call.h"
#include "preload/real_libc.h"
#include "preload/shim.h"

namespace hybridio::preload {
namespace {

// Twice the default read threshold: chunks the policy can send direct
// when the source is not cached, few enough calls to cost nothing.
constexpr size_t kChunk = 16u << 20;

// One end of a copy: at an explicit offset (pread/pwrite, and the caller's
// offset advances), or at the file position (read/write, which advance it).
struct End {
  int fd;
  off_t* offset;  // null: the file position
};

// A regular file open for reading (`write` false) or for writing without
// O_APPEND (the kernel refuses O_APPEND targets for both calls).
bool regular_file_open_for(int fd, bool write, struct stat* st) {
  if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) return false;
  const int flags = real().fcntl ? real().fcntl(fd, F_GETFL) : -1;
  if (flags < 0) return false;
  const int mode = flags & O_ACCMODE;
  return write ? mode != O_RDONLY && !(flags & O_APPEND) : mode != O_WRONLY;
}

// Whether the shim accelerates writes to `fd`: a file it tracks, not one
// its path rules or the file's user.hybridio=off leave alone.
bool tracked_target(int fd) {
  Guard guard;
  return guard.entered() && static_cast<bool>(lookup(fd));
}

// How much of `len` bytes written at `to` RLIMIT_FSIZE allows
// (fsize_allowance): the kernel shortens a copy that crosses the limit,
// without a signal.  -1: the copy starts at or past the limit (the kernel
// raises SIGXFSZ; left to it).
ssize_t fsize_allowed(const End& to, size_t len) {
  const off_t at = to.offset ? *to.offset : lseek(to.fd, 0, SEEK_CUR);
  const uint64_t allowed = at < 0 ? 0 : fsize_allowance(static_cast<uint64_t>(at), len);
  return allowed ? static_cast<ssize_t>(allowed) : -1;
}

ssize_t read_at(const CopyIo& io, const End& e, char* buf, size_t n, size_t done) {
  return e.offset ? io.pread(e.fd, buf, n, *e.offset + static_cast<off_t>(done)) : io.read(e.fd, buf, n);
}

ssize_t write_at(const CopyIo& io, const End& e, const char* buf, size_t n, size_t done) {
  return e.offset ? io.pwrite(e.fd, buf, n, *e.offset + static_cast<off_t>(done)) : io.write(e.fd, buf, n);
}

// Copies up to `len` bytes in chunks through `io`.  Returns false, having
// moved nothing, when no staging buffer can be had; else *out is the bytes
// copied, or -errno when a failure came before any byte.
bool copy_chunks(const End& from, const End& to, size_t len, const CopyIo& io, ssize_t* out) {
  PoolBuffer buf = BufferPool::get().acquire(std::min(len, kChunk));
  if (!buf) return false;
  size_t done = 0;
  int error = 0;
  while (done < len && !error) {
    const size_t want = std::min(len - done, buf.size());
    const ssize_t n = read_at(io, from, buf.data(), want, done);
    if (n <= 0) {
      error = n < 0 ? errno : 0;
      break;
    }
    size_t written = 0;
    while (written < static_cast<size_t>(n)) {
      const ssize_t m = write_at(io, to, buf.data() + written, static_cast<size_t>(n) - written, done + written);
      if (m <= 0) {
        error = m < 0 ? errno : EIO;
        break;
      }
      written += static_cast<size_t>(m);
    }
    // Bytes read but not written were not copied: give them back to the
    // source's position, as the kernel only advances it by what it copied.
    if (!from.offset && written < static_cast<size_t>(n))
      lseek(from.fd, -static_cast<off_t>(static_cast<size_t>(n) - written), SEEK_CUR);
    done += written;
  }
  if (from.offset) *from.offset += static_cast<off_t>(done);
  if (to.offset) *to.offset += static_cast<off_t>(done);
  *out = done > 0 || !error ? static_cast<ssize_t>(done) : -error;
  return true;
}

// A splice into a file that has reached RLIMIT_FSIZE tries once more when
// the source has more to give, and the kernel raises SIGXFSZ (the count
// copied is still returned).  The same one-byte write at the limit makes
// the kernel do exactly that; it writes nothing.
void meet_fsize_limit(const End& from, const End& to, const CopyIo& io) {
  const int saved = errno;
  const off_t at = from.offset ? *from.offset : lseek(from.fd, 0, SEEK_CUR);
  char byte;
  if (at >= 0 && real().pread && real().pread(from.fd, &byte, 1, at) == 1) write_at(io, to, &byte, 1, 0);
  errno = saved;
}

}  // namespace

bool copy_across_filesystems(int in_fd, off_t* in_off, int out_fd, off_t* out_off, size_t len, const CopyIo& io,
                             ssize_t* out) {
  len = std::min(len, kMaxRwCount);
  struct stat in_st, out_st;
  if (len < candidate_size(true) || !regular_file_open_for(in_fd, false, &in_st) ||
      !regular_file_open_for(out_fd, true, &out_st) || !tracked_target(out_fd))
    return false;
  const End from{in_fd, in_off}, to{out_fd, out_off};
  const ssize_t allowed = fsize_allowed(to, len);
  if (allowed < 0) return false;  // the kernel checked the limit before EXDEV: cannot happen, but never raise it twice
  return copy_chunks(from, to, static_cast<size_t>(allowed), io, out);
}

bool sendfile_between_files(int out_fd, int in_fd, off_t* offset, size_t count, const CopyIo& io, ssize_t* out) {
  count = std::min(count, kMaxRwCount);
  if (count < candidate_size(true) || is_ignored(out_fd) || is_ignored(in_fd) || (offset && *offset < 0)) return false;
  struct stat in_st, out_st;
  if (!regular_file_open_for(in_fd, false, &in_st) || !regular_file_open_for(out_fd, true, &out_st) ||
      (in_st.st_dev == out_st.st_dev && in_st.st_ino == out_st.st_ino) || !tracked_target(out_fd))
    return false;
  const End from{in_fd, offset}, to{out_fd, nullptr};
  const ssize_t allowed = fsize_allowed(to, count);
  if (allowed < 0) return false;  // the kernel raises SIGXFSZ and fails with EFBIG
  if (!copy_chunks(from, to, static_cast<size_t>(allowed), io, out)) return false;
  if (static_cast<size_t>(allowed) < count && *out == allowed) meet_fsize_limit(from, to, io);
  return true;
}

}  // namespace hybridio::preload
