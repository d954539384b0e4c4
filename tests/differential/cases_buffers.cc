// cases_buffers.cc - bad user buffers (item 2).  The kernel copies from or
// to user memory until the first fault and returns what it moved (or
// EFAULT if nothing); a shim that copies through its own bounce buffer or
// hands the buffer to O_DIRECT must end the same way, and must never crash
// where the kernel returned an error.  Every risky call runs in a forked
// child, so a crash shows up as "...ended=signal=SIGSEGV".
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include "diff_case.h"
#include "io_helpers.h"

namespace hio_diff {
namespace {

constexpr size_t kBufLen = 8 * kMiB;

enum class Damage { kHole, kTail, kProtNone, kReadOnlyTail };

// An 8 MiB pattern-filled buffer with one damaged MiB-range: [3,4) MiB
// unmapped (hole) or PROT_NONE, the last MiB unmapped (tail), or the last
// 3 MiB read-only.
bool damage(const Mapping& buf, Damage how) {
  fill_pattern(buf.data(), buf.size(), 7, 0);
  switch (how) {
    case Damage::kHole: return munmap(buf.data() + 3 * kMiB, kMiB) == 0;
    case Damage::kTail: return munmap(buf.data() + 7 * kMiB, kMiB) == 0;
    case Damage::kProtNone: return mprotect(buf.data() + 3 * kMiB, kMiB, PROT_NONE) == 0;
    case Damage::kReadOnlyTail: return mprotect(buf.data() + 5 * kMiB, 3 * kMiB, PROT_READ) == 0;
  }
  return false;
}

// Runs `call` (on a fresh descriptor of a fresh file) in a child; the child
// prints NAME.ret, the parent NAME.ended, NAME.pos and NAME.file.
void risky(const Options& opt, Transcript& out, const std::string& name, int flags,
           const std::function<std::string(int fd)>& call) {
  const std::string path = opt.path(name);
  if (!(flags & O_CREAT) && !make_pattern_file(path, 16 * kMiB, 9)) {
    out.put(name + ".setup", "failed");
    return;
  }
  int fd = open(path.c_str(), flags, 0644);
  out.put(name + ".ended", run_in_child([&] {
            out.put(name + ".ret", call(fd));
            return 0;
          }));
  out.put(name + ".pos", rv(lseek(fd, 0, SEEK_CUR)));
  out.put(name + ".file", file_digest(path));
  close(fd);
}

// write, pwrite, writev and pwritev from a damaged buffer starting at `p`.
void write_family(const Options& opt, Transcript& out, const char* p, size_t len) {
  static char good[kMiB + 7];
  const int flags = O_RDWR | O_CREAT | O_TRUNC;
  risky(opt, out, "write", flags, [&](int fd) { return rv(write(fd, p, len)); });
  risky(opt, out, "pwrite", flags, [&](int fd) { return rv(pwrite(fd, p, len, 1000)); });
  iovec iov[2] = {{good, sizeof good}, {const_cast<char*>(p), len}};
  risky(opt, out, "writev", flags, [&](int fd) { return rv(writev(fd, iov, 2)); });
  risky(opt, out, "pwritev", flags, [&](int fd) { return rv(pwritev(fd, iov, 2, 4096)); });
}

// read, pread, readv into a damaged buffer, from a 16 MiB pattern file;
// the child also reports the checksum of what landed in the buffer.
void read_family(const Options& opt, Transcript& out, const std::string& tag, char* p, size_t len) {
  auto landed = [p](ssize_t r) {
    int e = errno;
    size_t n = r > 0 ? static_cast<size_t>(r) : 0;
    return rv(r, e) + " sum=" + hex(checksum(p, n < 3 * kMiB - 1 ? n : 3 * kMiB - 1));
  };
  const int flags = O_RDONLY;
  risky(opt, out, tag + ".read", flags, [&](int fd) { return landed(read(fd, p, len)); });
  risky(opt, out, tag + ".pread", flags, [&](int fd) { return landed(pread(fd, p, len, 1000)); });
  iovec iov[1] = {{p, len}};
  risky(opt, out, tag + ".readv", flags, [&](int fd) { return landed(readv(fd, iov, 1)); });
  risky(opt, out, tag + ".preadv", flags, [&](int fd) { return landed(preadv(fd, iov, 1, 4096)); });
}

int write_case(const Options& opt, Transcript& out, Damage how, size_t skew) {
  Mapping buf(kBufLen);
  if (!buf.ok() || !damage(buf, how)) return harness_failure("damaged buffer");
  write_family(opt, out, buf.data() + skew, kBufLen - skew);
  return kRan;
}

}  // namespace

HIO_DIFF_CASE(bad_buffer_hole, "2", "write/pwrite/writev from an 8 MiB buffer with an unmapped middle MiB") {
  return write_case(opt, out, Damage::kHole, 0);
}

HIO_DIFF_CASE(bad_buffer_tail, "2", "write/pwrite/writev from an 8 MiB buffer whose last MiB is unmapped") {
  return write_case(opt, out, Damage::kTail, 0);
}

HIO_DIFF_CASE(bad_buffer_prot, "2", "write/pwrite/writev from an 8 MiB buffer with a PROT_NONE middle MiB") {
  return write_case(opt, out, Damage::kProtNone, 0);
}

HIO_DIFF_CASE(bad_buffer_misaligned, "2", "write/pwrite/writev from buf+1 of a buffer with an unmapped hole") {
  return write_case(opt, out, Damage::kHole, 1);
}

HIO_DIFF_CASE(bad_buffer_read, "2", "read/pread/readv into partly unmapped, read-only and misaligned (1 and 16 bytes) buffers") {
  Mapping hole(kBufLen), readonly(kBufLen);
  if (!hole.ok() || !readonly.ok() || !damage(hole, Damage::kHole) || !damage(readonly, Damage::kReadOnlyTail))
    return harness_failure("damaged buffers");
  read_family(opt, out, "hole", hole.data(), kBufLen);
  read_family(opt, out, "readonly", readonly.data(), kBufLen);
  read_family(opt, out, "misaligned", hole.data() + 1, kBufLen - 1);
  // 16 bytes into a page, as malloc's large blocks: reads through the cache
  // there are copied through the engine's bounce buffer (File::bounces_read).
  read_family(opt, out, "skew16", hole.data() + 16, kBufLen - 16);
  read_family(opt, out, "skew16_readonly", readonly.data() + 16, kBufLen - 16);
  return kRan;
}

// A range the program has just unmapped is where the kernel puts the next
// mapping of that size or less.  Each call first moves `len` bytes through
// a good buffer at a misaligned offset (where a shim stages), then through
// the top of a 64 MiB range unmapped before that: plain Linux fails the
// second with EFAULT.  A shim whose staging buffer went into the range
// would find the stale pointer valid - and write its own bytes to the
// file, or the file's into its own buffer.
HIO_DIFF_CASE(bad_buffer_unmapped, "2", "a large misaligned pwrite/pread, then one from/into a range unmapped before it") {
  constexpr size_t kRange = 64 * kMiB;
  static char good[8 * kMiB];
  auto unmapped_top = [](size_t len) -> char* {
    void* p = mmap(nullptr, kRange, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    munmap(p, kRange);
    return static_cast<char*>(p) + kRange - len;
  };
  const int w = O_RDWR | O_CREAT | O_TRUNC;
  const int r = O_RDONLY;
  for (size_t len : {64 * kKiB, kMiB + 4096, 8 * kMiB}) {
    struct Call {
      const char* name;
      int flags;
      std::function<ssize_t(int, char*)> stale;
    };
    const Call calls[] = {
        {"write", w, [&](int fd, char* p) { return write(fd, p, len); }},
        {"pwrite", w, [&](int fd, char* p) { return pwrite(fd, p, len, 8 * kMiB + 1000); }},
        {"read", r, [&](int fd, char* p) { return read(fd, p, len); }},
        {"pread", r, [&](int fd, char* p) { return pread(fd, p, len, 4096); }},
    };
    for (const Call& c : calls) {
      risky(opt, out, std::string(c.name) + "." + std::to_string(len >> 10) + "k", c.flags, [&](int fd) {
        char* stale = unmapped_top(len);
        const std::string first = rv(c.flags == w ? pwrite(fd, good, len, 1000) : pread(fd, good, len, 1000));
        return first + " then " + rv(c.stale(fd, stale));
      });
    }
  }
  return kRan;
}

HIO_DIFF_CASE(bad_buffer_iov, "2", "writev/readv with IOV_MAX+1 elements, counts 0 and -1, a NULL iov, NULL bases, overflow") {
  static char chunk[8 * kKiB];
  std::vector<iovec> many(IOV_MAX + 1, iovec{chunk, sizeof chunk});
  const ssize_t half = SSIZE_MAX / 2 + 1;
  static char big[2 * kMiB];
  iovec overflow[2] = {{big, static_cast<size_t>(half)}, {big, static_cast<size_t>(half)}};
  iovec null_base[2] = {{big, sizeof big}, {nullptr, kMiB}};
  // Through volatiles: the compiler would refuse the calls with these constants.
  volatile int minus_one = -1;
  iovec* volatile no_iov = nullptr;
  const int w = O_RDWR | O_CREAT | O_TRUNC;
  const int r = O_RDONLY;
  risky(opt, out, "writev.iov_max_plus_1", w, [&](int fd) { return rv(writev(fd, many.data(), IOV_MAX + 1)); });
  risky(opt, out, "pwritev.iov_max_plus_1", w, [&](int fd) { return rv(pwritev(fd, many.data(), IOV_MAX + 1, 0)); });
  risky(opt, out, "writev.count0", w, [&](int fd) { return rv(writev(fd, many.data(), 0)); });
  risky(opt, out, "writev.count_minus_1", w, [&](int fd) { return rv(writev(fd, many.data(), minus_one)); });
  risky(opt, out, "writev.null_iov", w, [&](int fd) { return rv(writev(fd, no_iov, 1)); });
  risky(opt, out, "writev.overflow", w, [&](int fd) { return rv(writev(fd, overflow, 2)); });
  risky(opt, out, "writev.null_base", w, [&](int fd) { return rv(writev(fd, null_base, 2)); });
  risky(opt, out, "readv.iov_max_plus_1", r, [&](int fd) { return rv(readv(fd, many.data(), IOV_MAX + 1)); });
  risky(opt, out, "preadv.iov_max_plus_1", r, [&](int fd) { return rv(preadv(fd, many.data(), IOV_MAX + 1, 0)); });
  risky(opt, out, "readv.count0", r, [&](int fd) { return rv(readv(fd, many.data(), 0)); });
  risky(opt, out, "readv.count_minus_1", r, [&](int fd) { return rv(readv(fd, many.data(), minus_one)); });
  risky(opt, out, "readv.null_iov", r, [&](int fd) { return rv(readv(fd, no_iov, 1)); });
  risky(opt, out, "readv.overflow", r, [&](int fd) { return rv(readv(fd, overflow, 2)); });
  risky(opt, out, "readv.null_base", r, [&](int fd) { return rv(readv(fd, null_base, 2)); });
  return kRan;
}

}  // namespace hio_diff
