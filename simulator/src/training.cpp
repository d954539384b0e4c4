/* training: Monte Carlo of a training run with failures (see training.hpp). */
#include "training.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace hiosim {

double young_interval(double ckpt, double mtbf)
{
  return std::sqrt(2.0 * ckpt * mtbf);
}

double daly_interval(double ckpt, double mtbf)
{
  if (ckpt >= 2.0 * mtbf)
    return mtbf;
  double r = ckpt / (2.0 * mtbf);
  return std::sqrt(2.0 * ckpt * mtbf) * (1.0 + std::sqrt(r) / 3.0 + r / 9.0) - ckpt;
}

namespace {

struct Totals {
  double wall = 0, failures = 0, ckpt = 0, rework = 0, recover = 0;
};

Totals one_run(const TrainingInput& in, uint64_t seed)
{
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(1.0 / in.system_mtbf);
  double next_fail = gap(rng);
  Totals t;
  double now = 0;
  double done = 0;          // compute done on the current timeline
  double durable = 0;       // compute covered by the last durable checkpoint
  double pending_at = -1;   // async: when the checkpoint in flight becomes durable
  double pending_done = 0;
  double since_durable_ckpt = 0; // checkpoint time spent since the last durable checkpoint
  while (done < in.work) {
    if (pending_at >= 0 && now >= pending_at) {
      durable = pending_done;
      pending_at = -1;
      since_durable_ckpt = 0;
    }
    double seg = std::min(in.interval, in.work - done);
    bool last = done + seg >= in.work;
    double stall = 0;
    if (not last && pending_at >= 0)
      stall = std::max(0.0, pending_at - (now + seg)); // previous persist still running
    double block = last ? 0 : in.ckpt_block + stall;
    if (now + seg + block <= next_fail) {
      now += seg + block;
      done += seg;
      t.ckpt += block;
      since_durable_ckpt += block;
      if (not last) {
        if (in.ckpt_durable <= in.ckpt_block) {
          durable = done;
          since_durable_ckpt = 0;
        } else {
          if (pending_at >= 0) { // the stalled-for previous checkpoint completed
            durable            = pending_done;
            since_durable_ckpt = block;
          }
          pending_at = now - in.ckpt_block + in.ckpt_durable;
          pending_done = done;
        }
      }
      continue;
    }
    // A failure: this segment's progress and every checkpoint not yet durable are lost.
    double lost_here = next_fail - now;
    now = next_fail;
    if (pending_at >= 0 && now >= pending_at) {
      durable = pending_done;
      since_durable_ckpt = 0;
    }
    pending_at = -1;
    t.rework += lost_here + (done - durable) + since_durable_ckpt;
    t.ckpt -= since_durable_ckpt; // those checkpoints bought nothing: counted as rework
    since_durable_ckpt = 0;
    done = durable;
    t.failures += 1;
    next_fail = now + gap(rng);
    double rec = in.restart + in.restore;
    while (now + rec > next_fail) { // failures during the recovery restart it
      t.recover += next_fail - now;
      now = next_fail;
      t.failures += 1;
      next_fail = now + gap(rng);
    }
    now += rec;
    t.recover += rec;
  }
  t.wall = now;
  return t;
}

} // namespace

TrainingResult simulate_training(const TrainingInput& in)
{
  TrainingResult r;
  Totals sum;
  int n = std::max(1, in.replicas);
  for (int i = 0; i < n; i++) {
    Totals t = one_run(in, in.seed + 7919ULL * i);
    sum.wall += t.wall;
    sum.failures += t.failures;
    sum.ckpt += t.ckpt;
    sum.rework += t.rework;
    sum.recover += t.recover;
  }
  r.wall = sum.wall / n;
  r.goodput = in.work / r.wall;
  r.failures = sum.failures / n;
  r.gpu_h_ckpt = sum.ckpt / n * in.gpus / 3600.0;
  r.gpu_h_rework = sum.rework / n * in.gpus / 3600.0;
  r.gpu_h_recover = sum.recover / n * in.gpus / 3600.0;
  r.young = young_interval(in.ckpt_block, in.system_mtbf);
  r.daly = daly_interval(in.ckpt_block, in.system_mtbf);
  return r;
}

} // namespace hiosim
