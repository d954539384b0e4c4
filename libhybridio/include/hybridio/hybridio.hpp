// hybridio/hybridio.hpp - the Hybrid-IO C++ API: an RAII file over the C API.
//
// hybridio::File owns one hio_file and closes it when destroyed.  Failures
// throw std::system_error (generic category, the errno value); the only
// exceptions are close() (returns the error) and the destructor (ignores it:
// call close() to see it).  Thread-safety is that of the C API.
#pragma once

#include <sys/types.h>

#include <string>
#include <system_error>
#include <utility>

#include "hybridio/hybridio.h"
#include "hybridio/policy.hpp"

namespace hybridio {

class File {
 public:
  File() = default;
  File(const std::string& path, int flags, mode_t mode = 0644) {
    check(hio_open(path.c_str(), flags, mode, &f_), "open " + path);
  }
  // Wraps a descriptor the caller opened; closes it on destruction if owns_fd.
  static File adopt(int fd, bool owns_fd) {
    File f;
    check(hio_adopt(fd, owns_fd ? 1 : 0, &f.f_), "adopt fd");
    return f;
  }
  ~File() {
    if (f_) hio_close(f_);
  }
  File(File&& o) noexcept : f_(std::exchange(o.f_, nullptr)) {}
  File& operator=(File&& o) noexcept {
    if (this != &o) {
      if (f_) hio_close(f_);
      f_ = std::exchange(o.f_, nullptr);
    }
    return *this;
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  bool is_open() const { return f_ != nullptr; }
  int fd() const { return hio_fd(f_); }

  // Bytes transferred (short only at EOF for reads).
  size_t pread(void* buf, size_t len, off_t offset) {
    return check(hio_pread(f_, buf, len, offset), "pread");
  }
  size_t pwrite(const void* buf, size_t len, off_t offset) {
    return check(hio_pwrite(f_, buf, len, offset), "pwrite");
  }
  size_t read(void* buf, size_t len) { return check(hio_read(f_, buf, len), "read"); }
  size_t write(const void* buf, size_t len) { return check(hio_write(f_, buf, len), "write"); }
  void fsync() { check(hio_fsync(f_), "fsync"); }
  void fdatasync() { check(hio_fdatasync(f_), "fdatasync"); }
  void truncate(off_t length) { check(hio_ftruncate(f_, length), "ftruncate"); }
  void set_mapped(bool mapped) { hio_set_mapped(f_, mapped ? 1 : 0); }

  // Closes now; returns 0 or -errno.  The File is empty afterwards.
  int close() { return f_ ? hio_close(std::exchange(f_, nullptr)) : 0; }

 private:
  static size_t check(ssize_t rc, const std::string& what) {
    if (rc < 0) throw std::system_error(static_cast<int>(-rc), std::generic_category(), what);
    return static_cast<size_t>(rc);
  }
  hio_file* f_ = nullptr;
};

// Process-wide counters.
inline hio_stats stats() {
  hio_stats s;
  hio_stats_get(&s);
  return s;
}

}  // namespace hybridio
