// diff_main.cc - hio_diff: runs one differential case and prints its transcript.
//
//   hio_diff CASE --dir DIR [--seed N] [--ops N] [--small-fs DIR]
//   hio_diff --list
// Exit status: 0 the case ran, 77 skipped, other values a harness failure.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "diff_case.h"

namespace {

using hio_diff::Case;

int usage() {
  fprintf(stderr,
          "usage: hio_diff CASE --dir DIR [--seed N] [--ops N] [--small-fs DIR]\n"
          "       hio_diff --list\n");
  return 2;
}

std::vector<Case> sorted_cases() {
  std::vector<Case> cases = hio_diff::registry();
  std::sort(cases.begin(), cases.end(), [](const Case& a, const Case& b) { return strcmp(a.name, b.name) < 0; });
  return cases;
}

bool parse_number(const char* text, long long* out) {
  char* end = nullptr;
  errno = 0;
  long long v = strtoll(text, &end, 0);
  if (errno || end == text || *end) return false;
  *out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && strcmp(argv[1], "--exec-check") == 0) return hio_diff::locks_exec_check(argc, argv);
  if (argc >= 3 && strcmp(argv[1], "--plain-helper") == 0) return hio_diff::plain_helper_main(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "--exec-filtered") == 0) return hio_diff::seccomp_exec_body(argc, argv);
  if (argc == 2 && strcmp(argv[1], "--list") == 0) {
    for (const Case& c : sorted_cases()) printf("%-28s %-4s %s\n", c.name, c.item, c.summary);
    return 0;
  }
  if (argc < 2 || argv[1][0] == '-') return usage();
  hio_diff::Options opt;
  for (int i = 2; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) return usage();
    const char* value = argv[++i];
    long long n = 0;
    if (flag == "--dir") {
      opt.dir = value;
    } else if (flag == "--small-fs") {
      opt.small_fs = value;
    } else if (flag == "--seed" && parse_number(value, &n)) {
      opt.seed = static_cast<uint64_t>(n);
    } else if (flag == "--ops" && parse_number(value, &n) && n >= 0) {
      opt.ops = static_cast<long>(n);
    } else {
      return usage();
    }
  }
  struct stat st;
  if (opt.dir.empty() || stat(opt.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    fprintf(stderr, "hio_diff: --dir must name an existing directory\n");
    return 2;
  }
  for (const Case& c : hio_diff::registry())
    if (strcmp(c.name, argv[1]) == 0) {
      hio_diff::Transcript out;
      return c.run(opt, out);
    }
  fprintf(stderr, "hio_diff: no case '%s' (see --list)\n", argv[1]);
  return 2;
}
