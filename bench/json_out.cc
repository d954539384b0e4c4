// json_out.cc - see json_out.h.
#include "json_out.h"

#include <cmath>
#include <cstdio>

namespace hybridio::bench {

std::string JsonWriter::quote(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      case '\r': o += "\\r"; break;
      default:
        if (c < 0x20) {
          char b[8];
          snprintf(b, sizeof b, "\\u%04x", c);
          o += b;
        } else {
          o += static_cast<char>(c);
        }
    }
  }
  return o + "\"";
}

void JsonWriter::comma_and_key(const char* key) {
  if (!first_.empty()) {
    if (!first_.back()) out_ += ",";
    first_.back() = false;
    out_ += "\n" + std::string(2 * first_.size(), ' ');
  }
  if (key) out_ += quote(key) + ": ";
}

JsonWriter& JsonWriter::begin_object(const char* key) {
  comma_and_key(key);
  out_ += "{";
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  bool empty = first_.back();
  first_.pop_back();
  if (!empty) out_ += "\n" + std::string(2 * first_.size(), ' ');
  out_ += "}";
  if (first_.empty()) out_ += "\n";
  return *this;
}

JsonWriter& JsonWriter::begin_array(const char* key) {
  comma_and_key(key);
  out_ += "[";
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  bool empty = first_.back();
  first_.pop_back();
  if (!empty) out_ += "\n" + std::string(2 * first_.size(), ' ');
  out_ += "]";
  return *this;
}

JsonWriter& JsonWriter::field(const char* key, const std::string& v) {
  comma_and_key(key);
  out_ += quote(v);
  return *this;
}

static std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  char b[40];
  if (v == std::floor(v) && std::fabs(v) < 9e15)
    snprintf(b, sizeof b, "%.0f", v);
  else
    snprintf(b, sizeof b, "%.6g", v);
  return b;
}

JsonWriter& JsonWriter::field(const char* key, double v) {
  comma_and_key(key);
  out_ += number(v);
  return *this;
}

JsonWriter& JsonWriter::field(const char* key, uint64_t v) {
  comma_and_key(key);
  out_ += std::to_string(v);
  return *this;
}

JsonWriter& JsonWriter::field_bool(const char* key, bool v) {
  comma_and_key(key);
  out_ += v ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::field_null(const char* key) {
  comma_and_key(key);
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::value(const std::string& v) { return field(nullptr, v); }
JsonWriter& JsonWriter::value(double v) { return field(nullptr, v); }

}  // namespace hybridio::bench
