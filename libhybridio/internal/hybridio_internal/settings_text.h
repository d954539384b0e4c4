// settings_text.h - the narrow internal interface the project's own command
// and benchmarks (cli/, bench/) use from the library: the text forms of
// sizes and policy names, and the settings table's help text.  Not public
// API (nothing here is installed or exported from libhybridio.so); it
// exists so that those tools include no header of libhybridio/src.
//
// Every function forwards to the library's settings code (src/runtime/config.h),
// so a size or a policy name means the same on the command line as in
// HYBRIDIO_* variables.  Pure functions of their arguments (describe()
// reads only the defaults): callable from any thread; nothing throws
// except std::bad_alloc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hybridio/policy.h"

namespace hybridio::internal {

// Parses "123", "4k", "8M", "1G", "2MiB", "512KB" (binary units); false on
// overflow, garbage or an empty string.
bool parse_size(const std::string& text, uint64_t* out);

// Formats a byte count the way parse_size accepts it ("8M", "1536K", "100").
std::string format_size(uint64_t bytes);

// Parses a policy name ("hybrid|buffered|direct|dontcache", any case).
bool parse_mode(const std::string& text, hio_mode* out);

// Every HYBRIDIO_* variable the library reads, with its accepted form and
// default, one per line (`hybridio config`).
std::string describe_settings();

// One row of the settings table (src/runtime/config.h SettingInfo), as the man
// pages show it: config-file key, HYBRIDIO_* variable, accepted form
// (limits included), default as `hybridio config` prints it ("" when
// unset) and the one-line help.
struct SettingDoc {
  std::string key, variable, accepted, default_value, help;
};

// Every row, in table order (the order of describe_settings()).
std::vector<SettingDoc> setting_docs();

}  // namespace hybridio::internal
