// exerciser.cc - an fsx-style exerciser of the library API: random reads
// and writes of every size and alignment, truncates, fallocate (allocate,
// punch hole, zero range), mmap reads and stores, O_APPEND, fsync and
// reopen, in each mode of variants.h, checked against a model of the file's
// bytes after every read and, at the end, with plain read(2).
//
//   hio_exerciser [--dir=DIR] [--modes=all|NAME,...] [--ops=N] [--seed=S]
//                 [--refused=odirect,dontcache] [--verbose]
//
// --dir: where the file is made (default: the current directory).
// --refused: paths this filesystem is known to refuse; the run fails if it
//   does not refuse them (the fallback would silently go untested) or if the
//   library's refusal counter did not move.
// Prints "ok - MODE ..." or "not ok - MODE: op N ..." with the seed and the
// command that replays the failure, then "N passed, M failed"; exit status
// 0 only when nothing failed.  The same seed gives the same operations.
#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "file_model.h"
#include "hybridio/hybridio.h"
#include "rng.h"
#include "variants.h"

#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080
#endif

namespace hybridio::exerciser {
namespace {

using hybridio::testing::Rng;

constexpr uint64_t kMaxFile = 40 * M;
constexpr uint64_t kMaxIo = 8 * M;
constexpr uint64_t kMaxMap = 8 * M;

struct Options {
  std::string dir = ".";
  std::string modes = "all";
  uint64_t ops = 2000;
  uint64_t seed = 1;
  bool expect_odirect_refused = false;
  bool expect_dontcache_refused = false;
  bool verbose = false;
};

// What the filesystem itself does, asked with plain system calls.
struct FsFacts {
  std::string type;
  bool odirect = false;    // open(O_DIRECT) accepted
  bool dontcache = false;  // pwritev2(RWF_DONTCACHE) accepted
};

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string fs_type_name(const std::string& dir) {
  struct statfs s;
  if (statfs(dir.c_str(), &s) != 0) return "?";
  switch (static_cast<unsigned long>(s.f_type)) {
    case 0xEF53: return "ext4";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0x01021994: return "tmpfs";
    case 0x858458f6: return "ramfs";
    default: {
      char hex[32];
      snprintf(hex, sizeof hex, "0x%lx", static_cast<unsigned long>(s.f_type));
      return hex;
    }
  }
}

FsFacts probe(const std::string& dir) {
  FsFacts facts;
  facts.type = fs_type_name(dir);
  std::string path = dir + "/probe";
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw Failure("cannot create " + path + ": " + strerror(errno));
  char page[4096] = {};
  struct iovec iov = {page, sizeof page};
  facts.dontcache = pwritev2(fd, &iov, 1, 0, RWF_DONTCACHE) == static_cast<ssize_t>(sizeof page);
  close(fd);
  fd = open(path.c_str(), O_RDONLY | O_DIRECT);
  facts.odirect = fd >= 0;
  if (fd >= 0) close(fd);
  unlink(path.c_str());
  return facts;
}

const char* fallocate_name(int kind) {
  static const char* const names[] = {"allocate", "keep_size", "punch_hole", "zero_range", "zero_range_keep"};
  return names[kind];
}
constexpr int kFallocateKinds = 5;

class Run {
 public:
  Run(const Variant& v, const Options& o, uint64_t seed)
      : v_(v), o_(o), rng_(seed), path_(o.dir + "/exercise-" + v.name) {}
  ~Run() {
    if (f_) hio_close(f_);
    unlink(path_.c_str());
  }

  void run() {
    wpool_ = aligned(kMaxIo + 8 * K);
    rpool_ = aligned(kMaxIo + 8 * K);
    expect_ok(hio_open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f_), "open");
    for (op_ = 0; op_ < o_.ops; ++op_) {
      if (stream_phase_due()) stream_phase();
      step();
    }
    expect_ok(hio_close(f_), "close");
    f_ = nullptr;
    check_with_plain_read("final check");
  }

  // Counters the mode must show; a string naming what is missing, or "".
  std::string check_counters(const hio_stats& s) const {
    std::string missing;
    auto need = [&](bool ok, const std::string& what) {
      if (!ok) missing += (missing.empty() ? "" : "; ") + what;
    };
    uint64_t moved = 0;
    for (int op = 0; op < 2; ++op)
      for (int p = 0; p < HIO_PATH_COUNT; ++p) moved += s.bytes[op][p];
    need(moved == lib_bytes_, "every byte counted on exactly one path (" + std::to_string(moved) + " counted, " +
                                  std::to_string(lib_bytes_) + " moved)");
    uint64_t direct = s.bytes[HIO_OP_WRITE][HIO_PATH_DIRECT] + s.bytes[HIO_OP_READ][HIO_PATH_DIRECT];
    uint64_t direct_refusals = s.direct_open_refused + s.direct_io_refused;
    if (o_.expect_odirect_refused && (v_.expect & kExpectDirect))
      need(direct_refusals > 0 && direct == 0, "the O_DIRECT refusal counted and no direct byte");
    else if (v_.expect & kExpectDirect)
      need(direct > 0 && s.splits > 0 && s.bounces > 0, "direct bytes, splits and bounces");
    if (v_.expect & kExpectNoDirect) need(direct == 0, "no direct byte");
    if (v_.expect & kExpectDontcache) {
      uint64_t dontcache = s.bytes[HIO_OP_WRITE][HIO_PATH_DONTCACHE] + s.bytes[HIO_OP_READ][HIO_PATH_DONTCACHE];
      if (o_.expect_dontcache_refused)
        need(s.dontcache_refused > 0, "the RWF_DONTCACHE refusal counted");
      else
        need(dontcache > 0 && s.dontcache_refused == 0, "RWF_DONTCACHE bytes and no refusal");
    }
    if ((v_.expect & kExpectWriteBehind) && !o_.expect_odirect_refused) {
      need(s.write_behind_writes > 0, "write-behind writes");
      need(s.write_behind_errors == 0, "no write-behind error");
    }
    if (v_.counters_ok) need(v_.counters_ok(s), v_.counters_need ? v_.counters_need : "its own counters");
    return missing;
  }

  std::string summary(const hio_stats& s) const {
    char line[512];
    snprintf(line, sizeof line,
             "%llu ops, %.0f MiB written, %.0f MiB read through the library; direct %.0f MiB, dontcache %.0f MiB, "
             "splits %llu, bounces %llu, write-behind %llu, "
             "refused: O_DIRECT %llu, DONTCACHE %llu; mmap %llu",
             static_cast<unsigned long long>(o_.ops), written_ / double(M), read_ / double(M),
             (s.bytes[0][HIO_PATH_DIRECT] + s.bytes[1][HIO_PATH_DIRECT]) / double(M),
             (s.bytes[0][HIO_PATH_DONTCACHE] + s.bytes[1][HIO_PATH_DONTCACHE]) / double(M),
             static_cast<unsigned long long>(s.splits), static_cast<unsigned long long>(s.bounces),
             static_cast<unsigned long long>(s.write_behind_writes),
             static_cast<unsigned long long>(s.direct_open_refused + s.direct_io_refused),
             static_cast<unsigned long long>(s.dontcache_refused), static_cast<unsigned long long>(maps_));
    std::string out = line;
    out += "; fallocate";
    for (int k = 0; k < kFallocateKinds; ++k)
      out += std::string(" ") + fallocate_name(k) + " " + std::to_string(falloc_done_[k]) +
             (falloc_refused_[k] ? " (" + std::to_string(falloc_refused_[k]) + " EOPNOTSUPP)" : "");
    return out;
  }

  uint64_t op() const { return op_; }

 private:
  // ---- helpers ----
  std::unique_ptr<char, decltype(&free)> aligned(size_t n) {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, n) != 0) throw Failure("out of memory");
    return {static_cast<char*>(p), free};
  }
  [[noreturn]] void fail(const std::string& what) { throw Failure(what); }
  void expect_ok(long rc, const char* what) {
    if (rc < 0) fail(std::string(what) + " failed: " + strerror(static_cast<int>(-rc)));
  }
  void trace(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
    if (!o_.verbose) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "# %s op %llu: ", v_.name, static_cast<unsigned long long>(op_));
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
  }

  uint64_t request_size() {
    unsigned kind = static_cast<unsigned>(rng_.below(100));
    if (kind < 60) return rng_.log_uniform(1, 64 * K);
    if (kind < 95) return rng_.log_uniform(64 * K, 2 * M);
    return rng_.log_uniform(2 * M, kMaxIo);
  }
  uint64_t write_offset(uint64_t len) {
    uint64_t limit = std::min<uint64_t>(model_.size() + 1 * M, kMaxFile - len);
    uint64_t off = rng_.below(limit + 1);
    if (rng_.chance(50)) off &= ~(4 * K - 1);
    return off;
  }
  uint64_t read_offset() {
    uint64_t off = rng_.below(model_.size() + 64 * K);
    if (rng_.chance(50)) off &= ~(4 * K - 1);
    return off;
  }
  uint64_t misalign() {  // of the caller's buffer
    unsigned kind = static_cast<unsigned>(rng_.below(4));
    if (kind < 2) return 0;
    if (kind == 2) return 512 * (1 + rng_.below(7));
    return 1 + rng_.below(4095);
  }
  int fd() const { return hio_fd(f_); }
  uint64_t file_size() {
    struct stat st;
    if (fstat(fd(), &st) != 0) fail(std::string("fstat: ") + strerror(errno));
    return static_cast<uint64_t>(st.st_size);
  }
  void check_size(const char* after) {
    uint64_t size = file_size();
    if (size != model_.size())
      fail(std::string("size after ") + after + " is " + std::to_string(size) + ", the model's " +
           std::to_string(model_.size()));
  }
  void check_bytes(const char* what, const char* got, uint64_t off, uint64_t len) {
    int64_t at = model_.first_difference(got, off, len);
    if (at >= 0)
      fail(std::string(what) + ": first difference at file offset " + std::to_string(at) + " in " +
           std::to_string(len) + " bytes at " + std::to_string(off));
  }

  // ---- operations ----
  void step() {
    unsigned op = static_cast<unsigned>(rng_.below(1000));
    if (op < 200) return write_op(false);
    if (op < 260) return write_op(true);
    if (op < 460) return read_op(false);
    if (op < 520) return read_op(true);
    if (op < 560) return stream_op();
    if (op < 600) return truncate_op();
    if (op < 680) return fallocate_op();
    if (op < 760) return mmap_op();
    if (op < 800) return sync_op();
    if (op < 820) return reopen_op();
    if (op < 823) return check_with_plain_read("plain read check");
    return read_op(false);
  }

  // pwrite, or write at the file position.  O_APPEND puts either at EOF.
  void write_op(bool at_position) {
    uint64_t len = request_size();
    uint64_t off = write_offset(len);
    char* buf = wpool_.get() + misalign();
    rng_.fill(buf, len);
    trace("%s %llu at %llu%s", at_position ? "write" : "pwrite", (unsigned long long)len, (unsigned long long)off,
          append_ ? " (O_APPEND)" : "");
    ssize_t n;
    if (at_position) {
      if (lseek(fd(), static_cast<off_t>(off), SEEK_SET) != static_cast<off_t>(off)) fail("lseek");
      n = hio_write(f_, buf, len);
    } else {
      n = hio_pwrite(f_, buf, len, static_cast<off_t>(off));
    }
    if (n != static_cast<ssize_t>(len))
      fail("write of " + std::to_string(len) + " returned " + std::to_string(n) +
           (n < 0 ? std::string(" (") + strerror(static_cast<int>(-n)) + ")" : ""));
    if (append_) off = model_.size();
    model_.write(off, buf, len);
    written_ += len;
    lib_bytes_ += len;
    if (at_position) {
      off_t pos = lseek(fd(), 0, SEEK_CUR);
      if (pos != static_cast<off_t>(off + len))
        fail("file position after write is " + std::to_string(pos) + ", expected " + std::to_string(off + len));
    }
    check_size("write");
  }

  // pread, or read at the file position; checked against the model.
  void read_op(bool at_position) {
    uint64_t len = request_size();
    uint64_t off = read_offset();
    read_check(at_position, off, len, misalign());
  }
  void read_check(bool at_position, uint64_t off, uint64_t len, uint64_t mis) {
    char* buf = rpool_.get() + mis;
    trace("%s %llu at %llu", at_position ? "read" : "pread", (unsigned long long)len, (unsigned long long)off);
    ssize_t n;
    if (at_position) {
      if (lseek(fd(), static_cast<off_t>(off), SEEK_SET) != static_cast<off_t>(off)) fail("lseek");
      n = hio_read(f_, buf, len);
    } else {
      n = hio_pread(f_, buf, len, static_cast<off_t>(off));
    }
    uint64_t expect = off >= model_.size() ? 0 : std::min<uint64_t>(len, model_.size() - off);
    if (n != static_cast<ssize_t>(expect))
      fail("read of " + std::to_string(len) + " at " + std::to_string(off) + " returned " + std::to_string(n) +
           ", expected " + std::to_string(expect));
    check_bytes("read data", buf, off, expect);
    read_ += expect;
    lib_bytes_ += expect;
    if (at_position) {
      off_t pos = lseek(fd(), 0, SEEK_CUR);
      if (pos != static_cast<off_t>(off + expect)) fail("file position after read is " + std::to_string(pos));
    }
  }

  // Sequential reads of one size, as a restore does (what read-ahead follows).
  void stream_op() {
    uint64_t len = rng_.chance(50) ? (1 + rng_.below(4)) * M : rng_.log_uniform(64 * K, 4 * M);
    uint64_t count = 2 + rng_.below(8);
    uint64_t off = rng_.chance(70) ? 0 : rng_.below(model_.size() + 1) & ~(4 * K - 1);
    uint64_t mis = misalign();
    bool at_position = rng_.chance(30);
    for (uint64_t i = 0; i < count; ++i, off += len) read_check(at_position, off, len, mis);
  }

  void truncate_op() {
    uint64_t size = rng_.chance(50) ? rng_.below(model_.size() + 1) : rng_.below(kMaxFile / 2);
    if (rng_.chance(10)) size &= ~(4 * K - 1);
    trace("truncate to %llu", (unsigned long long)size);
    expect_ok(hio_ftruncate(f_, static_cast<off_t>(size)), "truncate");
    model_.truncate(size);
    check_size("truncate");
  }

  // fallocate on the descriptor (the library has no call of its own for it):
  // a filesystem that refuses a mode (EOPNOTSUPP) is counted, not failed.
  void fallocate_op() {
    int kind = static_cast<int>(rng_.below(kFallocateKinds));
    uint64_t len = rng_.log_uniform(1, 4 * M);
    uint64_t off = rng_.below(std::min<uint64_t>(model_.size() + 1 * M, kMaxFile - len) + 1);
    if (rng_.chance(50)) off &= ~(4 * K - 1);
    static const int modes[kFallocateKinds] = {0, FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                               FALLOC_FL_ZERO_RANGE, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE};
    trace("fallocate %s %llu at %llu", fallocate_name(kind), (unsigned long long)len, (unsigned long long)off);
    settle_for_outside();  // fallocate is not a library call: write-behind's queue does not see it
    if (fallocate(fd(), modes[kind], static_cast<off_t>(off), static_cast<off_t>(len)) != 0) {
      if (errno == EOPNOTSUPP) {
        ++falloc_refused_[kind];
        return;
      }
      fail(std::string("fallocate ") + fallocate_name(kind) + ": " + strerror(errno));
    }
    ++falloc_done_[kind];
    if (modes[kind] & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) model_.zero(off, len);
    if (!(modes[kind] & FALLOC_FL_KEEP_SIZE)) model_.extend(off + len);
    check_size("fallocate");
  }

  // A shared mapping of part of the file: its bytes checked, some stored
  // into, flushed with msync or left to munmap and writeback.  The library
  // is told (hio_set_mapped), as its contract asks.
  void mmap_op() {
    uint64_t page = 4096;
    uint64_t start = rng_.below(model_.size() + 1) & ~(page - 1);
    uint64_t len = rng_.log_uniform(1, kMaxMap);
    bool store = rng_.chance(60), sync = rng_.chance(50);
    uint64_t store_off = rng_.next(), store_len = rng_.log_uniform(1, 1 * M);
    if (start >= model_.size()) return;  // nothing to map
    len = std::min<uint64_t>(len, model_.size() - start);
    trace("mmap %llu at %llu%s", (unsigned long long)len, (unsigned long long)start, store ? " with stores" : "");
    hio_set_mapped(f_, 1);
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd(), static_cast<off_t>(start));
    if (p == MAP_FAILED) fail(std::string("mmap: ") + strerror(errno));
    ++maps_;
    char* m = static_cast<char*>(p);
    check_bytes("mapped bytes", m, start, len);
    if (store) {
      store_off %= len;
      store_len = std::min(store_len, len - store_off);
      char* src = wpool_.get();
      rng_.fill(src, store_len);
      memcpy(m + store_off, src, store_len);
      model_.write(start + store_off, src, store_len);
      if (sync && msync(p, len, MS_SYNC) != 0) fail(std::string("msync: ") + strerror(errno));
    }
    munmap(p, len);
    hio_set_mapped(f_, 0);
  }

  void sync_op() {
    bool full = rng_.chance(50);
    trace("%s", full ? "fsync" : "fdatasync");
    expect_ok(full ? hio_fsync(f_) : hio_fdatasync(f_), "fsync");
  }

  void reopen_op() {
    append_ = rng_.chance(20);
    trace("close and reopen%s", append_ ? " O_APPEND" : "");
    expect_ok(hio_close(f_), "close");
    f_ = nullptr;
    expect_ok(hio_open(path_.c_str(), O_RDWR | (append_ ? O_APPEND : 0), 0, &f_), "reopen");
    check_size("reopen");
  }

  // The whole file through a descriptor of its own, with read(2): what any
  // other program would see.
  void check_with_plain_read(const char* what) {
    settle_for_outside();
    int pfd = open(path_.c_str(), O_RDONLY);
    if (pfd < 0) fail(std::string("open for the plain check: ") + strerror(errno));
    char* buf = rpool_.get();
    uint64_t off = 0;
    for (;;) {
      ssize_t n = read(pfd, buf, kMaxIo);
      if (n < 0) {
        close(pfd);
        fail(std::string("plain read: ") + strerror(errno));
      }
      if (n == 0) break;
      if (off + static_cast<uint64_t>(n) > model_.size()) {
        close(pfd);
        fail(std::string(what) + ": the file is longer than the model (" + std::to_string(model_.size()) + ")");
      }
      int64_t at = model_.first_difference(buf, off, static_cast<uint64_t>(n));
      if (at >= 0) {
        close(pfd);
        fail(std::string(what) + ": first difference at file offset " + std::to_string(at));
      }
      off += static_cast<uint64_t>(n);
    }
    close(pfd);
    if (off != model_.size())
      fail(std::string(what) + ": read " + std::to_string(off) + " bytes, the model has " +
           std::to_string(model_.size()));
  }

  // Write-behind's contract (write_behind.h): a reader outside the library -
  // another descriptor, another process - sees queued writes once the
  // writer has called fsync, as after a buffered write whose writeback it
  // waits for; and a queued write that lands after a fallocate made on the
  // descriptor (not a library call) overwrites the hole or zeros.  So before
  // either, write-behind gets its fdatasync; other modes owe both at once.
  void settle_for_outside() {
    if (v_.write_behind && f_) expect_ok(hio_fdatasync(f_), "fdatasync before reading outside the library");
  }

  // ---- read-ahead ----
  bool stream_phase_due() const {
    if (!v_.stream_every || op_ == 0) return false;
    return o_.ops < v_.stream_every ? op_ == o_.ops / 2 : op_ % v_.stream_every == 0;
  }
  // Reads a stream through a read-only open (where a read-ahead window can
  // start), changing the file in the middle of the stream in one of the ways
  // the window must notice.
  void stream_phase() {
    uint64_t len = (1 + rng_.below(4)) * M + (rng_.chance(30) ? 4 * K * (1 + rng_.below(15)) : 0);
    uint64_t count = 12 + rng_.below(8);
    uint64_t change_at = 4 + rng_.below(count - 6);
    int change = static_cast<int>(rng_.below(4));
    uint64_t mis = rng_.chance(50) ? 0 : misalign();
    if (model_.size() < len * count) {  // a file long enough for the stream
      uint64_t grow = len * count - model_.size();
      std::vector<char> fill(grow);
      rng_.fill(fill.data(), grow);
      uint64_t at = model_.size();
      if (hio_pwrite(f_, fill.data(), grow, static_cast<off_t>(at)) != static_cast<ssize_t>(grow))
        fail("growing the file for the read stream");
      if (append_) at = model_.size();
      model_.write(at, fill.data(), grow);
      written_ += grow;
      lib_bytes_ += grow;
    }
    // The stream reads through a read-only open, and every change below
    // opens the file for writing, or truncates it by name, as another
    // program would.
    reopen_with(O_RDONLY, "read-only for the stream");
    trace("read stream of %llu x %llu, change %d after %llu", (unsigned long long)count, (unsigned long long)len,
          change, (unsigned long long)change_at);
    uint64_t off = 0;
    for (uint64_t i = 0; i < count; ++i, off += len) {
      if (i == change_at) change_ahead(change, off + len, len);
      read_check(false, off, len, mis);
    }
    reopen_with(O_RDWR | (append_ ? O_APPEND : 0), "reopen after the stream");
  }
  void reopen_with(int flags, const char* what) {
    expect_ok(hio_close(f_), "close");
    f_ = nullptr;
    expect_ok(hio_open(path_.c_str(), flags, 0, &f_), what);
  }
  // Changes [at, at + len), just ahead of the stream, through another open.
  void change_ahead(int how, uint64_t at, uint64_t len) {
    uint64_t n = std::min<uint64_t>(len / 2 + 1, model_.size() > at ? model_.size() - at : 0);
    if (how == 0 && n) {  // a write through another open of the library
      hio_file* w = nullptr;
      expect_ok(hio_open(path_.c_str(), O_WRONLY, 0, &w), "open for writing ahead of the stream");
      char* buf = wpool_.get();
      rng_.fill(buf, n);
      if (hio_pwrite(w, buf, n, static_cast<off_t>(at)) != static_cast<ssize_t>(n)) fail("write ahead of the stream");
      expect_ok(hio_close(w), "close the writer");
      model_.write(at, buf, n);
      written_ += n;
      lib_bytes_ += n;
    } else if (how == 1 && n) {  // a hole punched behind the library's back
      int pfd = open(path_.c_str(), O_WRONLY);
      if (pfd < 0) fail(std::string("open for punching: ") + strerror(errno));
      if (fallocate(pfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(at), static_cast<off_t>(n)) == 0)
        model_.zero(at, n);
      else if (errno != EOPNOTSUPP)
        fail(std::string("punch ahead of the stream: ") + strerror(errno));
      close(pfd);
    } else if (how == 2) {  // another program shortens the file, by name
      if (truncate(path_.c_str(), static_cast<off_t>(at + len / 3)) != 0)
        fail(std::string("truncate ahead of the stream: ") + strerror(errno));
      model_.truncate(at + len / 3);
    } else {  // another program writes with plain pwrite(2)
      int pfd = open(path_.c_str(), O_WRONLY);
      char* buf = wpool_.get();
      rng_.fill(buf, n);
      if (pfd < 0 || pwrite(pfd, buf, n, static_cast<off_t>(at)) != static_cast<ssize_t>(n))
        fail(std::string("plain write ahead of the stream: ") + strerror(errno));
      close(pfd);
      model_.write(at, buf, n);
    }
  }

  const Variant& v_;
  const Options& o_;
  Rng rng_;
  std::string path_;
  FileModel model_;
  hio_file* f_ = nullptr;
  bool append_ = false;
  uint64_t op_ = 0;
  std::unique_ptr<char, decltype(&free)> wpool_{nullptr, free};
  std::unique_ptr<char, decltype(&free)> rpool_{nullptr, free};
  uint64_t written_ = 0, read_ = 0, lib_bytes_ = 0, maps_ = 0;
  uint64_t falloc_done_[kFallocateKinds] = {};
  uint64_t falloc_refused_[kFallocateKinds] = {};
};

void configure(const Variant& v) {
  hio_policy_config c;
  hio_policy_config_defaults(&c);
  c.mode = v.mode;
  if (v.write_threshold) c.write_threshold = v.write_threshold;
  if (v.read_threshold) c.read_threshold = v.read_threshold;
  hio_policy_set(&c);
  hio_engine_config e;
  hio_engine_get(&e);
  if (v.chunk_size) e.chunk_size = v.chunk_size;
  if (v.queue_depth) e.queue_depth = v.queue_depth;
  e.uring = 1;
  e.write_behind = v.write_behind;
  if (v.write_behind) e.write_behind_limit = 16 * M;
  if (v.tune) {
    v.tune(&c, &e);
    hio_policy_set(&c);
  }
  hio_engine_set(&e);
  hio_stats_reset();
}

uint64_t parse_u64(const char* s, const char* what) {
  char* end = nullptr;
  errno = 0;
  uint64_t v = strtoull(s, &end, 0);
  if (errno || !*s || *end) {
    fprintf(stderr, "hio_exerciser: %s: not a number: %s\n", what, s);
    exit(2);
  }
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> const char* {
      size_t n = strlen(name);
      return a.compare(0, n, name) == 0 ? argv[i] + n : nullptr;
    };
    const char* s;
    if ((s = value("--dir="))) o.dir = s;
    else if ((s = value("--modes="))) o.modes = s;
    else if ((s = value("--ops="))) o.ops = parse_u64(s, "--ops");
    else if ((s = value("--seed="))) o.seed = parse_u64(s, "--seed");
    else if ((s = value("--refused="))) {
      std::string r = s;
      o.expect_odirect_refused = r.find("odirect") != std::string::npos;
      o.expect_dontcache_refused = r.find("dontcache") != std::string::npos;
    } else if (a == "--verbose") o.verbose = true;
    else if (a == "--list") {
      for (const Variant& v : kVariants) printf("%s\n", v.name);
      exit(0);
    } else {
      fprintf(stderr,
              "usage: hio_exerciser [--dir=DIR] [--modes=all|NAME,...] [--ops=N] [--seed=S]\n"
              "                     [--refused=odirect,dontcache] [--verbose] [--list]\n");
      exit(2);
    }
  }
  return o;
}

bool selected(const Options& o, const Variant& v) {
  if (o.modes == "all") return !v.named_only;
  std::string list = "," + o.modes + ",";
  return list.find("," + std::string(v.name) + ",") != std::string::npos;
}

// Each mode its own sequence, still replayable from the one seed printed.
uint64_t mode_seed(uint64_t seed, const char* name) {
  uint64_t h = seed * 0x100000001b3ULL;
  for (const char* c = name; *c; ++c) h = (h ^ static_cast<unsigned char>(*c)) * 0x100000001b3ULL;
  return h;
}

}  // namespace
}  // namespace hybridio::exerciser

int main(int argc, char** argv) {
  using namespace hybridio::exerciser;
  Options o = parse(argc, argv);
  for (const char* m = o.modes.c_str(); o.modes != "all" && *m;) {
    const char* comma = strchr(m, ',');
    std::string name(m, comma ? static_cast<size_t>(comma - m) : strlen(m));
    bool known = false;
    for (const Variant& v : kVariants) known |= name == v.name;
    if (!known) {
      fprintf(stderr, "hio_exerciser: unknown mode %s (--list shows them)\n", name.c_str());
      return 2;
    }
    m = comma ? comma + 1 : m + name.size();
  }
  FsFacts fs;
  try {
    fs = probe(o.dir);
  } catch (const Failure& e) {
    printf("not ok - %s\n0 passed, 1 failed\n", e.what());
    return 1;
  }
  printf("# %s on %s: O_DIRECT %s, RWF_DONTCACHE %s; %llu ops per mode, seed %llu\n", o.dir.c_str(),
         fs.type.c_str(), fs.odirect ? "accepted" : "refused", fs.dontcache ? "accepted" : "refused",
         static_cast<unsigned long long>(o.ops), static_cast<unsigned long long>(o.seed));
  int passed = 0, failed = 0;
  // A fallback is only tested where the filesystem really refuses the path;
  // --refused says where that is, and a filesystem that changed is an error.
  auto agree = [&](bool expect_refused, bool accepted, const char* what, const char* flag) {
    if (expect_refused == !accepted) return;
    printf("not ok - %s %s %s here: %s\n", fs.type.c_str(), accepted ? "accepts" : "refuses", what,
           accepted ? "its fallback is no longer tested; drop it from --refused" : flag);
    ++failed;
  };
  agree(o.expect_odirect_refused, fs.odirect, "O_DIRECT", "run with --refused=odirect");
  agree(o.expect_dontcache_refused, fs.dontcache, "RWF_DONTCACHE", "run with --refused=dontcache");
  for (const Variant& v : kVariants) {
    if (!selected(o, v)) continue;
    uint64_t seed = mode_seed(o.seed, v.name);
    configure(v);
    auto start = std::chrono::steady_clock::now();
    Run run(v, o, seed);
    std::string error;
    try {
      run.run();
    } catch (const Failure& e) {
      error = e.what();
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    hio_stats s;
    hio_stats_get(&s);
    if (!error.empty()) {
      printf("not ok - %s on %s: op %llu: %s\n    replay: hio_exerciser --dir=%s --modes=%s --seed=%llu --ops=%llu "
             "--verbose (mode seed %llu)\n",
             v.name, fs.type.c_str(), static_cast<unsigned long long>(run.op()), error.c_str(), o.dir.c_str(), v.name,
             static_cast<unsigned long long>(o.seed), static_cast<unsigned long long>(run.op() + 1),
             static_cast<unsigned long long>(seed));
      ++failed;
    } else if (std::string missing = run.check_counters(s); !missing.empty()) {
      printf("not ok - %s on %s: the counters lack %s\n    %s\n", v.name, fs.type.c_str(), missing.c_str(),
             run.summary(s).c_str());
      ++failed;
    } else {
      printf("ok - %s on %s (%.1f s): %s\n", v.name, fs.type.c_str(), secs, run.summary(s).c_str());
      ++passed;
    }
    fflush(stdout);
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
