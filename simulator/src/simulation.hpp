/* simulation: one hybridio-sim run. Builds the platform, then a controller actor runs, for each
 * policy in turn, the checkpoint write (all writers at once, each with its own file, fsync
 * included) and the restore (caches dropped first for a cold restore), and times both; or, for
 * the bench workload, one thread writing and reading one file per block size and policy. The
 * measured costs then drive the training model. Call once per process (SimGrid allows a single
 * Engine); the Engine must already exist and have parsed the command line. */
#pragma once
#include "params.hpp"
#include "training.hpp"
#include "workload.hpp"

#include <string>
#include <vector>

namespace hiosim {

struct PolicyResult {
  std::string policy;
  double write_s    = 0; // training blocked (async: snapshot only)
  double durable_s  = 0; // checkpoint durable (async: snapshot + persist)
  double restore_s  = 0;
  double write_gbps = 0; // checkpoint bytes / durable_s
  double read_gbps  = 0;
  double frac_peak  = 0; // write_gbps / storage peak write bandwidth
  double direct_share = 0; // fraction of written bytes that went direct
  double throttled_bytes = 0;
  /* Bytes each rule of the policy core decided, checkpoint write and restore (all writers). */
  double write_rule_bytes[HIO_RULE_COUNT] = {};
  double read_rule_bytes[HIO_RULE_COUNT]  = {};
  TrainingResult training;
};

struct BenchRow {
  std::string rw;
  std::string policy;
  double bs   = 0;
  double gbps = 0;
};

struct RunResult {
  CheckpointPlan plan;
  int nodes    = 0;
  int gpus     = 0;
  int node_group = 1; // GPU nodes per simulated client host
  double peak_write = 0;
  double peak_read  = 0;
  double system_mtbf = 0;
  double sim_wall_s  = 0; // host seconds the run took
  std::vector<PolicyResult> policies;
  std::vector<BenchRow> bench;
};

RunResult run_simulation(const Params& p);

} // namespace hiosim
