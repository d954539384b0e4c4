#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
static void rep_movsb(void* d, const void* s, size_t n) { asm volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory"); }
int main(int argc, char** argv) {
  const size_t len = 2 << 20, window = 16 << 20; const int iters = 1024;
  char *src, *dst; posix_memalign((void**)&src, 4096, window); posix_memalign((void**)&dst, 4096, 4 << 20);
  memset(src, 1, window); memset(dst, 2, 4 << 20);
  int fd = open(argv[1], O_RDONLY | O_DIRECT);
  const char* names[] = {"memcpy", "rep movsb (user)", "process_vm_writev"};
  for (int mode = 0; mode < 3; ++mode) {
    double t = 0;
    for (int i = 0; i < iters; ++i) {
      char* s = src + (i % 8) * len;  // a 16 MiB ring of 2 MiB staging blocks, as the window's
      if (pread(fd, s, len, (off_t)i * len) != (ssize_t)len) { perror("pread"); return 1; }
      char* d = dst + (i % 2) * len;
      double a = now();
      if (mode == 0) memcpy(d, s, len);
      else if (mode == 1) rep_movsb(d, s, len);
      else { iovec l{s, len}, r{d, len}; if (process_vm_writev(getpid(), &l, 1, &r, 1, 0) != (ssize_t)len) return 1; }
      t += now() - a;
    }
    printf("%-18s after an O_DIRECT read into the block: %.2f GB/s\n", names[mode], iters * (double)len / t / 1e9);
  }
}
