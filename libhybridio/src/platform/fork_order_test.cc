// fork_order_test.cc - fork handlers run in one order (fork_order.h):
// prepare by increasing level, parent and child by decreasing level,
// whatever order the levels were installed in.
#include "platform/fork_order.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace hybridio {
namespace {

char g_log[64];
int g_len = 0;
void note(char c) {
  if (g_len < 63) g_log[g_len++] = c;
}

TEST(ForkOrder, PrepareOutermostFirstReleaseInReverseWhateverTheInstallOrder) {
  ForkHandlers inner, outer;  // installed inner first, as a lazily made part would be
  inner.prepare = [] { note('i'); };
  inner.parent = [] { note('I'); };
  inner.child = [] { note('c'); };
  outer.prepare = [] { note('o'); };
  outer.parent = [] { note('O'); };
  outer.child = [] { note('C'); };
  install_fork_handlers(ForkLevel::kDropBehind, inner);
  install_fork_handlers(ForkLevel::kExactCalls, outer);
  g_len = 0;
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(std::string(g_log, g_len) == "oicC" ? 0 : 1);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_EQ(std::string(g_log, g_len), "oiIO") << "prepare outer then inner; parent inner then outer";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child: inner then outer";
}

}  // namespace
}  // namespace hybridio
