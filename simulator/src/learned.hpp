/* learned: a per-client policy that adapts its write threshold from measured costs, as the
 * library's learner will, run for many checkpoints on clients that share the OSTs, to see
 * whether the adaptation converges or herds (everyone switching to direct at once, the OSTs
 * saturating, everyone switching back).
 *
 * Round model (one checkpoint per round; plain C++, no SimGrid: a fluid model of the same
 * costs as the client model, so that 2,048 clients x hundreds of rounds take seconds):
 * - each client writes `shard` bytes, equal bytes in each request size class (64 KiB .. 256 MiB,
 *   powers of two); every class is decided by libhybridio's policy core (hio_policy_decide, mode
 *   hybrid) with the client's own threshold as write and stream threshold;
 * - exploration: the client sends `exploration` of its bytes (at most 3 %) along the path it did
 *   not choose, in the class nearest its threshold, so that it measures both paths every round;
 * - buffered bytes cost the per-call cost plus the copy (client/copy-bw-write); their writeback
 *   drains in the background before the next checkpoint (the interval is long);
 * - direct bytes cost client/direct-write-latency per request plus the transfer; a client's
 *   direct requests are spread through its checkpoint, so the OSTs see the sum over clients of
 *   direct bytes / checkpoint time; every transfer runs at one thread's direct stream
 *   (client/direct-write-stream-bw) while that sum fits the OSTs' aggregate write bandwidth,
 *   else at the common rate at which it just fits;
 * - a client measures its buffered rate and its direct bandwidth (transfer time without the
 *   known per-request latency), each with multiplicative noise (`noise`), and computes the
 *   crossover size where a direct request costs what the same bytes cost buffered: latency /
 *   (1 / buffered - 1 / direct), none (all buffered) when direct is not faster per byte;
 * - it moves its log2 threshold toward that crossover: x += damping x (target - x), but only
 *   when the distance exceeds its own hysteresis, drawn once per client uniformly in
 *   [0, hysteresis] octaves (damping 1, hysteresis 0: jump straight to the measured crossover).
 * The round's checkpoint takes as long as its slowest client. */
#pragma once
#include "params.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace hiosim {

struct LearnParams {
  int clients        = 2048;
  int rounds         = 200;
  double shard       = 4294967296.0; // bytes per client per checkpoint
  double exploration = 0.03;         // share of a client's bytes sent the other way (<= 0.03)
  double damping     = 1.0;          // EWMA weight of the new target, 1: none
  double hysteresis  = 0;            // octaves, per-client uniform in [0, hysteresis]
  double noise       = 0.05;         // relative standard deviation of each measurement
  double initial_threshold = 0;      // 0: the core's default write threshold
  uint64_t seed      = 42;
};

struct LearnRound {
  double direct_share = 0; // share of all bytes sent direct
  double ckpt_s       = 0; // slowest client
  double switched     = 0; // share of clients whose threshold moved by more than half an octave
  double median_threshold = 0;
};

struct LearnResult {
  std::vector<LearnRound> rounds;
  int converged_round    = -1;  // first round after which the direct share stays within
                                // +-0.05 of its mean over the last quarter of the rounds; -1: never
  double amplitude       = 0;   // max - min of the direct share over the last quarter
  double mean_ckpt_s     = 0;   // over the last quarter
  double mean_direct_share = 0; // over the last quarter
  double best_static_ckpt_s = 0;       // the best threshold common to every client, no exploration
  double best_static_threshold = 0;
  double goodput_gbps    = 0;   // all bytes / mean checkpoint time over the last quarter
};

/* Runs the rounds. Costs from `p.client`, OST bandwidth from `p.fs` (oss x osts-per-oss x
 * ost-write-bw), the core's tunables from `p.policy.core`. Throws std::invalid_argument on a
 * parameter out of range. */
LearnResult run_learned(const Params& p, const LearnParams& lp);

/* Checkpoint time with every client on one fixed threshold and no exploration. */
double static_checkpoint_time(const Params& p, const LearnParams& lp, double threshold);

/* `hybridio-sim learn [--clients N] [--rounds N] [--damping a,b,..] [--hysteresis h,..] ...`:
 * runs every damping x hysteresis variant and prints one row each. Returns the exit status. */
int cmd_learn(std::vector<std::string>& args);

} // namespace hiosim
