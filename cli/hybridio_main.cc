// hybridio_main.cc - the `hybridio` command.
//
//   hybridio checkpoint [options]   write + cold restore under each policy (the main job;
//                                   the same as `hybridio bench checkpoint`)
//   hybridio bench [options] [JOBFILE]  fio-style jobs under each policy (docs/bench.md);
//                                   `bench checkpoint`, `bench train` (a training job's epochs)
//   hybridio calibrate DIR [options]  measure the buffered/direct crossover, write a profile
//   hybridio run [options] -- CMD  run a program with the LD_PRELOAD shim
//   hybridio config                 the HYBRIDIO_* settings and their defaults
//   hybridio --help | --version
//
// The commands of the product (run, config, calibrate) live here, in cli/;
// checkpoint and bench are the measuring library's (bench/), which
// calibrate also measures with.  Each command's options are declared once,
// in a table (bench/option_table.h).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench_command.h"
#include "calibrate_command.h"
#include "checkpoint_job.h"
#include "hybridio/hybridio.h"
#include "hybridio_internal/settings_text.h"
#include "run_command.h"

namespace hb = hybridio::bench;
namespace cli = hybridio::cli;

namespace {

void usage(FILE* out) {
  fprintf(out,
          "usage: hybridio <command> [options]\n\n"
          "commands:\n"
          "  checkpoint   write a model checkpoint (sharded like torch.save, fsync included) and\n"
          "               restore it cold, under each I/O policy (= hybridio bench checkpoint)\n"
          "  bench        %s\n"
          "  calibrate    measure the buffered/direct crossover of a filesystem\n"
          "  run          run an unmodified program with the LD_PRELOAD shim (hybridio run --help)\n"
          "  config       list the HYBRIDIO_* settings the library reads, with defaults\n\n"
          "`hybridio COMMAND --help` lists a command's options.\n",
          hb::bench_command_summary());
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
  if (cmd == "checkpoint") return hb::checkpoint_command(argc - 2, argv + 2, "hybridio checkpoint");
  if (cmd == "bench") return hb::bench_command(argc - 2, argv + 2);
  if (cmd == "calibrate") return cli::calibrate_command(argc - 2, argv + 2);
  if (cmd == "run") return cli::run_command(argc - 2, argv + 2);
  if (cmd == "config") {
    printf("%s", hybridio::internal::describe_settings().c_str());
    return 0;
  }
  fprintf(stderr, "hybridio: unknown command '%s'\n", cmd.c_str());
  usage(stderr);
  return 2;
}
