// cases_append.cc - O_APPEND (item 6).  Every write on an O_APPEND
// descriptor goes to the end of the file as it is at that moment, in one
// piece, and leaves the position at the new end; on Linux even pwrite()
// appends (and leaves the position alone).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "diff_case.h"
#include "io_helpers.h"
#include "records.h"

namespace hio_diff {
namespace {

long long size_of(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 ? static_cast<long long>(st.st_size) : -1;
}

}  // namespace

HIO_DIFF_CASE(append_position, "6", "O_APPEND: position == size after large writes, another fd's extension, pwrite, writev") {
  const std::string path = opt.path("appended");
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_TRUNC, 0644);
  int other = open(path.c_str(), O_WRONLY);
  Mapping buf(16 * kMiB);
  if (fd < 0 || other < 0 || !buf.ok()) return harness_failure("open/mmap");
  fill_pattern(buf.data(), buf.size(), 11, 0);
  char* p = buf.data();
  out.put("write1", rv(write(fd, p + 1, 3 * kMiB + 7)));
  out.put("pos1_is_size", lseek(fd, 0, SEEK_CUR) == size_of(fd));
  out.put("other.pwrite", rv(pwrite(other, p, kMiB + 3, size_of(other))));
  out.put("write2", rv(write(fd, p, 2 * kMiB + 5)));
  out.put("pos2", rv(lseek(fd, 0, SEEK_CUR)));
  out.put("pos2_is_size", lseek(fd, 0, SEEK_CUR) == size_of(fd));
  // Linux appends a pwrite on an O_APPEND descriptor, whatever the offset.
  out.put("pwrite_at_0", rv(pwrite(fd, p, 4 * kMiB + 1, 0)));
  out.put("pos3", rv(lseek(fd, 0, SEEK_CUR)));
  out.put("size3", size_of(fd));
  iovec iov[3] = {{p, kMiB}, {p + 5, 2 * kMiB + 1}, {p + 4096, 4096}};
  out.put("writev", rv(writev(fd, iov, 3)));
  out.put("pwritev_at_100", rv(pwritev(fd, iov, 3, 100)));
  out.put("pwritev2_at_minus_1", rv(pwritev2(fd, iov, 3, -1, 0)));
  out.put("pos4_is_size", lseek(fd, 0, SEEK_CUR) == size_of(fd));
  // Python's pattern: tell() after every append is the record's end.
  int ends_ok = 1;
  for (int i = 0; i < 6; ++i) {
    size_t len = kMiB + static_cast<size_t>(i) * 333333;
    if (i == 3) pwrite(other, p, 4096, size_of(other));  // someone else extends it meanwhile
    ssize_t n = write(fd, p + i, len);
    off_t pos = lseek(fd, 0, SEEK_CUR);
    if (n != static_cast<ssize_t>(len) || pos != size_of(fd)) ends_ok = 0;
  }
  out.put("tell_is_record_end", ends_ok);
  out.put("digest", file_digest(path));
  return kRan;
}

HIO_DIFF_CASE(append_writev_atomic, "6", "O_APPEND writev of 3 x 2 MiB while another thread appends small records: contiguous") {
  const std::string path = opt.path("appended");
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_TRUNC, 0644);
  Mapping buf(6 * kMiB);
  if (fd < 0 || !buf.ok()) return harness_failure("open/mmap");
  constexpr uint32_t kLarge = 6, kMinSmall = 200;
  // The small appender runs for as long as the large one (at least
  // kMinSmall records); how many it wrote varies, so the transcript has
  // only "all records intact" and "size == sum".
  std::atomic<bool> start{false}, large_done{false};
  std::atomic<bool> small_ok{true};
  uint32_t small_count = 0;
  std::thread small([&] {
    char rec[100];
    while (!start.load()) {
    }
    for (uint32_t s = 0; s < kMinSmall || !large_done.load(); ++s, ++small_count) {
      make_record(rec, 1, s, sizeof rec);
      if (write(fd, rec, sizeof rec) != static_cast<ssize_t>(sizeof rec)) small_ok = false;
    }
  });
  start = true;
  bool large_ok = true;
  for (uint32_t s = 0; s < kLarge; ++s) {
    // One 6 MiB record, handed over as three 2 MiB elements.
    make_record(buf.data(), 0, s, 6 * kMiB);
    iovec iov[3] = {{buf.data(), 2 * kMiB}, {buf.data() + 2 * kMiB, 2 * kMiB}, {buf.data() + 4 * kMiB, 2 * kMiB}};
    if (writev(fd, iov, 3) != static_cast<ssize_t>(6 * kMiB)) large_ok = false;
  }
  large_done = true;
  small.join();
  out.put("writes_ok", large_ok && small_ok);
  out.put("size_is_sum", file_size(path) == static_cast<long long>(kLarge * 6 * kMiB + small_count * 100ULL));
  out.put("records_ok", records_intact(path, {kLarge, small_count}));
  out.put("pos_is_size", lseek(fd, 0, SEEK_CUR) == file_size(path));
  return kRan;
}

}  // namespace hio_diff
