// cases_restore.cc - a restore-like read stream (issue 13, item 2): a
// read-only sequential stream, while another process (a forked child using raw system calls,
// never the shim) overwrites, truncates, extends and punches the file
// between the reads.  Every read must return the file's bytes at the time
// of the read, as without the shim.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>

#include "diff_case.h"
#include "io_helpers.h"

namespace hio_diff {

HIO_DIFF_CASE(restore_stream_changes, "13",
              "256 KiB read-only stream while another process overwrites, truncates, extends and punches it") {
  constexpr size_t kRead = 256 * kKiB, kFile = 16 * kMiB;
  const std::string path = opt.path("restore");
  if (!make_pattern_file(path, kFile, 1)) return harness_failure("make_pattern_file");
  int fd = open(path.c_str(), O_RDONLY);
  Mapping buf(kRead), data(kRead + 4096);
  if (fd < 0 || !buf.ok() || !data.ok()) return harness_failure("open/mmap");
  int changes = 0;
  for (int i = 0; i < 3 * static_cast<int>(kFile / kRead); ++i) {
    const off_t off = static_cast<off_t>((i % (kFile / kRead)) * kRead);
    const ssize_t n = pread(fd, buf.data(), kRead, off);
    out.put("read." + std::to_string(i), rv(n, errno) + ":" + hex(n > 0 ? checksum(buf.data(), n) : 0));
    if (i % 7 != 3) continue;  // a change every few reads, while a window is in flight
    const int kind = changes++ % 4;
    const std::string what = run_in_child([&]() -> int {
      if (kind == 2) {  // truncate by path, then extend back to the full size
        const off_t to = off + static_cast<off_t>(kRead) + 4096 * (changes % 5);
        if (syscall(SYS_truncate, path.c_str(), to) != 0) return 1;
        if (syscall(SYS_truncate, path.c_str(), static_cast<off_t>(kFile)) != 0) return 2;
        return 0;
      }
      int w = raw_open(path, O_WRONLY);
      if (w < 0) return 3;
      int rc = 0;
      if (kind == 3) {  // punch a hole just ahead of the stream
        if (syscall(SYS_fallocate, w, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off + static_cast<off_t>(kRead),
                    static_cast<off_t>(kRead / 2)) != 0)
          rc = 4;
      } else {  // overwrite (unaligned) just ahead of the stream, or extend past the end
        const off_t at = kind == 0 ? off + static_cast<off_t>(kRead) + 1000 : static_cast<off_t>(kFile) - 100;
        fill_pattern(data.data(), kRead, static_cast<uint32_t>(100 + changes), static_cast<uint64_t>(at));
        if (raw_pwrite(w, data.data(), kRead, at) != static_cast<ssize_t>(kRead)) rc = 5;
        if (kind == 1 && syscall(SYS_ftruncate, w, static_cast<off_t>(kFile)) != 0) rc = 6;  // back to the size
      }
      raw_close(w);
      return rc;
    });
    out.put("change." + std::to_string(i), what);
  }
  out.put("close", rv(close(fd), errno));
  out.put("digest", file_digest(path));
  return kRan;
}

}  // namespace hio_diff

namespace hio_diff {

// A program thread must never find a signal pending that it was not sent.
// The completions of io_uring requests run as task work of the thread that
// submitted them, and the kernel flags that thread as if a signal were
// pending until it runs: a long read of /dev/zero checks for signals between
// pages and comes back short.  No request of the shim may outlive the
// program's call that made it.
HIO_DIFF_CASE(restore_stream_dev_zero, "13",
              "cold 16 MiB read stream with 8 MiB reads of /dev/zero between the calls (none may come back short)") {
  constexpr size_t kRead = 16 * kMiB, kFile = 128 * kMiB, kZero = 8 * kMiB;
  const std::string path = opt.path("stream");
  if (!make_pattern_file(path, kFile, 7)) return harness_failure("make_pattern_file");
  {
    // Cold: written back and out of the page cache, so that every mode reads it direct.
    const int w = raw_open(path, O_RDONLY);
    if (w < 0 || fdatasync(w) != 0 || posix_fadvise(w, 0, 0, POSIX_FADV_DONTNEED) != 0) return harness_failure("evict");
    raw_close(w);
  }
  const int fd = open(path.c_str(), O_RDONLY);
  const int zero = open("/dev/zero", O_RDONLY);
  Mapping buf(kRead), zbuf(kZero);
  if (fd < 0 || zero < 0 || !buf.ok() || !zbuf.ok()) return harness_failure("open/mmap");
  int short_zero_reads = 0;
  for (int i = 0;; ++i) {
    const ssize_t n = read(fd, buf.data(), kRead);
    out.put("read." + std::to_string(i), rv(n, errno) + ":" + hex(n > 0 ? checksum(buf.data(), n) : 0));
    if (n <= 0) break;
    for (int j = 0; j < 4; ++j) {
      const ssize_t z = read(zero, zbuf.data(), kZero);
      if (z != static_cast<ssize_t>(kZero)) ++short_zero_reads;
      out.put("zero." + std::to_string(i) + "." + std::to_string(j), rv(z, errno));
    }
  }
  out.put("short_zero_reads", short_zero_reads);
  out.put("close", rv(close(fd), errno));
  close(zero);
  return kRan;
}

}  // namespace hio_diff
