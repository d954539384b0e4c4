// config.h - the library's settings and where they come from.
//
// Settings are read once per process from an optional config file
// (HYBRIDIO_CONFIG=<path>, lines "key = value") and then from the
// environment (HYBRIDIO_<KEY>), which wins.  A bad value produces one
// diagnostic naming the variable and the accepted form and keeps the
// default; loading never fails and never aborts the host program.
//
// Every setting is declared once, in one row of the table in config.cc:
// its key, its kind, the Config member that holds it, its limits and its
// help.  Parsing, printing, validation, clamping, the variable's name, the
// config-file key and the help text all come from that row; list_settings()
// hands the rows out (for `hybridio config` and generated documentation).
// Defaults are those of the structs themselves (hio_policy_config_defaults(),
// EngineSettings(), Config's member initialisers), read back through the rows.
//
// Config is a plain value: copy it freely; it is not itself thread-safe.
// Everything here may allocate and is meant for start-up and tools, not for
// the I/O path.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hybridio/hybridio.h"
#include "hybridio/policy.h"
#include "io/engine_settings.h"
#include "platform/byte_size.h"
#include "platform/log.h"

namespace hybridio {

struct Config {
  hio_policy_config policy{};
  EngineSettings engine;
  std::string stats_path;  // HYBRIDIO_STATS: JSON counters written at exit
  std::string trace_path;  // HYBRIDIO_TRACE: one line per decision
  LogLevel log_level = LogLevel::kWarn;
  bool dontcache = true;           // try RWF_DONTCACHE where the policy asks for it
  uint64_t drop_behind = 16 << 20;  // hybrid's uncached writes of at least this size drop behind the call (drop_behind.h; 0: off)
  uint64_t drop_behind_limit = 1ULL << 30;  // bytes written that way and not yet dropped, per process
  uint64_t bounce_size = 8 << 20;  // bytes per bounce-buffer chunk (power of two)
  bool learn = true;               // learn the crossover and off-cache path per filesystem (learner.h)
  uint32_t learn_explore = 3;      // percent of bytes that explore another path
  uint32_t learn_damping = 10;     // samples an estimate averages over
  std::string state_dir;           // where learned costs persist; "" = the XDG default
  uint64_t reuse_budget = UINT64_MAX;  // hybrid: memory for re-read data (reuse_admission.h); UINT64_MAX auto, 0 off
  uint32_t reuse_window = HIO_REUSE_WINDOW_DEFAULT;// seconds within which a read again is re-use
  std::string reuse_dir;           // where the re-use history's table is; "" = /dev/shm

  Config();
};

// What a setting's value is; decides how it is parsed, printed and limited.
enum class SettingKind {
  kSize,       // a byte count ("4M"), within the row's limits
  kSizeOrOff,  // the same, or on (the row's "on" size) or off (0)
  kInteger,    // a plain integer within the row's limits
  kBool,       // on|off (also 1|0, yes|no, true|false, auto)
  kMode,       // a policy name
  kLogLevel,   // error|warn|info|debug
  kPath,       // a non-empty file path
};

// One row of the settings table, as help texts and man pages show it.
struct SettingInfo {
  const char* key;            // config-file key
  std::string variable;       // environment variable, HYBRIDIO_<KEY>
  SettingKind kind;
  std::string accepted;       // the accepted form, limits included
  std::string default_value;  // printed as get_setting() prints it; empty: unset
  const char* help;           // one line
};

// Every setting, in the order of the table (the order of the help text).
std::vector<SettingInfo> list_settings();

// The value of setting `key` in `c`, in the form set_setting() accepts
// ("8M", "on", "debug"; an unset path is empty); false if there is no such key.
bool get_setting(const Config& c, const std::string& key, std::string* value);

// Sets `key` from text as the environment or the config file would; false
// (and `c` unchanged) if there is no such key or the value is not valid.
bool set_setting(Config* c, const std::string& key, const std::string& value);

// Brings every engine setting into its row's limits, as hio_engine_set()
// promises: below the minimum to the minimum, above the maximum to the
// maximum, not a power of two where one is required to the default, a
// switch to 0 or 1.
void clamp_engine_settings(EngineSettings* engine);
// A copy of `s` brought into those limits.
EngineSettings clamped_engine_settings(const hio_engine_config& s);

// Parses a policy name ("hybrid|buffered|direct|dontcache").
bool parse_mode(const std::string& text, hio_mode* out);

// Looks up an environment variable; nullptr when unset.
using EnvLookup = std::function<const char*(const char* name)>;

// Loads the configuration.  Diagnostics are appended to `problems` (one per
// bad value or unreadable file) as well as logged at warn level.
Config load_config(const EnvLookup& env, std::vector<std::string>* problems);

// The variables load_config understands, with the form each accepts and its
// default, for --help texts (`hybridio config` prints it).
std::string describe_settings();

}  // namespace hybridio
