// runtime.h - the process-wide state of libhybridio: configuration,
// counters and the decision trace, created on first use.  It is the
// process's FileContext (file/file_context.h): what its open files share.
// Nothing below this layer calls Runtime::get(); what the lower layers
// need is passed to them.
//
// Runtime::get() is thread-safe.  The policy configuration is published as
// an immutable snapshot, so a decision never takes a lock; set_policy()
// swaps the snapshot (earlier ones stay alive until exit, so readers that
// still hold one are never left dangling).
#pragma once

#include <atomic>

#include "file/file_context.h"
#include "runtime/config.h"

namespace hybridio {

class Runtime : public FileContext {
 public:
  static Runtime& get();

  // policy(), stats(), trace() and learner() (HYBRIDIO_LEARN=off: nullptr)
  // are FileContext's.
  void set_policy(const hio_policy_config& policy);
  const Config& config() const { return config_; }

  // Writes this process's stats JSON to `path`, replacing it; 0 or -errno.
  int write_stats(const char* path);

  // Writes HYBRIDIO_STATS now, if set, and the learned state: what
  // exit() does, for paths that skip atexit handlers (the shim calls it
  // from its _exit wrapper).  A path with "%p" gets one file per process;
  // any other path gets this process's counters added to what is there
  // (stats_file.h).  Only the first call of a process writes.
  void write_exit_stats();
  // Lets the next write_exit_stats() write again (after a write made early
  // for a call that then did not happen: the shim's seccomp wrappers).
  void rearm_exit_stats() { exit_stats_written_.store(false); }

 private:
  Runtime();
  static void at_exit() { get().write_exit_stats(); }

  Config config_;
  EngineSettings engine_;  // the engine's first settings (uring_engine.h), from config_
  std::atomic<bool> exit_stats_written_{false};  // once per process: exit() and _exit() both ask
};

}  // namespace hybridio
