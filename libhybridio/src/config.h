// config.h - the library's settings and where they come from.
//
// Settings are read once per process from an optional config file
// (HYBRIDIO_CONFIG=<path>, lines "key = value") and then from the
// environment (HYBRIDIO_<KEY>), which wins.  A bad value produces one
// diagnostic naming the variable and the accepted form and keeps the
// default; loading never fails and never aborts the host program.
// Config is a plain value: copy it freely; it is not itself thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hybridio/policy.h"
#include "log.h"

namespace hybridio {

struct Config {
  hio_policy_config policy{};
  std::string stats_path;  // HYBRIDIO_STATS: JSON counters written at exit
  std::string trace_path;  // HYBRIDIO_TRACE: one line per decision
  LogLevel log_level = LogLevel::kWarn;
  bool dontcache = true;           // try RWF_DONTCACHE where the policy asks for it
  uint64_t bounce_size = 8 << 20;  // bytes per bounce-buffer chunk (power of two)
  // The parallel direct engine (uring_engine.h).
  uint32_t queue_depth = 8;            // chunks of one request in flight together
  uint64_t chunk_size = 1 << 20;       // bytes per chunk (power of two, 64K-64M)
  bool uring = true;                   // io_uring; off: synchronous submission
  bool write_behind = false;           // opt-in: direct writes complete after the call returns
  uint64_t write_behind_limit = 64 << 20;  // staging memory for write-behind, per process
  uint64_t read_ahead = 0;             // opt-in: bytes read ahead of sequential direct reads (read_ahead.h)

  Config();
};

// Parses "123", "4k", "8M", "1G", "2MiB", "512KB" (binary units); false on
// overflow, garbage or an empty string.
bool parse_size(const std::string& text, uint64_t* out);

// Formats a byte count the way parse_size accepts it ("8M", "1536K", "100").
std::string format_size(uint64_t bytes);

// Parses a policy name ("hybrid|buffered|direct|dontcache").
bool parse_mode(const std::string& text, hio_mode* out);

// Looks up an environment variable; nullptr when unset.
using EnvLookup = std::function<const char*(const char* name)>;

// Loads the configuration.  Diagnostics are appended to `problems` (one per
// bad value or unreadable file) as well as logged at warn level.
Config load_config(const EnvLookup& env, std::vector<std::string>* problems);

// The variables load_config understands, with the form each accepts, for --help texts.
std::string describe_settings();

}  // namespace hybridio
