// file_context.h - what the open files of a process share: the policy in
// effect, the settings a file reads, the counters, the decision trace and
// the learner.  The runtime (runtime/runtime.h) is the process's one
// FileContext; a File is given it when it opens and never outlives it.
//
// policy() is one acquire load of an immutable snapshot (snapshots.h): a
// decision never takes a lock.  The settings are fixed once the context is
// made.  Counters and the trace are thread-safe (stats.h, trace.h).
#pragma once

#include <cstdint>
#include <string>

#include "hybridio/hybridio.h"
#include "hybridio/policy.h"
#include "learn/learner.h"
#include "platform/snapshots.h"
#include "platform/stats.h"
#include "platform/trace.h"

namespace hybridio {

// The settings of runtime/config.h that an open file reads.
struct FileSettings {
  hio_mode configured_mode = HIO_MODE_HYBRID;  // the configured policy's (the re-use history's switch)
  bool dontcache = true;                        // try RWF_DONTCACHE where the policy asks for it
  uint64_t drop_behind = 16 << 20;              // drop_behind.h: the smallest write that drops behind; 0 off
  uint64_t drop_behind_limit = 1ULL << 30;      // bytes written that way and not yet dropped, per process
  uint64_t bounce_size = 8 << 20;               // bytes per bounce-buffer chunk (power of two)
  uint64_t reuse_budget = UINT64_MAX;           // reuse_admission.h: UINT64_MAX auto, 0 off
  uint32_t reuse_window = HIO_REUSE_WINDOW_DEFAULT;  // seconds within which a read again is re-use
  std::string reuse_dir;                        // where the re-use history's table is; "" = /dev/shm
};

class FileContext {
 public:
  FileContext(const FileContext&) = delete;
  FileContext& operator=(const FileContext&) = delete;

  const hio_policy_config& policy() const { return *policy_.current(); }
  const FileSettings& file_settings() const { return file_settings_; }
  Stats& stats() { return stats_; }
  Trace& trace() { return trace_; }
  // The learner (learner.h); nullptr when learning is off or there was no
  // memory for it.
  Learner* learner() { return learner_; }

 protected:
  FileContext() = default;
  ~FileContext() = default;

  Snapshots<hio_policy_config> policy_;  // published before the first file opens
  FileSettings file_settings_;
  Stats stats_;
  Trace trace_;
  Learner* learner_ = nullptr;  // never freed: files keep pointers into it
};

}  // namespace hybridio
