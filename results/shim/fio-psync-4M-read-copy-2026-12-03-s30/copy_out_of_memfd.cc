// 2 MiB copies out of a 16 MiB ring of blocks just read with O_DIRECT, the ring in a memfd's
// mapping: memcpy, process_vm_writev, and pread() of the memfd (the kernel's copy_to_user).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cerrno>
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main(int argc, char** argv) {
  const size_t len = 2 << 20, window = 16 << 20; const int iters = 1024;
  int mfd = memfd_create("staging", MFD_CLOEXEC);
  if (mfd < 0 || ftruncate(mfd, window) != 0) { perror("memfd"); return 1; }
  char* src = static_cast<char*>(mmap(nullptr, window, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0));
  char* dst; posix_memalign((void**)&dst, 4096, 4 << 20);
  memset(src, 1, window); memset(dst, 2, 4 << 20);
  int fd = open(argv[1], O_RDONLY | O_DIRECT);
  const char* names[] = {"memcpy", "process_vm_writev", "pread of the memfd"};
  for (int mode = 0; mode < 3; ++mode) {
    double t = 0;
    for (int i = 0; i < iters; ++i) {
      const size_t at = (i % 8) * len;
      if (pread(fd, src + at, len, (off_t)i * len) != (ssize_t)len) { perror("pread"); return 1; }
      char* d = dst + (i % 2) * len;
      double a = now();
      if (mode == 0) memcpy(d, src + at, len);
      else if (mode == 1) { iovec l{src + at, len}, r{d, len}; if (process_vm_writev(getpid(), &l, 1, &r, 1, 0) != (ssize_t)len) return 1; }
      else if (pread(mfd, d, len, at) != (ssize_t)len) { perror("pread memfd"); return 1; }
      t += now() - a;
    }
    printf("%-20s memfd-backed blocks: %.2f GB/s\n", names[mode], iters * (double)len / t / 1e9);
  }
  // EFAULT, as a read would: into a range with an unmapped page in the middle.
  char* hole = static_cast<char*>(mmap(nullptr, 3 << 12, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  munmap(hole + 4096, 4096);
  ssize_t n = pread(mfd, hole, 3 << 12, 0);
  printf("pread of the memfd into [page, hole, page]: %zd\n", n);
  n = pread(mfd, hole + 4096, 4096, 0);
  printf("pread of the memfd into the hole: %zd (%s)\n", n, n < 0 ? strerror(errno) : "");
}
