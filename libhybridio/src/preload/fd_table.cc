// fd_table.cc - see fd_table.h.
#include "preload/fd_table.h"

#include <cstdlib>
#include <new>

#include "file/file.h"

namespace hybridio::preload {

FdTable& fd_table() {
  static FdTable* table = new FdTable();  // never destroyed: used until the last exit handler
  return *table;
}

void release_tracked(Tracked* t) {
  if (t && t->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    delete t->file;  // closes the O_DIRECT twin; the program's descriptor is not ours
    delete t;
  }
}

TrackedRef::~TrackedRef() { release_tracked(t_); }

FdTable::~FdTable() {
  for (auto& c : chunks_) {
    Slot* chunk = c.exchange(nullptr);
    if (!chunk) continue;
    for (int i = 0; i < kChunk; ++i) release_tracked(chunk[i].tracked);
    delete[] chunk;
  }
}

FdTable::Slot* FdTable::slot(int fd, bool create) const {
  if (fd < 0 || fd >= kMaxFd) return nullptr;
  std::atomic<Slot*>& c = chunks_[fd / kChunk];
  Slot* chunk = c.load(std::memory_order_acquire);
  if (!chunk && create) {
    Slot* fresh = new (std::nothrow) Slot[kChunk];
    if (!fresh) return nullptr;
    if (c.compare_exchange_strong(chunk, fresh, std::memory_order_acq_rel)) {
      chunk = fresh;
    } else {
      delete[] fresh;  // another thread won; `chunk` now holds its chunk
    }
  }
  return chunk ? &chunk[fd % kChunk] : nullptr;
}

SlotState FdTable::state(int fd) const {
  Slot* s = slot(fd, false);
  return s ? static_cast<SlotState>(s->state.load(std::memory_order_acquire)) : SlotState::kUnknown;
}

TrackedRef FdTable::acquire(int fd) {
  Slot* s = slot(fd, false);
  if (!s) return TrackedRef();
  while (s->busy.test_and_set(std::memory_order_acquire)) {
  }
  Tracked* t = s->tracked;
  if (t) t->refs.fetch_add(1, std::memory_order_relaxed);
  s->busy.clear(std::memory_order_release);
  return TrackedRef(t);
}

void FdTable::replace(int fd, SlotState state, Tracked* t) {
  Slot* s = slot(fd, state != SlotState::kUnknown);
  if (!s) {
    release_tracked(t);
    return;
  }
  while (s->busy.test_and_set(std::memory_order_acquire)) {
  }
  Tracked* old = s->tracked;
  s->tracked = t;
  s->state.store(static_cast<uint8_t>(state), std::memory_order_release);
  s->busy.clear(std::memory_order_release);
  release_tracked(old);
}

void FdTable::set_ignored(int fd) { replace(fd, SlotState::kIgnored, nullptr); }

void FdTable::set_tracked(int fd, Tracked* t) { replace(fd, SlotState::kTracked, t); }

void FdTable::reset(int fd) {
  if (state(fd) != SlotState::kUnknown) replace(fd, SlotState::kUnknown, nullptr);
}

}  // namespace hybridio::preload
