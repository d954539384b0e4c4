// c_api.cc - the C API (hybridio/hybridio.h) over the engine's File, its
// settings and the process-wide Runtime.
#include <cerrno>

#include "file/file.h"
#include "file/reuse_admission.h"
#include "file/reuse_history.h"
#include "hybridio/hybridio.h"
#include "io/uring_engine.h"
#include "runtime/runtime.h"

using hybridio::File;
using hybridio::Runtime;

struct hio_file {
  File* file;
};

namespace {

// Every entry point runs its body through this: no exception may unwind
// into a C caller.  The engine's I/O path allocates nothing that throws;
// what is left (the settings parsed on first use, the stats document) can
// only fail for want of memory.
template <typename R, typename Body>
R no_throw(R on_failure, Body body) noexcept {
  try {
    return body();
  } catch (...) {
    return on_failure;
  }
}

template <typename Body>
void no_throw_void(Body body) noexcept {
  try {
    body();
  } catch (...) {
  }
}

int wrap(int err, File* f, hio_file** out) {
  if (err) return err;
  hio_file* h = new (std::nothrow) hio_file{f};
  if (!h) {
    delete f;
    return -ENOMEM;
  }
  *out = h;
  return 0;
}

}  // namespace

extern "C" {

int hio_open(const char* path, int flags, mode_t mode, hio_file** out) {
  if (!path || !out) return -EINVAL;
  return no_throw(-ENOMEM, [&] {
    File* f = nullptr;
    int err = File::open(Runtime::get(), path, flags, mode, &f);  // before wrap(): argument order is unspecified
    return wrap(err, f, out);
  });
}

int hio_adopt(int fd, int owns_fd, hio_file** out) {
  if (!out) return -EINVAL;
  return no_throw(-ENOMEM, [&] {
    File* f = nullptr;
    int err = File::adopt(Runtime::get(), fd, owns_fd != 0, &f);
    return wrap(err, f, out);
  });
}

int hio_fd(const hio_file* f) { return f ? f->file->fd() : -EBADF; }

ssize_t hio_pread(hio_file* f, void* buf, size_t len, off_t offset) {
  if (!f) return -EBADF;
  if (offset < 0) return -EINVAL;
  return no_throw<ssize_t>(-ENOMEM, [&] { return f->file->pread(buf, len, static_cast<uint64_t>(offset)); });
}

ssize_t hio_pwrite(hio_file* f, const void* buf, size_t len, off_t offset) {
  if (!f) return -EBADF;
  if (offset < 0) return -EINVAL;
  return no_throw<ssize_t>(-ENOMEM, [&] { return f->file->pwrite(buf, len, static_cast<uint64_t>(offset)); });
}

ssize_t hio_read(hio_file* f, void* buf, size_t len) {
  return f ? no_throw<ssize_t>(-ENOMEM, [&] { return f->file->read(buf, len); }) : -EBADF;
}

ssize_t hio_write(hio_file* f, const void* buf, size_t len) {
  return f ? no_throw<ssize_t>(-ENOMEM, [&] { return f->file->write(buf, len); }) : -EBADF;
}

int hio_fsync(hio_file* f) { return f ? no_throw(-ENOMEM, [&] { return f->file->sync(false); }) : -EBADF; }

int hio_fdatasync(hio_file* f) { return f ? no_throw(-ENOMEM, [&] { return f->file->sync(true); }) : -EBADF; }

int hio_ftruncate(hio_file* f, off_t length) {
  if (!f) return -EBADF;
  if (length < 0) return -EINVAL;
  return no_throw(-ENOMEM, [&] { return f->file->truncate(static_cast<uint64_t>(length)); });
}

void hio_set_mapped(hio_file* f, int mapped) {
  if (f) f->file->set_mapped(mapped != 0);
}

int hio_close(hio_file* f) {
  if (!f) return -EBADF;
  int rc = no_throw(-ENOMEM, [&] { return f->file->close(); });
  delete f->file;
  delete f;
  return rc;
}

void hio_stats_get(struct hio_stats* out) {
  if (out) no_throw_void([&] { *out = Runtime::get().stats().snapshot(); });
}

void hio_stats_reset(void) {
  no_throw_void([] { Runtime::get().stats().reset(); });
}

int hio_reuse_forget(void) {
  return no_throw(-ENOMEM, [] {
    hybridio::ReuseHistory* h = hybridio::process_reuse_history(hybridio::Runtime::get());
    if (!h) return -ENOENT;
    h->forget();
    return 0;
  });
}

int hio_stats_write_json(const char* path) {
  return path ? no_throw(-ENOMEM, [&] { return Runtime::get().write_stats(path); }) : -EINVAL;
}

void hio_engine_get(struct hio_engine_config* out) {
  if (out) no_throw_void([&] {
    Runtime::get();  // the configured settings are published first
    *out = hybridio::engine_settings();
  });
}

void hio_engine_set(const struct hio_engine_config* cfg) {
  if (cfg) no_throw_void([&] {
    Runtime::get();  // the configured settings are published first, never after these
    hybridio::set_engine_settings(hybridio::clamped_engine_settings(*cfg));
  });
}

void hio_policy_get(struct hio_policy_config* out) {
  if (out) no_throw_void([&] { *out = Runtime::get().policy(); });
}

void hio_policy_set(const struct hio_policy_config* cfg) {
  if (cfg) no_throw_void([&] { Runtime::get().set_policy(*cfg); });
}

}  // extern "C"
