// bench_runner.h - runs one `hybridio bench` job under each of its
// policies, interleaved (every repeat runs every policy, each repeat
// starting one policy later: measure_loop.h), and adds its rows to a report.
#pragma once

#include "bench_options.h"
#include "machine_info.h"
#include "report.h"

namespace hybridio::bench {

// 0: measured (rows may be skipped, with reasons); 1: a run failed (the
// row says why, and so does stderr); 2: the job could not start.
int run_bench_job(const BenchJob& job, const MachineInfo& machine, Report* report);

}  // namespace hybridio::bench
