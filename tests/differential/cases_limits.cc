// cases_limits.cc - limits the kernel enforces per call (items 8, 10, 12b):
// RLIMIT_FSIZE (short count below the limit, EFBIG and SIGXFSZ at it), a
// full filesystem (a short count, and no harm to data others wrote), and
// the 0x7ffff000-byte cap of a single read or write.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <string>

#include "diff_case.h"
#include "io_helpers.h"

namespace hio_diff {
namespace {

volatile sig_atomic_t g_sigxfsz = 0;
void on_sigxfsz(int) { g_sigxfsz = g_sigxfsz + 1; }

constexpr size_t kFsizeLimit = 5 * kMiB + 1000;

}  // namespace

HIO_DIFF_CASE(rlimit_fsize, "10", "RLIMIT_FSIZE 5 MiB+1000: short write below it, EFBIG + one SIGXFSZ at it, death by default") {
  const std::string path = opt.path("limited");
  Mapping buf(8 * kMiB);
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (!buf.ok() || fd < 0) return harness_failure("open/mmap");
  fill_pattern(buf.data(), buf.size(), 60, 0);
  struct sigaction sa = {};
  sa.sa_handler = on_sigxfsz;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGXFSZ, &sa, nullptr) != 0 || !set_soft_limit(RLIMIT_FSIZE, kFsizeLimit))
    return harness_failure("sigaction/setrlimit");
  char* p = buf.data();
  out.put("write_8m_at_0", rv(write(fd, p, 8 * kMiB)));
  out.put("signals", static_cast<int>(g_sigxfsz));
  out.put("pos", rv(lseek(fd, 0, SEEK_CUR)));
  out.put("pwrite_at_6m", rv(pwrite(fd, p, 8 * kMiB, 6 * kMiB)));
  out.put("signals_after_beyond", static_cast<int>(g_sigxfsz));
  out.put("seek_near_limit", rv(lseek(fd, static_cast<off_t>(kFsizeLimit) - 10, SEEK_SET)));
  out.put("write_across_limit", rv(write(fd, p + 1, 2 * kMiB + 1)));
  out.put("pos_after_across", rv(lseek(fd, 0, SEEK_CUR)));
  out.put("writev_at_limit", rv(writev(fd, std::array<iovec, 2>{{{p, kMiB}, {p + 7, kMiB}}}.data(), 2)));
  out.put("signals_after_at_limit", static_cast<int>(g_sigxfsz));
  signal(SIGXFSZ, SIG_IGN);
  out.put("ignored.pwrite_at_6m", rv(pwrite(fd, p, 8 * kMiB, 6 * kMiB)));
  out.put("ignored.pwrite_short", rv(pwrite(fd, p, 4 * kMiB, 4 * kMiB)));
  out.put("signals_when_ignored", static_cast<int>(g_sigxfsz));
  out.put("digest", file_digest(path));
  const std::string other = opt.path("limited_default");
  out.put("default.ended", run_in_child([&] {
            signal(SIGXFSZ, SIG_DFL);
            int cfd = open(other.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
            out.put("default.write_8m_at_0", rv(write(cfd, p, 8 * kMiB)));
            out.put("default.pwrite_at_6m", rv(pwrite(cfd, p, 8 * kMiB, 6 * kMiB)));
            return 0;
          }));
  out.put("default.digest", file_digest(other));
  return kRan;
}

HIO_DIFF_CASE(failing_write_keeps_others, "8", "a 60 MiB write that hits ENOSPC leaves another process's 1 MiB at 40 MiB intact (needs --small-fs)") {
  if (opt.small_fs.empty()) return out.skip("needs root to mount a small loop filesystem");
  const std::string filler = opt.small_fs + "/filler", path = opt.small_fs + "/shared";
  if (!make_pattern_file(filler, 30 * kMiB, 70)) return harness_failure("filler");
  Mapping buf(60 * kMiB);
  if (!buf.ok()) return harness_failure("mmap");
  out.put("other.ended", run_in_child([&] {
            int fd = open(path.c_str(), O_WRONLY | O_CREAT, 0644);
            fill_pattern(buf.data(), kMiB, 71, 40 * kMiB);
            return pwrite(fd, buf.data(), kMiB, 40 * kMiB) == static_cast<ssize_t>(kMiB) && close(fd) == 0 ? 0 : 1;
          }));
  int fd = open(path.c_str(), O_WRONLY);
  if (fd < 0) return harness_failure("open");
  fill_pattern(buf.data(), 60 * kMiB, 72, 0);
  ssize_t r = write(fd, buf.data(), 60 * kMiB);
  int e = errno;
  out.put("short_or_enospc", (r < 0 && e == ENOSPC) || (r >= 0 && r < static_cast<ssize_t>(60 * kMiB)));
  out.put("stopped_before_other", r < static_cast<ssize_t>(40 * kMiB));
  out.put("pos_is_return", lseek(fd, 0, SEEK_CUR) == (r > 0 ? r : 0));
  const size_t first = r > 0 ? static_cast<size_t>(r) : 0;
  r = write(fd, buf.data(), 4 * kMiB);
  e = errno;
  out.put("again_short_or_enospc", (r < 0 && e == ENOSPC) || (r >= 0 && r < static_cast<ssize_t>(4 * kMiB)));
  out.put("fsync", rv(fsync(fd)));
  out.put("close", rv(close(fd)));
  out.put("size_ge_41m", file_size(path) >= static_cast<long long>(41 * kMiB));
  out.put("written_prefix_intact", file_has_pattern(path, 0, first, 72, 0));
  out.put("other_data_intact", file_has_pattern(path, 40 * kMiB, kMiB, 71, 40 * kMiB));
  return kRan;
}

HIO_DIFF_CASE(over_2g, "12b", "one write() and one read() of 0xA0000039 bytes: both move 0x7ffff000") {
  constexpr size_t kLen = 0xA0000039;
  Mapping buf(kLen);
  if (!buf.ok()) return harness_failure("mmap 2.5 GiB");
  // Untouched pages read as zeros; a marker at every MiB shows placement.
  for (size_t at = 0; at + 8 <= kLen; at += kMiB) memcpy(buf.data() + at, &at, 8);
  const std::string path = opt.path("big");
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return harness_failure("open");
  out.put("write", rv(write(fd, buf.data(), kLen)));
  out.put("pos_after_write", rv(lseek(fd, 0, SEEK_CUR)));
  out.put("size", file_size(path));
  for (size_t at = 0; at + 8 <= kLen; at += kMiB) memset(buf.data() + at, 0, 8);
  out.put("seek", rv(lseek(fd, 0, SEEK_SET)));
  ssize_t n = read(fd, buf.data(), kLen);
  out.put("read", rv(n));
  out.put("pos_after_read", rv(lseek(fd, 0, SEEK_CUR)));
  bool markers = true;
  for (size_t at = 0; at + 8 <= static_cast<size_t>(n > 0 ? n : 0); at += kMiB) {
    uint64_t v = 0;
    memcpy(&v, buf.data() + at, 8);
    markers = markers && v == at;
  }
  out.put("read_markers_ok", markers);
  out.put("pread", rv(pread(fd, buf.data(), kLen, 4096)));
  return kRan;
}

}  // namespace hio_diff
