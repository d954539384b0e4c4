// option_table.cc - see option_table.h.
#include "option_table.h"

#include <cerrno>
#include <cstdlib>

#include "hybridio_internal/settings_text.h"

namespace hybridio::bench {

std::string human_value(const OptValue& v) {
  switch (v.kind) {
    case OptKind::kSize: return v.number < 0 ? "" : internal::format_size(static_cast<uint64_t>(v.number));
    case OptKind::kNumber: {
      char b[32];
      snprintf(b, sizeof b, "%g", v.number);
      return b;
    }
    case OptKind::kText: return v.text;
    case OptKind::kFlag: return v.flag ? "1" : "0";
    case OptKind::kList: {
      std::string s;
      for (const auto& e : v.list) s += (s.empty() ? "" : ",") + e;
      return s;
    }
  }
  return "";
}

void json_value(JsonWriter& w, const char* key, const OptValue& v) {
  switch (v.kind) {
    case OptKind::kSize:
      if (v.number < 0)
        w.field_null(key);
      else
        w.field(key, static_cast<uint64_t>(v.number));
      break;
    case OptKind::kNumber: w.field(key, v.number); break;
    case OptKind::kText: w.field(key, v.text); break;
    case OptKind::kFlag: w.field_bool(key, v.flag); break;
    case OptKind::kList:
      w.begin_array(key);
      for (const auto& e : v.list) w.value(e);
      w.end_array();
      break;
  }
}

bool parse_flag(const std::string& t, bool* out) {
  if (t == "1" || t == "true" || t == "on" || t == "yes" || t.empty()) {
    *out = true;
    return true;
  }
  if (t == "0" || t == "false" || t == "off" || t == "no") {
    *out = false;
    return true;
  }
  return false;
}

bool parse_count(const std::string& t, unsigned long lo, unsigned long hi, unsigned* out) {
  if (t.empty() || t[0] == '-') return false;
  char* end;
  errno = 0;
  unsigned long n = strtoul(t.c_str(), &end, 10);
  if (*end != '\0' || errno || n < lo || n > hi) return false;
  *out = static_cast<unsigned>(n);
  return true;
}

}  // namespace hybridio::bench
