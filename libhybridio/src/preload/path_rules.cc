// path_rules.cc - see path_rules.h.
#include "path_rules.h"

#include <fnmatch.h>
#include <sys/xattr.h>

#include <cstring>

namespace hybridio::preload {
namespace {

std::vector<std::string> split(const char* list) {
  std::vector<std::string> out;
  if (!list) return out;
  std::string item;
  for (const char* p = list;; ++p) {
    if (*p == ':' || *p == '\0') {
      if (!item.empty()) out.push_back(item);
      item.clear();
      if (*p == '\0') break;
    } else {
      item += *p;
    }
  }
  return out;
}

}  // namespace

PathRules::PathRules(const char* include, const char* exclude)
    : include_(split(include)), exclude_(split(exclude)) {
  for (const char* sys : {"/proc", "/sys", "/dev"}) exclude_.push_back(sys);
}

bool PathRules::matches(const std::string& pattern, const char* path) {
  if (pattern.find_first_of("*?[") != std::string::npos) {
    // A pattern without '/' matches the file name; with '/', the whole path.
    if (pattern.find('/') == std::string::npos) {
      const char* slash = strrchr(path, '/');
      return fnmatch(pattern.c_str(), slash ? slash + 1 : path, 0) == 0;
    }
    return fnmatch(pattern.c_str(), path, 0) == 0;
  }
  // A prefix matches itself and everything below it, not "/data2" for "/data".
  size_t len = pattern.size();
  while (len > 1 && pattern[len - 1] == '/') --len;
  if (strncmp(path, pattern.c_str(), len) != 0) return false;
  return path[len] == '\0' || path[len] == '/' || (len == 1 && pattern[0] == '/');
}

bool PathRules::allows(const char* path) const {
  for (const std::string& p : exclude_)
    if (matches(p, path)) return false;
  if (include_.empty()) return true;
  for (const std::string& p : include_)
    if (matches(p, path)) return true;
  return false;
}

bool opted_out(int fd) {
  char value[16] = {};
  ssize_t n = fgetxattr(fd, "user.hybridio", value, sizeof value - 1);
  if (n <= 0) return false;
  value[n] = '\0';
  return strcmp(value, "off") == 0 || strcmp(value, "buffered") == 0;
}

}  // namespace hybridio::preload
