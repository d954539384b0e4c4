// run_command.cc - see run_command.h.
#include "run_command.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "hybridio_internal/settings_text.h"
#include "option_table.h"
#include "run_stats.h"

#ifndef HYBRIDIO_INSTALL_LIBDIR
#define HYBRIDIO_INSTALL_LIBDIR "lib"
#endif

namespace hybridio::cli {
namespace {

using bench::OptionSpec;
using bench::OptKind;
using bench::OptValue;

// What the command line sets.  An option not given sets nothing: the
// program then sees the caller's own HYBRIDIO_* variables, or the
// library's defaults.
struct RunSettings {
  // Unset: not given (an empty value is given, and sets the variable empty).
  std::optional<std::string> policy, write_threshold, read_threshold, include, exclude, trace, config;
  std::string stats;  // the combined counters as JSON
  bool quiet = false;
};

// One row per option that becomes a HYBRIDIO_* variable of the program.
struct EnvOption {
  const char* option;
  const char* variable;
  std::optional<std::string> RunSettings::*field;
};

const EnvOption kEnvOptions[] = {
    {"policy", "HYBRIDIO_POLICY", &RunSettings::policy},
    {"write-threshold", "HYBRIDIO_WRITE_THRESHOLD", &RunSettings::write_threshold},
    {"read-threshold", "HYBRIDIO_READ_THRESHOLD", &RunSettings::read_threshold},
    {"include", "HYBRIDIO_INCLUDE", &RunSettings::include},
    {"exclude", "HYBRIDIO_EXCLUDE", &RunSettings::exclude},
    {"trace", "HYBRIDIO_TRACE", &RunSettings::trace},
    {"config", "HYBRIDIO_CONFIG", &RunSettings::config},
};

const std::vector<OptionSpec<RunSettings>>& run_option_table() {
  using O = RunSettings;
  // per_job false: about this launcher, not the program (left out of the summary's echo).
  static const std::vector<OptionSpec<O>> table = {
      {"policy", "P", "hybrid|buffered|direct|dontcache (HYBRIDIO_POLICY)",
       [](O& o, const std::string& v) {
         hio_mode mode;
         o.policy = v;
         return internal::parse_mode(v, &mode);
       },
       [](const O& o) { return OptValue::str(o.policy.value_or("")); }},
      {"write-threshold", "SIZE", "writes at least this large go direct, e.g. 2M (HYBRIDIO_WRITE_THRESHOLD)",
       [](O& o, const std::string& v) {
         uint64_t size;
         o.write_threshold = v;
         return internal::parse_size(v, &size);
       },
       [](const O& o) { return OptValue::str(o.write_threshold.value_or("")); }},
      {"read-threshold", "SIZE", "reads at least this large go direct, e.g. 8M (HYBRIDIO_READ_THRESHOLD)",
       [](O& o, const std::string& v) {
         uint64_t size;
         o.read_threshold = v;
         return internal::parse_size(v, &size);
       },
       [](const O& o) { return OptValue::str(o.read_threshold.value_or("")); }},
      {"include", "LIST", "only accelerate these paths: colon-separated prefixes or globs (HYBRIDIO_INCLUDE)",
       [](O& o, const std::string& v) { o.include = v; return true; },
       [](const O& o) { return OptValue::str(o.include.value_or("")); }},
      {"exclude", "LIST", "never accelerate these paths (HYBRIDIO_EXCLUDE)",
       [](O& o, const std::string& v) { o.exclude = v; return true; },
       [](const O& o) { return OptValue::str(o.exclude.value_or("")); }},
      {"trace", "FILE", "write one line per decision to this file (HYBRIDIO_TRACE)",
       [](O& o, const std::string& v) { o.trace = v; return true; },
       [](const O& o) { return OptValue::str(o.trace.value_or("")); }},
      {"config", "FILE", "read settings from this file (HYBRIDIO_CONFIG)",
       [](O& o, const std::string& v) { o.config = v; return true; },
       [](const O& o) { return OptValue::str(o.config.value_or("")); }},
      {"stats", "FILE", "write the combined counters of all processes as JSON (hybridio-run/1) to this file",
       [](O& o, const std::string& v) { o.stats = v; return true; },
       [](const O& o) { return OptValue::str(o.stats); }, false},
      {"quiet", nullptr, "no summary on stderr",
       [](O& o, const std::string& v) { return bench::parse_flag(v, &o.quiet); },
       [](const O& o) { return OptValue::yes(o.quiet); }, false},
  };
  return table;
}

void usage(FILE* out) {
  fprintf(out, "usage: hybridio run [options] [--] COMMAND [ARGS...]\n\n"
               "Runs COMMAND with libhybridio's LD_PRELOAD shim, so that its large reads and writes\n"
               "take the direct path, and prints what happened when it exits.  Options not given\n"
               "leave the program's HYBRIDIO_* environment as it is.\n\noptions:\n");
  bench::print_option_help(out, run_option_table(), RunSettings{});
}

std::string dir_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

bool exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

// The shim next to this binary: the build tree (bin/../lib) or an install (bin/../<libdir>).
std::string find_shim() {
  if (const char* env = getenv("HYBRIDIO_PRELOAD_LIB"); env && *env) return env;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return "";
  self[n] = '\0';
  std::string prefix = dir_of(dir_of(self));
  for (std::string libdir : {std::string(HYBRIDIO_INSTALL_LIBDIR), std::string("lib")}) {
    std::string candidate = prefix + "/" + libdir + "/libhybridio_preload.so";
    if (exists(candidate)) return candidate;
  }
  return "";
}

pid_t g_child = -1;

void forward_signal(int sig) {
  if (g_child > 0) kill(g_child, sig);
}

std::string human_bytes(double b) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
  return buf;
}

void summarise(const MergedStats& m, double seconds, const std::string& what, const std::string& settings) {
  const hio_stats& s = m.sum;
  fprintf(stderr, "hybridio run: %s after %.1f s, %llu process%s with the shim%s%s\n", what.c_str(), seconds,
          static_cast<unsigned long long>(m.processes), m.processes == 1 ? "" : "es", settings.empty() ? "" : "; ",
          settings.c_str());
  for (hio_op op : {HIO_OP_WRITE, HIO_OP_READ}) {
    const double d = static_cast<double>(s.bytes[op][HIO_PATH_DIRECT]);
    const double b = static_cast<double>(s.bytes[op][HIO_PATH_BUFFERED]);
    const double u = static_cast<double>(s.bytes[op][HIO_PATH_DONTCACHE]);
    const double all = d + b + u;
    fprintf(stderr, "  %-6s %9s: direct %s (%.0f%%), buffered %s, uncached %s; %.2f GB/s averaged over the run\n",
            op == HIO_OP_WRITE ? "write" : "read", human_bytes(all).c_str(), human_bytes(d).c_str(),
            all > 0 ? 100 * d / all : 0.0, human_bytes(b).c_str(), human_bytes(u).c_str(),
            seconds > 0 ? all / seconds / 1e9 : 0.0);
  }
  fprintf(stderr, "  splits %llu, bounces %llu, fallbacks: direct refused %llu, uncached refused %llu\n",
          static_cast<unsigned long long>(s.splits), static_cast<unsigned long long>(s.bounces),
          static_cast<unsigned long long>(s.direct_open_refused + s.direct_io_refused),
          static_cast<unsigned long long>(s.dontcache_refused));
  // The reuse rule (docs/policy.md): only when it did something.
  if (s.reuse_admitted_bytes > 0 || s.reuse_hit_bytes > 0)
    fprintf(stderr,
            "  re-use: %s read again admitted to the page cache (%llu reads), %s of later reads served from memory "
            "because of it (%llu reads)\n",
            human_bytes(static_cast<double>(s.reuse_admitted_bytes)).c_str(),
            static_cast<unsigned long long>(s.reuse_admitted_reads),
            human_bytes(static_cast<double>(s.reuse_hit_bytes)).c_str(),
            static_cast<unsigned long long>(s.reuse_hit_reads));
}

}  // namespace

std::vector<bench::OptionDoc> run_option_docs() { return bench::describe_options(run_option_table(), RunSettings{}); }

int run_command(int argc, char** argv) {
  RunSettings o;
  std::string error;
  int i = 0;
  int st = bench::parse_leading_options(run_option_table(), argc, argv, &o, &i, &error);
  if (st == 1) {
    usage(stdout);
    return 0;
  }
  if (st == 2) {
    fprintf(stderr, "hybridio run: %s\n", error.c_str());
    return 2;
  }
  if (i >= argc) {
    fprintf(stderr, "hybridio run: no command given\n");
    usage(stderr);
    return 2;
  }
  std::vector<std::pair<std::string, std::string>> env;
  for (const EnvOption& e : kEnvOptions)
    if (o.*e.field) env.emplace_back(e.variable, *(o.*e.field));
  std::string shim = find_shim();
  if (shim.empty()) {
    fprintf(stderr, "hybridio run: cannot find libhybridio_preload.so next to this program; set HYBRIDIO_PRELOAD_LIB\n");
    return 2;
  }
  char dir_template[] = "/tmp/hybridio-run.XXXXXX";
  if (!mkdtemp(dir_template)) {
    fprintf(stderr, "hybridio run: cannot create a directory for statistics: %s\n", strerror(errno));
    return 2;
  }
  std::string stats_dir = dir_template;
  std::string preload = shim;
  if (const char* old = getenv("LD_PRELOAD"); old && *old) preload += std::string(":") + old;
  env.emplace_back("LD_PRELOAD", preload);
  env.emplace_back("HYBRIDIO_STATS", stats_dir + "/stats.%p.json");

  auto start = std::chrono::steady_clock::now();
  g_child = fork();
  if (g_child < 0) {
    fprintf(stderr, "hybridio run: fork: %s\n", strerror(errno));
    return 2;
  }
  if (g_child == 0) {
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    execvp(argv[i], argv + i);
    fprintf(stderr, "hybridio run: cannot run %s: %s\n", argv[i], strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
  }
  // Terminal signals reach the whole process group, the program included;
  // signals sent to this launcher alone are passed on.
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  for (int sig : {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2}) signal(sig, forward_signal);
  int status = 0;
  while (waitpid(g_child, &status, 0) < 0 && errno == EINTR) {
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const MergedStats merged = merge_stats_dir(stats_dir);
  rmdir(stats_dir.c_str());
  std::string what = WIFEXITED(status) ? std::string(argv[i]) + " exited with status " + std::to_string(WEXITSTATUS(status))
                                       : std::string(argv[i]) + " was killed by signal " + std::to_string(WTERMSIG(status));
  if (!o.quiet) summarise(merged, seconds, what, bench::echo_settings_line(run_option_table(), o, true));
  if (!o.stats.empty()) {
    nlohmann::json settings = nlohmann::json::object();
    for (const auto& opt : run_option_table()) {
      OptValue v = opt.show(o);
      settings[opt.name] = v.kind == OptKind::kFlag ? nlohmann::json(v.flag) : nlohmann::json(v.text);
    }
    std::ofstream(o.stats) << run_stats_json(merged, seconds, settings);
  }
  if (WIFSIGNALED(status)) {
    signal(WTERMSIG(status), SIG_DFL);
    raise(WTERMSIG(status));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace hybridio::cli
