// calibrate_command.h - `hybridio calibrate DIR`: measure where direct I/O
// starts to beat buffered I/O on the filesystem holding DIR, and write a
// profile the library loads (HYBRIDIO_CONFIG=<profile>).
#pragma once

#include <vector>

#include "option_table.h"

namespace hybridio::cli {

// argv: the arguments after "calibrate".  Returns the process exit status:
// 0 profile written, 1 a measurement failed or direct I/O is refused here,
// 2 bad usage.
int calibrate_command(int argc, char** argv);

// The rows of the option table --help lists (for the man pages).
std::vector<bench::OptionDoc> calibrate_option_docs();

}  // namespace hybridio::cli
