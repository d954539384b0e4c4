// run_command.h - `hybridio run [options] -- CMD [ARGS...]`: runs an
// unmodified program with the LD_PRELOAD shim, forwards its exit status
// and signals, and summarises what the shim did across all its processes.
#pragma once

#include <vector>

#include "option_table.h"

namespace hybridio::cli {

// argv[0] is the first argument after "run".  Returns the exit status to
// use (the program's), or 2 on bad usage; may re-raise the program's
// fatal signal instead of returning.
int run_command(int argc, char** argv);

// The rows of the option table --help lists (for the man pages).
std::vector<bench::OptionDoc> run_option_docs();

}  // namespace hybridio::cli
