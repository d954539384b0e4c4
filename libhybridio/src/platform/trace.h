// trace.h - HYBRIDIO_TRACE: one line per policy decision, so a user can see
// why each request went where.  Thread-safe; lines are written whole.
#pragma once

#include <cstdio>
#include <mutex>
#include <string>

#include "hybridio/policy.h"

namespace hybridio {

class Trace {
 public:
  // Opens `path` for appending; false (and tracing stays off) if it cannot.
  bool open(const std::string& path);
  bool enabled() const { return file_ != nullptr; }
  // `estimate`, when not empty, names the measurements behind a learned or
  // explored decision (size class and each path's rate).
  void record(int fd, const hio_request& req, const hio_decision& d, const std::string& estimate = std::string());
  void close();
  ~Trace() { close(); }

 private:
  std::mutex mu_;
  FILE* file_ = nullptr;
};

}  // namespace hybridio
