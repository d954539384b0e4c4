// zero_short.cc FILE N: N rounds of a 1 MiB write to FILE (page-aligned buffer, sequential) and a
// 1 MiB read of /dev/zero; prints how many reads of /dev/zero came back short.  Run under the shim.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char** argv) {
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644), z = open("/dev/zero", O_RDONLY);
  long n = atol(argv[2]), shorts = 0;
  char* b; posix_memalign((void**)&b, 4096, 1 << 20); memset(b, 1, 1 << 20);
  for (long i = 0; i < n; ++i) {
    if (write(fd, b, 1 << 20) != 1 << 20) { perror("write"); return 1; }
    ssize_t r = read(z, b, 1 << 20);
    if (r != 1 << 20) { ++shorts; fprintf(stderr, "round %ld: read of /dev/zero returned %zd\n", i, r); }
    if (i % 64 == 63) { fsync(fd); ftruncate(fd, 0); lseek(fd, 0, SEEK_SET); }
  }
  printf("%ld short reads of %ld\n", shorts, n);
}
