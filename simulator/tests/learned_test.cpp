/* learned_test: per-client threshold learning with 2,048 clients on shared OSTs (learned.hpp).
 * 32 OSS x 8 OSTs x 4 GB/s = 1 TB/s for 2,048 clients (0.5 GB/s each, below one thread's
 * buffered copy of 1.65 GB/s), every client starting all-buffered (threshold 512 MiB): undamped,
 * everyone jumps to the crossover it measured when few went direct, the OSTs saturate, everyone
 * jumps back - herding; an EWMA of 0.2 settles. */
#include "learned.hpp"

#include <gtest/gtest.h>

#include <cstdio>

using namespace hiosim;

namespace {

Params shared_osts()
{
  Params p;
  p.fs.oss          = 32;
  p.fs.osts_per_oss = 8;
  return p;
}

LearnParams learner(double damping)
{
  LearnParams lp;
  lp.clients           = 2048;
  lp.rounds            = 60;
  lp.damping           = damping;
  lp.initial_threshold = 512.0 * 1048576;
  lp.seed              = 7;
  return lp;
}

} // namespace

TEST(Learned, UndampedHerdsAndDampedConverges)
{
  Params p      = shared_osts();
  LearnResult u = run_learned(p, learner(1.0));
  LearnResult d = run_learned(p, learner(0.2));
  std::printf("undamped: converged %d, amplitude %.3f, checkpoint %.2f s; EWMA 0.2: converged %d, amplitude %.3f, "
              "checkpoint %.2f s; best static %.2f s\n",
              u.converged_round, u.amplitude, u.mean_ckpt_s, d.converged_round, d.amplitude, d.mean_ckpt_s,
              d.best_static_ckpt_s);
  // Herding: late in the run, more than 30 % of all bytes still swing between the paths.
  EXPECT_GT(u.amplitude, 0.3);
  EXPECT_EQ(u.converged_round, -1);
  // Damped: settled within 10 rounds, the direct share steady within 0.1, and faster checkpoints.
  EXPECT_GE(d.converged_round, 0);
  EXPECT_LE(d.converged_round, 10);
  EXPECT_LT(d.amplitude, 0.1);
  EXPECT_LT(d.mean_ckpt_s, 0.8 * u.mean_ckpt_s);
  // Neither beats the best threshold common to all (each client's crossover ignores what its
  // direct bytes cost the others).
  EXPECT_GE(d.mean_ckpt_s, d.best_static_ckpt_s);
}

TEST(Learned, ExplorationIsBoundedAndStepsAreValidated)
{
  Params p       = shared_osts();
  LearnParams lp = learner(0.2);
  lp.exploration = 0.05;
  EXPECT_THROW(run_learned(p, lp), std::invalid_argument);
  lp.exploration = 0.03;
  lp.damping     = 0;
  EXPECT_THROW(run_learned(p, lp), std::invalid_argument);
}

TEST(Learned, NoContentionNoHerding)
{
  // 2 TB/s for 2,048 clients x 4 = 8 TB/s: direct never saturates, every damping settles.
  Params p = shared_osts();
  p.fs.oss = 256;
  LearnResult u = run_learned(p, learner(1.0));
  EXPECT_LT(u.amplitude, 0.05);
  EXPECT_GE(u.converged_round, 0);
}
