// lease_guard_test.cc - the library's opens and the program's leases
// (lease_guard.h): no open while a lease is held, and a lease set while an
// open is in flight waits for it to close.
#include "io/lease_guard.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <chrono>
#include <string>
#include <thread>

#include "temp_dir.h"

namespace hybridio {
namespace {

class LeaseGuard : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    path_ = dir_.file("leased");
    int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "data", 4), 4);
    ::close(fd);
    fd_ = ::open(path_.c_str(), O_RDONLY);
    ASSERT_GE(fd_, 0);
    struct stat st;
    ASSERT_EQ(fstat(fd_, &st), 0);
    dev_ = st.st_dev;
    ino_ = st.st_ino;
    if (fcntl(fd_, F_SETLEASE, F_WRLCK) != 0) GTEST_SKIP() << "no leases here: " << strerror(errno);
    ASSERT_EQ(fcntl(fd_, F_SETLEASE, F_UNLCK), 0);
  }
  void TearDown() override {
    if (fd_ >= 0) ::close(fd_);
  }
  static int real_fcntl(int fd, int cmd, ...) {
    va_list ap;
    va_start(ap, cmd);
    const int arg = va_arg(ap, int);
    va_end(ap);
    return ::fcntl(fd, cmd, arg);
  }

  testing::TempDir dir_;
  std::string path_;
  int fd_ = -1;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

TEST_F(LeaseGuard, NoOpenWhileTheProgramsDescriptorHoldsALease) {
  ASSERT_EQ(fcntl(fd_, F_SETLEASE, F_WRLCK), 0);  // set behind set_lease's back: F_GETLEASE finds it
  EXPECT_TRUE(lease_held(fd_, dev_, ino_));
  EXPECT_FALSE(twin_may_open(fd_, dev_, ino_, true));
  ASSERT_EQ(fcntl(fd_, F_SETLEASE, F_UNLCK), 0);
  EXPECT_FALSE(lease_held(fd_, dev_, ino_));
  ASSERT_TRUE(twin_may_open(fd_, dev_, ino_, true));
  twin_closed(true);
}

TEST_F(LeaseGuard, ALeaseWaitsForAnOpenOfAnotherThreadAndKeepsNewOnesOff) {
  std::atomic<bool> counted{false}, close_now{false};
  std::thread opener([&] {
    ASSERT_TRUE(twin_may_open(fd_, dev_, ino_, true));
    counted = true;
    while (!close_now) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    twin_closed(true);
  });
  while (!counted) std::this_thread::yield();
  std::atomic<int> rc{-2};
  std::thread setter([&] { rc = set_lease(fd_, F_WRLCK, real_fcntl); });
  // Once the setter has begun (a lease being set counts as held), it waits.
  while (!lease_held(fd_, dev_, ino_)) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(rc.load(), -2) << "the lease waited for the open in flight";
  const bool opened = twin_may_open(fd_, dev_, ino_, false);
  EXPECT_FALSE(opened) << "no new open once the lease is being set";
  if (opened) twin_closed(false);  // else the setter would wait for it forever
  close_now = true;
  opener.join();
  setter.join();
  EXPECT_EQ(rc.load(), 0);
  EXPECT_EQ(fcntl(fd_, F_GETLEASE), F_WRLCK);
  EXPECT_FALSE(twin_may_open(fd_, dev_, ino_, false)) << "none while it is held";
  EXPECT_EQ(set_lease(fd_, F_UNLCK, real_fcntl), 0);
  ASSERT_TRUE(twin_may_open(fd_, dev_, ino_, false)) << "unmarked by F_UNLCK";
  twin_closed(false);
}

TEST_F(LeaseGuard, ALeaseOfItsOwnThreadsOpenDoesNotWait) {
  // As from a signal handler on a thread whose open is in flight.
  ASSERT_TRUE(twin_may_open(fd_, dev_, ino_, true));
  EXPECT_EQ(set_lease(fd_, F_RDLCK, real_fcntl), 0);  // no wait (the library's twin here is not an open)
  twin_closed(true);
  EXPECT_EQ(set_lease(fd_, F_UNLCK, real_fcntl), 0);
}

TEST_F(LeaseGuard, AFailedLeaseLeavesNoMark) {
  int other = ::open(path_.c_str(), O_RDONLY);  // a second open: F_WRLCK is refused
  ASSERT_GE(other, 0);
  EXPECT_EQ(set_lease(fd_, F_WRLCK, real_fcntl), -1);
  EXPECT_EQ(errno, EAGAIN);
  ::close(other);
  ASSERT_TRUE(twin_may_open(fd_, dev_, ino_, false));
  twin_closed(false);
}

}  // namespace
}  // namespace hybridio
