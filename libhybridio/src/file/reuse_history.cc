// reuse_history.cc - see reuse_history.h.
#include "file/reuse_history.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "platform/make_dirs.h"
#include "platform/private_mappings.h"

namespace hybridio {
namespace {

constexpr uint64_t kMagic = 0x6573756572696f68ULL;  // "hioreuse"
constexpr uint64_t kHeaderBytes = 4096;

struct Header {
  uint64_t magic;
  uint32_t version;
  uint32_t entries;
  uint32_t entry_bytes;
  uint32_t extents;
};

uint64_t mix(uint64_t x) { return hio_mix64(x); }

template <typename T>
T load(const T* p) {
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}
template <typename T>
void store(T* p, T v) {
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

}  // namespace

// Every field is one naturally aligned atomic word of the shared mapping.
struct ReuseHistory::Entry {
  uint64_t key;       // 0: empty
  uint64_t size;
  uint64_t read;      // extents read off the cache
  uint64_t reread;    // extents read off the cache again, or admitted
  uint64_t admitted;  // extents the rule admitted
  uint32_t last;      // coarse clock of the last read recorded
  uint32_t unused;
  uint64_t pad[2];
};
static_assert(__atomic_always_lock_free(8, 0), "shared-memory atomics must be lock-free");

FileIdentity file_identity(const struct stat& st) {
  const uint64_t generation = mix(static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ULL +
                                  static_cast<uint64_t>(st.st_mtim.tv_nsec)) ^
                              mix(static_cast<uint64_t>(st.st_ctim.tv_sec) * 1000000000ULL +
                                  static_cast<uint64_t>(st.st_ctim.tv_nsec) + 1) ^
                              static_cast<uint64_t>(st.st_size);
  FileIdentity id;
  id.key = mix(static_cast<uint64_t>(st.st_dev) ^ mix(static_cast<uint64_t>(st.st_ino) ^ mix(generation)));
  if (id.key == 0) id.key = 1;
  id.size = static_cast<uint64_t>(st.st_size);
  return id;
}

uint64_t reuse_extent_bytes(uint64_t size) { return hio_reuse_extent_bytes(size); }

uint64_t reuse_extent_mask(uint64_t size, uint64_t offset, uint64_t length) {
  return hio_reuse_extent_mask(size, offset, length);
}

bool reuse_admits(uint64_t key, uint64_t extent, uint64_t budget, uint64_t read_bytes) {
  return hio_reuse_admits(key, extent, budget, read_bytes);
}

uint64_t ReuseHistory::table_bytes() {
  static_assert(sizeof(Entry) == 64, "one cache line per entry (the header says 64)");
  return kHeaderBytes + uint64_t{kEntries} * sizeof(Entry);
}

void ReuseHistory::table_path(const char* dir, char* out, unsigned long size) {
  snprintf(out, size, "%s/hybridio-reuse-v%u-%u", dir, kVersion, static_cast<unsigned>(geteuid()));
}

namespace {

// The table at `path` if it is ours and whole: mapped, the descriptor closed.
void* map_table(const char* path, uint64_t bytes) {
  const int fd = ::open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st;
  // In the library's own region (private_mappings.h): never in a range the
  // program has just unmapped, where it would make a stale pointer valid.
  char* p = nullptr;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 0777) == 0600 &&
      static_cast<uint64_t>(st.st_size) == bytes)
    p = map_private_file(fd, bytes);
  ::close(fd);
  if (!p) return nullptr;
  const Header* h = reinterpret_cast<const Header*>(p);
  if (load(&h->magic) != kMagic || h->version != ReuseHistory::kVersion || h->entries != ReuseHistory::kEntries ||
      h->entry_bytes != 64 || h->extents != ReuseHistory::kExtents) {
    unmap_private(p, bytes);
    return nullptr;
  }
  return p;
}

// Creates the table whole under a private name, then links it into place:
// the name never shows a partial table, and an existing one is kept.
void create_table(const char* path, uint64_t bytes) {
  char tmp[600];
  snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, static_cast<int>(getpid()));
  const int fd = ::open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  Header h{kMagic, ReuseHistory::kVersion, ReuseHistory::kEntries, 64, ReuseHistory::kExtents};
  const bool ok = fchmod(fd, 0600) == 0 && ftruncate(fd, static_cast<off_t>(bytes)) == 0 &&
                  pwrite(fd, &h, sizeof h, 0) == static_cast<ssize_t>(sizeof h);
  ::close(fd);
  if (ok) (void)link(tmp, path);  // EEXIST: another process was first, its table is used
  unlink(tmp);
}

}  // namespace

bool ReuseHistory::attach(const char* dir, ReuseHistory* out) {
  if (!dir || !*dir) return false;
  char path[512];
  table_path(dir, path, sizeof path);
  const uint64_t bytes = table_bytes();
  void* p = map_table(path, bytes);
  if (!p) {
    if (access(path, F_OK) == 0 || errno != ENOENT) return false;  // there but not ours or not whole
    if (make_dirs(dir, 0700) != 0) return false;
    create_table(path, bytes);
    p = map_table(path, bytes);
  }
  if (!p) return false;
  out->base_ = p;
  return true;
}

ReuseHistory* ReuseHistory::attach(const char* dir) {
  ReuseHistory mapped;
  if (!attach(dir, &mapped)) return nullptr;
  ReuseHistory* h = new (std::nothrow) ReuseHistory(mapped);
  if (!h) unmap_private(static_cast<char*>(mapped.base_), table_bytes());
  return h;
}

void ReuseHistory::detach(ReuseHistory* h) {
  if (!h) return;
  unmap_private(static_cast<char*>(h->base_), table_bytes());
  delete h;
}

ReuseHistory::Entry* ReuseHistory::entries() const {
  return reinterpret_cast<Entry*>(static_cast<char*>(base_) + kHeaderBytes);
}

ReuseHistory::Entry* ReuseHistory::find(uint64_t key) const {
  Entry* e = entries();
  for (uint32_t i = 0; i < kProbe; ++i) {
    Entry* slot = &e[(key + i) % kEntries];
    if (load(&slot->key) == key) return slot;
  }
  return nullptr;
}

ReuseHistory::Entry* ReuseHistory::claim(const FileIdentity& id, uint32_t now) {
  if (Entry* found = find(id.key)) return found;
  Entry* e = entries();
  Entry* victim = nullptr;
  uint32_t oldest = UINT32_MAX;
  for (uint32_t i = 0; i < kProbe; ++i) {
    Entry* slot = &e[(id.key + i) % kEntries];
    if (load(&slot->key) == 0) {
      victim = slot;
      break;
    }
    const uint32_t last = load(&slot->last);
    if (last < oldest) {
      oldest = last;
      victim = slot;
    }
  }
  uint64_t expected = load(&victim->key);
  if (expected == id.key) return victim;  // another process claimed it for the same file
  if (!__atomic_compare_exchange_n(&victim->key, &expected, id.key, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
    return expected == id.key ? victim : nullptr;  // lost a race: this read is not remembered
  store(&victim->size, id.size);
  store(&victim->read, uint64_t{0});
  store(&victim->reread, uint64_t{0});
  store(&victim->admitted, uint64_t{0});
  store(&victim->last, now);
  return victim;
}

ReuseVerdict ReuseHistory::lookup(const FileIdentity& id, uint64_t offset, uint64_t length, uint32_t now,
                                  uint32_t window) const {
  ReuseVerdict v;
  v.first_extent = offset / reuse_extent_bytes(id.size);
  const uint64_t mask = reuse_extent_mask(id.size, offset, length);
  const Entry* e = find(id.key);
  if (!e || mask == 0) return v;
  const uint32_t last = load(&e->last);
  if (last == 0 || now - last > window) return v;  // read longer ago than the window (or in the future)
  const uint64_t need = hio_reuse_reread_mask(id.size, offset, length);
  v.reread = (load(&e->read) & need) == need;
  v.admitted_before = (load(&e->admitted) & mask) == mask;
  return v;
}

void ReuseHistory::record(const FileIdentity& id, uint64_t offset, uint64_t length, uint32_t now, Outcome what) {
  const uint64_t mask = reuse_extent_mask(id.size, offset, length);
  if (mask == 0) return;
  Entry* e = claim(id, now);
  if (!e) return;
  switch (what) {
    case Outcome::kOffCache: {
      // Read only where it reads an extent's last byte: a pass in calls
      // smaller than an extent is not its own re-read.
      const uint64_t finished = hio_reuse_finished_mask(id.size, offset, length);
      const uint64_t before = __atomic_fetch_or(&e->read, finished, __ATOMIC_RELAXED);
      if (before & finished) __atomic_fetch_or(&e->reread, before & finished, __ATOMIC_RELAXED);
      break;
    }
    case Outcome::kAdmitted:
      __atomic_fetch_or(&e->admitted, mask, __ATOMIC_RELAXED);
      __atomic_fetch_or(&e->read, mask, __ATOMIC_RELAXED);
      __atomic_fetch_or(&e->reread, mask, __ATOMIC_RELAXED);
      break;
    case Outcome::kHit:
      __atomic_fetch_or(&e->reread, mask, __ATOMIC_RELAXED);
      break;
  }
  store(&e->last, now);
}

ReuseTotals ReuseHistory::totals(uint32_t now, uint32_t window) const {
  ReuseTotals t;
  const Entry* e = entries();
  for (uint32_t i = 0; i < kEntries; ++i) {
    if (load(&e[i].key) == 0) continue;
    const uint32_t last = load(&e[i].last);
    if (last == 0 || now - last > window) continue;
    const uint64_t size = load(&e[i].size);
    const uint64_t extent = reuse_extent_bytes(size);
    auto bytes = [&](uint64_t mask) {
      uint64_t b = static_cast<uint64_t>(__builtin_popcountll(mask)) * extent;
      // The last extent of a file is usually partial.
      if ((mask >> ((size ? size - 1 : 0) / extent)) & 1) b -= extent * (((size - 1) / extent) + 1) - size;
      return b;
    };
    const uint64_t reread = load(&e[i].reread), admitted = load(&e[i].admitted);
    t.read_bytes += bytes(load(&e[i].read) | reread | admitted);
    t.reread_bytes += bytes(reread);
    t.admitted_bytes += bytes(admitted);
  }
  return t;
}

void ReuseHistory::forget() {
  Entry* e = entries();
  // The key last: a reader that still matches it sees empty bitmaps.
  for (uint32_t i = 0; i < kEntries; ++i) {
    store(&e[i].read, uint64_t{0});
    store(&e[i].reread, uint64_t{0});
    store(&e[i].admitted, uint64_t{0});
    store(&e[i].last, uint32_t{0});
    store(&e[i].key, uint64_t{0});
  }
}

uint32_t ReuseHistory::used_entries() const {
  uint32_t n = 0;
  for (uint32_t i = 0; i < kEntries; ++i) n += load(&entries()[i].key) != 0;
  return n;
}

}  // namespace hybridio
