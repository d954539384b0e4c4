// checked_copy.cc - see checked_copy.h.
#include "checked_copy.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "aligned_buffer.h"
#include "process_id.h"

namespace hybridio {
namespace {

constexpr uintptr_t kPage = 4096;
// Distances (destination minus source, modulo a page) below this, and not
// 0, are the kernel's copy's slow ones: 1-31 bytes on the development VM
// (results/shim/checked-copy-distance-2026-12-03-s31/), 32-63 as fast as 0.
constexpr uintptr_t kSlowDistance = 32;
// The kernel's copy, on this process: bytes copied, stopping where the
// caller's memory ends.  The process is named by the cached id
// (process_id.h), not a getpid() per copy.  In a child that shares the
// parent's memory (vfork, clone(CLONE_VM) without CLONE_THREAD) the cached
// id is the parent's: it names the same memory, but the kernel may refuse
// it (Yama's ptrace scope) or not know it (a new pid namespace), so any
// failure but EFAULT is asked again under the kernel's id.  (Such a child
// may call only async-signal-safe functions, which the library's are not;
// under the shim its calls go to libc, preload/shim.cc.)
size_t kernel_copy(char* engine, char* user, size_t len, bool into_engine) {
  pid_t self = current_pid();
  size_t done = 0;
  while (done < len) {
    iovec local{engine + done, len - done}, remote{user + done, len - done};
    ssize_t n = into_engine ? process_vm_readv(self, &local, 1, &remote, 1, 0)
                            : process_vm_writev(self, &local, 1, &remote, 1, 0);
    if (n < 0 && errno != EFAULT && self != getpid()) {
      self = getpid();
      continue;
    }
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

// The calling thread's bounce buffer (a page more than a piece, so that a
// piece can start anywhere in a page); null when it cannot be had.  The
// shim does not reenter itself from a signal handler on the same thread
// (preload/shim.cc), so one per thread is enough.
char* bounce_buffer() {
  thread_local AlignedBuffer buffer;
  if (!buffer) buffer = AlignedBuffer(kSlowCopyPiece + kPage, kPage);
  return buffer.data();
}

}  // namespace

bool slow_copy_distance(uintptr_t from, uintptr_t to) {
  const uintptr_t distance = (to - from) % kPage;
  return distance != 0 && distance < kSlowDistance;
}

uintptr_t harmless_page_offset(uintptr_t from) { return (from + kPage / 2) % kPage; }

size_t copy_checked(char* engine, char* user, size_t len, bool into_engine) {
  char* from = into_engine ? user : engine;
  char* to = into_engine ? engine : user;
  char* bounce = slow_copy_distance(reinterpret_cast<uintptr_t>(from), reinterpret_cast<uintptr_t>(to)) ? bounce_buffer() : nullptr;
  if (!bounce) return kernel_copy(engine, user, len, into_engine);
  bounce += harmless_page_offset(reinterpret_cast<uintptr_t>(from));
  size_t done = 0;
  while (done < len) {
    const size_t n = std::min(kSlowCopyPiece, len - done);
    size_t copied;
    if (into_engine) {
      copied = kernel_copy(bounce, user + done, n, true);
      memcpy(engine + done, bounce, copied);
    } else {
      memcpy(bounce, engine + done, n);
      copied = kernel_copy(bounce, user + done, n, false);
    }
    done += copied;
    if (copied < n) break;
  }
  return done;
}

}  // namespace hybridio
