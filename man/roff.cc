// roff.cc - see roff.h.
#include "roff.h"

#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

namespace hybridio::man {

namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::string text(const std::string& s) {
  std::string out;
  bool italic = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool line_start = out.empty() || out.back() == '\n';
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      bool inside_word = i > 0 && word_char(s[i - 1]) && i + 1 < s.size() && word_char(s[i + 1]);
      out += inside_word ? "-" : "\\-";
    } else if (c == '`') {
      out += italic ? "\\fP" : "\\fI";
      italic = !italic;
    } else {
      out += c;
    }
  }
  if (italic) out += "\\fP";
  return out;
}

std::string word(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
  }
  return out;
}

bool fill_template(const std::string& tmpl, const std::map<std::string, std::string>& values, std::string* out,
                   std::string* error) {
  std::set<std::string> used;
  std::string result;
  size_t at = 0;
  while (at < tmpl.size()) {
    size_t open = tmpl.find('@', at);
    if (open == std::string::npos) {
      result += tmpl.substr(at);
      break;
    }
    size_t close = tmpl.find('@', open + 1);
    if (close == std::string::npos) {
      *error = "unmatched @ in template";
      return false;
    }
    std::string name = tmpl.substr(open + 1, close - open - 1);
    auto v = values.find(name);
    if (v == values.end()) {
      *error = "template names @" + name + "@, which has no value";
      return false;
    }
    used.insert(name);
    result += tmpl.substr(at, open - at);
    bool whole_line = (open == 0 || tmpl[open - 1] == '\n') && close + 1 < tmpl.size() && tmpl[close + 1] == '\n';
    result += v->second;
    at = close + 1 + (whole_line ? 1 : 0);  // a block brings its own newline
  }
  for (const auto& [name, value] : values)
    if (!used.count(name)) {
      *error = "template has no place for @" + name + "@";
      return false;
    }
  *out = result;
  return true;
}

bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return true;
}

bool write_file(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::trunc);
  f << data;
  f.close();
  return static_cast<bool>(f);
}

}  // namespace hybridio::man
