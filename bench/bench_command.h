// bench_command.h - `hybridio bench`: fio-style jobs run under each I/O
// policy (see docs/bench.md), and `hybridio bench checkpoint`.
#pragma once

namespace hybridio::bench {

// argv: the arguments after "bench".  Returns the process exit status:
// 0 measured, 1 a run failed (e.g. --verify found wrong bytes), 2 bad
// usage or a job that could not start.
int bench_command(int argc, char** argv);

// One line for `hybridio --help`.
const char* bench_command_summary();

}  // namespace hybridio::bench
