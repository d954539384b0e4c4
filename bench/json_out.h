// json_out.h - a streaming JSON writer for the bench reports: objects and
// arrays written in order (keys keep the order they are written in),
// strings escaped, non-finite numbers written as null.  Not thread-safe;
// one writer per document.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hybridio::bench {

class JsonWriter {
 public:
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

  const std::string& str() const { return out_; }

  static std::string quote(const std::string& s);

 private:
  void comma_and_key(const char* key);
  std::string out_;
  std::vector<bool> first_;  // per open container: nothing written yet
};

}  // namespace hybridio::bench
