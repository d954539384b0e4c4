// checked_copy.cc - see checked_copy.h.
#include "memory/checked_copy.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "memory/aligned_buffer.h"
#include "platform/monotonic_clock.h"
#include "platform/process_id.h"

namespace hybridio {
namespace {

constexpr uintptr_t kPage = 4096;
// Distances (destination minus source, modulo a page) below this, and not
// 0, are the short ones; 32-63 copy as fast as 0 where 1-31 are slow.
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

// -1: not measured yet; 0 or 1: short_distance_copies_slow()'s answer.
// Threads racing the first measurement each measure; any answer is valid.
std::atomic<int> g_short_distance_slow{-1};

// The kernel's copy of one piece, at 16 bytes and at half a page, in turn.
bool measure_short_distance_slow() {
  AlignedBuffer from(kSlowCopyPiece, kPage), to(kSlowCopyPiece + kPage, kPage);
  if (!from || !to) return false;
  memset(from.data(), 1, kSlowCopyPiece);
  memset(to.data(), 0, kSlowCopyPiece + kPage);
  uint64_t near = UINT64_MAX, far = UINT64_MAX;
  for (int i = 0; i < 5; ++i) {
    for (uintptr_t distance : {uintptr_t{16}, kPage / 2}) {
      const uint64_t t0 = monotonic_ns();
      if (kernel_copy(from.data(), to.data() + distance, kSlowCopyPiece, false) != kSlowCopyPiece) return false;
      const uint64_t took = monotonic_ns() - t0;
      uint64_t& best = distance == 16 ? near : far;
      best = std::min(best, took);
    }
  }
  return near > 2 * far;
}

}  // namespace

bool short_copy_distance(uintptr_t from, uintptr_t to) {
  const uintptr_t distance = (to - from) % kPage;
  return distance != 0 && distance < kSlowDistance;
}

bool short_distance_copies_slow() {
  int verdict = g_short_distance_slow.load(std::memory_order_relaxed);
  if (verdict < 0) {
    verdict = measure_short_distance_slow() ? 1 : 0;
    g_short_distance_slow.store(verdict, std::memory_order_relaxed);
  }
  return verdict == 1;
}

bool slow_copy_distance(uintptr_t from, uintptr_t to) {
  return short_copy_distance(from, to) && short_distance_copies_slow();
}

void assume_short_distance_copies_slow(bool slow) {
  g_short_distance_slow.store(slow ? 1 : 0, std::memory_order_relaxed);
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
