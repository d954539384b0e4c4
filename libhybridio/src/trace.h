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
  void record(int fd, const hio_request& req, const hio_decision& d);
  void close();
  ~Trace() { close(); }

 private:
  std::mutex mu_;
  FILE* file_ = nullptr;
};

}  // namespace hybridio
