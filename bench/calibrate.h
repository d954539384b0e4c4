// calibrate.h - `hybridio calibrate DIR`: measure where direct I/O starts to
// beat buffered I/O on the filesystem holding DIR, and write a profile the
// library loads (HYBRIDIO_CONFIG=<profile>).
#pragma once

namespace hybridio::bench {

// argv: the arguments after "calibrate".  Returns the process exit code.
int calibrate_command(int argc, char** argv);

}  // namespace hybridio::bench
