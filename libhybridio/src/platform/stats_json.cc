// stats_json.cc - see stats_json.h.
#include "platform/stats_json.h"

#include <cctype>
#include <cstring>
#include <sstream>
#include <utility>
#include <vector>

#include "platform/stats.h"

namespace hybridio {
namespace {

const char* const kOps[2] = {"read", "write"};

// ---- writing ----------------------------------------------------------------

// The scalar counters, one line per group: `"group": {"a": 1, "b": 2}` for
// dotted paths, `"name": 3` for the others, in table order.
void write_scalars(std::ostringstream& j, const hio_stats& s) {
  std::string open_group;
  for (size_t i = 0; i < Stats::kScalarCounterCount; ++i) {
    const Stats::ScalarCounter& c = Stats::kScalarCounters[i];
    const char* dot = strchr(c.json_path, '.');
    const std::string group = dot ? std::string(c.json_path, dot) : std::string();
    const char* name = dot ? dot + 1 : c.json_path;
    if (group != open_group && !open_group.empty()) j << "},\n";
    if (group.empty()) {
      j << "  \"" << name << "\": " << s.*c.reported << ",\n";
    } else {
      j << (group == open_group ? ", " : "  \"" + group + "\": {") << "\"" << name << "\": " << s.*c.reported;
    }
    open_group = group;
  }
  if (!open_group.empty()) j << "},\n";
}

// ---- reading ----------------------------------------------------------------

// A reader for the documents stats_json() writes: nested objects whose
// leaves are unsigned integers or strings.  Every number leaf is reported
// with its dotted path.
class DocumentReader {
 public:
  explicit DocumentReader(const std::string& text) : p_(text.c_str()), end_(p_ + text.size()) {}

  bool read(std::vector<std::pair<std::string, uint64_t>>* numbers, std::string* schema) {
    numbers_ = numbers;
    schema_ = schema;
    if (!object("")) return false;
    skip_space();
    return p_ == end_;
  }

 private:
  void skip_space() {
    while (p_ < end_ && isspace(static_cast<unsigned char>(*p_))) ++p_;
  }
  bool expect(char c) {
    skip_space();
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }
  bool string(std::string* out) {
    if (!expect('"')) return false;
    out->clear();
    while (p_ < end_ && *p_ != '"') {
      if (*p_ == '\\') return false;  // never written by stats_json()
      out->push_back(*p_++);
    }
    return expect('"');
  }
  bool number(uint64_t* out) {
    if (p_ == end_ || !isdigit(static_cast<unsigned char>(*p_))) return false;
    uint64_t v = 0;
    while (p_ < end_ && isdigit(static_cast<unsigned char>(*p_))) {
      const uint64_t digit = static_cast<uint64_t>(*p_++ - '0');
      if (v > (UINT64_MAX - digit) / 10) return false;
      v = v * 10 + digit;
    }
    *out = v;
    return true;
  }
  bool object(const std::string& path) {
    if (!expect('{')) return false;
    skip_space();
    if (p_ < end_ && *p_ == '}') return ++p_, true;
    do {
      std::string key;
      if (!string(&key) || !expect(':')) return false;
      const std::string child = path.empty() ? key : path + "." + key;
      skip_space();
      if (p_ == end_) return false;
      if (*p_ == '{') {
        if (!object(child)) return false;
      } else if (*p_ == '"') {
        std::string value;
        if (!string(&value)) return false;
        if (child == "schema") *schema_ = value;
      } else {
        uint64_t value;
        if (!number(&value)) return false;
        numbers_->emplace_back(child, value);
      }
    } while (expect(','));
    return expect('}');
  }

  const char* p_;
  const char* end_;
  std::vector<std::pair<std::string, uint64_t>>* numbers_ = nullptr;
  std::string* schema_ = nullptr;
};

// The hio_stats counter a dotted path names, or nullptr.
uint64_t* counter_at(hio_stats* s, const std::string& path) {
  for (size_t i = 0; i < Stats::kScalarCounterCount; ++i)
    if (path == Stats::kScalarCounters[i].json_path) return &(s->*Stats::kScalarCounters[i].reported);
  for (int op = 0; op < 2; ++op)
    for (int p = 0; p < HIO_PATH_COUNT; ++p) {
      const std::string base = std::string(kOps[op]) + "." + hio_path_name(static_cast<hio_path>(p));
      if (path == base + ".requests") return &s->requests[op][p];
      if (path == base + ".bytes") return &s->bytes[op][p];
    }
  for (int r = 0; r < HIO_RULE_COUNT; ++r) {
    const hio_rule rule = static_cast<hio_rule>(r);
    const std::string base = std::string("rules.") + hio_rule_name(rule);
    if (path == base + ".requests") return rule_requests_slot(s, rule);
    if (path == base + ".bytes") return rule_bytes_slot(s, rule);
  }
  return nullptr;
}

}  // namespace

std::string stats_json(const hio_stats& s, uint64_t processes, const hio_policy_config& policy) {
  std::ostringstream j;
  j << "{\n  \"schema\": \"" << HYBRIDIO_STATS_SCHEMA << "\",\n";
  j << "  \"policy\": {\"mode\": \"" << hio_mode_name(policy.mode)
    << "\", \"write_threshold\": " << policy.write_threshold
    << ", \"read_threshold\": " << policy.read_threshold
    << ", \"sync_write_threshold\": " << policy.sync_write_threshold
    << ", \"stream_threshold\": " << policy.stream_threshold
    << ", \"dontcache_threshold\": " << policy.dontcache_threshold << "},\n";
  for (int op = 0; op < 2; ++op) {
    j << "  \"" << kOps[op] << "\": {";
    for (int p = 0; p < HIO_PATH_COUNT; ++p) {
      j << (p ? ", " : "") << "\"" << hio_path_name(static_cast<hio_path>(p))
        << "\": {\"requests\": " << s.requests[op][p] << ", \"bytes\": " << s.bytes[op][p] << "}";
    }
    j << "},\n";
  }
  j << "  \"rules\": {";
  bool first = true;
  for (int r = 0; r < HIO_RULE_COUNT; ++r) {
    const hio_rule rule = static_cast<hio_rule>(r);
    if (!hio_stats_rule_requests(&s, rule)) continue;
    j << (first ? "" : ", ") << "\"" << hio_rule_name(rule) << "\": {\"requests\": "
      << hio_stats_rule_requests(&s, rule) << ", \"bytes\": " << hio_stats_rule_bytes(&s, rule) << "}";
    first = false;
  }
  j << "},\n";
  write_scalars(j, s);
  j << "  \"processes\": " << processes << "\n}\n";
  return j.str();
}

bool add_stats_json(const std::string& text, hio_stats* sum, uint64_t* processes) {
  std::vector<std::pair<std::string, uint64_t>> numbers;
  std::string schema;
  if (!DocumentReader(text).read(&numbers, &schema) || schema != HYBRIDIO_STATS_SCHEMA) return false;
  uint64_t their_processes = 1;
  for (const auto& [path, value] : numbers) {
    if (path == "processes")
      their_processes = value;
    else if (uint64_t* counter = counter_at(sum, path))
      *counter += value;
  }
  *processes += their_processes;
  return true;
}

}  // namespace hybridio
