// cases_descriptors.cc - descriptors (items 4 and 11): a close racing a
// write, RLIMIT_NOFILE, EBADF without leaks, O_NOATIME, and the number of
// open descriptors, none of which may change because a shim opened
// descriptors of its own.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "diff_case.h"
#include "io_helpers.h"

namespace hio_diff {
namespace {

// Access time of path in nanoseconds, -1 on error.
long long atime_of(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return -1;
  return static_cast<long long>(st.st_atim.tv_sec) * 1000000000LL + st.st_atim.tv_nsec;
}

bool set_old_atime(const std::string& path) {
  timespec times[2] = {{946684800, 0}, {0, UTIME_OMIT}};  // 2000-01-01
  return utimensat(AT_FDCWD, path.c_str(), times, 0) == 0;
}

}  // namespace

HIO_DIFF_CASE(close_reuse, "4", "thread B closes fd N during A's 256 MiB write and opens Y (gets N): Y untouched, X = A's count") {
  constexpr size_t kLen = 256 * kMiB;
  const std::string x = opt.path("x"), y = opt.path("y");
  int watch = raw_open(x, O_RDONLY | O_CREAT);  // sees X grow once A is inside write()
  int n = open(x.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  Mapping buf(kLen);
  if (watch < 0 || n < 0 || !buf.ok()) return harness_failure("open/mmap");
  fill_pattern(buf.data(), kLen, 21, 0);
  std::atomic<bool> about_to_write{false};
  ssize_t a_ret = 0;
  int a_errno = 0;
  std::thread a([&] {
    about_to_write = true;
    a_ret = write(n, buf.data(), kLen);
    a_errno = errno;
  });
  while (!about_to_write.load()) {
  }
  // Close only once the write is under way (X has grown), as then the
  // kernel has its own reference to X's open file for the rest of it.
  bool seen_growing = false;
  for (int i = 0; i < 20000 && !seen_growing; ++i) {
    struct stat st;
    seen_growing = fstat(watch, &st) == 0 && st.st_size > 0;
    if (!seen_growing) std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  int closed = close(n);
  int y_fd = open(y.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  a.join();
  out.put("write_seen_before_close", seen_growing);
  out.put("close", closed);
  out.put("y_fd_is_n", y_fd == n);
  out.put("a_ret", rv(a_ret, a_errno));
  const long long x_size = file_size(x);
  out.put("x_matches_return", a_ret >= 0 && x_size == a_ret && file_has_pattern(x, 0, static_cast<size_t>(a_ret), 21, 0));
  out.put("y_untouched", file_size(y) == 0 && lseek(y_fd, 0, SEEK_CUR) == 0);
  return kRan;
}

HIO_DIFF_CASE(fd_nofile, "11", "RLIMIT_NOFILE 64: open files and write 2 MiB to each until EMFILE") {
  Mapping buf(2 * kMiB);
  if (!buf.ok()) return harness_failure("mmap");
  fill_pattern(buf.data(), buf.size(), 22, 0);
  out.put("fds_at_start", count_open_fds());
  if (!set_soft_limit(RLIMIT_NOFILE, 64)) return harness_failure("setrlimit");
  int opened = 0, writes_ok = 0, last = -1, open_errno = 0;
  for (int i = 0; i < 100; ++i) {
    int fd = open(opt.path("f" + std::to_string(i)).c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
      open_errno = errno;
      break;
    }
    ++opened;
    last = fd;
    if (write(fd, buf.data(), buf.size()) == static_cast<ssize_t>(buf.size())) ++writes_ok;
  }
  out.put("opened", opened);
  out.put("open_error", errno_name(open_errno));
  out.put("writes_ok", writes_ok);
  out.put("dup_when_full", rv(dup(0)));
  out.put("close_one", rv(close(last)));
  int again = open(opt.path("again").c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  out.put("reopen_ok", again == last);
  out.put("write_after_reopen", rv(write(again, buf.data(), buf.size())));
  out.put("pread_after_reopen", rv(pread(again, buf.data(), buf.size(), 0)));
  return kRan;
}

HIO_DIFF_CASE(fd_ebadf_leak, "11", "1000 large writes on an O_RDONLY fd (and reads on O_WRONLY): all EBADF, no fd leaked") {
  const std::string path = opt.path("readonly");
  if (!make_pattern_file(path, 4 * kMiB, 23)) return harness_failure("setup");
  Mapping buf(4 * kMiB);
  int ro = open(path.c_str(), O_RDONLY);
  int wo = open(opt.path("writeonly").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!buf.ok() || ro < 0 || wo < 0) return harness_failure("open/mmap");
  const int before = count_open_fds();
  int ebadf = 0;
  for (int i = 0; i < 1000; ++i) {
    ssize_t r = i % 2 ? write(ro, buf.data(), 4 * kMiB) : pwrite(ro, buf.data() + 1, 2 * kMiB + 1, i * 4096);
    if (r == -1 && errno == EBADF) ++ebadf;
  }
  out.put("write_ebadf", ebadf);
  ebadf = 0;
  for (int i = 0; i < 200; ++i) {
    ssize_t r = i % 2 ? read(wo, buf.data(), 4 * kMiB) : pread(wo, buf.data(), 2 * kMiB + 1, 0);
    if (r == -1 && errno == EBADF) ++ebadf;
  }
  out.put("read_ebadf", ebadf);
  out.put("fd_count_delta", count_open_fds() - before);
  out.put("file", file_digest(path));
  return kRan;
}

HIO_DIFF_CASE(fd_noatime, "11", "16 MiB read with O_NOATIME keeps an old atime; without it (relatime) the atime moves") {
  const std::string path = opt.path("aged");
  Mapping buf(16 * kMiB);
  if (!buf.ok() || !make_pattern_file(path, 16 * kMiB, 24) || !set_old_atime(path)) return harness_failure("setup");
  long long old = atime_of(path);
  int fd = open(path.c_str(), O_RDONLY | O_NOATIME);
  out.put("noatime.open", fd >= 0);
  out.put("noatime.read", rv(read(fd, buf.data(), 16 * kMiB)));
  out.put("noatime.pread", rv(pread(fd, buf.data() + 1, 8 * kMiB + 1, 4096)));
  close(fd);
  out.put("atime_changed", atime_of(path) != old);
  if (!set_old_atime(path)) return harness_failure("utimensat");
  old = atime_of(path);
  fd = open(path.c_str(), O_RDONLY);
  out.put("plain.read", rv(read(fd, buf.data(), 16 * kMiB)));
  close(fd);
  out.put("atime_changed_without_noatime", atime_of(path) != old);
  return kRan;
}

HIO_DIFF_CASE(fd_count, "11", "/proc/self/fd count before, between two large writes, after them and after close") {
  const std::string path = opt.path("counted");
  Mapping buf(8 * kMiB);
  if (!buf.ok()) return harness_failure("mmap");
  fill_pattern(buf.data(), buf.size(), 25, 0);
  out.put("fds.before", count_open_fds());
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  out.put("fds.opened", count_open_fds());
  out.put("write1", rv(write(fd, buf.data(), 8 * kMiB)));
  out.put("fds.between", count_open_fds());
  out.put("write2", rv(pwrite(fd, buf.data() + 1, 6 * kMiB + 1, 12345)));
  out.put("read", rv(pread(fd, buf.data(), 8 * kMiB, 0)));
  out.put("fds.after", count_open_fds());
  int copy = dup(fd);
  out.put("dup.write", rv(write(copy, buf.data(), 4 * kMiB)));
  out.put("fds.dup", count_open_fds());
  close(copy);
  close(fd);
  out.put("fds.closed", count_open_fds());
  return kRan;
}

HIO_DIFF_CASE(fd_syncs, "11", "fsync/fdatasync after large writes, on a dup, a read-only fd, a pipe, a closed fd: results, errno kept on success") {
  const std::string path = opt.path("synced");
  Mapping buf(8 * kMiB);
  if (!buf.ok()) return harness_failure("mmap");
  fill_pattern(buf.data(), buf.size(), 26, 0);
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return harness_failure("open");
  out.put("write", rv(write(fd, buf.data(), 8 * kMiB)));
  errno = EDOM;  // a success leaves errno alone
  out.put("fsync", rv(fsync(fd)));
  out.put("fsync.errno_kept", errno == EDOM);
  out.put("pwrite", rv(pwrite(fd, buf.data() + 3, 4 * kMiB, 8 * kMiB + 5)));
  errno = ERANGE;
  out.put("fdatasync", rv(fdatasync(fd)));
  out.put("fdatasync.errno_kept", errno == ERANGE);
  int copy = dup(fd);
  out.put("dup.write", rv(write(copy, buf.data(), 4 * kMiB)));
  out.put("dup.fsync", rv(fsync(copy)));
  close(copy);
  out.put("closed.fsync", rv(fsync(copy)));
  out.put("closed.fdatasync", rv(fdatasync(copy)));
  out.put("negative.fsync", rv(fsync(-1)));
  int ro = open(path.c_str(), O_RDONLY);
  out.put("readonly.read", rv(read(ro, buf.data(), 8 * kMiB)));
  out.put("readonly.fsync", rv(fsync(ro)));
  close(ro);
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return harness_failure("pipe");
  out.put("pipe.fsync", rv(fsync(pipe_fds[1])));
  out.put("pipe.fdatasync", rv(fdatasync(pipe_fds[0])));
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  out.put("close", rv(close(fd)));
  out.put("digest", file_digest(path));
  return kRan;
}

}  // namespace hio_diff
