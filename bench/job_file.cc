// job_file.cc - see job_file.h.
#include "job_file.h"

#include <fstream>
#include <sstream>

namespace hybridio::bench {
namespace {
std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}
}  // namespace

bool parse_job_text(const std::string& text, const std::string& origin, std::vector<JobFileSection>* sections,
                    std::string* error) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  sections->clear();
  while (std::getline(in, line)) {
    ++n;
    size_t hash = line.find_first_of("#;");
    if (hash != std::string::npos) line.resize(hash);
    line = trim(line);
    if (line.empty()) continue;
    std::string where = origin + ":" + std::to_string(n) + ": ";
    if (line.front() == '[') {
      if (line.back() != ']' || line.size() < 3) {
        *error = where + "a section header is [name]";
        return false;
      }
      std::string name = trim(line.substr(1, line.size() - 2));
      for (const auto& s : *sections)
        if (s.name == name) {
          *error = where + "section [" + name + "] appears twice";
          return false;
        }
      sections->push_back({name, {}});
      continue;
    }
    if (sections->empty()) {
      *error = where + "option outside a section (start with [global] or [jobname])";
      return false;
    }
    size_t eq = line.find('=');
    JobFileSection::Entry e;
    e.line = n;
    e.has_value = eq != std::string::npos;
    e.key = trim(e.has_value ? line.substr(0, eq) : line);
    e.value = e.has_value ? trim(line.substr(eq + 1)) : "";
    if (e.key.rfind("--", 0) == 0) e.key = e.key.substr(2);
    if (e.key.empty()) {
      *error = where + "expected 'option = value'";
      return false;
    }
    sections->back().entries.push_back(e);
  }
  return true;
}

bool read_job_file(const std::string& path, std::vector<JobFileSection>* sections, std::string* error) {
  std::ifstream f(path);
  if (!f) {
    *error = "cannot read job file " + path;
    return false;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  if (!parse_job_text(ss.str(), path, sections, error)) return false;
  bool any_job = false;
  for (const auto& s : *sections) any_job |= s.name != "global";
  if (!any_job) {
    *error = path + ": no job section (only [global])";
    return false;
  }
  return true;
}

}  // namespace hybridio::bench
