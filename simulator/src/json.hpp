/* json: a small JSON reader, enough for hybridio-bench/1 documents and the simulator's own
 * output. parse_json throws JsonError with the byte offset of the problem. */
#pragma once
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace hiosim {

struct JsonError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Json {
  enum class Type { Null, Bool, Number, String, Array, Object } type = Type::Null;
  bool b      = false;
  double n    = 0;
  std::string s;
  std::vector<Json> a;
  std::map<std::string, Json> o;

  bool has(const std::string& k) const { return type == Type::Object && o.count(k) != 0; }
  const Json& at(const std::string& k) const; // throws JsonError naming the key
};

Json parse_json(const std::string& text);
Json read_json_file(const std::string& path);

} // namespace hiosim
