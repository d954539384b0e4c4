// file_bytes.h - test data, whole-file reads and writes, shared by the engine tests.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace hybridio::testing {

// `n` pseudo-random bytes, the same for the same seed.
inline std::vector<char> random_bytes(size_t n, unsigned seed) {
  std::vector<char> v(n);
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < n; i += 8) {
    uint64_t x = rng();
    memcpy(&v[i], &x, n - i < 8 ? n - i : 8);
  }
  return v;
}

// The whole file as a plain program reads it (empty if it cannot be opened).
inline std::vector<char> file_bytes(const std::string& path) {
  std::vector<char> v;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return v;
  struct stat st;
  if (fstat(fd, &st) == 0) v.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < v.size()) {
    ssize_t n = ::pread(fd, v.data() + done, v.size() - done, static_cast<off_t>(done));
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(fd);
  v.resize(done);
  return v;
}

// Writes `bytes` as the whole file, plainly and durably; false on any failure.
inline bool write_file_durably(const std::string& path, const std::vector<char>& bytes) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const bool ok = ::pwrite(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()) && fsync(fd) == 0;
  return close(fd) == 0 && ok;
}

// The bytes a sequence of call results reported moved (errors count nothing).
template <class Result>
uint64_t reported_bytes(const std::vector<Result>& results) {
  uint64_t done = 0;
  for (Result n : results)
    if (n > 0) done += static_cast<uint64_t>(n);
  return done;
}

// A sequence of call results as "[n, n, -errno]", for failure messages.
template <class Result>
std::string show_results(const std::vector<Result>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace hybridio::testing
