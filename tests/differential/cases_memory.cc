// cases_memory.cc - memory limits (issue 58 item 8): under RLIMIT_AS the
// shim's buffers must fit in what the program would not have used, or be
// given back, so that the program can still map what it could plain.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "diff_case.h"
#include "io_helpers.h"

namespace hio_diff {
namespace {

// VmSize of /proc/self/status, in bytes; 0 when it cannot be read.
unsigned long long address_space_in_use() {
  char text[4096] = {};
  int fd = raw_open("/proc/self/status", O_RDONLY);
  ssize_t n = fd < 0 ? -1 : raw_pread(fd, text, sizeof text - 1, 0);
  if (fd >= 0) raw_close(fd);
  const char* line = n > 0 ? strstr(text, "\nVmSize:") : nullptr;
  return line ? strtoull(line + 8, nullptr, 10) * 1024 : 0;
}

}  // namespace

HIO_DIFF_CASE(rlimit_as_headroom, "58.8",
              "RLIMIT_AS at usage + 96 MiB, 64 MiB streamed in 4 MiB writes and reads from a misaligned buffer, "
              "then anonymous 1 MiB mappings: 88 MiB or more, as plain") {
  const std::string path = opt.path("streamed");
  out.put("ended", run_in_child([&] {
            Mapping mem(4 * kMiB + 4096);
            if (!mem.ok()) return 2;
            // Misaligned by a byte, as a malloc'd buffer may be: the shim stages.
            char* const buf = mem.data() + 1;
            constexpr size_t kCall = 4 * kMiB;
            fill_pattern(buf, kCall, 95, 0);
            const unsigned long long used = address_space_in_use();
            if (used == 0 || !set_soft_limit(RLIMIT_AS, used + 96 * kMiB)) return 3;
            int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
            out.put("open", fd >= 0);
            long long wrote = 0, read_back = 0;
            for (int i = 0; i < 16; ++i) wrote += write(fd, buf, kCall);
            out.put("wrote", wrote);
            out.put("lseek", rv(lseek(fd, 0, SEEK_SET)));
            for (int i = 0; i < 17; ++i) {
              ssize_t n = read(fd, buf, kCall);
              if (n <= 0) break;
              read_back += n;
            }
            out.put("read", read_back);
            for (int i = 0; i < 15; ++i) pwrite(fd, buf, kCall, static_cast<off_t>(i) * kCall + 7);
            for (int i = 0; i < 15; ++i) pread(fd, buf, kCall, static_cast<off_t>(i) * kCall + 3);
            out.put("close", rv(close(fd)));
            // As much as can be mapped now, 1 MiB at a time (never touched).
            std::vector<void*> maps;
            for (int i = 0; i < 256; ++i) {
              void* p = mmap(nullptr, kMiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
              if (p == MAP_FAILED) break;
              maps.push_back(p);
            }
            if (getenv("HIO_DIFF_VERBOSE")) fprintf(stderr, "mapped %zu MiB\n", maps.size());
            // Plain maps 96 (the limit less a page or so of malloc); the shim may
            // keep its ring and library threads' stacks (1 MiB each), no buffer.
            out.put("mapped_at_least_88_mib", maps.size() >= 88);
            out.put("mapped_at_most_96_mib", maps.size() <= 96);
            for (void* p : maps) munmap(p, kMiB);
            return 0;
          }));
  out.put("digest", file_digest(path));
  return kRan;
}

}  // namespace hio_diff
