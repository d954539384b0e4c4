// fd_table.h - what the shim knows about each of the program's descriptors.
//
// One slot per descriptor number, in chunks of 1024 allocated on first use
// (descriptors up to 1M; higher ones are simply never accelerated), so the
// table costs nothing for descriptors a program never uses and never sizes
// itself by RLIMIT_NOFILE.  A slot is UNKNOWN until the first request large
// enough to matter, then IGNORED (not a regular file, excluded, opened
// O_DIRECT by the caller) or TRACKED with an engine File.  The File is
// reference-counted: a close racing with I/O on the same descriptor in
// another thread never frees it under that I/O.  Thread-safe.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>

namespace hybridio {
class File;
}

namespace hybridio::preload {

// A tracked open file: the engine File plus what identifies the open file
// description it was made for, re-checked before each accelerated request.
struct Tracked {
  File* file;
  dev_t dev;
  ino_t ino;
  int status_flags;  // F_GETFL when classified
  std::atomic<int> refs;
};

enum class SlotState : uint8_t { kUnknown = 0, kIgnored = 1, kTracked = 2 };

// A counted reference to a Tracked; releases it when destroyed.
class TrackedRef {
 public:
  TrackedRef() = default;
  explicit TrackedRef(Tracked* t) : t_(t) {}
  TrackedRef(TrackedRef&& o) noexcept : t_(o.t_) { o.t_ = nullptr; }
  TrackedRef& operator=(TrackedRef&&) = delete;
  ~TrackedRef();
  Tracked* operator->() const { return t_; }
  explicit operator bool() const { return t_ != nullptr; }

 private:
  Tracked* t_ = nullptr;
};

class FdTable {
 public:
  static constexpr int kMaxFd = 1 << 20;

  FdTable() = default;
  // Frees every chunk and drops the table's references (the process-wide
  // table is never destroyed; tables in tests are).
  ~FdTable();
  FdTable(const FdTable&) = delete;
  FdTable& operator=(const FdTable&) = delete;

  // The slot's state; kUnknown for descriptors out of range.
  SlotState state(int fd) const;
  // A reference to the tracked file, or an empty ref.
  TrackedRef acquire(int fd);
  // Records a classification (replacing whatever was there).
  void set_ignored(int fd);
  void set_tracked(int fd, Tracked* t);
  // Forgets the descriptor (closed, reused, replaced by dup2...).
  void reset(int fd);
  // Calls fn(fd, tracked) for every tracked slot (under no lock; for mmap).
  template <typename Fn>
  void for_each_tracked(Fn fn);

 private:
  struct Slot {
    std::atomic<uint8_t> state{0};
    std::atomic_flag busy = ATOMIC_FLAG_INIT;  // guards `tracked` swaps against acquire
    Tracked* tracked = nullptr;
  };
  static constexpr int kChunk = 1024;
  Slot* slot(int fd, bool create) const;
  void replace(int fd, SlotState state, Tracked* t);

  mutable std::atomic<Slot*> chunks_[kMaxFd / kChunk] = {};
};

FdTable& fd_table();

// Drops one reference; the last one closes and frees the File.
void release_tracked(Tracked* t);

template <typename Fn>
void FdTable::for_each_tracked(Fn fn) {
  for (int c = 0; c < kMaxFd / kChunk; ++c) {
    Slot* chunk = chunks_[c].load(std::memory_order_acquire);
    if (!chunk) continue;
    for (int i = 0; i < kChunk; ++i) {
      int fd = c * kChunk + i;
      if (chunk[i].state.load(std::memory_order_relaxed) != static_cast<uint8_t>(SlotState::kTracked)) continue;
      TrackedRef ref = acquire(fd);
      if (ref) fn(fd, ref);
    }
  }
}

}  // namespace hybridio::preload
