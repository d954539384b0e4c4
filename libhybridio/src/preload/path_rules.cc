// path_rules.cc - see path_rules.h.
#include "preload/path_rules.h"

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

const char* kernel_pseudo_fs(unsigned long f_type) {
  // <linux/magic.h>, written out: some are missing from older headers.
  static constexpr struct {
    unsigned long magic;
    const char* name;
  } kTable[] = {
      {0x62656572, "sysfs"},     {0x9fa0, "proc"},         {0x64626720, "debugfs"},  {0x74726163, "tracefs"},
      {0x62656570, "configfs"},  {0x73636673, "securityfs"}, {0x27e0eb, "cgroup"},    {0x63677270, "cgroup2"},
      {0xcafe4a11, "bpf"},       {0x6165676c, "pstore"},   {0xde5e81e4, "efivarfs"}, {0xf97cff8c, "selinuxfs"},
      {0x43415d53, "smackfs"},   {0x1cd1, "devpts"},       {0x19800202, "mqueue"},   {0x42494e4d, "binfmt_misc"},
      {0x65735543, "fusectl"},   {0x7655821, "resctrl"},   {0x6e736673, "nsfs"},     {0x9fa2, "usbdevfs"},
      {0xabba1974, "xenfs"},     {0x9fa1, "openpromfs"},
  };
  // f_type is a signed word: a magic with the top bit set comes back negative.
  const unsigned long type = f_type & 0xffffffffUL;
  for (const auto& fs : kTable)
    if (fs.magic == type) return fs.name;
  return nullptr;
}

bool opted_out(int fd) {
  char value[16] = {};
  ssize_t n = fgetxattr(fd, "user.hybridio", value, sizeof value - 1);
  if (n <= 0) return false;
  value[n] = '\0';
  return strcmp(value, "off") == 0 || strcmp(value, "buffered") == 0;
}

}  // namespace hybridio::preload
