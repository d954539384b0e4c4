// config.cc - see config.h.  Every setting is one row of kSettings; the
// functions below read the rows and know nothing of any particular key.
#include "runtime/config.h"

#include <strings.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

namespace hybridio {
namespace {

using Kind = SettingKind;

// The C++ type of the Config member that holds a setting.
enum class Storage { kU32, kU64, kBool, kSwitch, kMode, kLogLevel, kString };

template <typename T>
struct StorageOf;  // left undefined: a member of any other type does not compile
template <> struct StorageOf<uint32_t> { static constexpr Storage value = Storage::kU32; };
template <> struct StorageOf<uint64_t> { static constexpr Storage value = Storage::kU64; };
template <> struct StorageOf<bool> { static constexpr Storage value = Storage::kBool; };
template <> struct StorageOf<int> { static constexpr Storage value = Storage::kSwitch; };  // a C API on/off
template <> struct StorageOf<hio_mode> { static constexpr Storage value = Storage::kMode; };
template <> struct StorageOf<LogLevel> { static constexpr Storage value = Storage::kLogLevel; };
template <> struct StorageOf<std::string> { static constexpr Storage value = Storage::kString; };

// Where a setting lives: the member's type and its address in a Config.
// (A member pointer cannot name policy.write_threshold, and offsetof is not
// defined for Config, which holds strings.)
struct Field {
  Storage storage;
  void* (*at)(Config& c);
};

// The Config member `member` (e.g. policy.write_threshold) as a Field.
#define CONFIG_FIELD(member)                                                  \
  Field {                                                                     \
    StorageOf<decltype(std::declval<Config&>().member)>::value,               \
        [](Config& c) -> void* { return &c.member; }                          \
  }

struct Limits {
  uint64_t min;
  uint64_t max;
  bool pow2;    // the value must be a power of two
  uint64_t on;  // kSizeOrOff: the size that "on" stands for
};

constexpr uint64_t kK = 1ULL << 10, kM = 1ULL << 20, kG = 1ULL << 30;
constexpr Limits none() { return {0, UINT64_MAX, false, 0}; }
constexpr Limits at_least(uint64_t min) { return {min, UINT64_MAX, false, 0}; }
constexpr Limits from_to(uint64_t min, uint64_t max) { return {min, max, false, 0}; }
constexpr Limits power_of_two(uint64_t min, uint64_t max) { return {min, max, true, 0}; }
constexpr Limits at_most_or_on(uint64_t max, uint64_t on) { return {0, max, false, on}; }
// kSizeOrOff whose "on" is "auto" (UINT64_MAX: the setting's owner works the size out).
constexpr Limits size_or_auto() { return {0, UINT64_MAX, false, UINT64_MAX}; }
constexpr bool is_auto(const Limits& l, uint64_t v) { return l.on == UINT64_MAX && v == UINT64_MAX; }

struct Setting {
  const char* key;  // config-file key; the variable is HYBRIDIO_<KEY upper>
  Kind kind;
  Field field;
  Limits limits;
  const char* help;
};

// The settings, in the order of the help text.  Defaults are not repeated
// here: they are the structs' own (config.h), read back through `field`.
constexpr Setting kSettings[] = {
    {"policy", Kind::kMode, CONFIG_FIELD(policy.mode), none(), "routing policy"},
    {"write_threshold", Kind::kSize, CONFIG_FIELD(policy.write_threshold), at_least(1),
     "hybrid: writes of at least this size go direct"},
    {"read_threshold", Kind::kSize, CONFIG_FIELD(policy.read_threshold), at_least(1),
     "hybrid: reads of at least this size go direct"},
    {"sync_write_threshold", Kind::kSize, CONFIG_FIELD(policy.sync_write_threshold), at_least(1),
     "hybrid: O_SYNC/O_DSYNC writes of at least this size go direct"},
    {"stream_threshold", Kind::kSize, CONFIG_FIELD(policy.stream_threshold), at_least(1),
     "hybrid: writes of a sequential stream of at least this size go direct"},
    {"dontcache_threshold", Kind::kSize, CONFIG_FIELD(policy.dontcache_threshold), at_least(1),
     "hybrid: undirectable requests of at least this size go uncached"},
    {"pressure_high", Kind::kInteger, CONFIG_FIELD(policy.pressure_high), from_to(0, 100),
     "memory pressure that lowers the thresholds"},
    {"cached_percent", Kind::kInteger, CONFIG_FIELD(policy.cached_percent), from_to(0, 100),
     "reads stay buffered when this much of the range is cached"},
    {"dirty_percent", Kind::kInteger, CONFIG_FIELD(policy.dirty_percent), from_to(0, 100),
     "writes stay buffered when this much of the range is dirty"},
    {"min_body_percent", Kind::kInteger, CONFIG_FIELD(policy.min_body_percent), from_to(0, 100),
     "a split must leave this much of the request direct"},
    {"bounce_size", Kind::kSize, CONFIG_FIELD(bounce_size), power_of_two(64 * kK, UINT64_MAX),
     "bounce buffer chunk"},
    {"queue_depth", Kind::kInteger, CONFIG_FIELD(engine.queue_depth), from_to(1, 256),
     "chunks of one large direct request in flight together (io_uring)"},
    {"chunk_size", Kind::kSize, CONFIG_FIELD(engine.chunk_size), power_of_two(64 * kK, 64 * kM),
     "bytes per chunk of a parallel direct request"},
    {"uring", Kind::kBool, CONFIG_FIELD(engine.uring), none(),
     "submit direct chunks through io_uring (off: synchronously)"},
    {"write_behind", Kind::kBool, CONFIG_FIELD(engine.write_behind), none(),
     "direct writes return once staged; errors are reported at the next fsync or close"},
    {"write_behind_limit", Kind::kSize, CONFIG_FIELD(engine.write_behind_limit), at_least(1 * kM),
     "staging memory for write-behind, per process"},
    {"dontcache", Kind::kBool, CONFIG_FIELD(dontcache), none(), "use RWF_DONTCACHE where supported"},
    {"drop_behind", Kind::kSizeOrOff, CONFIG_FIELD(drop_behind), at_most_or_on(1 * kG, 16 * kM),
     "hybrid: an uncached write of at least this size is a buffered write whose writeback and page drop the kernel's "
     "workers do behind the call, where RWF_DONTCACHE would wait for them to be submitted (off: RWF_DONTCACHE)"},
    {"drop_behind_limit", Kind::kSize, CONFIG_FIELD(drop_behind_limit), at_least(16 * kM),
     "bytes written by drop-behind writes and not yet written back and dropped, per process: a write waits beyond it"},
    {"learn", Kind::kBool, CONFIG_FIELD(learn), none(),
     "hybrid: measure each path per filesystem; move the size threshold toward the measured crossover and choose the cheaper off-cache path (off: as configured)"},
    {"learn_explore", Kind::kInteger, CONFIG_FIELD(learn_explore), from_to(0, 3),
     "percent of bytes sent down another path to keep the measurements fresh"},
    {"learn_damping", Kind::kInteger, CONFIG_FIELD(learn_damping), from_to(1, 1024),
     "samples a measurement averages over (the first N, then an exponential average of weight 1/N)"},
    {"state_dir", Kind::kPath, CONFIG_FIELD(state_dir), none(),
     "where learned measurements are kept (default $XDG_STATE_HOME/hybridio/learned)"},
    {"reuse_budget", Kind::kSizeOrOff, CONFIG_FIELD(reuse_budget), size_or_auto(),
     "hybrid: memory for data read off the page cache and read again within reuse_window; such reads take the cache "
     "while it fits, else a stable subset does (auto: 7/8 of the room for page cache, memory cgroup included; off: never)"},
    {"reuse_window", Kind::kInteger, CONFIG_FIELD(reuse_window), from_to(1, 7 * 86400),
     "seconds within which reading data again counts as re-use"},
    {"reuse_dir", Kind::kPath, CONFIG_FIELD(reuse_dir), none(),
     "directory of the per-user re-use history table, made if missing (default /dev/shm)"},
    {"stats", Kind::kPath, CONFIG_FIELD(stats_path), none(), "write JSON counters to this file at exit"},
    {"trace", Kind::kPath, CONFIG_FIELD(trace_path), none(), "write one line per decision to this file"},
    {"log", Kind::kLogLevel, CONFIG_FIELD(log_level), none(), "diagnostics on stderr"},
};

#undef CONFIG_FIELD

constexpr bool is_number(Kind kind) {
  return kind == Kind::kSize || kind == Kind::kSizeOrOff || kind == Kind::kInteger || kind == Kind::kBool;
}

constexpr bool fits(Kind kind, Storage storage) {
  switch (kind) {
    case Kind::kSize:
    case Kind::kSizeOrOff: return storage == Storage::kU64;
    case Kind::kInteger: return storage == Storage::kU32;
    case Kind::kBool: return storage == Storage::kBool || storage == Storage::kSwitch;
    case Kind::kMode: return storage == Storage::kMode;
    case Kind::kLogLevel: return storage == Storage::kLogLevel;
    case Kind::kPath: return storage == Storage::kString;
  }
  return false;
}

constexpr bool every_row_is_consistent() {
  for (const Setting& s : kSettings) {
    const Limits& l = s.limits;
    if (!fits(s.kind, s.field.storage) || l.min > l.max) return false;
    if (s.kind == Kind::kInteger && l.max > UINT32_MAX) return false;
    if (s.kind == Kind::kSizeOrOff && (l.on == 0 || l.on > l.max)) return false;
  }
  return true;
}
static_assert(every_row_is_consistent(), "a setting's kind or limits do not fit its Config member");

constexpr hio_mode kModes[] = {HIO_MODE_HYBRID, HIO_MODE_BUFFERED, HIO_MODE_DIRECT, HIO_MODE_DONTCACHE};
constexpr LogLevel kLogLevels[] = {LogLevel::kError, LogLevel::kWarn, LogLevel::kInfo, LogLevel::kDebug};

// Settings that no longer exist: accepted and ignored, with one warning
// per process when one is set (environment or config file).
constexpr const char* kRemovedSettings[][2] = {
    {"read_ahead", "reads are never read ahead across calls: a direct read runs inside the call that asks for it"},
    {"learn_pipelined_reads", "there is no read pipeline to start a read stream in"},
    {"learn_uncached_writes", "off the cache, writes start uncached where RWF_DONTCACHE works (reads direct), and each moves to the other where it measures cheaper"},
    {"learn_uncached_random_reads", "reads at random are measured like any other read; no separate default"},
    {"learn_confirm", "a learned choice moves one octave at a time past a margin; there is no confirmation window"},
};

const char* removed_setting(const std::string& key) {
  for (const auto& r : kRemovedSettings)
    if (strcasecmp(key.c_str(), r[0]) == 0) return r[1];
  return nullptr;
}

void warn_removed(const std::string& origin, const char* why) {
  static std::atomic<bool> warned{false};
  if (warned.exchange(true)) return;
  HIO_WARN("%s is a removed setting, ignored: %s", origin.c_str(), why);
}

const Setting* find_setting(const std::string& key) {
  for (const Setting& s : kSettings)
    if (key == s.key) return &s;
  return nullptr;
}

const void* field_of(const Setting& s, const Config& c) {
  return s.field.at(const_cast<Config&>(c));  // the accessor only takes the address
}

// A number-like setting (kinds for which is_number() holds) as a number.
uint64_t load_number(const Setting& s, const Config& c) {
  const void* p = field_of(s, c);
  switch (s.field.storage) {
    case Storage::kU32: return *static_cast<const uint32_t*>(p);
    case Storage::kU64: return *static_cast<const uint64_t*>(p);
    case Storage::kBool: return *static_cast<const bool*>(p);
    case Storage::kSwitch: return *static_cast<const int*>(p) != 0;
    default: return 0;
  }
}

void store_number(const Setting& s, Config& c, uint64_t v) {
  void* p = s.field.at(c);
  switch (s.field.storage) {
    case Storage::kU32: *static_cast<uint32_t*>(p) = static_cast<uint32_t>(v); break;
    case Storage::kU64: *static_cast<uint64_t*>(p) = v; break;
    case Storage::kBool: *static_cast<bool*>(p) = v != 0; break;
    case Storage::kSwitch: *static_cast<int*>(p) = v != 0; break;
    default: break;
  }
}

bool within(const Limits& l, uint64_t v) { return v >= l.min && v <= l.max && (!l.pow2 || hio_is_pow2(v)); }

bool parse_bool(const std::string& t, bool* out) {
  if (t == "1" || strcasecmp(t.c_str(), "on") == 0 || strcasecmp(t.c_str(), "yes") == 0 ||
      strcasecmp(t.c_str(), "true") == 0 || strcasecmp(t.c_str(), "auto") == 0) {
    *out = true;
    return true;
  }
  if (t == "0" || strcasecmp(t.c_str(), "off") == 0 || strcasecmp(t.c_str(), "no") == 0 ||
      strcasecmp(t.c_str(), "false") == 0) {
    *out = false;
    return true;
  }
  return false;
}

// Parses a number-like setting and checks it against the row's limits.
bool parse_number(const Setting& s, const std::string& text, uint64_t* out) {
  bool on;
  uint64_t v;
  switch (s.kind) {
    case Kind::kBool:
      if (!parse_bool(text, &on)) return false;
      *out = on;
      return true;
    case Kind::kSizeOrOff:
      if (parse_bool(text, &on)) {  // "auto" is on
        *out = on ? s.limits.on : 0;
        return true;
      }
      if (!parse_size(text, &v)) return false;
      break;
    case Kind::kSize:
      if (!parse_size(text, &v)) return false;
      break;
    case Kind::kInteger:
      if (text.find_first_not_of("0123456789") != std::string::npos || !parse_size(text, &v)) return false;
      break;
    default:
      return false;
  }
  if (!within(s.limits, v)) return false;
  *out = v;
  return true;
}

// Sets one setting from text; leaves `c` as it was when the text is not valid.
bool store_text(const Setting& s, Config& c, const std::string& text) {
  void* p = s.field.at(c);
  switch (s.kind) {
    case Kind::kMode: return parse_mode(text, static_cast<hio_mode*>(p));
    case Kind::kLogLevel: return parse_log_level(text.c_str(), static_cast<LogLevel*>(p));
    case Kind::kPath:
      if (text.empty()) return false;
      *static_cast<std::string*>(p) = text;
      return true;
    default: {
      uint64_t v;
      if (!parse_number(s, text, &v)) return false;
      store_number(s, c, v);
      return true;
    }
  }
}

// A setting's value in the form store_text() accepts.
std::string text_of(const Setting& s, const Config& c) {
  const void* p = field_of(s, c);
  switch (s.kind) {
    case Kind::kSize: return format_size(load_number(s, c));
    case Kind::kSizeOrOff: {
      const uint64_t v = load_number(s, c);
      if (is_auto(s.limits, v)) return "auto";
      return v ? format_size(v) : "off";
    }
    case Kind::kInteger: return std::to_string(load_number(s, c));
    case Kind::kBool: return load_number(s, c) ? "on" : "off";
    case Kind::kMode: return hio_mode_name(*static_cast<const hio_mode*>(p));
    case Kind::kLogLevel: return log_level_name(*static_cast<const LogLevel*>(p));
    case Kind::kPath: return *static_cast<const std::string*>(p);
  }
  return "";
}

// A value for a human: an unset path reads "(unset)".
std::string shown(const std::string& value) { return value.empty() ? "(unset)" : value; }

std::string accepted_form(const Setting& s) {
  const Limits& l = s.limits;
  std::string form;
  switch (s.kind) {
    case Kind::kSize:
    case Kind::kSizeOrOff: {
      form = "a byte count with optional K/M/G suffix, e.g. 4M";
      if (l.pow2) form += ", a power of two";
      const bool low = l.min > 1, high = l.max != UINT64_MAX;
      if (low && high)
        form += ", from " + format_size(l.min) + " to " + format_size(l.max);
      else if (low)
        form += ", at least " + format_size(l.min);
      else if (high)
        form += ", at most " + format_size(l.max);
      if (is_auto(l, l.on))
        form += "; or auto or off";
      else if (s.kind == Kind::kSizeOrOff)
        form += "; or on (" + format_size(l.on) + ") or off";
      return form;
    }
    case Kind::kInteger: return "an integer from " + std::to_string(l.min) + " to " + std::to_string(l.max);
    case Kind::kBool: return "on|off";
    case Kind::kMode:
      for (hio_mode m : kModes) form += std::string(form.empty() ? "" : "|") + hio_mode_name(m);
      return form;
    case Kind::kLogLevel:
      for (LogLevel level : kLogLevels) form += std::string(form.empty() ? "" : "|") + log_level_name(level);
      return form;
    case Kind::kPath: return "a file path";
  }
  return "?";
}

std::string variable_name(const char* key) {
  std::string name = "HYBRIDIO_";
  for (const char* p = key; *p; ++p) name += static_cast<char>(toupper(static_cast<unsigned char>(*p)));
  return name;
}

void apply(Config& c, const Setting& s, const std::string& value, const std::string& origin,
           std::vector<std::string>* problems) {
  if (store_text(s, c, value)) return;
  std::string msg = origin + "='" + value + "' is not valid: expected " + accepted_form(s) + "; keeping " +
                    shown(text_of(s, c));
  HIO_WARN("%s", msg.c_str());
  if (problems) problems->push_back(msg);
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

void load_file(Config& c, const std::string& path, std::vector<std::string>* problems) {
  std::ifstream in(path);
  if (!in) {
    std::string msg = "HYBRIDIO_CONFIG='" + path + "' cannot be read: " + strerror(errno) +
                      "; using defaults";
    HIO_WARN("%s", msg.c_str());
    if (problems) problems->push_back(msg);
    return;
  }
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    line = trim(line);
    if (line.empty()) continue;
    std::string where = path + ":" + std::to_string(lineno);
    size_t eq = line.find('=');
    std::string key = trim(line.substr(0, eq));
    if (const char* why = eq == std::string::npos ? nullptr : removed_setting(key)) {
      warn_removed(where + ": " + key, why);
      continue;
    }
    const Setting* found = eq == std::string::npos ? nullptr : find_setting(key);
    if (!found) {
      std::string msg = where + ": '" + line + "' is not a setting: expected 'key = value' with key one of " +
                        kSettings[0].key + ", " + kSettings[1].key + ", " + kSettings[2].key +
                        ", ... (see hybridio config)";
      HIO_WARN("%s", msg.c_str());
      if (problems) problems->push_back(msg);
      continue;
    }
    apply(c, *found, trim(line.substr(eq + 1)), where + ": " + key, problems);
  }
}

// Every number-like setting within its row's limits (see clamp_engine_settings).
void clamp(Config& c) {
  const Config defaults;
  for (const Setting& s : kSettings) {
    if (!is_number(s.kind)) continue;
    uint64_t v = std::clamp(load_number(s, c), s.limits.min, s.limits.max);
    if (s.limits.pow2 && !hio_is_pow2(v)) v = load_number(s, defaults);
    store_number(s, c, v);
  }
}

}  // namespace

Config::Config() { hio_policy_config_defaults(&policy); }

std::vector<SettingInfo> list_settings() {
  const Config defaults;
  std::vector<SettingInfo> rows;
  for (const Setting& s : kSettings)
    rows.push_back({s.key, variable_name(s.key), s.kind, accepted_form(s), text_of(s, defaults), s.help});
  return rows;
}

bool get_setting(const Config& c, const std::string& key, std::string* value) {
  const Setting* s = find_setting(key);
  if (!s) return false;
  *value = text_of(*s, c);
  return true;
}

bool set_setting(Config* c, const std::string& key, const std::string& value) {
  const Setting* s = find_setting(key);
  return s && store_text(*s, *c, value);
}

void clamp_engine_settings(EngineSettings* engine) {
  Config c;
  c.engine = *engine;
  clamp(c);
  c.engine.read_ahead = 0;  // a removed setting (kRemovedSettings)
  *engine = c.engine;
}

EngineSettings clamped_engine_settings(const hio_engine_config& s) {
  EngineSettings e;
  static_cast<hio_engine_config&>(e) = s;
  clamp_engine_settings(&e);
  return e;
}

bool parse_mode(const std::string& text, hio_mode* out) {
  for (hio_mode m : kModes) {
    if (strcasecmp(text.c_str(), hio_mode_name(m)) == 0) {
      *out = m;
      return true;
    }
  }
  return false;
}

Config load_config(const EnvLookup& env, std::vector<std::string>* problems) {
  Config c;
  // The log level first, so that the other diagnostics honour it.
  for (const Setting& s : kSettings) {
    LogLevel parsed;
    const char* level = s.kind == Kind::kLogLevel ? env(variable_name(s.key).c_str()) : nullptr;
    if (level && parse_log_level(level, &parsed)) set_log_level(parsed);
  }
  if (const char* file = env("HYBRIDIO_CONFIG"); file && *file) load_file(c, file, problems);
  for (const Setting& s : kSettings) {
    std::string name = variable_name(s.key);
    if (const char* value = env(name.c_str())) apply(c, s, value, name, problems);
  }
  for (const auto& r : kRemovedSettings) {
    std::string name = variable_name(r[0]);
    if (env(name.c_str())) warn_removed(name, r[1]);
  }
  return c;
}

std::string describe_settings() {
  std::ostringstream out;
  for (const SettingInfo& s : list_settings())
    out << "  " << s.variable << "=<" << s.accepted << ">\n      " << s.help << " (default " << shown(s.default_value)
        << ")\n";
  out << "  HYBRIDIO_CONFIG=<file>\n      'key = value' lines with the keys above in lower case"
         " (e.g. write_threshold = 4M); the environment wins\n";
  return out.str();
}

}  // namespace hybridio
