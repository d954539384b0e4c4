/* workload: checkpoint size, parallel layout, writers and request mix. */
#include "workload.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace hiosim {
namespace {

struct Preset {
  const char* name;
  double params;
  double bytes; // published checkpoint size (MLPerf Storage v2.0)
  int tp, pp, dp;
};

// MLPerf Storage v2.0 checkpointing: 8B 105 GiB / 8 ranks, 70B 912 GiB / 64, 405B 5.29 TiB / 512,
// 1T 18 TiB / 1024. The layouts give those rank counts with TP = 8 inside a node.
const Preset presets[] = {
    {"llama3-8b", 8e9, 105.0 * (1ULL << 30), 1, 1, 8},
    {"llama3-70b", 70e9, 912.0 * (1ULL << 30), 8, 8, 1},
    {"llama3-405b", 405e9, 5.29 * (1ULL << 40), 8, 64, 1},
    {"llama3-1t", 1e12, 18.0 * (1ULL << 40), 8, 128, 1},
};

} // namespace

std::vector<RequestClass> request_mix(const WorkloadParams& w)
{
  if (w.request == "fixed")
    return {{w.request_bytes, 1.0}};
  // torch.save writes each tensor's storage with one call: a few large records carry the
  // bytes, many small ones (norms, biases, the pickle stream) carry little data.
  std::vector<RequestClass> mix;
  if (w.ts_small_frac < 1.0)
    mix.push_back({w.ts_large, 1.0 - w.ts_small_frac});
  if (w.ts_small_frac > 0.0)
    mix.push_back({w.ts_small, w.ts_small_frac});
  return mix;
}

CheckpointPlan make_checkpoint_plan(const Params& p)
{
  const WorkloadParams& w = p.workload;
  CheckpointPlan plan;
  plan.preset = w.preset;
  const Preset* pre = nullptr;
  for (const auto& x : presets)
    if (w.preset == x.name)
      pre = &x;
  plan.params = w.params > 0 ? w.params : (pre ? pre->params : 0);
  if (w.ckpt_bytes > 0)
    plan.bytes = w.ckpt_bytes;
  else if (w.params > 0 || pre == nullptr)
    plan.bytes = plan.params * w.bytes_per_param;
  else
    plan.bytes = pre->bytes;
  plan.tp = w.tp > 0 ? w.tp : (pre ? pre->tp : 1);
  plan.pp = w.pp > 0 ? w.pp : (pre ? pre->pp : 1);
  plan.dp = w.dp > 0 ? w.dp : (pre ? pre->dp : 1);
  // A cluster size without a DP degree means: fill the cluster with data-parallel replicas.
  if (w.dp == 0 && p.cluster.nodes > 0)
    plan.dp = std::max(1, p.cluster.nodes * w.ranks_per_node / (plan.tp * plan.pp));
  plan.ranks = plan.tp * plan.pp * plan.dp;
  int needed = (plan.ranks + w.ranks_per_node - 1) / w.ranks_per_node;
  plan.nodes = p.cluster.nodes > 0 ? p.cluster.nodes : needed;
  if (plan.nodes < needed)
    throw std::invalid_argument("the layout TP " + std::to_string(plan.tp) + " x PP " + std::to_string(plan.pp) +
                                " x DP " + std::to_string(plan.dp) + " needs " + std::to_string(needed) +
                                " nodes of " + std::to_string(w.ranks_per_node) + " ranks, cluster/nodes is " +
                                std::to_string(plan.nodes));
  // Ranks are numbered TP fastest, then PP, then DP; replica 0 is ranks [0, TP x PP).
  int writing = w.writers == "replica" ? plan.tp * plan.pp : plan.ranks;
  double shard = plan.bytes / writing;
  plan.writers.reserve(writing);
  for (int r = 0; r < writing; r++)
    plan.writers.push_back({r, r / w.ranks_per_node, shard});
  plan.requests = request_mix(w);
  return plan;
}

} // namespace hiosim
