// bench_engine.h - how `hybridio bench` does its I/O, as an ops table
// (in the manner of fio's ioengines): open, pread, pwrite, fsync, close.
//
//   hybridio  the library's C API (hio_open, hio_pwrite, ...): every
//             request routed by the policy in effect (hio_policy_set)
//   psync     plain pread(2)/pwrite(2) on a plain descriptor: the
//             baseline with no library at all (always the page cache)
//
// Handles are per thread; the functions return what the library does:
// byte counts or -errno.  Thread-safe as far as the calls below are.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace hybridio::bench {

struct EngineOps {
  const char* name;
  const char* help;
  bool routes_by_policy;  // false: the --policy list does not apply
  int (*open)(const char* path, int flags, void** handle);  // 0 or -errno
  ssize_t (*pread)(void* handle, void* buf, size_t len, off_t offset);
  ssize_t (*pwrite)(void* handle, const void* buf, size_t len, off_t offset);
  int (*fsync)(void* handle);
  int (*close)(void* handle);
};

const std::vector<const EngineOps*>& engines();
const EngineOps* find_engine(const std::string& name);  // nullptr if unknown

}  // namespace hybridio::bench
