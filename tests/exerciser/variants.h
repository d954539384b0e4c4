// variants.h - the modes the exerciser runs through the library API, one
// row each.  A new engine setting or policy (the learned thresholds, once
// the learner lands) is one more row here: its policy, its engine settings,
// and what its counters must show at the end.
#pragma once

#include <cstdint>

#include "hybridio/hybridio.h"

namespace hybridio::exerciser {

constexpr uint64_t K = 1024, M = 1024 * 1024;

// What a mode must have done by the end of a run, unless the filesystem
// refused the path (then the refusal counter must have moved instead).
enum Expect : unsigned {
  kExpectNothing = 0,
  kExpectDirect = 1,      // direct bytes, splits and bounces
  kExpectDontcache = 2,   // RWF_DONTCACHE bytes
  kExpectWriteBehind = 4, // writes that returned once staged
  kExpectNoDirect = 16,   // not a byte off the page cache (buffered)
};

struct Variant {
  const char* name;
  hio_mode mode;
  uint64_t write_threshold = 0;  // 0: the policy's default
  uint64_t read_threshold = 0;
  uint64_t chunk_size = 0;       // engine; 0: default
  uint32_t queue_depth = 0;
  int write_behind = 0;          // 1: direct writes return once staged
  unsigned expect = kExpectNothing;
  // Every this many operations, a sequential read stream through a
  // read-only open, the file changed as other programs would in the
  // middle of it (0: never).
  uint64_t stream_every = 0;
  // Settings the fields above do not name (a new engine or policy switch),
  // applied last; and a check of its own counters at the end, with what it
  // requires in words.  nullptr: none.
  void (*tune)(hio_policy_config*, hio_engine_config*) = nullptr;
  bool (*counters_ok)(const hio_stats&) = nullptr;
  const char* counters_need = nullptr;
  // Only when --modes names it: a mode that needs the process started with
  // settings of its own (the environment the library reads once).
  bool named_only = false;
};

// Learning is read from HYBRIDIO_LEARN when the library starts, for the whole
// process: the learned mode runs in a process of its own (tests/CMakeLists.txt).
inline bool learned_samples(const hio_stats& s) { return s.learn_samples > 0; }
// Re-use admission is on when HYBRIDIO_REUSE_BUDGET says so at start (the
// suite runs with it off): the reuse mode runs in a process of its own too.
inline bool reuse_admitted(const hio_stats& s) { return s.reuse_admitted_reads > 0; }

// ---- The modes (issue 14: hybrid, direct, dontcache, write-behind, a read
// stream, learned thresholds).  Add a mode here; nothing else changes. ----
inline const Variant kVariants[] = {
    {"buffered", HIO_MODE_BUFFERED, 0, 0, 0, 0, 0, kExpectNoDirect},
    {"hybrid", HIO_MODE_HYBRID},
    // Low thresholds: splits, bounces and cache probes on medium requests.
    {"hybrid_low", HIO_MODE_HYBRID, 64 * K, 64 * K, 64 * K, 4, 0, kExpectDirect},
    {"direct", HIO_MODE_DIRECT, 0, 0, 64 * K, 4, 0, kExpectDirect},
    {"dontcache", HIO_MODE_DONTCACHE, 0, 0, 0, 0, 0, kExpectDontcache},
    {"write_behind", HIO_MODE_DIRECT, 64 * K, 64 * K, 256 * K, 8, 1, kExpectDirect | kExpectWriteBehind},
    {"read_stream", HIO_MODE_DIRECT, 64 * K, 64 * K, 256 * K, 8, 0, kExpectDirect, 5000},
    // Learned thresholds (HYBRIDIO_LEARN=on): low configured thresholds so
    // that most requests are in the size classes the learner measures and
    // explores (64 KiB and up), paths switching in the middle of the file.
    {"learned", HIO_MODE_HYBRID, 64 * K, 256 * K, 256 * K, 4, 0, kExpectNothing, 0, nullptr, learned_samples,
     "requests whose cost the learner measured (run with HYBRIDIO_LEARN=on)", true},
    // Re-use admission (HYBRIDIO_REUSE_BUDGET=auto): reads of data read off
    // the cache before take the cache instead; the bytes must not change.
    {"reuse", HIO_MODE_HYBRID, 64 * K, 64 * K, 64 * K, 4, 0, kExpectNothing, 0, nullptr, reuse_admitted,
     "reads admitted by the re-use history (run with HYBRIDIO_REUSE_BUDGET=auto)", true},
};

}  // namespace hybridio::exerciser
