// reuse_history.h - a memory, shared by a user's processes, of the file
// ranges read off the page cache recently: the input of the `reuse` rule
// (policy.h, HIO_FILE_REUSE; docs/policy.md).
//
// What it is.  A table of kEntries entries of 64 bytes (256 KiB) in one
// shared-memory file per user, <dir>/hybridio-reuse-v1-<euid> (dir:
// HYBRIDIO_REUSE_DIR, default /dev/shm, a tmpfs: no I/O ever reaches a
// device).  An entry is one file generation - a hash of st_dev, st_ino and
// a generation made of mtime, ctime and size, so a file replaced or
// rewritten is a new key and its old entry is never matched again - with
// three bitmaps of kExtents extents of max(size/64, 1 MiB), rounded up to a
// power of two: extents read off the cache, extents read off the cache
// again (or admitted: "re-read data"), and extents the rule admitted; and
// the coarse clock (seconds) of the last read recorded.  Open addressing
// with kProbe slots per key; a new key takes an empty slot or else the one
// of its kProbe read longest ago (a flood of files evicts the oldest).
//
// Admission (reuse_admits()).  A read is re-use when every extent it finishes,
// or the one it touches when it finishes none, was read off the cache before,
// within the window (hio_reuse_reread_mask()).  A read off the cache marks as
// read only the extents whose last byte it reads (hio_reuse_finished_mask()),
// so a pass in calls smaller than an extent is not its own re-read, and a
// read that leaves a file's trailer unread is a re-read of the rest.  It is
// admitted when all the data read within the window fits the budget, or else
// when a hash of (file, extent of its first byte) falls below budget / bytes
// read: a stable subset - the same extents every epoch from the first re-read
// on, and a smaller budget admits a subset of what a larger one did - so the
// hit rate approaches budget / dataset without LRU churn.  Data read once is
// never admitted, but counts in the bytes read while it is within the window.
//
// Concurrency and crashes.  Fields are lone 64/32-bit atomics on the
// MAP_SHARED mapping (forked children share it); no locks, and no
// allocation (attach(dir, out) included), so a signal handler or a fork in
// any state cannot deadlock on it.  A key claimed while another process updates the slot, or a
// process killed mid-update, leaves at worst wrong bits for one entry: a
// hint lost or a range admitted once too often.  It costs speed, never
// bytes: the bytes always come from the file.
//
// Permissions.  The table belongs to one user (created 0600, opened
// O_NOFOLLOW, rejected unless a regular file owned by the caller's euid,
// mode 0600, of the exact size, magic and version), so a process learns
// nothing about files that another user read.  Another user can at worst
// deny the table (create the name first): no history, as when it is off.
//
// Failure anywhere (a directory that cannot be made, wrong size, no
// memory) = no history, silently.  The descriptor is closed as soon as the
// table is mapped: the program never sees it.  Thread-safe.
#pragma once

#include <sys/stat.h>

#include <cstdint>

#include "hybridio/policy.h"

namespace hybridio {

// One generation of one file.
struct FileIdentity {
  uint64_t key = 0;   // hash of device, inode and generation; never 0
  uint64_t size = 0;  // the generation's size (extents are cut from it)
};

FileIdentity file_identity(const struct stat& st);

// What the history knows about a read of [offset, offset + length).
struct ReuseVerdict {
  bool reread = false;          // every extent it touches was read off the cache within the window
  bool admitted_before = false; // every extent it touches was admitted within the window
  uint64_t first_extent = 0;    // the extent of its first byte (the admission hash's input)
};

// Sums over the entries read within the window.
struct ReuseTotals {
  uint64_t read_bytes = 0;      // data read off the cache, once or more, or admitted
  uint64_t reread_bytes = 0;    // of which read off the cache again, or admitted
  uint64_t admitted_bytes = 0;  // of which admitted
};

class ReuseHistory {
 public:
  static constexpr uint32_t kEntries = 4096;
  static constexpr uint32_t kProbe = 8;
  static constexpr uint32_t kExtents = HIO_REUSE_EXTENTS;
  static constexpr uint64_t kMinExtent = HIO_REUSE_MIN_EXTENT;
  static constexpr uint32_t kVersion = 1;
  // The table file's size: a header page and the entries.
  static uint64_t table_bytes();

  // Maps the table in `dir` (the directory, mode 0700, and the table
  // created if missing) into `*out`, without allocating; false on any
  // failure.  The mapping lives until detach() or exit.
  static bool attach(const char* dir, ReuseHistory* out);
  // The same on the heap (tests); nullptr on any failure.
  static ReuseHistory* attach(const char* dir);
  static void detach(ReuseHistory* h);

  ReuseHistory() = default;
  // The file name attach() uses in `dir`, written to out[size].
  static void table_path(const char* dir, char* out, unsigned long size);

  // The verdict on a read at coarse time `now` (seconds, > 0), for data
  // read within `window` seconds.
  ReuseVerdict lookup(const FileIdentity& id, uint64_t offset, uint64_t length, uint32_t now,
                      uint32_t window) const;

  // What a decided read did: left the cache, was admitted to it by the
  // rule, or was served from it after an admission (a hit).  Idempotent.
  enum class Outcome { kOffCache, kAdmitted, kHit };
  void record(const FileIdentity& id, uint64_t offset, uint64_t length, uint32_t now, Outcome what);

  ReuseTotals totals(uint32_t now, uint32_t window) const;

  // Empties every entry (every process sharing the table sees it empty).
  void forget();

  // Slots in use (tests: bounded under a flood).
  uint32_t used_entries() const;

 private:
  struct Entry;
  Entry* entries() const;
  Entry* find(uint64_t key) const;
  Entry* claim(const FileIdentity& id, uint32_t now);
  void* base_ = nullptr;
};

// The admission: true when the extent `extent` of file `key` is in the
// stable subset that fits `budget` bytes of `read_bytes` recently read.
bool reuse_admits(uint64_t key, uint64_t extent, uint64_t budget, uint64_t read_bytes);

// The extent size of a file of `size` bytes and the bitmap of the extents
// [offset, offset + length) touches (clamped to the size).
uint64_t reuse_extent_bytes(uint64_t size);
uint64_t reuse_extent_mask(uint64_t size, uint64_t offset, uint64_t length);

}  // namespace hybridio
