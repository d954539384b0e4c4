// process_id_test.cc - current_pid() against the kernel's answer, in this
// process and in children made by fork() and by a raw clone system call
// (no atfork handler runs there: only the wiped page can tell).
#include "platform/process_id.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace hybridio {
namespace {

// Exit status of a child that compares current_pid() with the kernel's.
int child_status(pid_t child) {
  int status = 0;
  EXPECT_EQ(waitpid(child, &status, 0), child);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

TEST(ProcessId, IsTheKernels) {
  EXPECT_EQ(current_pid(), static_cast<pid_t>(syscall(SYS_getpid)));
  EXPECT_EQ(current_pid(), current_pid());
}

TEST(ProcessId, IsTheChildsAfterFork) {
  const pid_t parent = current_pid();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const pid_t seen = current_pid();
    _exit(seen == static_cast<pid_t>(syscall(SYS_getpid)) && seen != parent ? 0 : 1);
  }
  EXPECT_EQ(child_status(child), 0);
  EXPECT_EQ(current_pid(), parent);
}

TEST(ProcessId, IsTheChildsAfterARawClone) {
  const pid_t parent = current_pid();
  // clone(SIGCHLD) with no new stack: fork() without glibc's atfork handlers.
  const long child = syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr);
  ASSERT_GE(child, 0);
  if (child == 0) {
    const pid_t seen = current_pid();
    _exit(seen == static_cast<pid_t>(syscall(SYS_getpid)) && seen != parent ? 0 : 1);
  }
  EXPECT_EQ(child_status(static_cast<pid_t>(child)), 0);
}

}  // namespace
}  // namespace hybridio
