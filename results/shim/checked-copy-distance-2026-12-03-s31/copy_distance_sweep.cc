// process_vm_writev speed, warm 1 MiB buffers, by (source offset, destination offset) in the page.
#include <sys/uio.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main(int argc, char** argv) {
  size_t len = 1 << 20; int iters = 200;
  char *s, *d;
  posix_memalign((void**)&s, 4096, len + 8192); posix_memalign((void**)&d, 4096, len + 8192);
  memset(s, 1, len + 8192); memset(d, 2, len + 8192);
  for (int k = 1; k + 1 < argc; k += 2) {
    size_t so = atol(argv[k]), dof = atol(argv[k + 1]);
    double a = now();
    for (int i = 0; i < iters; ++i) { iovec l{s + so, len}, r{d + dof, len}; process_vm_writev(getpid(), &l, 1, &r, 1, 0); }
    printf("src+%-4zu dst+%-4zu pvw %.2f GB/s\n", so, dof, iters * (double)len / (now() - a) / 1e9);
  }
}
