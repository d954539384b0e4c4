// cases_copies.cc - copies the kernel makes between files: sendfile(2),
// which the shim does itself between two regular files, and
// copy_file_range(2) within one filesystem, which it leaves to the kernel
// (libhybridio/src/preload/copy_offload.h).  Counts, both positions, the
// caller's offset, errors and RLIMIT_FSIZE must be the kernel's own.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include <string>

#include "diff_case.h"
#include "io_helpers.h"

namespace hio_diff {
namespace {

constexpr size_t kSourceSize = 40 * kMiB + 123;

volatile sig_atomic_t g_copy_sigxfsz = 0;
void count_sigxfsz(int) { g_copy_sigxfsz = g_copy_sigxfsz + 1; }

// What one copy call left: its result, both positions and the caller's offset.
void record(Transcript& out, const std::string& key, long long r, int err, int src, int dst, const off_t* off) {
  out.put(key, rv(r, err));
  out.put(key + ".src_pos", rv(lseek(src, 0, SEEK_CUR)));
  out.put(key + ".dst_pos", rv(lseek(dst, 0, SEEK_CUR)));
  if (off) out.put(key + ".offset", static_cast<long long>(*off));
}

using CopyCall = long long (*)(int src, int dst, off_t* src_off, size_t len);

long long by_sendfile(int src, int dst, off_t* src_off, size_t len) { return sendfile(dst, src, src_off, len); }
long long by_copy_file_range(int src, int dst, off_t* src_off, size_t len) {
  return copy_file_range(src, src_off, dst, nullptr, len, 0);
}

// The same script for both calls: from the position, from an offset,
// across EOF, at EOF, a bad offset, targets the kernel refuses, and a copy
// that meets RLIMIT_FSIZE.
int copy_script(const Options& opt, Transcript& out, CopyCall copy) {
  const std::string src_path = opt.path("copy_src"), dst_path = opt.path("copy_dst");
  if (!make_pattern_file(src_path, kSourceSize, 71)) return harness_failure("make source");
  const int src = open(src_path.c_str(), O_RDONLY);
  const int dst = open(dst_path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (src < 0 || dst < 0) return harness_failure("open");

  lseek(src, 1000, SEEK_SET);
  long long r = copy(src, dst, nullptr, 20 * kMiB);
  record(out, "from_position", r, errno, src, dst, nullptr);
  off_t off = 5 * kMiB + 7;
  r = copy(src, dst, &off, 30 * kMiB);
  record(out, "from_offset_across_eof", r, errno, src, dst, &off);
  r = copy(src, dst, &off, 8 * kMiB);
  record(out, "at_eof", r, errno, src, dst, &off);
  off = -4096;
  r = copy(src, dst, &off, 8 * kMiB);
  record(out, "negative_offset", r, errno, src, dst, &off);
  out.put("digest", file_digest(dst_path));

  const int append = open(dst_path.c_str(), O_WRONLY | O_APPEND);
  const int read_only = open(dst_path.c_str(), O_RDONLY);
  const int write_only_src = open(src_path.c_str(), O_WRONLY);
  if (append < 0 || read_only < 0 || write_only_src < 0) return harness_failure("open for refusals");
  off = 0;
  out.put("to_append", rv(copy(src, append, &off, 8 * kMiB)));
  out.put("to_read_only", rv(copy(src, read_only, &off, 8 * kMiB)));
  out.put("from_write_only", rv(copy(write_only_src, dst, &off, 8 * kMiB)));
  out.put("to_closed", rv(copy(src, 999, &off, 8 * kMiB)));
  out.put("refusals.digest", file_digest(dst_path));

  // 12 MiB + 5 in a file limited to 10 MiB: the kernel copies up to the
  // limit; the next copy starts at it.
  const std::string limited_path = opt.path("copy_limited");
  const int limited = open(limited_path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  struct sigaction sa = {};
  sa.sa_handler = count_sigxfsz;
  sigemptyset(&sa.sa_mask);
  if (limited < 0 || sigaction(SIGXFSZ, &sa, nullptr) != 0 || !set_soft_limit(RLIMIT_FSIZE, 10 * kMiB))
    return harness_failure("limit setup");
  off = 0;
  r = copy(src, limited, &off, 12 * kMiB + 5);
  record(out, "across_limit", r, errno, src, limited, &off);
  out.put("across_limit.signals", static_cast<int>(g_copy_sigxfsz));
  r = copy(src, limited, &off, 8 * kMiB);
  record(out, "at_limit", r, errno, src, limited, &off);
  out.put("at_limit.signals", static_cast<int>(g_copy_sigxfsz));
  out.put("limited.digest", file_digest(limited_path));
  for (int fd : {src, dst, append, read_only, write_only_src, limited}) close(fd);
  return kRan;
}

}  // namespace

HIO_DIFF_CASE(sendfile_files, "copies", "sendfile between regular files: counts, positions, offset, EOF, refusals, RLIMIT_FSIZE") {
  return copy_script(opt, out, by_sendfile);
}

HIO_DIFF_CASE(copy_file_range_same_fs, "copies", "copy_file_range within one filesystem: the kernel's own copy, untouched") {
  return copy_script(opt, out, by_copy_file_range);
}

}  // namespace hio_diff
