// stats_document.h - the narrow internal interface `hybridio run` uses to
// add up the hybridio-stats/1 documents the shim writes, one per process
// (libhybridio/src/platform/stats_json.h).  Not public API; it exists so that cli/
// includes no header of libhybridio/src and keeps no second reader.
//
// Thread-safe (no shared state); never throws except std::bad_alloc.
#pragma once

#include <cstdint>
#include <string>

#include "hybridio/hybridio.h"

namespace hybridio::internal {

// The counters `s` of `processes` processes as a hybridio-stats/1 document,
// with the policy `policy`.
std::string stats_document(const hio_stats& s, uint64_t processes, const hio_policy_config& policy);

// Adds the counters of the document `text` to *sum and the processes it
// holds to *processes.  Returns false, and adds nothing, when `text` is not
// a hybridio-stats/1 document.  The policy is not added; unknown keys are
// skipped.
bool add_stats_document(const std::string& text, hio_stats* sum, uint64_t* processes);

}  // namespace hybridio::internal
