// ring_submitter_test.cc - requests submitted by the library's submitter
// thread complete without flagging the thread that waits for them, or any
// other thread of the program, as having a signal pending; a forked child
// submits with a thread of its own; a failed entry is reported once.
#include "ring_submitter.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <liburing.h>
#include <signal.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

namespace hybridio {
namespace {

constexpr size_t kZeroRead = 8 << 20;

// Arms `n` timeouts of 2, 4, ... ms in `ring` (user data = their number).
void prepare_timeouts(io_uring* ring, std::vector<__kernel_timespec>& ts, int n) {
  ts.resize(n);
  for (int i = 0; i < n; ++i) {
    ts[i] = {0, 2'000'000LL * (i + 1)};
    io_uring_sqe* sqe = io_uring_get_sqe(ring);
    ASSERT_NE(sqe, nullptr);
    io_uring_prep_timeout(sqe, &ts[i], 0, 0);
    io_uring_sqe_set_data64(sqe, i);
  }
}

// What a completion that is the waiting thread's task work does to it,
// counted until `n` completions are in the ring: the kernel flags that
// thread as having a signal pending, so a read of /dev/zero it is in comes
// back short, and a sigtimedwait() it sleeps in returns EINTR though no
// signal came.  A completion that comes while the thread is in user space
// runs there and disturbs nothing, so each round reads 8 MiB into `buf`
// and then sleeps up to 2 ms: the thread is in the kernel nearly all the
// time.  `buf` is touched before the timers are armed: on a VM that backs
// memory lazily, zeroing a fresh 8 MiB takes longer than a batch of
// timers, and a CI run of the sanitizer build that allocated it here saw
// every one of 80 completions pass while the thread was in user space.
// The look at the ring is wait-free: a completion is there only once its
// task work has run.
struct Disturbances {
  int short_reads = 0;
  int interrupted_waits = 0;
  int total() const { return short_reads + interrupted_waits; }
};

Disturbances disturbances_until(io_uring* ring, unsigned n, std::vector<char>& buf) {
  const int zero = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
  EXPECT_GE(zero, 0);
  sigset_t none;
  sigemptyset(&none);
  const timespec nap{0, 2'000'000};
  Disturbances seen;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (io_uring_cq_ready(ring) < n && std::chrono::steady_clock::now() < give_up) {
    if (::read(zero, buf.data(), buf.size()) != static_cast<ssize_t>(buf.size())) ++seen.short_reads;
    if (::sigtimedwait(&none, nullptr, &nap) < 0 && errno == EINTR) ++seen.interrupted_waits;
  }
  ::close(zero);
  EXPECT_EQ(io_uring_cq_ready(ring), n) << "the completions never came";
  return seen;
}

class RingSubmitterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const int rc = io_uring_queue_init(64, &ring_, 0);
    if (rc < 0) GTEST_SKIP() << "io_uring is not usable here: " << strerror(-rc);
    ring_ok_ = true;
    ASSERT_TRUE(ring_submitter_ready());
  }
  void TearDown() override {
    remote_.wait_done();
    if (ring_ok_) io_uring_queue_exit(&ring_);
  }
  io_uring ring_{};
  RemoteRing remote_;
  std::vector<char> zero_buf_ = std::vector<char>(kZeroRead);  // touched: zero-filled
  bool ring_ok_ = false;
};

TEST_F(RingSubmitterTest, CompletionsLeaveTheProgramsThreadsAlone) {
  constexpr int kTimeouts = 16;
  std::vector<__kernel_timespec> ts;
  prepare_timeouts(&ring_, ts, kTimeouts);
  ASSERT_TRUE(remote_.request(&ring_));
  remote_.wait_done();
  ASSERT_EQ(remote_.take_error(), 0);
  ASSERT_EQ(io_uring_sq_ready(&ring_), 0u) << "the kernel took them all";
  // The completions are never this thread's task work: it can even wait
  // without entering the ring, and neither a read of /dev/zero nor a
  // sleep is cut short.
  const Disturbances seen = disturbances_until(&ring_, kTimeouts, zero_buf_);
  EXPECT_EQ(seen.short_reads, 0);
  EXPECT_EQ(seen.interrupted_waits, 0);
  io_uring_cq_advance(&ring_, kTimeouts);
}

// What the submitter is for, seen from the other side: the same timeouts
// submitted by this thread.  Their completions are this thread's task
// work, and they cut its reads and sleeps short (all 16 of a batch on the
// development VM).  A few batches are tried, for a machine so loaded that
// a whole batch fired while the thread waited to run.  Without this the
// case above would prove nothing.
TEST_F(RingSubmitterTest, ForComparisonSubmittedByTheCallerTheyCutReadsShort) {
  constexpr int kTimeouts = 16;
  constexpr int kBatches = 5;
  Disturbances seen;
  for (int batch = 0; batch < kBatches && seen.total() == 0; ++batch) {
    std::vector<__kernel_timespec> ts;
    prepare_timeouts(&ring_, ts, kTimeouts);
    ASSERT_EQ(io_uring_submit(&ring_), kTimeouts);
    seen = disturbances_until(&ring_, kTimeouts, zero_buf_);
    io_uring_cq_advance(&ring_, kTimeouts);
  }
  EXPECT_GE(seen.total(), 1) << "no completion flagged the submitting thread in " << kBatches
                             << " batches: this kernel does not need the submitter";
}

TEST_F(RingSubmitterTest, AForkedChildSubmitsWithAThreadOfItsOwn) {
  std::vector<__kernel_timespec> ts;
  prepare_timeouts(&ring_, ts, 1);
  ASSERT_TRUE(remote_.request(&ring_));  // the parent's thread exists
  remote_.wait_done();
  ASSERT_EQ(disturbances_until(&ring_, 1, zero_buf_).total(), 0);
  io_uring_cq_advance(&ring_, 1);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    io_uring ring;
    if (io_uring_queue_init(8, &ring, 0) < 0) _exit(2);
    io_uring_prep_nop(io_uring_get_sqe(&ring));
    RemoteRing remote;
    if (!remote.request(&ring)) _exit(3);
    remote.wait_done();
    if (remote.take_error() != 0) _exit(4);
    io_uring_cqe* cqe;
    if (io_uring_wait_cqe(&ring, &cqe) != 0 || cqe->res != 0) _exit(5);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(RingSubmitterTest, AFailedEntryIsReportedOnce) {
  // A ring whose descriptor is gone: the kernel's EBADF, not a hang.
  io_uring other;
  ASSERT_EQ(io_uring_queue_init(8, &other, 0), 0);
  io_uring_prep_nop(io_uring_get_sqe(&other));
  ASSERT_EQ(::close(other.ring_fd), 0);
  RemoteRing remote;
  ASSERT_TRUE(remote.request(&other));
  remote.wait_done();
  EXPECT_EQ(remote.take_error(), -EBADF);
  EXPECT_EQ(remote.take_error(), 0) << "taken once";
  EXPECT_EQ(io_uring_sq_ready(&other), 1u) << "the kernel took nothing";
  other.ring_fd = other.enter_ring_fd = -1;
  io_uring_queue_exit(&other);
}

}  // namespace
}  // namespace hybridio
