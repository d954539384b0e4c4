// Does closing a ring the thread created (with or without submitting) cut a later /dev/zero read short?
#include <liburing.h>
#include <fcntl.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>
int main(int argc, char** argv) {
  bool submit = argc > 1 && !strcmp(argv[1], "submit");
  int z = open("/dev/zero", O_RDONLY);
  std::vector<char> buf(8 << 20);
  int total = 0;
  for (int r = 0; r < 20; ++r) {
    io_uring ring;
    io_uring_queue_init(8, &ring, 0);
    if (submit) { io_uring_prep_nop(io_uring_get_sqe(&ring)); io_uring_submit_and_wait(&ring, 1); }
    io_uring_queue_exit(&ring);
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(30);
    int shorts = 0;
    while (std::chrono::steady_clock::now() < until) if (read(z, buf.data(), buf.size()) != (ssize_t)buf.size()) ++shorts;
    total += shorts;
  }
  printf("%s: %d short reads after 20 ring closes\n", submit ? "submitted" : "created only", total);
}
