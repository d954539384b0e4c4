// cases_random.cc - a seeded random sequence of operations (item 17) on two
// files through several descriptors (one O_APPEND, one dup'd, one
// read-only): every result, errno, position and checksum of data read goes
// into the transcript, so the first operation whose outcome differs under
// the shim is the first differing line.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "diff_case.h"
#include "io_helpers.h"
#include "records.h"

namespace hio_diff {
namespace {

struct Desc {
  const char* name;
  int fd;
};

constexpr size_t kMaxLen = 16 * kMiB;
constexpr uint64_t kSpan = 48 * kMiB;          // offsets are drawn below this
constexpr long long kSizeCap = 96LL << 20;     // past this a file is truncated back

class RandomOps {
 public:
  RandomOps(Rng& rng, Transcript& out, char* buf) : rng_(rng), out_(out), buf_(buf) {}

  // Biased to large: 55% 1-16 MiB, 25% 4 KiB-1 MiB, 20% 1 B-4 KiB; a third
  // of the larger ones page multiples.
  size_t length() {
    uint64_t kind = rng_.next() % 100;
    size_t len = kind < 55 ? rng_.range(kMiB, kMaxLen) : kind < 80 ? rng_.range(4 * kKiB, kMiB) : rng_.range(1, 4 * kKiB);
    if (len >= 4 * kKiB && rng_.next() % 3 == 0) len &= ~(4 * kKiB - 1);
    return len;
  }
  off_t offset() {
    return static_cast<off_t>(rng_.next() % 5 < 2 ? rng_.range(0, kSpan / 4096) * 4096 : rng_.range(0, kSpan));
  }
  // A place in the buffer: aligned, or misaligned by up to a page.
  char* buffer() { return buf_ + (rng_.next() % 2 ? 0 : rng_.range(1, 4095)); }

  // Makes the bytes of write `op` unique to it: a stamp at every MiB.
  void stamp(char* p, size_t len, long op) {
    for (size_t at = 0; at + sizeof op <= len; at += kMiB) memcpy(p + at, &op, sizeof op);
  }

  // Splits len into 1-4 consecutive elements over the buffer.
  std::vector<iovec> vector(char* p, size_t len) {
    std::vector<iovec> iov;
    size_t parts = rng_.range(1, 4);
    for (size_t i = 0; i < parts && len > 0; ++i) {
      size_t n = i + 1 == parts ? len : rng_.range(0, len);
      iov.push_back({p, n});
      p += n;
      len -= n;
    }
    return iov;
  }

  void record(long op, const std::string& what, const Desc& d, long long r, int err, const char* data = nullptr) {
    std::string line = what + " " + d.name + " -> " + rv(r, err) + " pos=" + std::to_string(lseek(d.fd, 0, SEEK_CUR));
    if (data && r > 0) line += " sum=" + hex(checksum(data, static_cast<size_t>(r)));
    char key[32];
    snprintf(key, sizeof key, "op.%06ld", op);
    out_.put(key, line);
  }

 private:
  Rng& rng_;
  Transcript& out_;
  char* buf_;
};

// Where SEEK_DATA and SEEK_HOLE land inside preallocated (unwritten)
// ranges is the filesystem's choice: ext4 calls such a range data where its
// pages are in the page cache and a hole where not, so two plain runs can
// differ (writeback and eviction) and so does a run whose reads and writes
// skip the cache.  The transcript records that the answer is one Linux may
// give - at or after `from`, within the size, and for SEEK_DATA only zeros
// skipped - as 0, and the position goes back to `from`, so that the rest of
// the sequence stays deterministic.  Returns 0, or -1 with errno EDOM for
// an answer no filesystem may give.
long long seek_answer_valid(int fd, off_t from, off_t answer, int whence) {
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && answer >= from && answer <= st.st_size;
  if (ok && whence == SEEK_DATA) {
    std::vector<char> skipped(static_cast<size_t>(std::min<off_t>(answer - from, 16 << 20)));
    ok = pread(fd, skipped.data(), skipped.size(), from) == static_cast<ssize_t>(skipped.size()) &&
         std::all_of(skipped.begin(), skipped.end(), [](char c) { return c == 0; });
  }
  lseek(fd, from, SEEK_SET);
  if (ok) return 0;
  errno = EDOM;
  return -1;
}

long long size_of(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 ? static_cast<long long>(st.st_size) : -1;
}

}  // namespace

HIO_DIFF_CASE(random, "17", "seeded random read/write/pread/pwrite/readv/writev/lseek/ftruncate/fallocate/fsync/mmap ops") {
  const std::string a = opt.path("a"), b = opt.path("b");
  int a_rw = open(a.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  int a_app = open(a.c_str(), O_RDWR | O_APPEND);
  int a_dup = dup(a_rw);
  int b_rw = open(b.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  int b_ro = open(b.c_str(), O_RDONLY);
  Mapping buf(kMaxLen + 8 * kKiB);
  if (a_rw < 0 || a_app < 0 || a_dup < 0 || b_rw < 0 || b_ro < 0 || !buf.ok()) return harness_failure("open/mmap");
  fill_pattern(buf.data(), buf.size(), 110, 0);
  const Desc descs[] = {{"a_rw", a_rw}, {"a_app", a_app}, {"a_dup", a_dup}, {"b_rw", b_rw}, {"b_ro", b_ro}};
  Rng rng(opt.seed);
  RandomOps gen(rng, out, buf.data());
  // Cumulative weights of: write pwrite writev read pread readv lseek ftruncate fallocate fsync mmap-read.
  const int weights[] = {16, 30, 38, 50, 62, 68, 78, 82, 86, 89, 90};
  for (long op = 0; op < opt.ops; ++op) {
    const Desc& d = descs[rng.next() % 5];
    int kind = static_cast<int>(rng.next() % 90);
    int which = 0;
    while (kind >= weights[which]) ++which;
    if (size_of(d.fd) > kSizeCap) which = 7;  // keep long runs within a bounded size
    char* p = gen.buffer();
    size_t len = gen.length();
    off_t at = gen.offset();
    std::string what;
    long long r = 0;
    switch (which) {
      case 0:
        gen.stamp(p, len, op);
        what = "write len=" + std::to_string(len);
        r = write(d.fd, p, len);
        break;
      case 1:
        gen.stamp(p, len, op);
        what = "pwrite len=" + std::to_string(len) + " at=" + std::to_string(at);
        r = pwrite(d.fd, p, len, at);
        break;
      case 2: {
        gen.stamp(p, len, op);
        std::vector<iovec> iov = gen.vector(p, len);
        what = "writev len=" + std::to_string(len) + " n=" + std::to_string(iov.size());
        r = writev(d.fd, iov.data(), static_cast<int>(iov.size()));
        break;
      }
      case 3:
        what = "read len=" + std::to_string(len);
        r = read(d.fd, p, len);
        break;
      case 4:
        what = "pread len=" + std::to_string(len) + " at=" + std::to_string(at);
        r = pread(d.fd, p, len, at);
        break;
      case 5: {
        std::vector<iovec> iov = gen.vector(p, len);
        what = "readv len=" + std::to_string(len) + " n=" + std::to_string(iov.size());
        r = readv(d.fd, iov.data(), static_cast<int>(iov.size()));
        break;
      }
      case 6: {
        static const int whences[] = {SEEK_SET, SEEK_CUR, SEEK_END, SEEK_DATA, SEEK_HOLE};
        static const char* names[] = {"SET", "CUR", "END", "DATA", "HOLE"};
        int w = static_cast<int>(rng.next() % 5);
        off_t where = w == 1 || w == 2 ? at - static_cast<off_t>(kSpan / 2) : at;
        what = std::string("lseek ") + names[w] + " " + std::to_string(where);
        r = lseek(d.fd, where, whences[w]);
        if (w >= 3) {
          // SEEK_DATA's ENXIO below the size means "only a hole up to the end".
          struct stat st;
          if (r < 0 && errno == ENXIO && w == 3 && fstat(d.fd, &st) == 0 && where >= 0 && where < st.st_size)
            r = seek_answer_valid(d.fd, where, st.st_size, whences[w]);
          else if (r >= 0)
            r = seek_answer_valid(d.fd, where, r, whences[w]);
        }
        break;
      }
      case 7:
        what = "ftruncate " + std::to_string(at);
        r = ftruncate(d.fd, at);
        break;
      case 8: {
        int mode = rng.next() % 2 ? FALLOC_FL_KEEP_SIZE : 0;
        what = std::string("fallocate ") + (mode ? "keep " : "") + std::to_string(at) + "+" + std::to_string(len);
        r = fallocate(d.fd, mode, at, static_cast<off_t>(len));
        break;
      }
      case 9:
        what = "fsync";
        r = fsync(d.fd);
        break;
      default: {
        long long size = size_of(d.fd);
        off_t from = size > 0 ? static_cast<off_t>(rng.range(0, static_cast<uint64_t>(size - 1)) & ~4095ULL) : 0;
        size_t n = size > 0 ? std::min<size_t>(len, static_cast<size_t>(size - from)) : 0;
        what = "mmap-read " + std::to_string(from) + "+" + std::to_string(n);
        void* m = n ? mmap(nullptr, n, PROT_READ, MAP_SHARED, d.fd, from) : MAP_FAILED;
        r = m == MAP_FAILED ? -1 : static_cast<long long>(checksum(m, n) & 0x7fffffff);
        if (m != MAP_FAILED) munmap(m, n);
        break;
      }
    }
    const int err = errno;
    const bool read_data = which >= 3 && which <= 5;
    gen.record(op, what, d, r, err, read_data ? p : nullptr);
  }
  out.put("a.final", file_digest(a));
  out.put("b.final", file_digest(b));
  return kRan;
}

}  // namespace hio_diff
