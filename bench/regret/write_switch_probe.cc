// write_switch_probe - what a section of another write path costs a stream
// of 64 KiB writes through the page cache: the learner explores such
// sections, and their price is what it budgets exploration by.
//
// Writes a new file of SIZE MiB in 64 KiB calls through the cache; in every
// GiB, the 16 MiB from offset 512 MiB go down PATH instead (direct: an
// O_DIRECT descriptor of the same file; dontcache: RWF_DONTCACHE; buffered:
// the same calls, for comparison), then fsyncs.  Every call is timed.
// Prints the run's rate, the sections' time, their first calls' (the switch
// of path), the other section calls' median, mean, p99 and max, and the
// time of the 16 MiB written through the cache after each section.
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080
#endif

namespace {

constexpr size_t kCall = 64 << 10;
constexpr uint64_t kEvery = 1ULL << 30;
constexpr uint64_t kSectionAt = 512ULL << 20;
constexpr uint64_t kSectionLen = 16ULL << 20;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int usage(FILE* out, int status) {
  fprintf(out,
          "usage: write_switch_probe FILE PATH SIZE_MIB\n"
          "  Writes FILE (created or truncated) in 64 KiB calls through the page cache, the 16 MiB\n"
          "  at 512 MiB of every GiB down PATH (buffered, direct or dontcache), then fsyncs it.\n"
          "  Write more than the dirty limit to see writeback throttling (e.g. 7168 on 23.5 GiB).\n");
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) return usage(stdout, 0);
  if (argc != 4) return usage(stderr, 2);
  const std::string path_name = argv[2];
  if (path_name != "buffered" && path_name != "direct" && path_name != "dontcache") return usage(stderr, 2);
  char* end = nullptr;
  const unsigned long long mib = strtoull(argv[3], &end, 10);
  if (!*argv[3] || *end || mib == 0 || mib > (1ULL << 24)) {
    fprintf(stderr, "write_switch_probe: SIZE_MIB must be a number of MiB from 1 to %llu\n", 1ULL << 24);
    return 2;
  }
  const uint64_t total = mib << 20;

  const int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    fprintf(stderr, "write_switch_probe: %s: %s\n", argv[1], strerror(errno));
    return 1;
  }
  const int direct_fd = path_name == "direct" ? open(argv[1], O_WRONLY | O_DIRECT) : -1;
  if (path_name == "direct" && direct_fd < 0) {
    fprintf(stderr, "write_switch_probe: %s with O_DIRECT: %s\n", argv[1], strerror(errno));
    return 1;
  }
  void* mem = nullptr;
  if (posix_memalign(&mem, 4096, kCall) != 0) return 1;
  memset(mem, 0x5a, kCall);

  std::vector<double> others;  // section calls after the first, seconds
  double section_s = 0, first_s = 0, first_max_s = 0, after_s = 0;
  const double start = now_s();
  for (uint64_t off = 0; off < total; off += kCall) {
    const uint64_t in_gib = off % kEvery;
    const bool section = in_gib >= kSectionAt && in_gib < kSectionAt + kSectionLen;
    const bool after = in_gib >= kSectionAt + kSectionLen && in_gib < kSectionAt + 2 * kSectionLen;
    const double t0 = now_s();
    ssize_t n;
    if (section && direct_fd >= 0) {
      n = pwrite(direct_fd, mem, kCall, static_cast<off_t>(off));
    } else if (section && path_name == "dontcache") {
      iovec v{mem, kCall};
      n = pwritev2(fd, &v, 1, static_cast<off_t>(off), RWF_DONTCACHE);
    } else {
      n = pwrite(fd, mem, kCall, static_cast<off_t>(off));
    }
    if (n != static_cast<ssize_t>(kCall)) {
      fprintf(stderr, "write_switch_probe: write at %llu: %s\n", static_cast<unsigned long long>(off),
              n < 0 ? strerror(errno) : "short write");
      return 1;
    }
    const double took = now_s() - t0;
    if (section) {
      section_s += took;
      if (in_gib == kSectionAt) {
        first_s += took;
        first_max_s = std::max(first_max_s, took);
      } else {
        others.push_back(took);
      }
    }
    if (after) after_s += took;
  }
  const double written = now_s();
  if (fsync(fd) != 0) {
    fprintf(stderr, "write_switch_probe: fsync: %s\n", strerror(errno));
    return 1;
  }
  const double synced = now_s();
  close(fd);
  if (direct_fd >= 0) close(direct_fd);
  free(mem);

  printf("%-9s %.2f GB/s (writes %.3f s, fsync %.3f s); sections %.1f ms, their first calls %.1f ms (max %.1f),"
         " the 16 MiB after them %.1f ms\n",
         path_name.c_str(), static_cast<double>(total) / (synced - start) / 1e9, written - start, synced - written,
         section_s * 1e3, first_s * 1e3, first_max_s * 1e3, after_s * 1e3);
  if (!others.empty()) {
    std::sort(others.begin(), others.end());
    double sum = 0;
    for (double s : others) sum += s;
    printf("          other section calls: %zu, median %.1f us, mean %.1f us, p99 %.1f us, max %.1f ms\n",
           others.size(), others[others.size() / 2] * 1e6, sum / static_cast<double>(others.size()) * 1e6,
           others[others.size() * 99 / 100] * 1e6, others.back() * 1e3);
  }
  return 0;
}
