// diff_case.cc - see diff_case.h.
#include "diff_case.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <cstdio>

namespace hio_diff {
namespace {

// Straight to the descriptor: no stdio buffer a fork could duplicate or a
// crash could lose.
void emit(const std::string& line) {
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(STDOUT_FILENO, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace

void Transcript::put(const std::string& key, const std::string& value) { emit(key + "=" + value + "\n"); }

int Transcript::skip(const std::string& reason) {
  emit("skip: " + reason + "\n");
  return kSkipped;
}

std::vector<Case>& registry() {
  static std::vector<Case> cases;
  return cases;
}

Registration::Registration(const char* name, const char* item, const char* summary, CaseFn run) {
  registry().push_back(Case{name, item, summary, run});
}

int harness_failure(const std::string& what) {
  int e = errno;
  fprintf(stderr, "hio_diff: harness failure: %s (errno %s)\n", what.c_str(), strerrorname_np(e) ? strerrorname_np(e) : "0");
  return kHarnessFailure;
}

}  // namespace hio_diff
