/* training: a training run with node failures, driven by the checkpoint costs the I/O model
 * measured. Failures form a Poisson process of rate nodes / node-MTBF on the wall clock (drawn
 * from a seeded generator; the same seed gives the same failure times whatever the interval,
 * which makes sweeps smooth). Work runs in segments of `interval` compute seconds, each followed
 * by a checkpoint; a failure loses everything since the last durable checkpoint and costs a
 * restart plus a restore (failures may strike during those too). For an async checkpoint only
 * the snapshot blocks training; the checkpoint becomes durable when its persist phase ends, and a
 * checkpoint still persisting when the next one is due stalls training. Plain C++, no SimGrid. */
#pragma once
#include <cstdint>

namespace hiosim {

struct TrainingInput {
  double work        = 0; // compute seconds to do
  double interval    = 0; // compute seconds between checkpoints
  double ckpt_block  = 0; // training stalls this long per checkpoint
  double ckpt_durable = 0; // checkpoint durable this long after it started (>= ckpt_block)
  double restart     = 0;
  double restore     = 0;
  double system_mtbf = 0; // node MTBF / nodes
  double gpus        = 0;
  uint64_t seed      = 42;
  int replicas       = 1;
};

struct TrainingResult {
  double wall          = 0; // mean wall clock
  double goodput       = 0; // work / wall
  double failures      = 0; // mean count
  double gpu_h_ckpt    = 0; // GPU hours blocked by checkpoints (incl. async stalls)
  double gpu_h_rework  = 0; // GPU hours of compute and checkpoints lost to failures
  double gpu_h_recover = 0; // GPU hours of restart + restore
  double young         = 0; // Young's optimal interval for these costs
  double daly          = 0; // Daly's optimal interval
};

TrainingResult simulate_training(const TrainingInput& in);
double young_interval(double ckpt, double mtbf);
double daly_interval(double ckpt, double mtbf);

} // namespace hiosim
