// proc_files.cc - see proc_files.h.
#include "platform/proc_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace hybridio {

bool read_small_file(const char* path, char* buf, size_t size) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = ::read(fd, buf, size - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  return true;
}

bool line_number(const char* text, const char* key, uint64_t* out) {
  const size_t klen = strlen(key);
  for (const char* line = text; *line;) {
    if (strncmp(line, key, klen) == 0) {
      *out = strtoull(line + klen, nullptr, 10);
      return true;
    }
    const char* next = strchr(line, '\n');
    if (!next) break;
    line = next + 1;
  }
  return false;
}

}  // namespace hybridio
