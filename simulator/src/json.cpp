/* json: recursive-descent JSON reader. */
#include "json.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace hiosim {
namespace {

struct Parser {
  const std::string& t;
  size_t i = 0;

  [[noreturn]] void fail(const std::string& what) const
  {
    throw JsonError(what + " at byte " + std::to_string(i));
  }
  void ws()
  {
    while (i < t.size() && (t[i] == ' ' || t[i] == '\n' || t[i] == '\r' || t[i] == '\t'))
      i++;
  }
  bool lit(const char* w)
  {
    size_t n = std::char_traits<char>::length(w);
    if (t.compare(i, n, w) == 0) {
      i += n;
      return true;
    }
    return false;
  }
  std::string str()
  {
    std::string out;
    i++; // opening quote
    while (i < t.size() && t[i] != '"') {
      char c = t[i++];
      if (c == '\\') {
        if (i >= t.size())
          fail("unterminated escape");
        char e = t[i++];
        switch (e) {
          case 'n':
            out += '\n';
            break;
          case 't':
            out += '\t';
            break;
          case 'r':
            out += '\r';
            break;
          case 'b':
            out += '\b';
            break;
          case 'f':
            out += '\f';
            break;
          case 'u': {
            if (i + 4 > t.size())
              fail("bad \\u escape");
            long cp = std::strtol(t.substr(i, 4).c_str(), nullptr, 16);
            i += 4;
            out += cp < 0x80 ? static_cast<char>(cp) : '?';
            break;
          }
          default:
            out += e;
        }
      } else {
        out += c;
      }
    }
    if (i >= t.size())
      fail("unterminated string");
    i++;
    return out;
  }
  Json value()
  {
    ws();
    if (i >= t.size())
      fail("unexpected end of input");
    Json v;
    char c = t[i];
    if (c == '{') {
      v.type = Json::Type::Object;
      i++;
      ws();
      if (i < t.size() && t[i] == '}') {
        i++;
        return v;
      }
      while (true) {
        ws();
        if (i >= t.size() || t[i] != '"')
          fail("expected a key");
        std::string k = str();
        ws();
        if (i >= t.size() || t[i] != ':')
          fail("expected ':'");
        i++;
        v.o[k] = value();
        ws();
        if (i < t.size() && t[i] == ',') {
          i++;
          continue;
        }
        if (i < t.size() && t[i] == '}') {
          i++;
          return v;
        }
        fail("expected ',' or '}'");
      }
    }
    if (c == '[') {
      v.type = Json::Type::Array;
      i++;
      ws();
      if (i < t.size() && t[i] == ']') {
        i++;
        return v;
      }
      while (true) {
        v.a.push_back(value());
        ws();
        if (i < t.size() && t[i] == ',') {
          i++;
          continue;
        }
        if (i < t.size() && t[i] == ']') {
          i++;
          return v;
        }
        fail("expected ',' or ']'");
      }
    }
    if (c == '"') {
      v.type = Json::Type::String;
      v.s    = str();
      return v;
    }
    if (lit("true")) {
      v.type = Json::Type::Bool;
      v.b    = true;
      return v;
    }
    if (lit("false")) {
      v.type = Json::Type::Bool;
      return v;
    }
    if (lit("null"))
      return v;
    char* end = nullptr;
    v.n = std::strtod(t.c_str() + i, &end);
    if (end == t.c_str() + i)
      fail("unexpected character");
    i = static_cast<size_t>(end - t.c_str());
    v.type = Json::Type::Number;
    return v;
  }
};

} // namespace

const Json& Json::at(const std::string& k) const
{
  if (type != Type::Object)
    throw JsonError("expected an object holding '" + k + "'");
  auto it = o.find(k);
  if (it == o.end())
    throw JsonError("missing key '" + k + "'");
  return it->second;
}

Json parse_json(const std::string& text)
{
  Parser p{text};
  Json v = p.value();
  p.ws();
  if (p.i != text.size())
    p.fail("trailing characters");
  return v;
}

Json read_json_file(const std::string& path)
{
  std::ifstream in(path);
  if (not in)
    throw JsonError("cannot open '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return parse_json(ss.str());
  } catch (const JsonError& e) {
    throw JsonError(path + ": " + e.what());
  }
}

} // namespace hiosim
