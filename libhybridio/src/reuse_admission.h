// reuse_admission.h - the engine's side of the `reuse` rule: it asks the
// process's re-use history (reuse_history.h) about a hybrid read that the
// policy sends off the page cache, sets HIO_FILE_REUSE when the history
// admits it, decides again, and records what the read did.
//
// The budget (HYBRIDIO_REUSE_BUDGET) is a size, off, or auto: three
// quarters of what the memory headroom (memory_headroom.h: MemAvailable,
// the memory cgroup's limit less its usage plus reclaimable file pages)
// and the re-read data already admitted add up to.  Admitted data counts
// in, as it is part of what the budget holds: otherwise each admission
// would shrink the budget and the admitted subset would not be stable.
// A quarter is left for the program's own growth and other files.
//
// Thread- and fork-safe: the history is attached once per process without
// a lock (a caller racing the first attach gets no history for that read).
// Failures cost the hint, silently.
#pragma once

#include <cstdint>

#include "hybridio/policy.h"

namespace hybridio {

class Runtime;
class ReuseHistory;

// Config::reuse_budget's "auto".
constexpr uint64_t kReuseBudgetAuto = UINT64_MAX;

// The budget for re-read data: `setting` bytes, 0 when off, or (auto)
// three quarters of `headroom` + `admitted_bytes`.
uint64_t reuse_budget(uint64_t setting, uint64_t headroom, uint64_t admitted_bytes);

// The coarse clock of the history: seconds since boot, plus one (0 is "never").
uint32_t reuse_clock();

// This process's history under the runtime's settings, or nullptr (off,
// or the table could not be mapped).
ReuseHistory* process_reuse_history(Runtime& rt);

// For a hybrid read whose first decision sent it off the cache, after the
// cache probe and the decision `d` that followed: re-decides `req` with
// HIO_FILE_REUSE under `cfg` when the history admits it, records the
// read's outcome, and counts admissions and hits (reuse.* in the stats).
// `fd` is fstat'ed for the file's identity.  Leaves `req` and `d` alone
// when there is no history.
void consult_reuse(Runtime& rt, int fd, const hio_policy_config& cfg, hio_request& req, hio_decision& d);

}  // namespace hybridio
