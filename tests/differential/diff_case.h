// diff_case.h - the differential harness's cases, their registry and the
// transcript they print.
//
// A case does real I/O in a scratch directory and prints what a program
// could observe, normalised so that two plain runs print the same lines:
// return values, errno names, positions, sizes, checksums, flags.  The
// driver (run_differential.py) runs every case without and with the
// LD_PRELOAD shim and compares the transcripts line by line.
//
// Cases run one per process, on the main thread; a case may fork and start
// threads of its own.  A case returns kRan when it ran to the end (whatever
// it observed), kSkipped after printing "skip: <reason>" when it cannot run
// here, and kHarnessFailure when the harness itself broke (a setup call
// that plain Linux never fails).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace hio_diff {

constexpr int kRan = 0;
constexpr int kHarnessFailure = 1;
constexpr int kSkipped = 77;
constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;

struct Options {
  std::string dir;       // scratch directory on a disk filesystem
  std::string small_fs;  // mount point of a small filesystem, or empty
  uint64_t seed = 1;
  long ops = 300;        // operations of the randomized case
  std::string path(const std::string& name) const { return dir + "/" + name; }
};

// The observations of one run, one "key=value" line each, written to
// stdout as they are made (unbuffered, so that a later crash or a fork
// neither loses nor duplicates a line).  Keys must be unique in a run.
class Transcript {
 public:
  void put(const std::string& key, const std::string& value);
  // Numbers and flags (true prints 1).
  template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
  void put(const std::string& key, T value) {
    put(key, std::to_string(static_cast<long long>(value)));
  }
  void put(const std::string& key, const char* value) { put(key, std::string(value)); }
  // A line that is not an observation: "skip: why" (returns kSkipped).
  int skip(const std::string& reason);
};

using CaseFn = int (*)(const Options&, Transcript&);

struct Case {
  const char* name;
  const char* item;     // the issue item this case checks, e.g. "1a"
  const char* summary;  // one line for --list
  CaseFn run;
};

// All cases, in registration order (per file; sorted by name for --list).
std::vector<Case>& registry();

struct Registration {
  Registration(const char* name, const char* item, const char* summary, CaseFn run);
};

// HIO_DIFF_CASE(name, "item", "summary") { body using `opt` and `out` }
#define HIO_DIFF_CASE(name, item, summary)                                        \
  static int name##_case(const ::hio_diff::Options& opt, ::hio_diff::Transcript& out); \
  static const ::hio_diff::Registration name##_registration(#name, item, summary, name##_case); \
  static int name##_case([[maybe_unused]] const ::hio_diff::Options& opt,         \
                         [[maybe_unused]] ::hio_diff::Transcript& out)

// Reports a broken setup step on stderr; returns kHarnessFailure.
int harness_failure(const std::string& what);

// Re-entry point after exec (locks_exec): `hio_diff --exec-check ...`.
int locks_exec_check(int argc, char** argv);
// Re-entry point after exec (seccomp_uring_eperm): `hio_diff --exec-filtered TAG PATH`.
int seccomp_exec_body(int argc, char** argv);

// Another process without the shim (cases_other_processes.cc):
// `hio_diff --plain-helper ...`, started with LD_PRELOAD removed.
int plain_helper_main(int argc, char** argv);

}  // namespace hio_diff
