// ring_loop_test.cc - the ring loop's error policy: a ring that really
// stops taking work (its descriptor closed) withdraws what the kernel has
// not taken, waits for what it has and reports the errno; EINTR is retried;
// EAGAIN with nothing in flight is bounded.
#include "io/ring_loop.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <vector>

#include "expect_bytes.h"
#include "file_bytes.h"
#include "platform/syscall_table.h"
#include "temp_dir.h"

namespace hybridio {
namespace {

constexpr size_t kBlock = 4096;
constexpr unsigned kReads = 8;

class RingLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    path_ = dir_.file("data");
    data_ = testing::random_bytes(kReads * kBlock, 1);
    int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, data_.data(), data_.size(), 0), static_cast<ssize_t>(data_.size()));
    fd_ = fd;
    int rc = io_uring_queue_init(16, &ring_, 0);
    if (rc < 0) GTEST_SKIP() << "io_uring is not usable here: " << strerror(-rc);
    ring_ok_ = true;
    for (int& r : results_) r = kUnset;
  }
  void TearDown() override {
    set_syscalls_for_testing(nullptr);
    if (ring_ok_) io_uring_queue_exit(&ring_);
    if (fd_ >= 0) ::close(fd_);
  }

  // Read i of the file into its own block of `buf_`.
  void prepare_read(unsigned i) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    ASSERT_NE(sqe, nullptr);
    io_uring_prep_read(sqe, fd_, buf_ + i * kBlock, kBlock, i * kBlock);
    io_uring_sqe_set_data64(sqe, i);
  }
  // A loop on the test's ring.
  RingLoop make_loop() {
    RingLoop loop;
    loop.reset(&ring_);
    return loop;
  }
  auto record() {
    return [this](uint64_t i, int res) {
      ASSERT_LT(i, kReads);
      ASSERT_EQ(results_[i], kUnset) << "read " << i << " handed on twice";
      results_[i] = res;
    };
  }

  static constexpr int kUnset = 1 << 30;
  testing::TempDir dir_;
  std::string path_;
  std::vector<char> data_;
  int fd_ = -1;
  io_uring ring_{};
  bool ring_ok_ = false;
  int results_[kReads];
  char buf_[kReads * kBlock] = {};
};

TEST_F(RingLoopTest, ARingThatStopsTakingWorkReportsEveryEntryAndLeavesNothingInFlight) {
  RingLoop loop = make_loop();
  for (unsigned i = 0; i < 4; ++i) prepare_read(i);
  ASSERT_EQ(loop.submit(record()), 0);
  EXPECT_EQ(loop.unsubmitted(), 0u);
  for (unsigned i = 4; i < kReads; ++i) prepare_read(i);
  // The ring's descriptor goes away (a program closing every descriptor):
  // io_uring_enter now really fails with EBADF.  The mapped rings stay.
  ASSERT_EQ(::close(ring_.ring_fd), 0);
  int rc = 0;
  while (rc == 0 && !loop.idle()) rc = loop.pump(record());
  EXPECT_EQ(rc, -EBADF);
  EXPECT_TRUE(loop.idle());
  EXPECT_EQ(loop.in_flight(), 0u);
  for (unsigned i = 0; i < 4; ++i) {
    EXPECT_EQ(results_[i], static_cast<int>(kBlock)) << "taken by the kernel: its real result, read " << i;
    EXPECT_TRUE(testing::same_bytes(buf_ + i * kBlock, data_.data() + i * kBlock, kBlock)) << i;
  }
  for (unsigned i = 4; i < kReads; ++i) EXPECT_EQ(results_[i], -EBADF) << "withdrawn, read " << i;
  // Withdrawn means gone: nothing of them is left to be submitted later.
  EXPECT_EQ(io_uring_sq_ready(&ring_), 0u);
  ring_.ring_fd = ring_.enter_ring_fd = -1;  // closed above; io_uring_queue_exit must not close a reused number
}

std::atomic<int> g_interrupts{0};
int interrupted_enter(io_uring* ring, unsigned wait_nr, bool submit) {
  if (g_interrupts.fetch_sub(1) > 0) return -EINTR;
  return real_syscalls().ring_enter(ring, wait_nr, submit);
}

TEST_F(RingLoopTest, EintrIsRetried) {
  SyscallTable t = real_syscalls();
  t.ring_enter = interrupted_enter;
  g_interrupts = 3;
  set_syscalls_for_testing(&t);
  RingLoop loop = make_loop();
  for (unsigned i = 0; i < kReads; ++i) prepare_read(i);
  while (!loop.idle()) ASSERT_EQ(loop.pump(record()), 0);
  for (unsigned i = 0; i < kReads; ++i) EXPECT_EQ(results_[i], static_cast<int>(kBlock)) << i;
  EXPECT_TRUE(testing::same_bytes(buf_, data_.data(), data_.size()));
  EXPECT_LT(g_interrupts.load(), 0) << "every interruption was seen";
}

std::atomic<int> g_busy_calls{0};
int always_busy(io_uring*, unsigned, bool) {
  g_busy_calls.fetch_add(1);
  return -EAGAIN;
}

TEST_F(RingLoopTest, BusyWithNothingInFlightGivesUpAfterABoundAndWithdraws) {
  SyscallTable t = real_syscalls();
  t.ring_enter = always_busy;
  g_busy_calls = 0;
  set_syscalls_for_testing(&t);
  RingLoop loop = make_loop();
  prepare_read(0);
  prepare_read(1);
  EXPECT_EQ(loop.pump(record()), -EAGAIN);
  EXPECT_EQ(g_busy_calls.load(), RingLoop::kBusyRetries + 1);
  EXPECT_EQ(results_[0], -EAGAIN);
  EXPECT_EQ(results_[1], -EAGAIN);
  EXPECT_TRUE(loop.idle());
  // submit() alone never waits: busy leaves the entries prepared.
  set_syscalls_for_testing(nullptr);
  prepare_read(2);
  set_syscalls_for_testing(&t);
  EXPECT_EQ(loop.submit(record()), 0);
  EXPECT_EQ(loop.unsubmitted(), 1u);
  set_syscalls_for_testing(nullptr);
  while (!loop.idle()) ASSERT_EQ(loop.pump(record()), 0);
  EXPECT_EQ(results_[2], static_cast<int>(kBlock));
}

}  // namespace
}  // namespace hybridio
