// run_stats.h - the counters of every process `hybridio run` started: the
// shim's per-process hybridio-stats/1 documents added up by the library's
// own reader, and the hybridio-run/1 document (`--stats=FILE`) written
// from the sum.  Not thread-safe (one caller, after the program exited).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "hybridio/hybridio.h"

namespace hybridio::cli {

struct MergedStats {
  hio_stats sum{};
  uint64_t processes = 0;  // as the documents count them
  int documents = 0;       // documents read
};

// Adds up every stats.*.json in `dir` and removes each one it read.  A file
// that is not a hybridio-stats/1 document is left in place, named on stderr.
MergedStats merge_stats_dir(const std::string& dir);

// The hybridio-run/1 document: the summed counters (none when no document
// was read), "processes", "seconds" (6 significant digits) and `settings`,
// keys sorted, indented by 2, one trailing newline.  Strings are written as
// UTF-8; bytes that are not UTF-8 become U+FFFD.
std::string run_stats_json(const MergedStats& m, double seconds, const nlohmann::json& settings);

}  // namespace hybridio::cli
