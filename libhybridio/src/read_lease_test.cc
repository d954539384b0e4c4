// read_lease_test.cc - the read lease and its watcher against the real
// kernel: taken on a file nobody writes, refused while it is open for
// writing, broken (and released at once) by another process's open for
// writing and by our own truncate, no signal ever reaching the program's
// handlers, released on release(), and not kept by a forked child.
#include "read_lease.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>

#include "temp_dir.h"

namespace hybridio {
namespace {

std::atomic<int> g_lease_signals{0}, g_sigio{0};
void count_lease_signal(int) { g_lease_signals.fetch_add(1); }
void count_sigio(int) { g_sigio.fetch_add(1); }

double now_s() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

class ReadLeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    path_ = dir_.file("leased");
    int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, 1 << 20), 0);
    ::close(fd);
    fd_ = ::open(path_.c_str(), O_RDONLY);
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override {
    if (fd_ >= 0) ::close(fd_);
  }

  // A child process opens the file for writing, writes a byte and exits
  // 0 when its open returned within `limit_s` (lease-break-time is 45 s).
  int writer_child(double limit_s) {
    pid_t pid = fork();
    if (pid == 0) {
      alarm(60);
      const double t0 = now_s();
      int fd = ::open(path_.c_str(), O_WRONLY);
      const double took = now_s() - t0;
      if (fd < 0) _exit(2);
      if (::pwrite(fd, "x", 1, 0) != 1) _exit(3);
      ::close(fd);
      _exit(took < limit_s ? 0 : 4);
    }
    int status = 0;
    pid_t r;
    while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
    }
    if (pid < 0 || r != pid) return -1;
    if (!WIFEXITED(status)) return 100 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return WEXITSTATUS(status);
  }

  testing::TempDir dir_;
  std::string path_;
  int fd_ = -1;
};

TEST_F(ReadLeaseTest, HeldOnAFileNobodyWrites) {
  ReadLease lease;
  uint64_t gen = 0;
  ASSERT_TRUE(lease.hold(fd_, nullptr, &gen));
  EXPECT_TRUE(lease.held());
  EXPECT_TRUE(lease.valid(gen));
  EXPECT_EQ(fcntl(lease.fd(), F_GETLEASE), F_RDLCK);
  EXPECT_EQ(fcntl(lease.fd(), F_GETFL) & O_ACCMODE, O_RDONLY);
  EXPECT_TRUE(fcntl(lease.fd(), F_GETFD) & FD_CLOEXEC);
  uint64_t again = 0;
  ASSERT_TRUE(lease.hold(fd_, nullptr, &again));
  EXPECT_EQ(again, gen) << "a lease still held keeps its generation";
}

TEST_F(ReadLeaseTest, RefusedWhileOpenForWritingAnywhere) {
  int writer = ::open(path_.c_str(), O_WRONLY);
  ASSERT_GE(writer, 0);
  ReadLease lease;
  uint64_t gen = 0;
  EXPECT_FALSE(lease.hold(fd_, nullptr, &gen));
  ::close(writer);
  EXPECT_TRUE(lease.hold(fd_, nullptr, &gen)) << "refused only while the file was open for writing";
}

TEST_F(ReadLeaseTest, AnotherProcessOpeningForWritingBreaksItAndIsNotHeldUp) {
  ReadLease lease;
  uint64_t gen = 0;
  ASSERT_TRUE(lease.hold(fd_, nullptr, &gen));
  const uint64_t breaks = ReadLease::breaks_seen();
  EXPECT_EQ(writer_child(5.0), 0) << "the writer's open waited for the lease-break time";
  EXPECT_FALSE(lease.valid(gen));
  EXPECT_FALSE(lease.held());
  EXPECT_GT(ReadLease::breaks_seen(), breaks);
  uint64_t next = 0;
  ASSERT_TRUE(lease.hold(fd_, nullptr, &next));
  EXPECT_NE(next, gen) << "a lease taken again has a new generation";
  EXPECT_TRUE(lease.valid(next));
}

TEST_F(ReadLeaseTest, OurOwnTruncateBreaksItWithoutDeadlock) {
  ReadLease lease;
  uint64_t gen = 0;
  ASSERT_TRUE(lease.hold(fd_, nullptr, &gen));
  const double t0 = now_s();
  ASSERT_EQ(::truncate(path_.c_str(), 4096), 0);
  EXPECT_LT(now_s() - t0, 5.0);
  EXPECT_FALSE(lease.valid(gen));
}

TEST_F(ReadLeaseTest, InvalidateEndsTheGeneration) {
  ReadLease lease;
  uint64_t gen = 0;
  ASSERT_TRUE(lease.hold(fd_, nullptr, &gen));
  lease.invalidate();
  EXPECT_FALSE(lease.valid(gen));
  uint64_t next = 0;
  ASSERT_TRUE(lease.hold(fd_, nullptr, &next));
  EXPECT_TRUE(lease.valid(next));
}

TEST_F(ReadLeaseTest, TheProgramsHandlersSeeNoSignal) {
  struct sigaction sa{}, old_rt{}, old_io{};
  sa.sa_handler = count_lease_signal;
  ASSERT_EQ(sigaction(ReadLease::lease_signal(), &sa, &old_rt), 0);
  sa.sa_handler = count_sigio;
  ASSERT_EQ(sigaction(SIGIO, &sa, &old_io), 0);
  g_lease_signals = 0;
  g_sigio = 0;
  ReadLease lease;
  for (int round = 0; round < 5; ++round) {
    uint64_t gen = 0;
    ASSERT_TRUE(lease.hold(fd_, nullptr, &gen));
    if (round % 2) {
      ASSERT_EQ(writer_child(5.0), 0);
    } else {
      int w = ::open(path_.c_str(), O_WRONLY);  // this thread breaks it
      ASSERT_GE(w, 0);
      ::close(w);
    }
    EXPECT_FALSE(lease.valid(gen));
  }
  usleep(100 * 1000);
  EXPECT_EQ(g_lease_signals.load(), 0);
  EXPECT_EQ(g_sigio.load(), 0);
  // The program's own signal of that number still reaches its handler.
  ASSERT_EQ(kill(getpid(), ReadLease::lease_signal()), 0);
  for (int i = 0; i < 200 && g_lease_signals.load() == 0; ++i) usleep(10 * 1000);
  EXPECT_EQ(g_lease_signals.load(), 1);
  sigaction(ReadLease::lease_signal(), &old_rt, nullptr);
  sigaction(SIGIO, &old_io, nullptr);
}

TEST_F(ReadLeaseTest, ReleasedOnRelease) {
  ReadLease lease;
  uint64_t gen = 0;
  ASSERT_TRUE(lease.hold(fd_, nullptr, &gen));
  lease.release();
  EXPECT_EQ(lease.fd(), -1);
  // No lease on the file: a non-blocking open for writing is not told EWOULDBLOCK.
  int w = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK);
  EXPECT_GE(w, 0) << strerror(errno);
  if (w >= 0) ::close(w);
}

TEST_F(ReadLeaseTest, ForkedChildDoesNotKeepTheParentsLease) {
  ReadLease lease;
  uint64_t gen = 0;
  ASSERT_TRUE(lease.hold(fd_, nullptr, &gen));
  const int lfd = lease.fd();
  int to_child[2];
  ASSERT_EQ(pipe(to_child), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(60);
    // The child's copy of the lease descriptor was closed at fork.
    if (fcntl(lfd, F_GETFD) != -1 || errno != EBADF) _exit(1);
    char c;
    if (read(to_child[0], &c, 1) != 1) _exit(2);  // the parent has released its lease
    int w = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK);
    _exit(w >= 0 ? 0 : 3);
  }
  EXPECT_TRUE(lease.valid(gen)) << "the child's fork did not touch the parent's lease";
  lease.release();
  ASSERT_EQ(write(to_child[1], "x", 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  close(to_child[0]);
  close(to_child[1]);
}

}  // namespace
}  // namespace hybridio
