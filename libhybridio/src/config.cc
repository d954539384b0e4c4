// config.cc - see config.h.  Every setting is declared once in kSettings,
// which drives the environment, the config file and the help text.
#include "config.h"

#include <strings.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace hybridio {
namespace {

enum class Kind { kSize, kPercent, kMode, kPath, kLogLevel, kBool, kDepth };

struct Setting {
  const char* key;  // config-file key; the variable is HYBRIDIO_<KEY upper>
  Kind kind;
  const char* help;
  // Applies a parsed value; false if the value is out of range for this setting.
  bool (*apply)(Config& c, const std::string& text);
};

bool set_size(uint64_t* field, const std::string& text, uint64_t min) {
  uint64_t v;
  if (!parse_size(text, &v) || v < min) return false;
  *field = v;
  return true;
}

bool set_percent(uint32_t* field, const std::string& text) {
  uint64_t v;
  if (!parse_size(text, &v) || v > 100 || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  *field = static_cast<uint32_t>(v);
  return true;
}

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

const Setting kSettings[] = {
    {"policy", Kind::kMode, "routing policy",
     [](Config& c, const std::string& t) { return parse_mode(t, &c.policy.mode); }},
    {"write_threshold", Kind::kSize, "hybrid: writes of at least this size go direct",
     [](Config& c, const std::string& t) { return set_size(&c.policy.write_threshold, t, 1); }},
    {"read_threshold", Kind::kSize, "hybrid: reads of at least this size go direct",
     [](Config& c, const std::string& t) { return set_size(&c.policy.read_threshold, t, 1); }},
    {"sync_write_threshold", Kind::kSize, "hybrid: O_SYNC/O_DSYNC writes of at least this size go direct",
     [](Config& c, const std::string& t) { return set_size(&c.policy.sync_write_threshold, t, 1); }},
    {"stream_threshold", Kind::kSize, "hybrid: writes of a sequential stream of at least this size go direct",
     [](Config& c, const std::string& t) { return set_size(&c.policy.stream_threshold, t, 1); }},
    {"dontcache_threshold", Kind::kSize, "hybrid: undirectable requests of at least this size go uncached",
     [](Config& c, const std::string& t) { return set_size(&c.policy.dontcache_threshold, t, 1); }},
    {"pressure_high", Kind::kPercent, "memory pressure (0-100) that lowers the thresholds",
     [](Config& c, const std::string& t) { return set_percent(&c.policy.pressure_high, t); }},
    {"cached_percent", Kind::kPercent, "reads stay buffered when this much of the range is cached",
     [](Config& c, const std::string& t) { return set_percent(&c.policy.cached_percent, t); }},
    {"dirty_percent", Kind::kPercent, "writes stay buffered when this much of the range is dirty",
     [](Config& c, const std::string& t) { return set_percent(&c.policy.dirty_percent, t); }},
    {"min_body_percent", Kind::kPercent, "a split must leave this much of the request direct",
     [](Config& c, const std::string& t) { return set_percent(&c.policy.min_body_percent, t); }},
    {"bounce_size", Kind::kSize, "bounce buffer chunk (power of two, at least 64K)",
     [](Config& c, const std::string& t) {
       uint64_t v;
       if (!parse_size(t, &v) || v < (64 << 10) || (v & (v - 1)) != 0) return false;
       c.bounce_size = v;
       return true;
     }},
    {"queue_depth", Kind::kDepth, "chunks of one large direct request in flight together (io_uring)",
     [](Config& c, const std::string& t) {
       uint64_t v;
       if (!parse_size(t, &v) || v < 1 || v > 256 || t.find_first_not_of("0123456789") != std::string::npos)
         return false;
       c.queue_depth = static_cast<uint32_t>(v);
       return true;
     }},
    {"chunk_size", Kind::kSize, "bytes per chunk of a parallel direct request (power of two, 64K-64M)",
     [](Config& c, const std::string& t) {
       uint64_t v;
       if (!parse_size(t, &v) || v < (64 << 10) || v > (64 << 20) || (v & (v - 1)) != 0) return false;
       c.chunk_size = v;
       return true;
     }},
    {"uring", Kind::kBool, "submit direct chunks through io_uring (off: synchronously)",
     [](Config& c, const std::string& t) { return parse_bool(t, &c.uring); }},
    {"write_behind", Kind::kBool, "direct writes return once staged; errors are reported at the next fsync or close",
     [](Config& c, const std::string& t) { return parse_bool(t, &c.write_behind); }},
    {"write_behind_limit", Kind::kSize, "staging memory for write-behind (at least 1M)",
     [](Config& c, const std::string& t) { return set_size(&c.write_behind_limit, t, 1 << 20); }},
    {"read_ahead", Kind::kSize,
     "bytes read ahead of a sequential direct read stream (off, on = 32M, at most 1G); only for files nobody writes meanwhile",
     [](Config& c, const std::string& t) {
       bool on;
       if (parse_bool(t, &on)) return c.read_ahead = on ? 32 << 20 : 0, true;
       uint64_t v;
       if (!parse_size(t, &v) || v > (1ULL << 30)) return false;
       c.read_ahead = v;
       return true;
     }},
    {"dontcache", Kind::kBool, "use RWF_DONTCACHE where supported",
     [](Config& c, const std::string& t) { return parse_bool(t, &c.dontcache); }},
    {"stats", Kind::kPath, "write JSON counters to this file at exit",
     [](Config& c, const std::string& t) { c.stats_path = t; return !t.empty(); }},
    {"trace", Kind::kPath, "write one line per decision to this file",
     [](Config& c, const std::string& t) { c.trace_path = t; return !t.empty(); }},
    {"log", Kind::kLogLevel, "diagnostics on stderr",
     [](Config& c, const std::string& t) { return parse_log_level(t.c_str(), &c.log_level); }},
};

const char* accepted_form(Kind kind) {
  switch (kind) {
    case Kind::kSize: return "a byte count with optional K/M/G suffix, e.g. 4M";
    case Kind::kPercent: return "an integer from 0 to 100";
    case Kind::kMode: return "hybrid|buffered|direct|dontcache";
    case Kind::kPath: return "a file path";
    case Kind::kLogLevel: return "error|warn|info|debug";
    case Kind::kBool: return "on|off";
    case Kind::kDepth: return "an integer from 1 to 256";
  }
  return "?";
}

std::string variable_name(const char* key) {
  std::string name = "HYBRIDIO_";
  for (const char* p = key; *p; ++p) name += static_cast<char>(toupper(static_cast<unsigned char>(*p)));
  return name;
}

std::string current_value(const Config& c, const Setting& s) {
  const std::string key = s.key;
  if (key == "policy") return hio_mode_name(c.policy.mode);
  if (key == "write_threshold") return format_size(c.policy.write_threshold);
  if (key == "read_threshold") return format_size(c.policy.read_threshold);
  if (key == "sync_write_threshold") return format_size(c.policy.sync_write_threshold);
  if (key == "stream_threshold") return format_size(c.policy.stream_threshold);
  if (key == "dontcache_threshold") return format_size(c.policy.dontcache_threshold);
  if (key == "pressure_high") return std::to_string(c.policy.pressure_high);
  if (key == "cached_percent") return std::to_string(c.policy.cached_percent);
  if (key == "dirty_percent") return std::to_string(c.policy.dirty_percent);
  if (key == "min_body_percent") return std::to_string(c.policy.min_body_percent);
  if (key == "bounce_size") return format_size(c.bounce_size);
  if (key == "dontcache") return c.dontcache ? "on" : "off";
  if (key == "queue_depth") return std::to_string(c.queue_depth);
  if (key == "chunk_size") return format_size(c.chunk_size);
  if (key == "uring") return c.uring ? "on" : "off";
  if (key == "write_behind") return c.write_behind ? "on" : "off";
  if (key == "write_behind_limit") return format_size(c.write_behind_limit);
  if (key == "read_ahead") return c.read_ahead ? format_size(c.read_ahead) : "off";
  if (key == "log") return "warn";
  return "(unset)";
}

void apply(Config& c, const Setting& s, const std::string& value, const std::string& origin,
           std::vector<std::string>* problems) {
  Config candidate = c;
  if (s.apply(candidate, value)) {
    c = candidate;
    return;
  }
  std::string msg = origin + "='" + value + "' is not valid: expected " + accepted_form(s.kind) +
                    "; keeping " + current_value(c, s);
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
    const Setting* found = nullptr;
    std::string key = trim(line.substr(0, eq));
    for (const Setting& s : kSettings)
      if (key == s.key) found = &s;
    if (eq == std::string::npos || !found) {
      std::string msg = where + ": '" + line + "' is not a setting: expected 'key = value' with key one of policy, write_threshold, read_threshold, ... (see hybridio --help-config)";
      HIO_WARN("%s", msg.c_str());
      if (problems) problems->push_back(msg);
      continue;
    }
    apply(c, *found, trim(line.substr(eq + 1)), where + ": " + key, problems);
  }
}

}  // namespace

Config::Config() { hio_policy_config_defaults(&policy); }

bool parse_size(const std::string& text, uint64_t* out) {
  const char* p = text.c_str();
  if (!isdigit(static_cast<unsigned char>(*p))) return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = strtoull(p, &end, 10);
  if (errno == ERANGE) return false;
  std::string suffix = end;
  unsigned shift = 0;
  if (suffix.empty() || suffix == "B" || suffix == "b") {
    shift = 0;
  } else {
    switch (toupper(static_cast<unsigned char>(suffix[0]))) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      default: return false;
    }
    std::string rest = suffix.substr(1);
    if (!(rest.empty() || rest == "B" || rest == "iB" || rest == "ib" || rest == "b")) return false;
  }
  if (shift && v > (~0ULL >> shift)) return false;
  *out = static_cast<uint64_t>(v) << shift;
  return true;
}

std::string format_size(uint64_t bytes) {
  static const char kUnits[] = {'T', 'G', 'M', 'K'};
  for (int i = 0; i < 4; ++i) {
    unsigned shift = 40 - 10 * i;
    if (bytes != 0 && bytes % (1ULL << shift) == 0) return std::to_string(bytes >> shift) + kUnits[i];
  }
  return std::to_string(bytes);
}

bool parse_mode(const std::string& text, hio_mode* out) {
  for (hio_mode m : {HIO_MODE_HYBRID, HIO_MODE_BUFFERED, HIO_MODE_DIRECT, HIO_MODE_DONTCACHE}) {
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
  if (const char* level = env("HYBRIDIO_LOG")) {
    LogLevel parsed;
    if (parse_log_level(level, &parsed)) set_log_level(parsed);
  }
  if (const char* file = env("HYBRIDIO_CONFIG"); file && *file) load_file(c, file, problems);
  for (const Setting& s : kSettings) {
    std::string name = variable_name(s.key);
    if (const char* value = env(name.c_str())) apply(c, s, value, name, problems);
  }
  return c;
}

std::string describe_settings() {
  std::ostringstream out;
  Config defaults;
  for (const Setting& s : kSettings) {
    out << "  " << variable_name(s.key) << "=<" << accepted_form(s.kind) << ">\n      " << s.help
        << " (default " << current_value(defaults, s) << ")\n";
  }
  out << "  HYBRIDIO_CONFIG=<file>\n      'key = value' lines with the keys above in lower case"
         " (e.g. write_threshold = 4M); the environment wins\n";
  return out.str();
}

}  // namespace hybridio
