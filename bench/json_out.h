// json_out.h - the bench reports' JSON, built in the order it is written:
// objects and arrays opened and closed in turn, keys kept in the order they
// are added, on an nlohmann::ordered_json document.  Numbers: an integral
// double below 2^53 is written as an integer, any other with 6 significant
// digits, a value that is not finite as null.  Strings are written as UTF-8
// (bytes that are not UTF-8 become U+FFFD).  Not thread-safe; one writer per
// document.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hybridio::bench {

class JsonWriter {
 public:
  JsonWriter() = default;
  JsonWriter(const JsonWriter&) = delete;  // holds pointers into its own document
  JsonWriter& operator=(const JsonWriter&) = delete;

  // Containers: with a key inside an object, without one inside an array
  // or at the top level.
  JsonWriter& begin_object(const char* key = nullptr);
  JsonWriter& end_object();
  JsonWriter& begin_array(const char* key = nullptr);
  JsonWriter& end_array();

  JsonWriter& field(const char* key, const std::string& v);
  JsonWriter& field(const char* key, const char* v) { return field(key, std::string(v)); }
  JsonWriter& field(const char* key, double v);
  JsonWriter& field(const char* key, uint64_t v);
  JsonWriter& field(const char* key, int v) { return field(key, static_cast<double>(v)); }
  JsonWriter& field(const char* key, unsigned v) { return field(key, static_cast<uint64_t>(v)); }
  JsonWriter& field_bool(const char* key, bool v);
  JsonWriter& field_null(const char* key);

  // Array elements.
  JsonWriter& value(const std::string& v);
  JsonWriter& value(double v);

  // The document, indented by 2, with a trailing newline.
  std::string str() const;

 private:
  // Adds `v` to the innermost open container (under `key` in an object);
  // returns where it now is.
  nlohmann::ordered_json& add(const char* key, nlohmann::ordered_json v);

  nlohmann::ordered_json doc_;
  std::vector<nlohmann::ordered_json*> open_;  // the containers open, outermost first
};

}  // namespace hybridio::bench
