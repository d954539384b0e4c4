// learned_seed.h - the narrow internal interface `hybridio calibrate` uses
// to seed the library's learner (libhybridio/src/learn/learner.h,
// docs/policy.md "Learned thresholds") with what it measured.  Not public
// API; it exists so that cli/ includes no header of libhybridio/src.
//
// Thread-safe; never throws (std::bad_alloc is a failure reported as a
// value).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hybridio::internal {

// What one request size delivered, in bytes per second: writes with their
// fsync included, reads cold.
struct CalibrationPoint {
  uint64_t request_size = 0;
  double write_buffered = 0, write_direct = 0, read_buffered = 0, read_direct = 0;
};

// Replaces the learned estimates of the sizes measured for the filesystem
// holding directory `dir` (those of other sizes are kept) and places its
// crossovers where they say, in this process and in the file the library
// loads on first use of that filesystem.
// Returns that file's path, or "" with *error set.
std::string seed_learned(const std::string& dir, const std::vector<CalibrationPoint>& points, std::string* error);

}  // namespace hybridio::internal
