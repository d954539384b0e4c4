// hybridio_main.cc - the `hybridio` command.
//
//   hybridio checkpoint [options]   write + cold restore under each policy (the main job)
//   hybridio run [options] -- CMD  run a program with the LD_PRELOAD shim
//   hybridio config                 the HYBRIDIO_* settings and their defaults
//   hybridio --help | --version
//
// Options are declared once in a table that drives parsing and --help.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "calibrate.h"
#include "checkpoint_job.h"
#include "run_command.h"
#include "config.h"

namespace hb = hybridio::bench;

namespace {

struct Option {
  const char* name;  // --name=value or --name value
  const char* value; // metavariable, nullptr for a flag
  const char* help;
  std::function<bool(hb::CheckpointOptions&, const std::string&)> apply;
};

bool parse_policies(const std::string& text, std::vector<hio_mode>* out) {
  std::vector<hio_mode> v;
  if (text == "all") {
    *out = {HIO_MODE_BUFFERED, HIO_MODE_DIRECT, HIO_MODE_DONTCACHE, HIO_MODE_HYBRID};
    return true;
  }
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string one = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    hio_mode m;
    if (!hybridio::parse_mode(one, &m)) return false;
    v.push_back(m);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  *out = v;
  return !v.empty();
}

const std::vector<Option>& checkpoint_options() {
  static const std::vector<Option> options = {
      {"dir", "DIR", "directory for the checkpoint file (default: current directory)",
       [](auto& o, const std::string& v) { o.directory = v; return !v.empty(); }},
      {"size", "SIZE", "checkpoint size, K/M/G suffixes (default 4G)",
       [](auto& o, const std::string& v) { return hybridio::parse_size(v, &o.size) && o.size > 0; }},
      {"bs", "SIZE", "bytes per write/read call (default 4M)",
       [](auto& o, const std::string& v) {
         return hybridio::parse_size(v, &o.block_size) && o.block_size > 0 && o.block_size <= (1ULL << 30);
       }},
      {"buffer-offset", "BYTES", "misalign the caller's buffer by this many bytes (default 0)",
       [](auto& o, const std::string& v) { return hybridio::parse_size(v, &o.buffer_offset) && o.buffer_offset < 4096; }},
      {"policy", "LIST", "comma-separated policies, or all (default buffered,direct,dontcache,hybrid)",
       [](auto& o, const std::string& v) { return parse_policies(v, &o.policies); }},
      {"repeat", "N", "runs per policy, interleaved; the table shows medians (default 1)",
       [](auto& o, const std::string& v) {
         char* end;
         unsigned long n = strtoul(v.c_str(), &end, 10);
         o.repeat = static_cast<unsigned>(n);
         return *end == '\0' && n >= 1 && n <= 1000;
       }},
      {"json", "FILE", "also write the results as JSON",
       [](auto& o, const std::string& v) { o.json_path = v; return !v.empty(); }},
      {"no-drop-caches", nullptr, "restore without dropping the file's cached pages first",
       [](auto& o, const std::string&) { o.drop_caches = false; return true; }},
      {"no-verify", nullptr, "skip checking the restored bytes",
       [](auto& o, const std::string&) { o.verify = false; return true; }},
  };
  return options;
}

void usage(FILE* out) {
  fprintf(out,
          "usage: hybridio <command> [options]\n\n"
          "commands:\n"
          "  checkpoint   write a checkpoint-sized file (fsync included) and restore it cold,\n"
          "               under each I/O policy, and compare throughput and CPU cost\n"
          "  run          run an unmodified program with the LD_PRELOAD shim (hybridio run --help)\n"
          "  config       list the HYBRIDIO_* settings the library reads, with defaults\n\n"
          "checkpoint options:\n");
  for (const Option& o : checkpoint_options()) {
    std::string flag = std::string("--") + o.name + (o.value ? std::string("=") + o.value : "");
    fprintf(out, "  %-22s %s\n", flag.c_str(), o.help);
  }
  fprintf(out, "\nThe library's own settings (HYBRIDIO_WRITE_THRESHOLD, ...) apply to the hybrid policy;\n"
               "see `hybridio config` and docs/policy.md.\n");
}

int checkpoint_command(int argc, char** argv) {
  hb::CheckpointOptions opts;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      usage(stdout);
      return 0;
    }
    if (arg.rfind("--", 0) != 0) {
      fprintf(stderr, "hybridio checkpoint: unexpected argument '%s' (see --help)\n", arg.c_str());
      return 2;
    }
    std::string name = arg.substr(2), value;
    size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    const Option* found = nullptr;
    for (const Option& o : checkpoint_options())
      if (name == o.name) found = &o;
    if (!found) {
      fprintf(stderr, "hybridio checkpoint: unknown option --%s (see --help)\n", name.c_str());
      return 2;
    }
    if (found->value && eq == std::string::npos) {
      if (i + 1 >= argc) {
        fprintf(stderr, "hybridio checkpoint: --%s needs a value: %s\n", found->name, found->value);
        return 2;
      }
      value = argv[++i];
    }
    if (!found->apply(opts, value)) {
      fprintf(stderr, "hybridio checkpoint: --%s=%s is not valid: %s\n", found->name, value.c_str(), found->help);
      return 2;
    }
  }
  return hb::run_checkpoint_job(opts);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  std::string cmd = argv[1];
  if (cmd == "--version" || cmd == "version") {
    printf("hybridio %d.%d\n", HYBRIDIO_VERSION_MAJOR, HYBRIDIO_VERSION_MINOR);
    return 0;
  }
  if (cmd == "checkpoint") return checkpoint_command(argc - 2, argv + 2);
  if (cmd == "calibrate") return hybridio::bench::calibrate_command(argc - 2, argv + 2);
  if (cmd == "run") return hb::run_command(argc - 2, argv + 2);
  if (cmd == "config") {
    printf("%s", hybridio::describe_settings().c_str());
    return 0;
  }
  fprintf(stderr, "hybridio: unknown command '%s'\n", cmd.c_str());
  usage(stderr);
  return 2;
}
