// real_libc.cc - see real_libc.h.
#include "preload/real_libc.h"

#include <dlfcn.h>

#include <atomic>

namespace hybridio::preload {
namespace {

RealLibc g_real{};
std::atomic<bool> g_resolved{false};
__thread bool t_resolving __attribute__((tls_model("initial-exec"))) = false;

template <typename T>
void bind(T*& slot, const char* name) {
  slot = reinterpret_cast<T*>(dlsym(RTLD_NEXT, name));
}

}  // namespace

const RealLibc& real() {
  if (!g_resolved.load(std::memory_order_acquire) && !t_resolving) resolve_real();
  return g_real;
}

bool resolving() { return t_resolving; }

void resolve_real() {
  if (g_resolved.load(std::memory_order_acquire)) return;
  t_resolving = true;
  RealLibc r{};
  bind(r.open, "open");
  bind(r.openat, "openat");
  bind(r.creat, "creat");
  bind(r.read, "read");
  bind(r.write, "write");
  bind(r.pread, "pread");
  bind(r.pwrite, "pwrite");
  bind(r.readv, "readv");
  bind(r.writev, "writev");
  bind(r.preadv, "preadv");
  bind(r.pwritev, "pwritev");
  bind(r.preadv2, "preadv2");
  bind(r.pwritev2, "pwritev2");
  bind(r.fread, "fread");
  bind(r.fwrite, "fwrite");
  bind(r.fclose, "fclose");
  bind(r.close, "close");
  bind(r.close_range, "close_range");
  bind(r.closefrom, "closefrom");
  bind(r.dup, "dup");
  bind(r.dup2, "dup2");
  bind(r.dup3, "dup3");
  bind(r.fcntl, "fcntl");
  bind(r.mmap, "mmap");
  bind(r.copy_file_range, "copy_file_range");
  bind(r.sendfile, "sendfile");
  bind(r.fsync, "fsync");
  bind(r.fdatasync, "fdatasync");
  bind(r.prctl, "prctl");
  bind(r.syscall, "syscall");
  // Publish whole: concurrent first callers may resolve twice, never see half a table.
  g_real = r;
  g_resolved.store(true, std::memory_order_release);
  t_resolving = false;
}

}  // namespace hybridio::preload
