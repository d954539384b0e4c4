// reuse_admission.h - the engine's side of the `reuse` rule: it asks the
// process's re-use history (reuse_history.h) about a hybrid read that the
// policy sends off the page cache, sets HIO_FILE_REUSE when the history
// admits it, decides again, and records what the read did.
//
// The budget (HYBRIDIO_REUSE_BUDGET) is a size, off, or auto: seven
// eighths of the room for page cache (memory_headroom.h: MemAvailable, and
// in a memory cgroup with a limit, that limit less what the cgroup uses
// other than file pages).  Admitted data is file pages, so it is part of
// that room, and the budget does not shrink as the cache fills with it:
// the admitted subset stays stable.  An eighth is left for the program's
// own growth.
//
// Thread- and fork-safe: the history is attached once per process without
// a lock (a caller racing the first attach gets no history for that read).
// Failures cost the hint, silently.
#pragma once

#include <cstdint>

#include "hybridio/policy.h"

namespace hybridio {

class FileContext;
class ReuseHistory;

// The reuse_budget setting's "auto".
constexpr uint64_t kReuseBudgetAuto = UINT64_MAX;

// The budget for re-read data: `setting` bytes, 0 when off, or (auto)
// seven eighths of `page_cache_room` (~0: no limit known).
uint64_t reuse_budget(uint64_t setting, uint64_t page_cache_room);

// The coarse clock of the history: seconds since boot, plus one (0 is "never").
uint32_t reuse_clock();

// This process's history under the context's settings, or nullptr (off,
// or the table could not be mapped).
ReuseHistory* process_reuse_history(FileContext& ctx);

// For a hybrid read whose first decision sent it off the cache, after the
// cache probe and the decision `d` that followed: re-decides `req` with
// HIO_FILE_REUSE under `cfg` when the history admits it, records the
// read's outcome, and counts admissions and hits (reuse.* in the stats).
// `fd` is fstat'ed for the file's identity.  Leaves `req` and `d` alone
// when there is no history.
void consult_reuse(FileContext& ctx, int fd, const hio_policy_config& cfg, hio_request& req, hio_decision& d);

}  // namespace hybridio
