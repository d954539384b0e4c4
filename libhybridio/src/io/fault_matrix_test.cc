// fault_matrix_test.cc - the fault matrix (issue 14, item 4): every fault
// on every path of the engine, injected through the syscall seam
// (syscall_table.h) and the completion hook (uring_engine.h) on real files,
// one parameterized test per cell, so that each row shows up in ctest as
// unit.fault_matrix.Matrix/FaultMatrix.Cell/<op>_<path>_<fault>.
//
// The injected device fails "from X": a call (or an io_uring chunk) that
// starts before X moves the bytes before X and returns that count; one that
// starts at or after X fails with the errno - what the kernel does for a
// write that runs into a full disk, a file size limit or a bad block.  A
// short transfer and EAGAIN are injected once.  Each cell runs the request
// the way a POSIX program does (call again from where the last call ended;
// retry EAGAIN; stop at any other error) and asserts
//  - the sequence of results (a byte count first, the errno on the next
//    call; what the path documents for short transfers and EAGAIN),
//  - that the file holds exactly the model's bytes: the old file with the
//    reported bytes replaced, and its size (a read: the bytes it reported),
//  - for write-behind, the error deferred to fsync or close, reported once,
//  - that the fault fired and that the request really took the path.
// Faults that exist only for writes (ENOSPC, EFBIG, EDQUOT) have no read
// rows.  The real faults (a full filesystem, RLIMIT_FSIZE, a read-only
// filesystem, quotas) are in tests/real_faults_test.cc.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine_fixture.h"
#include "expect_bytes.h"
#include "file_bytes.h"
#include "hybridio/hybridio.h"
#include "io/uring_engine.h"
#include "platform/syscall_table.h"

using hybridio::testing::reported_bytes;
using hybridio::testing::show_results;
using hybridio::testing::write_file_durably;

namespace hybridio {
namespace {

constexpr uint64_t K = 1024, M = 1024 * 1024;
constexpr uint64_t kChunk = 64 * K;  // DirectEngineTest's chunk size

// ---- the faults -----------------------------------------------------------

enum class Kind {
  kError,         // persistent errno from X on
  kErrorOnce,     // the same, only for the first call that reaches X
  kShort,         // the first call across X stops at X (no error)
  kAgain,         // EAGAIN once: a call across X stops there, the next one at X fails
  kAgainEnter,    // io_uring_enter fails with EAGAIN a few times
  kAgainEnterExhausted,  // ... until the ring loop gives up (then the next request works)
};

struct Fault {
  const char* name;
  Kind kind;
  int err;
};

constexpr Fault kEio{"EIO", Kind::kError, EIO};
constexpr Fault kEnospc{"ENOSPC", Kind::kError, ENOSPC};
constexpr Fault kEfbig{"EFBIG", Kind::kError, EFBIG};
constexpr Fault kEdquot{"EDQUOT", Kind::kError, EDQUOT};
constexpr Fault kShortOnce{"short", Kind::kShort, 0};
constexpr Fault kEagain{"EAGAIN", Kind::kAgain, EAGAIN};
constexpr Fault kEagainEnter{"EAGAIN_enter", Kind::kAgainEnter, EAGAIN};
constexpr Fault kEagainExhausted{"EAGAIN_enter_exhausted", Kind::kAgainEnterExhausted, EAGAIN};
constexpr Fault kEioTransient{"EIO_transient", Kind::kErrorOnce, EIO};

// The injector, shared by the seam's fakes and the completion hook (which
// run on the caller's thread, the write-behind writer and the read-ahead
// window).
class Injector {
 public:
  void arm(const Fault& f, hio_op op, uint64_t at) {
    std::lock_guard<std::mutex> lock(mu_);
    fault_ = f;
    op_ = op;
    at_ = at;
    armed_ = true;
    spent_ = false;
    fired_ = 0;
    enters_failed_ = 0;
  }
  void disarm() {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = false;
  }
  int fired() {
    std::lock_guard<std::mutex> lock(mu_);
    return fired_;
  }

  // How much of [off, off + len) the device moves: len, a shorter count,
  // or -errno.
  int64_t limit(hio_op op, uint64_t off, uint64_t len) {
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t all = static_cast<int64_t>(len);
    if (!armed_ || op != op_ || spent_ || off + len <= at_) return all;
    switch (fault_.kind) {
      case Kind::kAgainEnter:
      case Kind::kAgainEnterExhausted:
        return all;
      case Kind::kShort:
        if (off >= at_) return all;
        spent_ = true;
        ++fired_;
        return static_cast<int64_t>(at_ - off);
      case Kind::kAgain:
        ++fired_;
        if (off < at_) return static_cast<int64_t>(at_ - off);  // not spent: the next call at X fails
        spent_ = true;
        return -fault_.err;
      case Kind::kError:
      case Kind::kErrorOnce:
        ++fired_;
        if (fault_.kind == Kind::kErrorOnce) spent_ = true;
        return off < at_ ? static_cast<int64_t>(at_ - off) : -fault_.err;
    }
    return all;
  }

  // An io_uring entry: -EAGAIN while the fault says so, else 0 (go on).
  int enter() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!armed_) return 0;
    if (fault_.kind == Kind::kAgainEnter && enters_failed_ < 3) {
      ++enters_failed_;
      ++fired_;
      return -EAGAIN;
    }
    if (fault_.kind == Kind::kAgainEnterExhausted) {
      ++fired_;
      return -EAGAIN;
    }
    return 0;
  }

 private:
  std::mutex mu_;
  Fault fault_{};
  hio_op op_ = HIO_OP_WRITE;
  uint64_t at_ = 0;
  bool armed_ = false;
  bool spent_ = false;
  int fired_ = 0;
  int enters_failed_ = 0;
};

Injector g_inj;

// The file's bytes before the request, for the completion hook: a chunk
// that the hook turns into a failure has already moved its data, so the
// hook puts the old bytes back - the file then holds what a device that
// failed at X would have left.  Bytes past the old size need nothing: the
// engine cuts a failed extending write back to what it reports.
std::vector<char> g_old;
int g_restore_fd = -1;

void restore(uint64_t from, uint64_t to) {
  to = std::min<uint64_t>(to, g_old.size());
  if (from >= to || g_restore_fd < 0) return;
  ssize_t n = ::pwrite(g_restore_fd, g_old.data() + from, to - from, static_cast<off_t>(from));
  if (n != static_cast<ssize_t>(to - from)) abort();  // the model would be wrong: stop here
}

// The seam's fakes: the real call, on the part the device allows.
size_t shorten(const iovec* iov, int n, size_t allowed, iovec* out) {
  int k = 0;
  for (int i = 0; i < n && allowed; ++i, ++k) {
    out[k] = iov[i];
    out[k].iov_len = std::min(iov[i].iov_len, allowed);
    allowed -= out[k].iov_len;
  }
  return static_cast<size_t>(k);
}

size_t iov_bytes(const iovec* iov, int n) {
  size_t total = 0;
  for (int i = 0; i < n; ++i) total += iov[i].iov_len;
  return total;
}

ssize_t fake_pread(int fd, void* buf, size_t len, off_t off) {
  const int64_t allowed = g_inj.limit(HIO_OP_READ, static_cast<uint64_t>(off), len);
  if (allowed < 0) {
    errno = static_cast<int>(-allowed);
    return -1;
  }
  return real_syscalls().pread(fd, buf, static_cast<size_t>(allowed), off);
}

ssize_t fake_pwrite(int fd, const void* buf, size_t len, off_t off) {
  const int64_t allowed = g_inj.limit(HIO_OP_WRITE, static_cast<uint64_t>(off), len);
  if (allowed < 0) {
    errno = static_cast<int>(-allowed);
    return -1;
  }
  return real_syscalls().pwrite(fd, buf, static_cast<size_t>(allowed), off);
}

ssize_t fake_rwv2(bool write, int fd, const iovec* iov, int n, off_t off, int flags) {
  const int64_t allowed = g_inj.limit(write ? HIO_OP_WRITE : HIO_OP_READ, static_cast<uint64_t>(off), iov_bytes(iov, n));
  if (allowed < 0) {
    errno = static_cast<int>(-allowed);
    return -1;
  }
  iovec part[8];
  if (n > 8) abort();
  const int k = static_cast<int>(shorten(iov, n, static_cast<size_t>(allowed), part));
  return write ? real_syscalls().pwritev2(fd, part, k, off, flags) : real_syscalls().preadv2(fd, part, k, off, flags);
}

ssize_t fake_preadv2(int fd, const iovec* iov, int n, off_t off, int flags) {
  return fake_rwv2(false, fd, iov, n, off, flags);
}

ssize_t fake_pwritev2(int fd, const iovec* iov, int n, off_t off, int flags) {
  return fake_rwv2(true, fd, iov, n, off, flags);
}

int fake_ring_enter(io_uring* ring, unsigned wait_nr, bool submit) {
  if (const int rc = g_inj.enter()) return rc;
  return real_syscalls().ring_enter(ring, wait_nr, submit);
}

// A completed chunk, as the injected device would have ended it.
int fault_completion(hio_op op, uint64_t off, uint64_t len, int res) {
  if (res <= 0) return res;
  const int64_t allowed = g_inj.limit(op, off, static_cast<uint64_t>(res));
  if (allowed == res) return res;
  // EAGAIN is retried on the same range, which rewrites it.
  if (op == HIO_OP_WRITE && allowed != -EAGAIN) restore(off + static_cast<uint64_t>(std::max<int64_t>(allowed, 0)), off + len);
  return static_cast<int>(allowed);
}

// ---- the paths ------------------------------------------------------------

enum class Path {
  kBuffered,     // policy buffered: one pread/pwrite on the program's descriptor
  kDirect,       // a synchronous direct body (io_uring off)
  kSplitHead,    // a misaligned request, fault in its buffered head
  kSplitBody,    // ... in its direct body
  kSplitTail,    // ... in its buffered tail
  kBounce,       // misaligned memory: the body staged through the bounce buffer
  kParallel,     // io_uring chunks in flight together
  kParallelBounce,  // ... staged through the ring's slots
  kWriteBehind,       // write-behind, synchronous writer; error at fsync
  kWriteBehindUring,  // write-behind, io_uring writer; error at fsync
  kWriteBehindClose,  // write-behind, synchronous writer; error at close
  kDontcache,    // RWF_DONTCACHE
};

struct PathInfo {
  Path path;
  const char* name;
};

constexpr PathInfo kPaths[] = {
    {Path::kBuffered, "buffered"},     {Path::kDirect, "direct"},
    {Path::kSplitHead, "split_head"},  {Path::kSplitBody, "split_body"},
    {Path::kSplitTail, "split_tail"},  {Path::kBounce, "bounce"},
    {Path::kParallel, "parallel"},     {Path::kParallelBounce, "parallel_bounce"},
    {Path::kWriteBehind, "writebehind"}, {Path::kWriteBehindUring, "writebehind_uring"},
    {Path::kWriteBehindClose, "writebehind_close"},
    {Path::kDontcache, "dontcache"},
};

bool uses_ring(Path p) {
  return p == Path::kParallel || p == Path::kParallelBounce || p == Path::kWriteBehindUring;
}
bool write_behind(Path p) {
  return p == Path::kWriteBehind || p == Path::kWriteBehindUring || p == Path::kWriteBehindClose;
}
bool single_call(Path p) { return p == Path::kBuffered || p == Path::kDontcache; }

struct Cell {
  hio_op op;
  PathInfo path;
  Fault fault;
};

std::string cell_name(const Cell& c) {
  return std::string(c.op == HIO_OP_WRITE ? "write_" : "read_") + c.path.name + "_" + c.fault.name;
}

std::vector<Cell> matrix() {
  std::vector<Cell> cells;
  for (const PathInfo& p : kPaths) {
    for (hio_op op : {HIO_OP_WRITE, HIO_OP_READ}) {
      if (op == HIO_OP_READ && (write_behind(p.path)))  continue;
      std::vector<Fault> faults = {kEio};
      if (op == HIO_OP_WRITE) faults.insert(faults.end(), {kEnospc, kEfbig, kEdquot});
      faults.insert(faults.end(), {kShortOnce, kEagain});
      if (uses_ring(p.path)) faults.push_back(kEagainEnter);
      if (p.path == Path::kParallel) faults.push_back(kEagainExhausted);
      for (const Fault& f : faults) cells.push_back(Cell{op, p, f});
    }
  }
  return cells;
}

// ---- one cell ---------------------------------------------------------------

constexpr uint64_t kOff = 1 * M;         // where the request starts (aligned paths)
constexpr uint64_t kLen = 1 * M;         // its length
constexpr uint64_t kWriteFileSize = M + M / 2;  // the old file: the request extends it
constexpr uint64_t kWriteBehindFileSize = 4 * M;  // write-behind overwrites (no extension)
constexpr uint64_t kReadFileSize = 4 * M;

class FaultMatrix : public testing::DirectEngineTest, public ::testing::WithParamInterface<Cell> {
 protected:
  void SetUp() override {
    testing::DirectEngineTest::SetUp();
    table_ = real_syscalls();
    table_.pread = fake_pread;
    table_.pwrite = fake_pwrite;
    table_.preadv2 = fake_preadv2;
    table_.pwritev2 = fake_pwritev2;
    table_.ring_enter = fake_ring_enter;
  }
  void TearDown() override {
    g_inj.disarm();
    set_syscalls_for_testing(nullptr);
    set_completion_hook(nullptr);
    if (g_restore_fd >= 0) ::close(g_restore_fd);
    g_restore_fd = -1;
    g_old.clear();
    testing::DirectEngineTest::TearDown();
  }

  void configure_path(Path p) {
    hio_policy_config c;
    hio_policy_get(&c);
    c.mode = p == Path::kBuffered ? HIO_MODE_BUFFERED : p == Path::kDontcache ? HIO_MODE_DONTCACHE : HIO_MODE_DIRECT;
    hio_policy_set(&c);
    hio_engine_config e;
    hio_engine_get(&e);
    e.uring = uses_ring(p) ? 1 : 0;
    e.write_behind = write_behind(p) ? 1 : 0;
    e.write_behind_limit = 8 * M;
    hio_engine_set(&e);
  }

  // Where the request starts, and where the device fails.
  static uint64_t request_offset(Path p) {
    return p == Path::kSplitHead || p == Path::kSplitBody || p == Path::kSplitTail ? kOff + 100 : kOff;
  }
  static uint64_t fault_offset(Path p, const Fault& f) {
    if (p == Path::kSplitHead) return kOff + 1900;               // in the head [1M+100, 1M+4K)
    if (p == Path::kSplitTail) return kOff + kLen + 50;          // in the tail [2M, 2M+100)
    // In the body, page aligned: EAGAIN on a chunk boundary (a whole chunk
    // comes back -EAGAIN), the rest inside a chunk (one comes back short).
    return kOff + (f.kind == Kind::kAgain ? 9 * kChunk : 9 * kChunk + 4 * K);
  }

  // The results a POSIX program sees calling again from where each call
  // ended, as the path documents them.
  static std::vector<int64_t> expected_results(Path p, const Fault& f, uint64_t off, uint64_t at) {
    const int64_t len = static_cast<int64_t>(kLen), before = static_cast<int64_t>(at - off);
    if (write_behind(p) || f.kind == Kind::kAgainEnter) return {len};  // queued, or retried
    switch (f.kind) {
      case Kind::kError:
        return {before, -f.err};
      case Kind::kShort:
        // One system call reports it; the engine's loops finish the rest
        // (through the page cache when a direct body came back short).
        if (single_call(p)) return {before, len - before};
        return {len};
      case Kind::kAgain:
        if (p == Path::kParallel || p == Path::kParallelBounce) return {len};  // a chunk's EAGAIN is retried
        if (single_call(p)) return {before, -EAGAIN, len - before};
        return {before, len - before};  // the page cache's EAGAIN ends the call at X
      case Kind::kAgainEnterExhausted:
        // ring_loop.h: after kBusyRetries the ring counts as failed; the
        // request ends where its chunks did (those withdrawn were retried
        // synchronously), and the next request gets a fresh ring.
        return {4 * static_cast<int64_t>(kChunk), len - 4 * static_cast<int64_t>(kChunk)};
      default:
        return {len};
    }
  }

  SyscallTable table_{};
};

// Calls as a POSIX program does until done: again from where the last call
// ended, EAGAIN retried, any other error the end.
template <class Call>
std::vector<int64_t> run_calls(uint64_t len, Call call, bool disarm_after_first) {
  std::vector<int64_t> results;
  uint64_t done = 0;
  while (done < len && results.size() < 6) {
    const ssize_t n = call(done);
    if (disarm_after_first) g_inj.disarm();
    results.push_back(n);
    if (n > 0) done += static_cast<uint64_t>(n);
    if (n == 0 || (n < 0 && n != -EAGAIN)) break;
  }
  return results;
}

TEST_P(FaultMatrix, Cell) {
  const Cell cell = GetParam();
  const Path p = cell.path.path;
  configure_path(p);
  if (uses_ring(p) && !uring_usable()) GTEST_SKIP() << "io_uring is not usable here: no ring to fault";

  const std::string path = dir_.file("cell");
  const uint64_t size0 = cell.op == HIO_OP_READ ? kReadFileSize : write_behind(p) ? kWriteBehindFileSize : kWriteFileSize;
  g_old = testing::random_bytes(size0, 1);
  ASSERT_TRUE(write_file_durably(path, g_old));
  // Faulted write chunks get their old bytes back through this descriptor.
  if (cell.op == HIO_OP_WRITE) {
    g_restore_fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(g_restore_fd, 0);
  }

  // The caller's memory: page aligned, or not (bounce paths).
  const bool misaligned = p == Path::kBounce || p == Path::kParallelBounce;
  const std::vector<char> fresh = testing::random_bytes(kLen, 2);
  void* raw = nullptr;
  ASSERT_EQ(posix_memalign(&raw, 4096, kLen + 4096), 0);
  std::unique_ptr<char, decltype(&free)> mem(static_cast<char*>(raw), free);
  char* buf = mem.get() + (misaligned ? 512 : 0);

  hio_file* f = nullptr;
  ASSERT_EQ(hio_open(path.c_str(), cell.op == HIO_OP_READ ? O_RDONLY : O_RDWR, 0, &f), 0);
  if (write_behind(p)) {
    // Write-behind starts once a direct write has worked on the file: one
    // synchronous direct write of the bytes already there.
    memcpy(buf, g_old.data(), kLen);
    ASSERT_EQ(hio_pwrite(f, buf, kLen, 0), static_cast<ssize_t>(kLen));
  }
  hio_stats_reset();

  const uint64_t off = request_offset(p);
  const uint64_t at = fault_offset(p, cell.fault);
  set_syscalls_for_testing(&table_);
  set_completion_hook(fault_completion);
  g_inj.arm(cell.fault, cell.op, at);
  const bool exhaust = cell.fault.kind == Kind::kAgainEnterExhausted;

  std::vector<int64_t> results;
  if (cell.op == HIO_OP_READ) {
    memset(buf, 0, kLen);
    results = run_calls(
        kLen, [&](uint64_t d) { return hio_pread(f, buf + d, kLen - d, static_cast<off_t>(off + d)); }, exhaust);
    const uint64_t got = reported_bytes(results);
    ASSERT_LE(got, kLen);
    EXPECT_TRUE(testing::same_bytes(buf, g_old.data() + off, got)) << "the bytes a read reported";
  } else {
    memcpy(buf, fresh.data(), kLen);
    results = run_calls(
        kLen, [&](uint64_t d) { return hio_pwrite(f, buf + d, kLen - d, static_cast<off_t>(off + d)); }, exhaust);
  }

  // Write-behind: the error comes at fsync (or close), once.
  int deferred_at_fsync = 0, second_fsync = 0, close_rc = 0;
  if (write_behind(p) && p != Path::kWriteBehindClose) {
    deferred_at_fsync = hio_fsync(f);
    second_fsync = hio_fsync(f);
  }
  close_rc = hio_close(f);
  const int fired = g_inj.fired();  // write-behind: the writer's calls came after the call returned
  g_inj.disarm();
  set_completion_hook(nullptr);
  set_syscalls_for_testing(nullptr);
  const hio_stats s = stats();

  // The results.
  const std::vector<int64_t> want = expected_results(p, cell.fault, off, at);
  EXPECT_EQ(show_results(results), show_results(want)) << "call results";
  EXPECT_GT(fired, 0) << "the fault never fired: the cell tested nothing";

  // Deferred errors, once.
  const bool deferred = write_behind(p) && cell.fault.kind == Kind::kError;
  if (write_behind(p) && p != Path::kWriteBehindClose) {
    EXPECT_EQ(deferred_at_fsync, deferred ? -cell.fault.err : 0) << "fsync reports the queued write's error";
    EXPECT_EQ(second_fsync, 0) << "reported once";
    EXPECT_EQ(close_rc, 0) << "already reported by fsync";
  } else {
    EXPECT_EQ(close_rc, deferred ? -cell.fault.err : 0) << "close";
  }
  if (write_behind(p)) {
    EXPECT_EQ(s.write_behind_errors, deferred ? 1u : 0u);
  }

  // The file: the old bytes with exactly the landed ones replaced.
  if (cell.op == HIO_OP_WRITE) {
    const uint64_t landed = deferred ? at - off : reported_bytes(results);
    std::vector<char> model = g_old;
    if (landed) {
      model.resize(std::max<uint64_t>(model.size(), off + landed));
      memcpy(model.data() + off, fresh.data(), landed);
    }
    EXPECT_TRUE(testing::file_holds(path, model)) << "the file holds the old bytes and the " << landed << " reported";
  } else {
    EXPECT_TRUE(testing::file_holds(path, g_old)) << "a read changes nothing";
  }

  // The path the request took.
  const int op = cell.op;
  switch (p) {
    case Path::kBuffered:
      EXPECT_GT(s.bytes[op][HIO_PATH_BUFFERED], 0u);
      EXPECT_EQ(s.bytes[op][HIO_PATH_DIRECT], 0u);
      break;
    case Path::kDontcache:
      EXPECT_GT(s.bytes[op][HIO_PATH_DONTCACHE], 0u) << "RWF_DONTCACHE (Linux 6.14+) was not taken";
      break;
    case Path::kDirect:
      EXPECT_GT(s.bytes[op][HIO_PATH_DIRECT], 0u);
      EXPECT_EQ(s.uring_requests, 0u);
      break;
    case Path::kSplitHead:
    case Path::kSplitTail:
    case Path::kSplitBody:
      EXPECT_GT(s.splits, 0u);
      break;
    case Path::kBounce:
      EXPECT_GT(s.bounces, 0u);
      EXPECT_EQ(s.uring_requests, 0u);
      break;
    case Path::kParallel:
      EXPECT_GT(s.uring_requests, 0u);
      break;
    case Path::kParallelBounce:
      EXPECT_GT(s.uring_requests, 0u);
      EXPECT_GT(s.bounces, 0u);
      break;
    case Path::kWriteBehind:
    case Path::kWriteBehindUring:
    case Path::kWriteBehindClose:
      EXPECT_GT(s.write_behind_writes, 0u);
      break;
  }
  if (cell.fault.kind == Kind::kAgain && (p == Path::kParallel || p == Path::kParallelBounce || p == Path::kWriteBehindUring)) {
    EXPECT_GT(s.uring_retries, 0u) << "the chunk's EAGAIN was retried synchronously";
  }
}

INSTANTIATE_TEST_SUITE_P(Matrix, FaultMatrix, ::testing::ValuesIn(matrix()),
                         [](const ::testing::TestParamInfo<Cell>& row) { return cell_name(row.param); });

}  // namespace
}  // namespace hybridio
