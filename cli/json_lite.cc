// json_lite.cc - see json_lite.h.
#include "json_lite.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace hybridio::cli {
namespace {

struct Parser {
  const std::string& s;
  size_t i = 0;
  std::string error;

  void ws() {
    while (i < s.size() && isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  bool fail(const std::string& why) {
    if (error.empty()) error = why + " at offset " + std::to_string(i);
    return false;
  }
  bool string(std::string* out) {
    if (i >= s.size() || s[i] != '"') return fail("expected a string");
    ++i;
    while (i < s.size() && s[i] != '"') {
      if (s[i] == '\\' && i + 1 < s.size()) ++i;
      *out += s[i++];
    }
    if (i >= s.size()) return fail("unterminated string");
    ++i;
    return true;
  }
  bool value(JsonValue* v) {
    ws();
    if (i >= s.size()) return fail("unexpected end");
    if (s[i] == '{') return object(v);
    if (s[i] == '"') {
      v->kind = JsonValue::Kind::kString;
      return string(&v->text);
    }
    if (s[i] == '[') {  // kept verbatim
      int depth = 0;
      size_t start = i;
      do {
        if (s[i] == '[') ++depth;
        if (s[i] == ']') --depth;
        ++i;
      } while (i < s.size() && depth > 0);
      v->kind = JsonValue::Kind::kRaw;
      v->text = s.substr(start, i - start);
      return depth == 0 || fail("unterminated array");
    }
    char* end = nullptr;
    double d = strtod(s.c_str() + i, &end);
    if (end != s.c_str() + i) {
      v->kind = JsonValue::Kind::kNumber;
      v->number = d;
      i = static_cast<size_t>(end - s.c_str());
      return true;
    }
    for (const char* lit : {"true", "false", "null"}) {
      std::string l = lit;
      if (s.compare(i, l.size(), l) == 0) {
        v->kind = JsonValue::Kind::kRaw;
        v->text = l;
        i += l.size();
        return true;
      }
    }
    return fail("unexpected character");
  }
  bool object(JsonValue* v) {
    v->kind = JsonValue::Kind::kObject;
    ++i;  // '{'
    ws();
    if (i < s.size() && s[i] == '}') {
      ++i;
      return true;
    }
    while (true) {
      ws();
      std::string key;
      if (!string(&key)) return false;
      ws();
      if (i >= s.size() || s[i] != ':') return fail("expected ':'");
      ++i;
      if (!value(&v->members[key])) return false;
      ws();
      if (i < s.size() && s[i] == ',') {
        ++i;
        continue;
      }
      if (i < s.size() && s[i] == '}') {
        ++i;
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }
};

std::string quote(const std::string& t) {
  std::string out = "\"";
  for (char c : t) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

bool parse_json(const std::string& text, JsonValue* out, std::string* error) {
  Parser p{text, 0, {}};
  p.ws();
  bool ok = p.i < text.size() && text[p.i] == '{' ? p.object(out) : p.fail("expected an object");
  if (!ok && error) *error = p.error;
  return ok;
}

void json_accumulate(JsonValue& into, const JsonValue& add) {
  if (add.kind == JsonValue::Kind::kNumber && into.kind == JsonValue::Kind::kNumber) {
    into.number += add.number;
    return;
  }
  if (add.kind != JsonValue::Kind::kObject || into.kind != JsonValue::Kind::kObject) return;
  for (const auto& [key, value] : add.members) {
    auto it = into.members.find(key);
    if (it == into.members.end())
      into.members[key] = value;
    else
      json_accumulate(it->second, value);
  }
}

std::string to_json(const JsonValue& v, int indent) {
  switch (v.kind) {
    case JsonValue::Kind::kNumber: {
      char buf[64];
      if (std::fabs(v.number) < 9e15 && v.number == std::floor(v.number))
        snprintf(buf, sizeof buf, "%.0f", v.number);
      else
        snprintf(buf, sizeof buf, "%.6g", v.number);
      return buf;
    }
    case JsonValue::Kind::kString: return quote(v.text);
    case JsonValue::Kind::kRaw: return v.text;
    case JsonValue::Kind::kObject: break;
  }
  std::string pad(static_cast<size_t>(indent + 2), ' ');
  std::string out = "{";
  bool first = true;
  for (const auto& [key, value] : v.members) {
    out += (first ? "\n" : ",\n") + pad + quote(key) + ": " + to_json(value, indent + 2);
    first = false;
  }
  return out + (first ? "}" : "\n" + std::string(static_cast<size_t>(indent), ' ') + "}");
}

double json_number(const JsonValue& v, const std::string& dotted_path) {
  const JsonValue* cur = &v;
  size_t start = 0;
  while (start <= dotted_path.size()) {
    size_t dot = dotted_path.find('.', start);
    std::string key = dotted_path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    auto it = cur->members.find(key);
    if (it == cur->members.end()) return 0;
    cur = &it->second;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return cur->kind == JsonValue::Kind::kNumber ? cur->number : 0;
}

}  // namespace hybridio::cli
