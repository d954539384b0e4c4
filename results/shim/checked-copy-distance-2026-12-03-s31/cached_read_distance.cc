// cached_read_distance.cc FILE BS_KIB OFFSET...: buffered preads of 1 GiB of a cached FILE into a buffer OFFSET bytes into a page (the kernel's copy_to_user), three rounds.
#include <fcntl.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main(int argc, char** argv) {
  int fd = open(argv[1], O_RDONLY);
  size_t bs = atol(argv[2]) << 10, total = 1ULL << 30;
  char* b; posix_memalign((void**)&b, 4096, bs + 4096); memset(b, 1, bs + 4096);
  for (int r = 0; r < 3; ++r) for (int k = 3; k < argc; ++k) {
    size_t off = atol(argv[k]);
    double a = now();
    for (size_t o = 0; o < total; o += bs) pread(fd, b + off, bs, o);
    printf("bs %zuK dst+%-4zu %.2f GB/s\n", bs >> 10, off, total / (now() - a) / 1e9);
  }
}
