/* workload: what a checkpoint is made of. From a model size and a parallel layout (TP x PP x DP,
 * ranks per node, which ranks write) it derives the writers, their shard sizes and the request
 * mix of the writer (torch.save-like or fixed). Pure computation, no SimGrid. */
#pragma once
#include "params.hpp"

#include <string>
#include <vector>

namespace hiosim {

/* A class of requests within a shard: `fraction` of the bytes move in requests of `size`. */
struct RequestClass {
  double size;
  double fraction;
};

struct Writer {
  int rank;
  int node;
  double bytes;
};

struct CheckpointPlan {
  std::string preset;
  double params = 0;
  double bytes  = 0;   // whole checkpoint
  int tp = 1, pp = 1, dp = 1;
  int ranks = 1;
  int nodes = 1;       // nodes the job occupies
  std::vector<Writer> writers;
  std::vector<RequestClass> requests;
};

/* Throws std::invalid_argument when the layout does not fit (e.g. more nodes needed than given). */
CheckpointPlan make_checkpoint_plan(const Params& p);
/* Request classes of the writer for a workload (also used by the bench workload). */
std::vector<RequestClass> request_mix(const WorkloadParams& w);

} // namespace hiosim
