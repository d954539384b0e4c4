// A ring created and submitted to by another thread; this thread only waits on it and closes it.
#include <liburing.h>
#include <fcntl.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>
int main() {
  int z = open("/dev/zero", O_RDONLY);
  std::vector<char> buf(8 << 20);
  int total = 0;
  for (int r = 0; r < 20; ++r) {
    io_uring ring;
    __kernel_timespec ts{0, 2000000};
    std::thread([&] { io_uring_queue_init(8, &ring, 0); io_uring_prep_timeout(io_uring_get_sqe(&ring), &ts, 0, 0); io_uring_submit(&ring); }).join();
    io_uring_cqe* cqe;
    io_uring_wait_cqe(&ring, &cqe);   // waits (GETEVENTS) from this thread
    io_uring_cqe_seen(&ring, cqe);
    io_uring_queue_exit(&ring);       // and closes it here
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(30);
    int shorts = 0;
    while (std::chrono::steady_clock::now() < until) if (read(z, buf.data(), buf.size()) != (ssize_t)buf.size()) ++shorts;
    total += shorts;
  }
  printf("waited and closed here: %d short reads after 20 rings\n", total);
}
