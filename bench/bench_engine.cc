// bench_engine.cc - see bench_engine.h.
#include "bench_engine.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "hybridio/hybridio.h"

namespace hybridio::bench {
namespace {

// --- hybridio: the library's C API ---
int hio_engine_open(const char* path, int flags, void** h) {
  hio_file* f = nullptr;
  int err = hio_open(path, flags, 0644, &f);
  *h = f;
  return err;
}
ssize_t hio_engine_pread(void* h, void* buf, size_t len, off_t off) {
  return hio_pread(static_cast<hio_file*>(h), buf, len, off);
}
ssize_t hio_engine_pwrite(void* h, const void* buf, size_t len, off_t off) {
  return hio_pwrite(static_cast<hio_file*>(h), buf, len, off);
}
int hio_engine_fsync(void* h) { return hio_fsync(static_cast<hio_file*>(h)); }
int hio_engine_close(void* h) { return hio_close(static_cast<hio_file*>(h)); }  // 0 or -errno

const EngineOps kHybridio = {"hybridio", "the Hybrid-IO library: each request routed by --policy", true,
                             hio_engine_open, hio_engine_pread, hio_engine_pwrite, hio_engine_fsync,
                             hio_engine_close};

// --- psync: plain POSIX calls ---
int fd_of(void* h) { return static_cast<int>(reinterpret_cast<intptr_t>(h)) - 1; }
int psync_open(const char* path, int flags, void** h) {
  int fd = open(path, flags | O_CLOEXEC, 0644);
  if (fd < 0) return -errno;
  *h = reinterpret_cast<void*>(static_cast<intptr_t>(fd) + 1);
  return 0;
}
ssize_t psync_pread(void* h, void* buf, size_t len, off_t off) {
  ssize_t n = pread(fd_of(h), buf, len, off);
  return n < 0 ? -errno : n;
}
ssize_t psync_pwrite(void* h, const void* buf, size_t len, off_t off) {
  ssize_t n = pwrite(fd_of(h), buf, len, off);
  return n < 0 ? -errno : n;
}
int psync_fsync(void* h) { return fsync(fd_of(h)) < 0 ? -errno : 0; }
int psync_close(void* h) { return close(fd_of(h)) < 0 ? -errno : 0; }

const EngineOps kPsync = {"psync", "plain pread/pwrite without the library (page cache; --policy ignored)", false,
                          psync_open, psync_pread, psync_pwrite, psync_fsync, psync_close};

}  // namespace

const std::vector<const EngineOps*>& engines() {
  static const std::vector<const EngineOps*> all = {&kHybridio, &kPsync};
  return all;
}

const EngineOps* find_engine(const std::string& name) {
  for (const EngineOps* e : engines())
    if (name == e->name) return e;
  return nullptr;
}

}  // namespace hybridio::bench
