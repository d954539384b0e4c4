// calibrate_command.h - `hybridio calibrate DIR`: measure where direct I/O
// starts to beat buffered I/O on the filesystem holding DIR, and write a
// profile the library loads (HYBRIDIO_CONFIG=<profile>).
#pragma once

namespace hybridio::cli {

// argv: the arguments after "calibrate".  Returns the process exit status:
// 0 profile written, 1 a measurement failed or direct I/O is refused here,
// 2 bad usage.
int calibrate_command(int argc, char** argv);

}  // namespace hybridio::cli
