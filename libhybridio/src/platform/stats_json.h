// stats_json.h - the hybridio-stats/1 document: written from a snapshot,
// and read back, so that the counters of every process of a program can be
// added up in one file (stats_file.h).
#pragma once

#include <cstdint>
#include <string>

#include "hybridio/hybridio.h"

namespace hybridio {

// The counters `s` of `processes` processes as JSON, with the policy in effect.
std::string stats_json(const hio_stats& s, uint64_t processes, const hio_policy_config& policy);

// Adds the counters of the document `text` to *sum and the number of
// processes it holds to *processes (1 for documents from before that field).
// Returns false, and adds nothing, when `text` is not a hybridio-stats/1
// document.  Settings ("policy") are not counters and are not added; keys
// this version does not know are skipped.
bool add_stats_json(const std::string& text, hio_stats* sum, uint64_t* processes);

}  // namespace hybridio
