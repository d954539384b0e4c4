// run_command.cc - see run_command.h.
#include "run_command.h"

#include <dirent.h>
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
#include <sstream>
#include <string>
#include <vector>

#include "config.h"
#include "json_lite.h"

#ifndef HYBRIDIO_INSTALL_LIBDIR
#define HYBRIDIO_INSTALL_LIBDIR "lib"
#endif

namespace hybridio::bench {
namespace {

struct RunOption {
  const char* name;
  const char* variable;  // the HYBRIDIO_* variable it sets, or nullptr
  const char* help;
};

const RunOption kRunOptions[] = {
    {"policy", "HYBRIDIO_POLICY", "hybrid|buffered|direct|dontcache"},
    {"write-threshold", "HYBRIDIO_WRITE_THRESHOLD", "writes at least this large go direct (e.g. 2M)"},
    {"read-threshold", "HYBRIDIO_READ_THRESHOLD", "reads at least this large go direct (e.g. 8M)"},
    {"include", "HYBRIDIO_INCLUDE", "only accelerate these paths (colon-separated prefixes or globs)"},
    {"exclude", "HYBRIDIO_EXCLUDE", "never accelerate these paths"},
    {"trace", "HYBRIDIO_TRACE", "write one line per decision to this file"},
    {"config", "HYBRIDIO_CONFIG", "read settings from this file"},
    {"stats", nullptr, "write the combined counters of all processes as JSON to this file"},
    {"quiet", nullptr, "no summary on stderr"},
};

void usage(FILE* out) {
  fprintf(out, "usage: hybridio run [options] -- COMMAND [ARGS...]\n\n"
               "Runs COMMAND with libhybridio's LD_PRELOAD shim, so that its large reads and writes\n"
               "take the direct path, and prints what happened when it exits.\n\noptions:\n");
  for (const RunOption& o : kRunOptions)
    fprintf(out, "  --%-18s %s\n", (std::string(o.name) + (strcmp(o.name, "quiet") ? "=V" : "")).c_str(), o.help);
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

void summarise(const JsonValue& total, int processes, double seconds, const std::string& what) {
  fprintf(stderr, "hybridio run: %s after %.1f s, %d process%s with the shim\n", what.c_str(), seconds, processes,
          processes == 1 ? "" : "es");
  for (const char* op : {"write", "read"}) {
    double d = json_number(total, std::string(op) + ".direct.bytes");
    double b = json_number(total, std::string(op) + ".buffered.bytes");
    double u = json_number(total, std::string(op) + ".dontcache.bytes");
    double all = d + b + u;
    fprintf(stderr, "  %-6s %9s: direct %s (%.0f%%), buffered %s, uncached %s; %.2f GB/s averaged over the run\n",
            op, human_bytes(all).c_str(), human_bytes(d).c_str(), all > 0 ? 100 * d / all : 0.0,
            human_bytes(b).c_str(), human_bytes(u).c_str(), seconds > 0 ? all / seconds / 1e9 : 0.0);
  }
  fprintf(stderr, "  splits %.0f, bounces %.0f, fallbacks: direct refused %.0f, uncached refused %.0f\n",
          json_number(total, "splits"), json_number(total, "bounces"),
          json_number(total, "fallbacks.direct_open_refused") + json_number(total, "fallbacks.direct_io_refused"),
          json_number(total, "fallbacks.dontcache_refused"));
}

// Adds up every per-process stats file in `dir`; returns how many were read.
int merge_stats(const std::string& dir, JsonValue* total) {
  int count = 0;
  DIR* d = opendir(dir.c_str());
  if (!d) return 0;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind("stats.", 0) != 0 || name.size() < 5 || name.compare(name.size() - 5, 5, ".json") != 0) continue;
    std::ifstream in(dir + "/" + name);
    std::stringstream text;
    text << in.rdbuf();
    JsonValue v;
    std::string error;
    if (!parse_json(text.str(), &v, &error)) {
      fprintf(stderr, "hybridio run: ignoring unreadable %s: %s\n", name.c_str(), error.c_str());
      continue;
    }
    v.members.erase("policy");  // thresholds are settings, not counters
    if (count == 0)
      *total = v;
    else
      json_accumulate(*total, v);
    ++count;
    unlink((dir + "/" + name).c_str());
  }
  closedir(d);
  return count;
}

}  // namespace

int run_command(int argc, char** argv) {
  std::vector<std::pair<std::string, std::string>> env;
  std::string stats_out;
  bool quiet = false;
  int i = 0;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "-h" || arg == "--help") {
      usage(stdout);
      return 0;
    }
    if (arg.rfind("--", 0) != 0) break;  // the command itself, without "--"
    std::string name = arg.substr(2), value;
    size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    const RunOption* opt = nullptr;
    for (const RunOption& o : kRunOptions)
      if (name == o.name) opt = &o;
    if (!opt) {
      fprintf(stderr, "hybridio run: unknown option --%s (see --help)\n", name.c_str());
      return 2;
    }
    if (name == "quiet") {
      quiet = true;
      continue;
    }
    if (eq == std::string::npos) {
      if (i + 1 >= argc) {
        fprintf(stderr, "hybridio run: --%s needs a value: %s\n", name.c_str(), opt->help);
        return 2;
      }
      value = argv[++i];
    }
    uint64_t size;
    hio_mode mode;
    if ((name == "policy" && !parse_mode(value, &mode)) ||
        (name.find("threshold") != std::string::npos && !parse_size(value, &size))) {
      fprintf(stderr, "hybridio run: --%s=%s is not valid: %s\n", name.c_str(), value.c_str(), opt->help);
      return 2;
    }
    if (opt->variable)
      env.emplace_back(opt->variable, value);
    else
      stats_out = value;
  }
  if (i >= argc) {
    fprintf(stderr, "hybridio run: no command given\n");
    usage(stderr);
    return 2;
  }
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

  JsonValue total;
  int processes = merge_stats(stats_dir, &total);
  rmdir(stats_dir.c_str());
  std::string what = WIFEXITED(status) ? std::string(argv[i]) + " exited with status " + std::to_string(WEXITSTATUS(status))
                                       : std::string(argv[i]) + " was killed by signal " + std::to_string(WTERMSIG(status));
  if (!quiet) summarise(total, processes, seconds, what);
  if (!stats_out.empty()) {
    total.members["schema"] = JsonValue{JsonValue::Kind::kString, 0, "hybridio-run/1", {}};
    total.members["processes"] = JsonValue{JsonValue::Kind::kNumber, static_cast<double>(processes), "", {}};
    total.members["seconds"] = JsonValue{JsonValue::Kind::kNumber, seconds, "", {}};
    std::ofstream(stats_out) << to_json(total) << "\n";
  }
  if (WIFSIGNALED(status)) {
    signal(WTERMSIG(status), SIG_DFL);
    raise(WTERMSIG(status));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace hybridio::bench
