// copy_out_probe.cc - how fast each way of copying out of staging blocks is, the blocks
// just read with O_DIRECT (as the shim's read-ahead window's are): 2 MiB copies out of a
// 16 MiB ring of blocks kept in a memfd's mapping, into a reused 4 MiB buffer.
//   memcpy, user-space rep movsb, process_vm_writev (the shim's checked copy), pread()
//   of the memfd (the kernel's copy_to_user, no pinning), and process_vm_writev of 256 KiB
//   pieces each prefetched first.
// Then: pread() of the memfd into a buffer with an unmapped page in it stops there, as a
// read(2) does (a short count before it, EFAULT at it).
// Build: g++ -O2 -o copy_out_probe copy_out_probe.cc; run as root after drop_caches:
//   ./copy_out_probe FILE   (FILE: 2 GiB or more, written beforehand)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static void rep_movsb(void* d, const void* s, size_t n) {
  asm volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

int main(int argc, char** argv) {
  if (argc != 2) { fprintf(stderr, "usage: %s FILE\n", argv[0]); return 2; }
  const size_t len = 2 << 20, window = 16 << 20;
  const int iters = 1024;
  int mfd = memfd_create("staging", MFD_CLOEXEC);
  if (mfd < 0 || ftruncate(mfd, window) != 0) { perror("memfd"); return 1; }
  char* ring = static_cast<char*>(mmap(nullptr, window, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0));
  char* dst = nullptr;
  if (ring == MAP_FAILED || posix_memalign(reinterpret_cast<void**>(&dst), 4096, 2 * len) != 0) return 1;
  memset(ring, 1, window);
  memset(dst, 2, 2 * len);
  int fd = open(argv[1], O_RDONLY | O_DIRECT);
  if (fd < 0) { perror(argv[1]); return 1; }
  const char* names[] = {"memcpy", "rep movsb (user)", "process_vm_writev", "pread of the memfd", "prefetch+pvw 256K"};
  for (int mode = 0; mode < 5; ++mode) {
    double t = 0;
    for (int i = 0; i < iters; ++i) {
      const size_t at = (i % 8) * len;
      if (pread(fd, ring + at, len, static_cast<off_t>(i) * len) != static_cast<ssize_t>(len)) {
        perror("pread");
        return 1;
      }
      char* d = dst + (i % 2) * len;
      const double start = now();
      bool ok = true;
      if (mode == 0) {
        memcpy(d, ring + at, len);
      } else if (mode == 1) {
        rep_movsb(d, ring + at, len);
      } else if (mode == 2) {
        iovec local{ring + at, len}, remote{d, len};
        ok = process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(len);
      } else if (mode == 3) {
        ok = pread(mfd, d, len, static_cast<off_t>(at)) == static_cast<ssize_t>(len);
      } else {
        const size_t piece = 256 << 10;
        for (size_t o = 0; o < len && ok; o += piece) {
          const char* p = ring + at + o;
          for (size_t k = 0; k < piece; k += 64) __builtin_prefetch(p + k, 0, 3);
          iovec local{ring + at + o, piece}, remote{d + o, piece};
          ok = process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(piece);
        }
      }
      t += now() - start;
      if (!ok) { perror(names[mode]); return 1; }
    }
    printf("%-20s %.2f GB/s\n", names[mode], iters * static_cast<double>(len) / t / 1e9);
  }
  char* hole = static_cast<char*>(mmap(nullptr, 3 << 12, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  munmap(hole + 4096, 4096);
  printf("pread of the memfd into [page, hole, page]: %zd\n", pread(mfd, hole, 3 << 12, 0));
  const ssize_t n = pread(mfd, hole + 4096, 4096, 0);
  printf("pread of the memfd into the hole: %zd (%s)\n", n, n < 0 ? strerror(errno) : "");
}
