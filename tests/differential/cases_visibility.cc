// cases_visibility.cc - what other processes see while and after the
// program writes (items 7 and 9).  Buffered writes put each page in the
// page cache before the file size covers it, and touch only the bytes
// written, so a reader never sees zeros below the size and another
// process's stores through a shared mapping are never undone.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "diff_case.h"
#include "io_helpers.h"

namespace hio_diff {
namespace {

// Memory shared with forked children (MAP_SHARED | MAP_ANONYMOUS).
struct Shared {
  volatile int stop;
};

Shared* make_shared_page() {
  void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<Shared*>(p);
}

// Parent's range for the mmap cases: starts inside the first page and ends
// inside the last one.
constexpr off_t kRangeAt = 512 * 3;
constexpr size_t kRangeLen = 4 * kMiB;
constexpr size_t kFileLen = 8 * kMiB;

}  // namespace

HIO_DIFF_CASE(growing_reader, "7", "256 MiB written in 8 MiB write()s; a forked reader never sees zeros below the size") {
  constexpr size_t kTotal = 256 * kMiB, kStep = 8 * kMiB;
  const std::string path = opt.path("growing");
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  Shared* shared = make_shared_page();
  Mapping buf(kStep);
  if (fd < 0 || !shared || !buf.ok()) return harness_failure("open/mmap");
  shared->stop = 0;
  pid_t reader = fork();
  if (reader == 0) {
    int rfd = open(path.c_str(), O_RDONLY);
    std::vector<uint8_t> chunk(60 * kKiB);
    long long checked = 0, zeros = 0, wrong = 0;
    for (;;) {
      const bool writer_done = shared->stop;
      struct stat st;
      if (fstat(rfd, &st) != 0) _exit(3);
      // The newest bytes first: a size published before its data shows there.
      if (st.st_size > checked) {
        const long long from = std::max(checked, static_cast<long long>(st.st_size) - 4096);
        ssize_t n = pread(rfd, chunk.data(), static_cast<size_t>(st.st_size - from), from);
        for (ssize_t i = 0; i < n; ++i) zeros += chunk[static_cast<size_t>(i)] == 0;
      }
      while (checked < st.st_size) {
        size_t want = static_cast<size_t>(st.st_size - checked) < chunk.size() ? static_cast<size_t>(st.st_size - checked)
                                                                              : chunk.size();
        ssize_t n = pread(rfd, chunk.data(), want, checked);
        if (n <= 0) _exit(4);
        for (ssize_t i = 0; i < n; ++i) {
          if (chunk[static_cast<size_t>(i)] == 0) ++zeros;
          else if (chunk[static_cast<size_t>(i)] != pattern_byte(31, static_cast<uint64_t>(checked + i))) ++wrong;
        }
        checked += n;
      }
      if (writer_done) break;
    }
    Transcript out_child;
    out_child.put("reader.checked", checked);
    out_child.put("zeros_seen", zeros);
    out_child.put("reader.wrong_bytes", wrong);
    _exit(0);
  }
  int writes_ok = 0;
  for (size_t at = 0; at < kTotal; at += kStep) {
    fill_pattern(buf.data(), kStep, 31, at);
    if (write(fd, buf.data(), kStep) == static_cast<ssize_t>(kStep)) ++writes_ok;
  }
  shared->stop = 1;
  int status = 0;
  waitpid(reader, &status, 0);
  out.put("reader.ended", how_ended(status));
  out.put("writes_ok", writes_ok);
  out.put("size", file_size(path));
  out.put("final_ok", file_has_pattern(path, 0, kTotal, 31, 0));
  return kRan;
}

HIO_DIFF_CASE(mmap_other_process, "9", "another process's MAP_SHARED stores on pages the write partly covers survive it") {
  const std::string path = opt.path("mapped");
  if (!make_pattern_file(path, kFileLen, 40)) return harness_failure("setup");
  const off_t end = kRangeAt + static_cast<off_t>(kRangeLen);
  // Before the range on its first page, inside it, after it on its last page.
  const off_t stores[] = {100, kRangeAt + static_cast<off_t>(2 * kMiB) + 7, end + 200};
  out.put("child.ended", run_in_child([&] {
            int fd = open(path.c_str(), O_RDWR);
            void* m = mmap(nullptr, kFileLen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (m == MAP_FAILED) return 2;
            for (off_t at : stores) memset(static_cast<char*>(m) + at, 0x11, 64);
            return munmap(m, kFileLen) == 0 ? 0 : 3;
          }));
  int fd = open(path.c_str(), O_RDWR);
  Mapping buf(kRangeLen);
  if (fd < 0 || !buf.ok()) return harness_failure("open/mmap");
  fill_pattern(buf.data(), kRangeLen, 41, 0);
  out.put("pwrite", rv(pwrite(fd, buf.data(), kRangeLen, kRangeAt)));
  out.put("parent_bytes_ok", file_has_pattern(path, static_cast<uint64_t>(kRangeAt), kRangeLen, 41, 0));
  out.put("stores_kept", file_is_all(path, 100, 64, 0x11) && file_is_all(path, static_cast<uint64_t>(end + 200), 64, 0x11));
  out.put("untouched_ok", file_has_pattern(path, 164, static_cast<size_t>(kRangeAt - 164), 40, 164) &&
                              file_has_pattern(path, static_cast<uint64_t>(end), 200, 40, static_cast<uint64_t>(end)) &&
                              file_has_pattern(path, static_cast<uint64_t>(end + 264),
                                               kFileLen - static_cast<size_t>(end + 264), 40,
                                               static_cast<uint64_t>(end + 264)));
  return kRan;
}

HIO_DIFF_CASE(mmap_concurrent_stores, "9", "a process keeps storing next to the range while the file is written 10 times: last stores kept") {
  const std::string path = opt.path("mapped");
  if (!make_pattern_file(path, kFileLen, 42)) return harness_failure("setup");
  Shared* shared = make_shared_page();
  if (!shared) return harness_failure("mmap");
  shared->stop = 0;
  const off_t end = kRangeAt + static_cast<off_t>(kRangeLen);
  const off_t stores[] = {1000, end + 200, static_cast<off_t>(6 * kMiB)};
  const uint32_t kLast = 0x7e7e7e7e;
  pid_t child = fork();
  if (child == 0) {
    int fd = open(path.c_str(), O_RDWR);
    char* m = static_cast<char*>(mmap(nullptr, kFileLen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    if (m == MAP_FAILED) _exit(2);
    for (uint32_t counter = 1; !shared->stop; ++counter)
      for (off_t at : stores) memcpy(m + at, &counter, sizeof counter);
    for (off_t at : stores) memcpy(m + at, &kLast, sizeof kLast);
    _exit(munmap(m, kFileLen) == 0 ? 0 : 3);
  }
  int fd = open(path.c_str(), O_RDWR);
  Mapping buf(kRangeLen);
  if (fd < 0 || !buf.ok()) return harness_failure("open/mmap");
  fill_pattern(buf.data(), kRangeLen, 43, 0);
  int writes_ok = 0;
  for (int round = 0; round < 10; ++round)
    if (pwrite(fd, buf.data(), kRangeLen, kRangeAt) == static_cast<ssize_t>(kRangeLen)) ++writes_ok;
  shared->stop = 1;
  int status = 0;
  waitpid(child, &status, 0);
  out.put("child.ended", how_ended(status));
  out.put("writes_ok", writes_ok);
  // "At the end": the program is done with the file, and a moment later
  // nothing of its writes is still on its way.
  out.put("fsync", rv(fsync(fd)));
  out.put("close", rv(close(fd)));
  usleep(100000);
  bool kept = true;
  int rfd = raw_open(path, O_RDONLY);
  for (off_t at : stores) {
    uint32_t v = 0;
    kept = kept && raw_pread(rfd, &v, sizeof v, at) == sizeof v && v == kLast;
  }
  raw_close(rfd);
  out.put("last_stores_kept", kept);
  out.put("parent_bytes_ok", file_has_pattern(path, static_cast<uint64_t>(kRangeAt), kRangeLen, 43, 0));
  return kRan;
}

}  // namespace hio_diff
