// runtime.cc - see runtime.h.
#include "runtime/runtime.h"

#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "io/lease_guard.h"
#include "io/uring_engine.h"
#include "learn/learned_store.h"
#include "platform/fork_order.h"
#include "platform/stats_file.h"

namespace hybridio {

Runtime& Runtime::get() {
  static Runtime* runtime = new Runtime();  // never destroyed: usable from atexit and late threads
  return *runtime;
}

Runtime::Runtime() {
  config_ = load_config([](const char* name) { return getenv(name); }, nullptr);
  set_log_level(config_.log_level);
  policy_.publish_permanent(&config_.policy);  // no allocation: config_ lives as long as the process
  engine_ = clamped_engine_settings(config_.engine);
  publish_first_engine_settings(&engine_);
  set_engine_stats(&stats_);
  FileSettings& files = file_settings_;
  files.configured_mode = config_.policy.mode;
  files.dontcache = config_.dontcache;
  files.drop_behind = config_.drop_behind;
  files.drop_behind_limit = config_.drop_behind_limit;
  files.bounce_size = config_.bounce_size;
  files.reuse_budget = config_.reuse_budget;
  files.reuse_window = config_.reuse_window;
  files.reuse_dir = config_.reuse_dir;
  if (!config_.trace_path.empty() && !trace_.open(config_.trace_path))
    HIO_WARN("HYBRIDIO_TRACE='%s' cannot be opened: %s; tracing is off",
             config_.trace_path.c_str(), strerror(errno));
  if (config_.learn) {
    LearnSettings settings;
    settings.explore_percent = config_.learn_explore;
    settings.damping = config_.learn_damping;
    try {
      learner_ = new Learner(settings, learned_state_dir(config_.state_dir), config_.policy);
    } catch (const std::bad_alloc&) {
      HIO_WARN("no memory for the learner; using the configured thresholds");
    }
  }
  if (!config_.stats_path.empty() || learner_) atexit(&Runtime::at_exit);
  // A forked child is a process of its own: it counts from zero and writes
  // its stats once, so that adding every process's counters counts each
  // request once.
  ForkHandlers h;
  h.child = [] {
    Runtime& r = get();
    r.stats_.reset();
    if (r.learner_) r.learner_->after_fork();
    r.exit_stats_written_.store(false, std::memory_order_relaxed);
  };
  install_fork_handlers(ForkLevel::kRuntime, h);
  ForkHandlers leases;
  leases.child = lease_guard_after_fork_child;
  install_fork_handlers(ForkLevel::kLeases, leases);
}

void Runtime::write_exit_stats() {
  if (exit_stats_written_.exchange(true)) return;
  if (learner_) learner_->save_all();
  if (config_.stats_path.empty()) return;
  std::string path = config_.stats_path;
  int err;
  if (path.find("%p") != std::string::npos) {
    // "%p" becomes the process id: every process of a program (forked
    // workers, exec'd children) leaves its own file.
    for (size_t at; (at = path.find("%p")) != std::string::npos;) path.replace(at, 2, std::to_string(getpid()));
    err = write_stats(path.c_str());
  } else {
    err = add_stats_to_file(path, stats_.snapshot(), policy());
  }
  if (err == -EEXIST)
    HIO_WARN("HYBRIDIO_STATS='%s' holds something other than %s; left alone, counters not written",
             path.c_str(), HYBRIDIO_STATS_SCHEMA);
  else if (err)
    HIO_WARN("cannot write HYBRIDIO_STATS='%s': %s", path.c_str(), strerror(-err));
}

void Runtime::set_policy(const hio_policy_config& policy) {
  if (!policy_.publish(policy)) HIO_WARN("no memory for a new policy; keeping the current one");
}

int Runtime::write_stats(const char* path) { return write_file_atomically(path, stats_.to_json(policy())); }

}  // namespace hybridio
