// probe: async io_uring request completed by io-wq, then a long read of /dev/zero.
#include <liburing.h>
#include <fcntl.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
int main(int argc, char** argv) {
  unsigned flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN;
  if (argc > 1 && !strcmp(argv[1], "defer")) flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
  if (argc > 1 && !strcmp(argv[1], "plain")) flags = 0;
  int rounds = argc > 2 ? atoi(argv[2]) : 20000;
  size_t len = argc > 3 ? atol(argv[3]) : (1 << 20);
  io_uring ring; io_uring_params p{}; p.flags = flags;
  int rc = io_uring_queue_init_params(8, &ring, &p);
  if (rc) { fprintf(stderr, "init %s\n", strerror(-rc)); return 1; }
  int z = open("/dev/zero", O_RDONLY);
  std::vector<char> buf(len);
  int shortn = 0;
  for (int i = 0; i < rounds; ++i) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring);
    io_uring_prep_nop(sqe);
    sqe->flags |= IOSQE_ASYNC;
    io_uring_cqe* cqe;
    rc = io_uring_submit_and_wait(&ring, 1);
    if (rc < 0) { fprintf(stderr, "submit %s\n", strerror(-rc)); return 1; }
    while (io_uring_peek_cqe(&ring, &cqe) == 0) io_uring_cqe_seen(&ring, cqe);
    ssize_t n = read(z, buf.data(), len);
    if (n != (ssize_t)len) ++shortn;
  }
  printf("%s: %d short of %d\n", argc > 1 ? argv[1] : "coop", shortn, rounds);
}
