// Copy-out of blocks just read O_DIRECT into a destination at page offset 0 or 16:
// memcpy, process_vm_writev, and process_vm_writev through a bounce buffer at
// half a page from the destination (both copies then at a harmless distance).
#include <sys/uio.h>
#include <unistd.h>
#include <fcntl.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main(int argc, char** argv) {
  size_t len = 4 << 20; int iters = 96;
  int fd = open(argv[1], O_RDONLY | O_DIRECT);
  char *src, *dstb, *bounce;
  posix_memalign((void**)&src, 2 << 20, len); posix_memalign((void**)&dstb, 4096, len + 4096);
  posix_memalign((void**)&bounce, 4096, (1 << 20) + 8192);
  memset(dstb, 2, len + 4096); memset(bounce, 0, (1 << 20) + 8192);
  off_t o = 0;
  for (int round = 0; round < 2; ++round)
  for (size_t off : {0, 16}) for (size_t piece : {0, 1, 16 << 10, 64 << 10, 256 << 10}) {
    char* dst = dstb + off;
    double tc = 0;
    for (int i = 0; i < iters; ++i) {
      pread(fd, src, len, o); o = (o + len) % (8LL << 30);
      double a = now();
      if (piece == 0) memcpy(dst, src, len);
      else if (piece == 1) { iovec l{src, len}, r{dst, len}; process_vm_writev(getpid(), &l, 1, &r, 1, 0); }
      else for (size_t d = 0; d < len; d += piece) {
        size_t n = len - d < piece ? len - d : piece;
        char* b = bounce + (((uintptr_t)(dst + d) + 2048) & 4095);
        memcpy(b, src + d, n);
        iovec l{b, n}, r{dst + d, n}; process_vm_writev(getpid(), &l, 1, &r, 1, 0);
      }
      tc += now() - a;
    }
    printf("dst+%-3zu %-6s %4zuK: %.2f GB/s\n", off, piece == 0 ? "memcpy" : piece == 1 ? "pvw" : "bounce", piece >> 10, iters * (double)len / tc / 1e9);
  }
}
