// io_helpers.cc - see io_helpers.h.
#include "io_helpers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

namespace hio_diff {

std::string errno_name(int e) {
  if (e == 0) return "0";
  const char* name = strerrorname_np(e);
  return name ? name : "E" + std::to_string(e);
}

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "SIG" + std::to_string(sig);
}

std::string rv(long long r) { return rv(r, errno); }

std::string rv(long long r, int err) { return r < 0 ? std::to_string(r) + " " + errno_name(err) : std::to_string(r); }

void fill_pattern(void* buf, size_t len, uint32_t tag, uint64_t off) {
  auto* p = static_cast<uint8_t*>(buf);
  for (size_t i = 0; i < len; ++i) p[i] = pattern_byte(tag, off + i);
}

bool has_pattern(const void* buf, size_t len, uint32_t tag, uint64_t off) {
  const auto* p = static_cast<const uint8_t*>(buf);
  uint8_t bad = 0;
  for (size_t i = 0; i < len; ++i) bad |= static_cast<uint8_t>(p[i] ^ pattern_byte(tag, off + i));
  return bad == 0;
}

uint64_t checksum(const void* buf, size_t len, uint64_t seed) {
  const auto* p = static_cast<const uint8_t*>(buf);
  uint64_t h = seed ^ 0x6a09e667f3bcc909ULL ^ (len * 0x9E3779B97F4A7C15ULL);
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
    h ^= h >> 31;
  }
  for (; i < len; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  h ^= h >> 33;
  return h * 0xff51afd7ed558ccdULL;
}

std::string hex(uint64_t v) {
  char s[20];
  snprintf(s, sizeof s, "%016llx", static_cast<unsigned long long>(v));
  return s;
}

ssize_t raw_pread(int fd, void* buf, size_t len, off_t off) { return syscall(SYS_pread64, fd, buf, len, off); }

ssize_t raw_pwrite(int fd, const void* buf, size_t len, off_t off) {
  return syscall(SYS_pwrite64, fd, buf, len, off);
}

int raw_open(const std::string& path, int flags, mode_t mode) {
  return static_cast<int>(syscall(SYS_openat, AT_FDCWD, path.c_str(), flags | O_CLOEXEC, mode));
}

int raw_close(int fd) { return static_cast<int>(syscall(SYS_close, fd)); }

long long file_size(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<long long>(st.st_size) : -1;
}

namespace {

constexpr size_t kChunk = 8 << 20;

// Calls visit(data, len, offset) for consecutive chunks of [off, off+len)
// (to EOF when len is SIZE_MAX); returns the bytes visited, -1 on error.
long long for_each_chunk(const std::string& path, uint64_t off, size_t len,
                         const std::function<void(const char*, size_t, uint64_t)>& visit) {
  int fd = raw_open(path, O_RDONLY);
  if (fd < 0) return -1;
  static Mapping buf(kChunk);
  long long total = 0;
  while (len > 0) {
    ssize_t n = raw_pread(fd, buf.data(), len < kChunk ? len : kChunk, static_cast<off_t>(off));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    visit(buf.data(), static_cast<size_t>(n), off);
    off += static_cast<uint64_t>(n);
    len -= len == SIZE_MAX ? 0 : static_cast<size_t>(n);
    total += n;
  }
  raw_close(fd);
  return total;
}

}  // namespace

std::string file_digest(const std::string& path) {
  uint64_t h = 0;
  long long n = for_each_chunk(path, 0, SIZE_MAX, [&](const char* p, size_t len, uint64_t) { h = checksum(p, len, h); });
  if (n < 0) return "missing";
  return std::to_string(n) + ":" + hex(h);
}

bool file_has_pattern(const std::string& path, uint64_t off, size_t len, uint32_t tag, uint64_t pattern_off) {
  bool ok = true;
  long long n = for_each_chunk(path, off, len, [&](const char* p, size_t l, uint64_t at) {
    ok = ok && has_pattern(p, l, tag, pattern_off + (at - off));
  });
  return ok && n == static_cast<long long>(len);
}

bool file_is_all(const std::string& path, uint64_t off, size_t len, uint8_t byte) {
  bool ok = true;
  long long n = for_each_chunk(path, off, len, [&](const char* p, size_t l, uint64_t) {
    for (size_t i = 0; i < l && ok; ++i) ok = static_cast<uint8_t>(p[i]) == byte;
  });
  return ok && n == static_cast<long long>(len);
}

bool make_pattern_file(const std::string& path, size_t size, uint32_t tag) {
  int fd = raw_open(path, O_WRONLY | O_CREAT | O_TRUNC);
  if (fd < 0) return false;
  Mapping buf(kChunk);
  bool ok = buf.ok();
  for (size_t at = 0; ok && at < size; at += kChunk) {
    size_t len = size - at < kChunk ? size - at : kChunk;
    fill_pattern(buf.data(), len, tag, at);
    ok = raw_pwrite(fd, buf.data(), len, static_cast<off_t>(at)) == static_cast<ssize_t>(len);
  }
  return raw_close(fd) == 0 && ok;
}

Mapping::Mapping(size_t len) : len_(len) {
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  data_ = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
}

Mapping::~Mapping() {
  if (data_) munmap(data_, len_);
}

std::string how_ended(int status) {
  if (WIFEXITED(status)) return "exit=" + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "signal=" + signal_name(WTERMSIG(status));
  return "status=" + std::to_string(status);
}

std::string run_in_child(const std::function<int()>& body) {
  pid_t pid = fork();
  if (pid < 0) return "fork-failed";
  if (pid == 0) _exit(body());
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return "wait-failed";
  return how_ended(status);
}

int count_open_fds() {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  int n = 0;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n - 1;
}

bool set_soft_limit(int resource, unsigned long long value) {
  rlimit lim;
  if (getrlimit(resource, &lim) != 0) return false;
  lim.rlim_cur = value;
  return setrlimit(resource, &lim) == 0;
}

}  // namespace hio_diff
