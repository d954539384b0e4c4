// private_mappings.cc - see private_mappings.h.
#include "platform/private_mappings.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000  // Linux 4.17; older kernels treat it as a hint
#endif

namespace hybridio {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;
// How far below the process's mappings the region starts: more than any
// program here maps, and still far above the executable and its heap (on
// x86-64 the mmap area starts near 127 TiB and a PIE near 85 TiB).  In a
// smaller address space (arm64 with 39-bit addresses) half the distance
// to zero.
constexpr uint64_t kDistance = 4096 * kGiB;
// Nothing goes below 4 GiB: non-PIE executables and their heap live there.
constexpr uint64_t kFloor = 4 * kGiB;
// Placements tried for a new range, each further below than the last
// (someone else's mapping is in the way), before an ordinary mmap.
constexpr int kPlacements = 24;
// Freed ranges remembered for reuse; beyond that the smallest is forgotten
// (address space, not memory).
constexpr size_t kFreeSlots = 64;

size_t page_size() {
  static const size_t size = [] {
    long v = sysconf(_SC_PAGESIZE);
    return v > 0 ? static_cast<size_t>(v) : size_t{4096};
  }();
  return size;
}

uintptr_t round_up(uintptr_t v, uintptr_t align) { return (v + align - 1) & ~(align - 1); }
uintptr_t round_down(uintptr_t v, uintptr_t align) { return v & ~(align - 1); }

// An anonymous mapping at exactly `at`, or nullptr: part of the range is
// taken, or the kernel took the flag for a hint and put it elsewhere.
char* map_at(uintptr_t at, size_t size) {
  void* p = mmap(reinterpret_cast<void*>(at), size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  if (reinterpret_cast<uintptr_t>(p) != at) {
    munmap(p, size);
    return nullptr;
  }
  return static_cast<char*>(p);
}

char* map_anywhere(size_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<char*>(p);
}

// The region: [bottom_, top_) has been handed out, growing down from top_;
// free_ holds the parts of it given back.
class Region {
 public:
  char* map(size_t size, size_t align) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!ready()) return nullptr;
    if (char* p = take_free(size, align)) return p;
    return take_new(size, align);
  }

  void unmap(char* p, size_t size) {
    munmap(p, size);
    std::lock_guard<std::mutex> lock(mu_);
    const uintptr_t at = reinterpret_cast<uintptr_t>(p);
    // An ordinary mmap fallback can land in a freed range too: once
    // unmapped it is free all the same.
    if (at >= bottom_ && at + size <= top_) add_free(at, size);
  }

  bool contains(uintptr_t at, size_t size) {
    std::lock_guard<std::mutex> lock(mu_);
    return at >= bottom_ && at + size <= top_;
  }

 private:
  struct Range {
    uintptr_t start;
    size_t size;
  };

  // Places the region on first use, below a fresh mapping (which the
  // kernel puts where the program's next one would go).
  bool ready() {
    if (initialized_) return usable_;
    initialized_ = true;
    if (sizeof(void*) < 8) return false;
    const size_t page = page_size();
    void* probe = mmap(nullptr, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (probe == MAP_FAILED) return false;
    munmap(probe, page);
    const uint64_t near = reinterpret_cast<uintptr_t>(probe);
    const uint64_t distance = std::min(kDistance, near / 2);
    if (near - distance < 2 * kFloor) return false;
    top_ = bottom_ = static_cast<uintptr_t>(round_down(near - distance, kGiB));
    usable_ = true;
    return true;
  }

  char* take_free(size_t size, size_t align) {
    for (size_t i = 0; i < nfree_;) {
      const Range r = free_[i];
      const uintptr_t at = round_up(r.start, align);
      if (at >= r.start + r.size || r.start + r.size - at < size) {
        ++i;
        continue;
      }
      free_[i] = free_[--nfree_];
      // Someone mapped part of it since (an ordinary mmap of the program's
      // can reach down here): forget the range.
      char* p = map_at(at, size);
      if (!p) continue;
      add_free(r.start, at - r.start);
      add_free(at + size, r.start + r.size - (at + size));
      return p;
    }
    return nullptr;
  }

  char* take_new(size_t size, size_t align) {
    uintptr_t below = bottom_;
    uintptr_t step = size;
    for (int i = 0; i < kPlacements; ++i) {
      if (below < kFloor + size) return nullptr;
      const uintptr_t at = round_down(below - size, align);
      if (char* p = map_at(at, size)) {
        // What alignment left between this range and the last one is free;
        // after a skip it holds someone else's mapping.
        if (i == 0) add_free(at + size, bottom_ - (at + size));
        bottom_ = std::min(bottom_, at);
        return p;
      }
      if (at < step) return nullptr;
      below = at - step;
      step *= 2;
    }
    return nullptr;
  }

  void add_free(uintptr_t start, size_t size) {
    if (size == 0) return;
    // Merge with the neighbours; a range that reaches the bottom gives the
    // space back to it instead.
    for (size_t i = 0; i < nfree_;) {
      Range& r = free_[i];
      if (r.start + r.size == start || start + size == r.start) {
        start = std::min(start, r.start);
        size += r.size;
        free_[i] = free_[--nfree_];
        continue;
      }
      ++i;
    }
    if (start == bottom_) {
      bottom_ += size;
      return;
    }
    if (nfree_ < kFreeSlots) {
      free_[nfree_++] = {start, size};
      return;
    }
    Range* smallest = std::min_element(free_, free_ + nfree_, [](const Range& a, const Range& b) { return a.size < b.size; });
    if (smallest->size < size) *smallest = {start, size};
  }

  std::mutex mu_;
  bool initialized_ = false;
  bool usable_ = false;
  uintptr_t top_ = 0;
  uintptr_t bottom_ = 0;
  Range free_[kFreeSlots]{};
  size_t nfree_ = 0;
};

Region& region() {
  static Region* r = new Region();  // never destroyed: buffers are freed from thread exits after statics
  return *r;
}

}  // namespace

char* map_private(size_t size, size_t alignment) {
  if (size == 0) return nullptr;
  const int saved_errno = errno;  // EEXIST from a taken placement is no business of the caller's
  const size_t page = page_size();
  size = round_up(size, page);
  alignment = std::max(alignment, page);
  char* p = region().map(size, alignment);
  if (!p && alignment == page) {
    p = map_anywhere(size);
  } else if (!p) {
    // Over-allocate and trim to the alignment.  `raw` is page aligned, so
    // at < start + alignment: the tail trimmed is never empty.
    if (char* raw = map_anywhere(size + alignment)) {
      const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
      const uintptr_t at = round_up(start, alignment);
      if (at > start) munmap(raw, at - start);
      munmap(reinterpret_cast<char*>(at + size), start + alignment - at);
      p = reinterpret_cast<char*>(at);
    }
  }
  errno = saved_errno;
  return p;
}

void unmap_private(char* data, size_t size) {
  if (!data || size == 0) return;
  const int saved_errno = errno;
  region().unmap(data, round_up(size, page_size()));
  errno = saved_errno;
}

char* map_private_file(int fd, size_t size) {
  char* p = map_private(size, page_size());
  if (!p) return nullptr;
  const int saved_errno = errno;
  // Over memory of our own: MAP_FIXED replaces nothing of the program's.
  void* q = mmap(p, round_up(size, page_size()), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
  errno = saved_errno;
  if (q == MAP_FAILED) {
    unmap_private(p, size);
    return nullptr;
  }
  return p;
}

bool in_private_region(const void* data, size_t size) {
  return region().contains(reinterpret_cast<uintptr_t>(data), size);
}

}  // namespace hybridio
