// json_out.cc - see json_out.h.
#include "json_out.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace hybridio::bench {
namespace {

using ojson = nlohmann::ordered_json;

ojson number(double v) {
  if (!std::isfinite(v)) return nullptr;
  if (v == std::floor(v) && std::fabs(v) < 9e15) return static_cast<int64_t>(v);
  char text[32];
  snprintf(text, sizeof text, "%.6g", v);
  return strtod(text, nullptr);
}

}  // namespace

ojson& JsonWriter::add(const char* key, ojson v) {
  if (open_.empty()) {
    doc_ = std::move(v);
    return doc_;
  }
  ojson& container = *open_.back();
  if (container.is_array()) {
    container.push_back(std::move(v));
    return container.back();
  }
  return container[key ? key : ""] = std::move(v);
}

JsonWriter& JsonWriter::begin_object(const char* key) {
  open_.push_back(&add(key, ojson::object()));
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  open_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::begin_array(const char* key) {
  open_.push_back(&add(key, ojson::array()));
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  open_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::field(const char* key, const std::string& v) {
  add(key, v);
  return *this;
}

JsonWriter& JsonWriter::field(const char* key, double v) {
  add(key, number(v));
  return *this;
}

JsonWriter& JsonWriter::field(const char* key, uint64_t v) {
  add(key, v);
  return *this;
}

JsonWriter& JsonWriter::field_bool(const char* key, bool v) {
  add(key, v);
  return *this;
}

JsonWriter& JsonWriter::field_null(const char* key) {
  add(key, nullptr);
  return *this;
}

JsonWriter& JsonWriter::value(const std::string& v) { return field(nullptr, v); }
JsonWriter& JsonWriter::value(double v) { return field(nullptr, v); }

std::string JsonWriter::str() const { return doc_.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n"; }

}  // namespace hybridio::bench
