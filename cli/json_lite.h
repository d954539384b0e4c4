// json_lite.h - just enough JSON for the project's own documents: parse
// objects of numbers, strings and nested objects (arrays are kept as raw
// text), add documents together, and write them back.  Not a general JSON
// library: it reads what libhybridio writes.
#pragma once

#include <map>
#include <memory>
#include <string>

namespace hybridio::cli {

struct JsonValue {
  enum class Kind { kNumber, kString, kObject, kRaw } kind = Kind::kObject;
  double number = 0;
  std::string text;  // string contents, or raw text of an array/literal
  std::map<std::string, JsonValue> members;
};

// Parses `text`; false (with a reason in *error) on malformed input.
bool parse_json(const std::string& text, JsonValue* out, std::string* error);

// Adds every number of `add` into `into` (same paths), creating missing
// members; strings and raw values keep the first document's.
void json_accumulate(JsonValue& into, const JsonValue& add);

// Writes a value as indented JSON.
std::string to_json(const JsonValue& v, int indent = 0);

// The number at a dotted path ("write.direct.bytes"), or 0.
double json_number(const JsonValue& v, const std::string& dotted_path);

}  // namespace hybridio::cli
