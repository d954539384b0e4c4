// measure_loop.h - the one measuring loop behind `hybridio bench`,
// `hybridio checkpoint` and `hybridio calibrate`.
//
// For one workload it adds a row per policy and direction to a report
// (a row that cannot be measured here is kept as skipped, with the reason),
// then runs `repeat` rounds; every round runs every measurable policy once,
// and each round starts one policy later, so that no policy always follows
// the same neighbour.  One policy's turn is a trial: the caller's timed
// phases (e.g. write, then a cold restore), each prepared the same way
// (the caller's own step, then the cached pages dropped when the phase is
// cold, then the page-cache memory warm-up, then the caller's last step),
// run by run_threads
// (io_runner.h) and checked.  The outcomes are recorded in the policy's
// rows when every phase of the trial succeeded; the first failure is
// recorded as the reason of all its rows instead, printed, and ends the
// loop.
//
// Single-threaded: one loop at a time per process (the library's policy
// and counters are process-wide, see io_runner.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hybridio/hybridio.h"
#include "io_runner.h"
#include "machine_info.h"
#include "report.h"

namespace hybridio::bench {

// One timed run of a trial.
struct Phase {
  std::string label;               // for the progress line, e.g. "hybrid write"
  std::vector<ThreadPlan> plans;
  RunConfig config;                // the loop sets config.progress
  std::vector<hio_op> record_as;   // the directions whose rows get this run's outcome
  bool cold = false;               // drop the cached pages of the workload's files first
  std::function<void()> before;    // untimed, first (e.g. truncate the files); optional
  std::function<void()> last;      // untimed, after the warm-up, right before the run; optional
  std::function<std::string()> check;  // untimed, after a good run: "" or why it failed; optional
  // The timed run itself, instead of run_threads(plans, config), for a
  // workload whose run is not a list of calls per thread (the training
  // workload's epochs: train_epochs.h).  It gets the config with
  // config.progress set and returns the outcome as run_threads would
  // (error "" when it succeeded).  Optional.
  std::function<RunOutcome(const RunConfig& config)> run;
};

// What one policy's turn runs: its phases, in order.
struct Trial {
  std::vector<Phase> phases;
};

struct MeasurePlan {
  const char* prog = "hybridio";   // first word of every message
  std::string context;             // before "policy P" in a failure message, e.g. "job w, "
  ResultRow row;                   // every row's job, engine, pattern, bs, threads, notes
  std::vector<hio_mode> policies;
  std::vector<hio_op> ops;         // each policy's rows, in this order
  bool routes_by_policy = true;    // false (psync): no policy applies, nothing is skipped
  unsigned repeat = 1;
  unsigned queue_depth = 0;        // the library's engine queue depth per trial; 0: unchanged
  std::vector<std::string> files;  // the workload's files: what a cold phase drops
  bool drop_caches = true;         // false: cold phases keep the cache (report.cold "none")
  bool remove_files_after_trial = false;
  // Page-cache memory warm-up before every phase (io_runner.h,
  // warm_page_cache_memory): bytes of sparse file read in warm_up_dir; 0: none.
  uint64_t warm_up_bytes = 0;
  std::string warm_up_dir;
  uint64_t bytes_per_trial = 0;    // all phases' bytes, for the progress line
  // Builds a policy's trial for one round (the library's policy is already set).
  std::function<Trial(hio_mode policy, unsigned round)> make_trial;
};

struct MeasureOutcome {
  int status = 0;             // 0: every measurable trial ran; 1: one failed (its rows say why)
  size_t first_row = 0;       // the plan's rows: report->rows[first_row + policy * ops + op]
  std::string warm_up_error;  // the warm-up failed once and was left out from then on
};

// Why `policy` cannot be measured on `machine` ("" if it can).
std::string skip_reason(hio_mode policy, const MachineInfo& machine);

// Adds the plan's rows to *report and runs it.  report->cold says how the
// last cold phase found the cache ("drop_caches", "fadvise", "none").
MeasureOutcome measure_policies(const MeasurePlan& plan, const MachineInfo& machine, Report* report);

}  // namespace hybridio::bench
