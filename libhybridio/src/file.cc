// file.cc - see file.h.
#include "file.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <new>

#include "aligned_buffer.h"
#include "buffer_pool.h"
#include "monotonic_clock.h"
#include "cache_probe.h"
#include "checked_copy.h"
#include "drop_behind.h"
#include "fsize_limit.h"
#include "lease_guard.h"
#include "log.h"
#include "memory_pressure.h"
#include "pinned_request.h"
#include "private_fd.h"
#include "reuse_admission.h"
#include "runtime.h"
#include "syscall_table.h"
#include "uring_engine.h"

#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080  // Linux 6.14+ uapi value
#endif

namespace hybridio {
namespace {

// Largest piece handed to one direct system call: Linux caps a single
// read/write at 0x7ffff000 bytes; stay well below and page aligned.
constexpr uint64_t kMaxDirectChunk = 1ULL << 30;

ssize_t sys_io(hio_op op, int fd, char* buf, size_t len, uint64_t offset, int rwf) {
  if (rwf == 0) {
    return op == HIO_OP_READ ? sys().pread(fd, buf, len, static_cast<off_t>(offset))
                             : sys().pwrite(fd, buf, len, static_cast<off_t>(offset));
  }
  iovec iov{buf, len};
  return op == HIO_OP_READ ? sys().preadv2(fd, &iov, 1, static_cast<off_t>(offset), rwf)
                           : sys().pwritev2(fd, &iov, 1, static_cast<off_t>(offset), rwf);
}

// The calling thread's bounce buffer, grown on demand and kept for reuse.
thread_local AlignedBuffer t_bounce;

char* bounce_buffer(uint64_t size, uint32_t alignment) {
  AlignedBuffer& buffer = t_bounce;
  size_t align = std::max<size_t>(alignment, 4096);
  if (buffer.size() < size || reinterpret_cast<uintptr_t>(buffer.data()) % align != 0)
    buffer = AlignedBuffer(size, align);
  return buffer.data();
}

uint32_t page_bytes() {
  static const uint32_t page = static_cast<uint32_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// A buffered transfer on the program's open file: through the request's
// pin under the shim (pinned_request.h), else on the descriptor.  Bytes, or
// -1 with errno set, as the system call.
ssize_t buffered_io(hio_op op, int fd, char* buf, size_t len, uint64_t offset, int rwf) {
  if (PinnedRequest* pin = PinnedRequest::current()) {
    ssize_t n = pin->buffered(op, buf, len, offset, rwf);
    if (n >= 0) return n;
    errno = static_cast<int>(-n);
    return -1;
  }
  return sys_io(op, fd, buf, len, offset, rwf);
}

// A buffered read of `len` bytes at `offset` into `buf`, as buffered_io().
// The kernel copies out of the page cache from the offset's place in a
// page; where that copy is slow at a short distance (checked_copy.h: a
// cached read into a malloc'd buffer, 16 bytes into a page, at a
// page-aligned offset), such reads (File::bounces_read) go through the
// thread's bounce buffer in pieces, placed half a page from the offset's
// place, so that the kernel's copy into it and the copy out of it (checked
// under the shim) are both at harmless distances.  Like the kernel's, the
// read stops at the end of the file, at an error after some bytes
// (returning those), and at the end of the caller's memory (EFAULT when
// nothing was copied).
ssize_t buffered_read(int fd, char* buf, size_t len, uint64_t offset, int rwf) {
  const uint32_t page = page_bytes();
  char* bounce = File::bounces_read(buf, len, offset) ? bounce_buffer(kSlowCopyPiece + page, page) : nullptr;
  if (!bounce) return buffered_io(HIO_OP_READ, fd, buf, len, offset, rwf);
  bounce += harmless_page_offset(offset);
  size_t done = 0;
  while (done < len) {
    const size_t want = std::min(kSlowCopyPiece, len - done);
    const ssize_t n = buffered_io(HIO_OP_READ, fd, bounce, want, offset + done, rwf);
    if (n < 0) {
      if (done == 0) return -1;  // errno set
      break;
    }
    if (n == 0) break;
    const size_t got = static_cast<size_t>(n);
    size_t copied = got;
    if (transparent_mode()) {
      copied = copy_checked(bounce, buf + done, got, false);
    } else {
      memcpy(buf + done, bounce, got);
    }
    done += copied;
    if (copied < got) {
      if (done == 0) {
        errno = EFAULT;
        return -1;
      }
      break;
    }
    if (got < want) break;
  }
  return static_cast<ssize_t>(done);
}

// buffered_io(), with reads through buffered_read().
ssize_t cached_io(hio_op op, int fd, char* buf, size_t len, uint64_t offset, int rwf) {
  return op == HIO_OP_READ ? buffered_read(fd, buf, len, offset, rwf) : buffered_io(op, fd, buf, len, offset, rwf);
}

// The calling thread's staging slot i (of two) for misaligned bodies under
// the shim: pool memory (huge pages, NUMA-local; a 4 MiB direct transfer
// from scattered 4 KiB pages runs at half speed on virtio-blk), kept.
thread_local PoolBuffer t_staging[2];

char* staging_slot(int i, uint64_t size) {
  if (t_staging[i].size() < size) t_staging[i] = BufferPool::get().acquire(size);
  return t_staging[i] ? t_staging[i].data() : nullptr;
}

ssize_t result_of(uint64_t done, int error) {
  if (done > 0 || error == 0) return static_cast<ssize_t>(done);
  return -error;
}

// Whether the file's pages are written back to a device: not on tmpfs,
// ramfs or hugetlbfs, where the page cache is the file and drop-behind
// would only cost.
bool has_writeback(int fd) {
  struct statfs st;
  if (fstatfs(fd, &st) != 0) return false;
  switch (static_cast<uint64_t>(st.f_type)) {
    case TMPFS_MAGIC:
    case RAMFS_MAGIC:
    case HUGETLBFS_MAGIC:
      return false;
    default:
      return true;
  }
}

}  // namespace

File::File(Runtime& rt, int fd, bool owns_fd, int open_flags)
    : rt_(rt), fd_(fd), owns_fd_(owns_fd), open_flags_(open_flags), align_(query_dio_alignment(fd)),
      has_writeback_(has_writeback(fd)) {
  if (align_.mem_align == 0 || align_.offset_align == 0) no_direct_.store(true);
}

File::~File() { close(); }

int File::open(const char* path, int flags, mode_t mode, File** out) {
  int fd = sys().open(path, flags | O_CLOEXEC, mode);
  if (fd < 0) return -errno;
  int err = adopt(fd, true, out);
  if (err) sys().close(fd);
  return err;
}

int File::adopt(int fd, bool owns_fd, File** out) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0) return -errno;
  struct stat st;
  if (sys().fstat(fd, &st) != 0) return -errno;
  if (!S_ISREG(st.st_mode)) return -EINVAL;
  File* f = new (std::nothrow) File(Runtime::get(), fd, owns_fd, flags);
  if (!f) return -ENOMEM;
  if (Learner* learner = f->rt_.learner()) f->learn_.attach(learner->filesystem(st.st_dev, fd), fd, &f->rt_.stats());
  *out = f;
  return 0;
}

uint32_t File::file_flags() const {
  uint32_t flags = 0;
  if (open_flags_ & O_APPEND) flags |= HIO_FILE_APPEND;
  if (open_flags_ & (O_SYNC | O_DSYNC)) flags |= HIO_FILE_SYNC;
  if (open_flags_ & O_DIRECT) flags |= HIO_FILE_CALLER_DIRECT;
  if (mapped_.load(std::memory_order_relaxed)) flags |= HIO_FILE_MAPPED;
  if (no_direct_.load(std::memory_order_relaxed)) flags |= HIO_FILE_NO_DIRECT;
  if (rt_.config().dontcache && !dontcache_refused_.load(std::memory_order_relaxed))
    flags |= HIO_FILE_DONTCACHE_OK;
  return flags;
}

int File::direct_fd() {
  int dfd = direct_fd_.load(std::memory_order_acquire);
  if (dfd >= 0) return dfd;
  std::lock_guard<std::mutex> lock(twin_mu_);
  if ((dfd = direct_fd_.load(std::memory_order_relaxed)) >= 0) return dfd;
  if (no_direct_.load()) return -1;
  // The twin is an open of the inode, which would break a lease the
  // program holds on its descriptor: none then; this request takes the
  // page cache, and the next asks again (lease_guard.h).
  struct stat own;
  if (sys().fstat(fd_, &own) != 0 || lease_held(fd_, own.st_dev, own.st_ino)) return -1;
  // Re-open the same inode through /proc: the caller's descriptor keeps its
  // flags untouched (F_GETFL shows nothing new) and the twin is ours alone.
  int access = open_flags_ & O_ACCMODE;
  int flags = access | O_DIRECT | O_CLOEXEC | (open_flags_ & (O_SYNC | O_DSYNC));
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd_);
  dfd = sys().open(path, flags, 0);
  struct stat a, b;
  if (dfd >= 0 && (sys().fstat(fd_, &a) != 0 || sys().fstat(dfd, &b) != 0 || a.st_dev != b.st_dev ||
                   a.st_ino != b.st_ino)) {
    sys().close(dfd);
    dfd = -1;
    errno = ESTALE;
  }
  if (dfd < 0) {
    HIO_INFO("fd %d: O_DIRECT twin refused (%s); using buffered I/O for this file", fd_,
             strerror(errno));
    rt_.stats().add(rt_.stats().direct_open_refused);
    no_direct_.store(true);
    return -1;
  }
  dfd = adopt_private_fd(dfd, this);
  if (dfd < 0) return -1;  // no memory to keep it: this request takes the page cache
  direct_fd_.store(dfd, std::memory_order_release);
  return dfd;
}

void File::forget_direct_fd(int fd) {
  // The program closed (or replaced) our twin: drop it without closing;
  // the next direct request opens a new one.  Queued writes on it finish
  // first, before the number can be reused for another file.
  wb_.wait_all();
  int expected = fd;
  if (direct_fd_.compare_exchange_strong(expected, -1)) release_private_fd(fd);
}

hio_request File::describe(hio_op op, const char* buf, size_t len, uint64_t offset, bool advance_stream) {
  hio_request req{};
  req.op = op;
  req.offset = offset;
  req.length = len;
  req.buf_addr = reinterpret_cast<hio_uptr>(buf);
  // Direct bodies in memory that is aligned for the device (STATX_DIOALIGN,
  // 512 B on virtio-blk) but not to a page are staged through page-aligned
  // bounce slots: every page of such a transfer straddles two pages of
  // memory, and on the development VM a 64 MiB write from 512-byte-aligned
  // memory took 340 ms where the staged copy took 19 ms (NVMe's page-sized
  // PRP entries split such transfers too).  The copy costs far less.
  req.mem_align = align_.mem_align ? std::max<uint32_t>(align_.mem_align, page_bytes()) : 0;
  req.offset_align = align_.offset_align;
  // Under the shim a direct body covers whole pages: a page that is partly
  // written direct and partly through the cache is where direct I/O and
  // another process's shared mapping of the file can lose each other's
  // stores; the head and tail take the page cache instead.
  if (transparent_mode() && req.offset_align) req.offset_align = std::max<uint32_t>(req.offset_align, page_bytes());
  req.file_size = ~0ULL;  // not needed unless the request may go direct
  req.cached_pages = HIO_PAGES_UNKNOWN;
  req.dirty_pages = HIO_PAGES_UNKNOWN;
  req.file_flags = file_flags();
  // Sequential-stream state: racy under concurrent callers, which only
  // weakens a heuristic, never correctness.
  if (!advance_stream) {  // a plan: look, do not move the stream on
    req.seq_run = stream_end_.load(std::memory_order_relaxed) == offset
                      ? stream_run_.load(std::memory_order_relaxed) + 1
                      : 0;
    return req;
  }
  req.seq_run = extend_stream(offset, len);
  return req;
}

uint32_t File::extend_stream(uint64_t offset, uint64_t len) {
  const uint64_t prev_end = stream_end_.exchange(offset + len, std::memory_order_relaxed);
  const uint32_t run = prev_end == offset ? stream_run_.load(std::memory_order_relaxed) + 1 : 0;
  stream_run_.store(run, std::memory_order_relaxed);
  return run;
}

ssize_t File::transfer(hio_op op, char* buf, size_t len, uint64_t offset, const Plan* plan) {
  // Nothing reads or overwrites a range while a queued write of it is pending.
  if (!wb_.idle()) wb_.wait_overlap(offset, len);
  if (op != HIO_OP_WRITE) return route(describe(op, buf, len, offset), buf, true, plan);
  // The contention signal: how many threads are writing this file right now.
  const uint32_t writers = writers_.fetch_add(1, std::memory_order_relaxed) + 1;
  hio_request req = describe(op, buf, len, offset);
  req.writers = writers;
  ssize_t n = route(req, buf, true, plan);
  writers_.fetch_sub(1, std::memory_order_relaxed);
  return n;
}

hio_decision File::decide(hio_request& req, bool probed, bool may_explore) {
  const hio_policy_config& base = rt_.policy();
  hio_policy_config steered;
  const hio_policy_config& cfg =
      learn_.learns(base, req) ? learn_.steer(base, req, may_explore, &steered, &probed) : base;
  hio_decision d = decide_with(cfg, req, probed);
  // A read sent off the cache, or found cached, is shown to the re-use
  // history, which may admit it to the cache (the reuse rule) and notes it.
  consult_reuse(rt_, fd_, cfg, req, d);
  if (req.op == HIO_OP_READ) stream_uncached_.store(d.path == HIO_PATH_DONTCACHE, std::memory_order_relaxed);
  return d;
}

hio_decision File::decide_with(const hio_policy_config& cfg, hio_request& req, bool& probed) {
  const hio_op op = req.op;
  const uint64_t len = req.length, offset = req.offset;
  hio_decision d;

  // Memory pressure only matters for requests it could push over a threshold.
  if (cfg.mode == HIO_MODE_HYBRID) {
    if (len >= hio_policy_smallest_offcache(&cfg, op) && len < std::max(cfg.write_threshold, cfg.read_threshold))
      req.pressure = memory_pressure();
  }
  hio_policy_decide(&cfg, &req, &d);

  // Only a request headed direct (or, measured best, uncached) is worth
  // probing: the probe can only keep it buffered.
  const bool off_cache = d.path == HIO_PATH_DIRECT ||
                         (d.path == HIO_PATH_DONTCACHE && (req.file_flags & HIO_FILE_PREFER_DONTCACHE));
  if (off_cache && d.rule != HIO_RULE_CALLER_DIRECT) {
    if (op == HIO_OP_READ && req.file_size == ~0ULL) {
      struct stat st;
      if (sys().fstat(fd_, &st) == 0) req.file_size = static_cast<uint64_t>(st.st_size);
    }
    // A read that continues a stream whose last read went uncached finds
    // that read's readahead cached, not data anyone read: it goes on
    // uncached (coherent with whatever is cached) instead of taking the
    // cache, whose own readahead would then keep every later read there.
    const bool own_readahead = op == HIO_OP_READ && d.path == HIO_PATH_DONTCACHE && req.seq_run > 0 &&
                               stream_uncached_.load(std::memory_order_relaxed);
    if (cfg.mode == HIO_MODE_HYBRID && !probed && !own_readahead) {
      CacheState cache = probe_cache_sampled(offset, len, cfg.page_size);
      count_probe(cache.method);
      req.cached_pages = cache.cached_pages;
      req.dirty_pages = cache.dirty_pages;
      probed = true;
    }
    hio_policy_decide(&cfg, &req, &d);
  }
  return d;
}

File::Plan File::plan(hio_op op, const char* buf, size_t len, uint64_t offset, bool explore) {
  Plan p;
  p.req = describe(op, buf, len, offset, false);
  if (op == HIO_OP_WRITE) p.req.writers = writers_.load(std::memory_order_relaxed) + 1;
  p.explores = explore;
  p.decision = decide(p.req, false, explore);
  if (learn_.learns(rt_.policy(), p.req)) p.started_ns = monotonic_ns();
  return p;
}

void File::trace(const hio_request& req, const hio_decision& d) {
  if (!rt_.trace().enabled()) return;
  const bool measured = d.rule == HIO_RULE_LEARNED || d.rule == HIO_RULE_EXPLORED;
  rt_.trace().record(fd_, req, d, measured ? learn_.estimate_note(req) : "");
}

void File::finish_passthrough(const Plan& plan, uint64_t bytes) {
  // The caller executed it (the shim's exact calls through the cache or
  // uncached; a direct plan goes to execute_plan, whose route traces it).
  trace(plan.req, plan.decision);
  if (plan.started_ns) learn_.observe(plan.req, plan.decision, bytes, monotonic_ns() - plan.started_ns, true);
  extend_stream(plan.req.offset, plan.req.length);
  Stats& s = rt_.stats();
  s.count_rule(plan.decision.rule, plan.req.length);
  s.count_request(plan.req.op, plan.decision.path);
  s.count_bytes(plan.req.op, plan.decision.path, bytes);
}

ssize_t File::execute_plan(const Plan& plan, void* buf, size_t len, uint64_t offset) {
  if (len > SSIZE_MAX) len = SSIZE_MAX;
  return transfer(plan.req.op, static_cast<char*>(buf), len, offset, &plan);
}

void File::note_dontcache_refused() {
  if (!dontcache_refused_.exchange(true)) rt_.stats().add(rt_.stats().dontcache_refused);
}

ssize_t File::route(hio_request req, char* buf, bool cached_first, const Plan* plan) {
  // The remainder of a cached-first read arrives already probed.
  const bool probed = !cached_first && req.cached_pages != HIO_PAGES_UNKNOWN;
  const hio_op op = req.op;
  const uint64_t len = req.length;
  // A planned request is executed as planned: deciding it again would probe
  // the cache twice, and an exploration the plan paid for must be followed.
  const bool as_planned = plan && plan->req.op == op && plan->req.offset == req.offset && plan->req.length == len;
  hio_decision d;
  if (as_planned) {
    const uint32_t writers = req.writers;
    req = plan->req;
    req.writers = writers;
    d = plan->decision;
  } else {
    d = decide(req, probed, !(plan && plan->explores));
  }

  // A read of a partly cached range that would go direct if nothing were
  // cached: what is cached comes from the cache, the rest is decided again
  // (Lustre's cached-first read).  Also when most of it is cached: kernel
  // readahead behind a small header read caches the start of the next
  // record, which must not send the whole record through the cache.
  hio_rule cold_rule = d.rule;
  if (cached_first && op == HIO_OP_READ && d.rule != HIO_RULE_CALLER_DIRECT && req.cached_pages > 0 &&
      (d.path == HIO_PATH_DIRECT || (d.rule == HIO_RULE_READ_CACHED && direct_if_uncached(req, &cold_rule)))) {
    ssize_t n;
    if (read_partly_cached(req, buf, cold_rule, &n)) return n;
  }

  trace(req, d);
  rt_.stats().count_rule(d.rule, len);
  rt_.stats().count_request(op, d.path);
  return execute_measured(req, d, buf);
}

ssize_t File::execute_measured(const hio_request& req, const hio_decision& d, char* buf) {
  if (!learn_.learns(rt_.policy(), req)) return execute(req, d, buf);
  const uint64_t started = monotonic_ns();
  const ssize_t n = execute(req, d, buf);
  // A direct write queued behind the call (write-behind) is not timed.
  const bool timed = !(req.op == HIO_OP_WRITE && d.path == HIO_PATH_DIRECT && engine_settings().write_behind);
  learn_.observe(req, d, n > 0 ? static_cast<uint64_t>(n) : 0, monotonic_ns() - started, timed);
  return n;
}

bool File::direct_if_uncached(const hio_request& req, hio_rule* rule) const {
  const uint64_t pages = hio_range_pages(req.offset, req.length, rt_.policy().page_size);
  if (static_cast<uint64_t>(req.cached_pages) >= pages) return false;  // all of it is cached
  hio_request cold = req;
  cold.cached_pages = 0;
  hio_decision d;
  if (hio_policy_decide(&rt_.policy(), &cold, &d) != HIO_PATH_DIRECT) return false;
  *rule = d.rule;
  return true;
}

ssize_t File::read_uncached(hio_request r, char* buf, hio_rule rule) {
  // The part of a request that the policy sent direct as a whole and that
  // the probe found uncached: direct, whatever its own size, cut as the
  // core cuts a direct body.
  const hio_policy_config& cfg = rt_.policy();
  r.cached_pages = 0;
  uint64_t len = r.length;
  if (r.file_size != ~0ULL) len = r.offset >= r.file_size ? 0 : std::min(len, r.file_size - r.offset);
  hio_decision d;
  if (len == 0 || !hio_plan_direct(&cfg, &r, len, false, &d)) return route(r, buf, false);
  d.rule = rule;
  if (rt_.trace().enabled()) rt_.trace().record(fd_, r, d);
  rt_.stats().count_rule(d.rule, r.length);
  rt_.stats().count_request(HIO_OP_READ, d.path);
  // A direct read of the uncached part is a sample of direct reads of its size.
  return execute_measured(r, d, buf);
}

bool File::read_partly_cached(const hio_request& req, char* buf, hio_rule rule, ssize_t* out) {
  const uint32_t page = rt_.policy().page_size;
  // Everything is judged by the cache as it was before any of it was read:
  // a buffered read that crosses a readahead marker starts readahead into
  // what follows, which must not talk that out of going direct.
  uint64_t done = read_cached_prefix(buf, req.length, req.offset);
  auto part = [&](uint64_t from, uint64_t len) {
    hio_request r = req;
    r.offset += from;
    r.buf_addr += from;
    r.length = len;
    return r;
  };
  auto finish = [&](ssize_t n) {  // bytes so far plus a part's result
    *out = n < 0 ? (done ? static_cast<ssize_t>(done) : n) : static_cast<ssize_t>(done + static_cast<uint64_t>(n));
    return true;
  };
  if (done == req.length) return finish(0);
  const int64_t prefix_pages = done ? static_cast<int64_t>(hio_range_pages(req.offset, done, page)) : 0;
  if (req.cached_pages > prefix_pages) {
    // Cached at the end as well: the part before the end is read direct,
    // then the end comes from the cache.
    const uint64_t rest = req.length - done;
    const uint64_t suffix = cached_suffix_bytes(fd_, req.offset + done, rest);
    if (suffix > 0 && suffix < rest) {
      const uint64_t middle = rest - suffix;
      const ssize_t m = read_uncached(part(done, middle), buf + done, rule);
      if (m < 0 || static_cast<uint64_t>(m) < middle) return finish(m);  // an error, or EOF moved
      done += middle;
      const uint64_t from_cache = read_cached_prefix(buf + done, suffix, req.offset + done);
      done += from_cache;
      if (from_cache == suffix) return finish(0);
      hio_request tail = part(done, req.length - done);  // evicted meanwhile: as any read
      tail.cached_pages = HIO_PAGES_UNKNOWN;
      return finish(route(tail, buf + done, false));
    }
  }
  if (done == 0) return false;  // neither end cached: the caller executes its decision
  return finish(read_uncached(part(done, req.length - done), buf + done, rule));
}

CacheState File::probe_cache_sampled(uint64_t offset, uint64_t len, uint32_t page_size) {
  // cachestat(2) walks every cached page of the range (about 34 ns each):
  // on a fully cached 4 MiB read that is 10 % of the copy it decides.  Two
  // 64 KiB windows (the start and the end) answer the common cases - all
  // cached, nothing cached - for 32 pages; only a mixed answer pays for the
  // whole range.  The answer only steers the policy, never correctness.
  constexpr uint64_t kWindow = 64 << 10;
  if (len < 16 * kWindow || !cachestat_available()) return probe_cache(fd_, offset, len);
  const uint64_t starts[2] = {offset, offset + len - kWindow};
  int64_t cached = 0, dirty = 0, pages = 0;
  for (uint64_t at : starts) {
    CacheState w;
    if (!probe_cachestat(fd_, at, kWindow, &w)) return probe_cache(fd_, offset, len);
    cached += w.cached_pages;
    dirty += w.dirty_pages;
    pages += static_cast<int64_t>(hio_range_pages(at, kWindow, page_size));
  }
  const bool uniform = (cached == 0 || cached == pages) && (dirty == 0 || dirty == pages);
  if (!uniform) return probe_cache(fd_, offset, len);
  CacheState all;
  const int64_t range = static_cast<int64_t>(hio_range_pages(offset, len, page_size));
  all.cached_pages = cached ? range : 0;
  all.dirty_pages = dirty ? range : 0;
  all.method = ProbeMethod::kCachestat;
  return all;
}

void File::count_probe(ProbeMethod method) {
  Stats& s = rt_.stats();
  switch (method) {
    case ProbeMethod::kCachestat: s.add(s.probe_cachestat); break;
    case ProbeMethod::kMincore: s.add(s.probe_mincore); break;
    case ProbeMethod::kNone: s.add(s.probe_failed); break;
  }
}

uint64_t File::read_cached_prefix(char* buf, uint64_t len, uint64_t offset) {
  // Read exactly the cached prefix: a buffered read that reaches an uncached
  // page would start readahead into the range meant to go direct (even with
  // RWF_NOWAIT), and RWF_NOWAIT keeps a page evicted meanwhile from blocking.
  uint64_t prefix = cached_prefix_bytes(fd_, offset, len);
  count_probe(prefix ? ProbeMethod::kCachestat : ProbeMethod::kNone);
  if (prefix == 0) return 0;
  ssize_t n = buffered_read(fd_, buf, static_cast<size_t>(prefix), offset, RWF_NOWAIT);
  if (n <= 0) return 0;
  Stats& s = rt_.stats();
  s.count_bytes(HIO_OP_READ, HIO_PATH_BUFFERED, static_cast<uint64_t>(n));
  s.add(s.cached_first_reads);
  s.add(s.cached_first_bytes, static_cast<uint64_t>(n));
  s.count_rule(HIO_RULE_READ_CACHED, static_cast<uint64_t>(n));
  if (rt_.trace().enabled()) {
    hio_request served{};
    served.op = HIO_OP_READ;
    served.offset = offset;
    served.length = static_cast<uint64_t>(n);
    served.cached_pages = served.dirty_pages = HIO_PAGES_UNKNOWN;
    hio_decision d{};
    d.path = HIO_PATH_BUFFERED;
    d.rule = HIO_RULE_READ_CACHED;
    d.body_len = static_cast<uint64_t>(n);
    rt_.trace().record(fd_, served, d);
  }
  return static_cast<uint64_t>(n);
}

ssize_t File::single_buffered(hio_op op, char* buf, size_t len, uint64_t offset, hio_path path) {
  Stats& s = rt_.stats();
  if (path == HIO_PATH_DONTCACHE && op == HIO_OP_WRITE && drops_behind(len)) {
    DropBehind drop;
    if (drop.begin(fd_, len)) {
      const ssize_t n = buffered_io(op, fd_, buf, len, offset, 0);
      const int err = errno;
      drop.finish(offset, n > 0 ? static_cast<uint64_t>(n) : 0);
      if (n < 0) return -err;
      s.count_bytes(op, HIO_PATH_DONTCACHE, static_cast<uint64_t>(n));
      return n;
    }
  }
  if (path == HIO_PATH_DONTCACHE) {
    ssize_t n = cached_io(op, fd_, buf, len, offset, RWF_DONTCACHE);
    if (n >= 0) {
      s.count_bytes(op, HIO_PATH_DONTCACHE, static_cast<uint64_t>(n));
      return n;
    }
    if (errno != EOPNOTSUPP && errno != EINVAL) return -errno;
    // Kernel or filesystem without RWF_DONTCACHE: plain buffered, from now on.
    note_dontcache_refused();
  }
  ssize_t n = cached_io(op, fd_, buf, len, offset, 0);
  if (n < 0) return -errno;
  s.count_bytes(op, HIO_PATH_BUFFERED, static_cast<uint64_t>(n));
  return n;
}

void File::release_thread_staging() {
  t_staging[0].reset();
  t_staging[1].reset();
  t_bounce = AlignedBuffer();
}

bool File::bounces_read(const char* buf, size_t len, uint64_t offset) {
  return len >= kBouncedReadMin && slow_copy_distance(offset, reinterpret_cast<uintptr_t>(buf));
}

bool File::drops_behind(uint64_t len) const {
  // Hybrid's own uncached writes only: the dontcache policy is the kernel's
  // RWF_DONTCACHE, the fixed policy hybrid is measured against.
  return rt_.policy().mode == HIO_MODE_HYBRID && has_writeback_ && !(open_flags_ & O_APPEND) && drop_behind_wanted(len);
}

File::Piece File::loop_buffered(hio_op op, char* buf, uint64_t len, uint64_t offset) {
  Piece p;
  while (p.done < len) {
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(len - p.done, kMaxDirectChunk));
    ssize_t n = cached_io(op, fd_, buf + p.done, chunk, offset + p.done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      p.error = errno;
      break;
    }
    if (n == 0) break;  // EOF on read
    p.done += static_cast<uint64_t>(n);
  }
  if (p.done) rt_.stats().count_bytes(op, HIO_PATH_BUFFERED, p.done);
  return p;
}

File::Piece File::direct_failed(int err, int dfd, Piece p) {
  Stats& s = rt_.stats();
  // EINVAL before any direct I/O has worked means the file or filesystem
  // does not support it (alignment was checked); afterwards it is real.
  if (err == EINVAL && p.done == 0 && !direct_proven_.load()) {
    if (!no_direct_.exchange(true)) s.add(s.direct_io_refused);
    p.refused = true;
  } else if (err == EFAULT || PinnedRequest::current()) {
    // The caller's memory is not all there, or (under the shim) any other
    // failure of the direct body: the page cache path is the reference, so
    // it redoes the rest and reports it as the system call would - the
    // bytes before a bad page, a short count before ENOSPC or EDQUOT, a
    // device error at fsync rather than in the write.
    p.refused = true;
  } else if (err == EBADF && dfd != fd_) {
    // The twin was closed behind our back (a program closing every
    // descriptor): finish through the page cache, reopen next time.
    forget_direct_fd(dfd);
    p.refused = true;
  } else {
    p.error = err;
  }
  return p;
}

void File::count_direct(hio_op op, uint64_t bytes, bool bounce) {
  if (!bytes) return;
  Stats& s = rt_.stats();
  s.count_bytes(op, HIO_PATH_DIRECT, bytes);
  if (bounce) {
    s.add(s.bounces);
    s.add(s.bounce_bytes, bytes);
  }
}

File::Piece File::pinned_direct(PinnedRequest& pin, hio_op op, char* buf, uint64_t len, uint64_t offset,
                                bool bounce) {
  Piece p;
  Stats& s = rt_.stats();
  if (no_direct_.load(std::memory_order_relaxed)) {
    p.refused = true;
    return p;
  }
  if (int rc = pin.open_twin(); rc < 0) {
    // EINVAL: the filesystem refuses O_DIRECT, from now on.  Anything else
    // (EACCES after a chmod, ENFILE, a reused number): this request takes
    // the page cache.
    if (rc == -EINVAL && !no_direct_.exchange(true)) s.add(s.direct_open_refused);
    p.refused = true;
    return p;
  }
  const EngineSettings engine = engine_settings();
  if (op == HIO_OP_READ && len >= 2 * engine.chunk_size) {
    // Reads never grow the file: their chunks may be in flight together.
    p = parallel_body(op, PinnedRequest::twin_slot(), buf, len, offset, bounce, engine, true);
  } else if (bounce) {
    p = pinned_staged(pin, op, buf, len, offset);
  } else {
    // One kernel request per body (up to 1 GiB): the block layer still
    // cuts it into requests in flight together, and an extending write
    // grows the file only once its data is there (chunks completing out of
    // order would show a reader following the file zeros never written).
    while (p.done < len) {
      const uint64_t chunk = std::min(len - p.done, kMaxDirectChunk);
      ssize_t n = pin.direct(op, buf + p.done, chunk, offset + p.done);
      if (n < 0) {
        p = direct_failed(static_cast<int>(-n), -1, p);
        break;
      }
      direct_proven_.store(true, std::memory_order_relaxed);
      p.done += static_cast<uint64_t>(n);
      if (static_cast<uint64_t>(n) < chunk) break;
    }
  }
  if (op == HIO_OP_READ && p.done) pin.note_direct_read();
  count_direct(op, p.done, bounce);
  return p;
}

File::Piece File::pinned_staged(PinnedRequest& pin, hio_op op, char* buf, uint64_t len, uint64_t offset) {
  // Chunks of the engine's chunk size through two staging slots: one chunk
  // is copied while the other is in flight.  One transfer at a time, so an
  // extending write grows the file in order.  Copies stop at the end of
  // the caller's memory (copy_checked): that chunk is left to the page
  // cache, which reports where the memory ends.
  Piece p;
  const uint64_t chunk = engine_settings().chunk_size;
  char* slot[2] = {staging_slot(0, chunk), staging_slot(1, chunk)};
  if (!slot[0] || !slot[1]) {
    p.refused = true;
    return p;
  }
  auto size_at = [&](uint64_t at) { return std::min(chunk, len - at); };
  uint64_t at = 0;
  unsigned k = 0;
  if (op == HIO_OP_WRITE) {
    uint64_t staged = copy_checked(slot[0], buf, size_at(0), true);
    for (;;) {
      const uint64_t n = size_at(at), next = at + n;
      if (staged < n) {
        p.refused = true;
        break;
      }
      if (int rc = pin.start_direct(op, slot[k & 1], n, offset + at); rc < 0) {
        p = direct_failed(-rc, -1, p);
        break;
      }
      const uint64_t next_staged = next < len ? copy_checked(slot[(k + 1) & 1], buf + next, size_at(next), true) : 0;
      const ssize_t w = pin.finish_direct();
      if (w < 0) {
        p = direct_failed(static_cast<int>(-w), -1, p);
        break;
      }
      direct_proven_.store(true, std::memory_order_relaxed);
      p.done += static_cast<uint64_t>(w);
      if (static_cast<uint64_t>(w) < n || next >= len) break;
      at = next;
      staged = next_staged;
      ++k;
    }
    return p;
  }
  if (int rc = pin.start_direct(op, slot[0], size_at(0), offset); rc < 0) return direct_failed(-rc, -1, p);
  for (;;) {
    const uint64_t n = size_at(at), next = at + n;
    const ssize_t r = pin.finish_direct();
    if (r < 0) {
      p = direct_failed(static_cast<int>(-r), -1, p);
      break;
    }
    direct_proven_.store(true, std::memory_order_relaxed);
    const bool full = static_cast<uint64_t>(r) == n;
    const bool more = full && next < len && pin.start_direct(op, slot[(k + 1) & 1], size_at(next), offset + next) == 0;
    const uint64_t copied = copy_checked(slot[k & 1], buf + at, static_cast<size_t>(r), false);
    p.done += copied;
    if (copied < static_cast<uint64_t>(r) || (full && next < len && !more)) {
      p.refused = true;  // the caller's memory ends here, or the next chunk could not start
      if (more) pin.finish_direct();
      break;
    }
    if (!more) break;
    at = next;
    ++k;
  }
  return p;
}

File::Piece File::loop_direct(hio_op op, char* buf, uint64_t len, uint64_t offset, bool bounce) {
  if (PinnedRequest* pin = PinnedRequest::current()) return pinned_direct(*pin, op, buf, len, offset, bounce);
  Piece p;
  int dfd = direct_fd();
  if (dfd < 0) {
    p.refused = true;
    return p;
  }
  const EngineSettings engine = engine_settings();
  // Two chunks or more: in flight together when io_uring works, else one
  // at a time (counted).
  const bool chunked = len >= 2 * engine.chunk_size;
  if (chunked && engine.uring && uring_usable()) {
    p = parallel_body(op, dfd, buf, len, offset, bounce, engine, false);
  } else {
    if (chunked) rt_.stats().add(rt_.stats().sync_fallback_requests);
    p = sync_body(op, dfd, buf, len, offset, bounce);
  }
  count_direct(op, p.done, bounce);
  return p;
}

File::Piece File::parallel_body(hio_op op, int dfd, char* buf, uint64_t len, uint64_t offset, bool bounce,
                                const EngineSettings& engine, bool fixed_file) {
  Piece p;
  const ChunkedResult r = parallel_direct(op, dfd, buf, len, offset, bounce, engine, rt_.stats(), fixed_file);
  p.done = r.done;
  if (r.done) direct_proven_.store(true, std::memory_order_relaxed);
  if (r.error == EAGAIN && r.done == 0) {
    p.refused = true;  // no ring, or no memory for its staging slots: the page cache needs neither
  } else if (r.error) {
    p = direct_failed(r.error, fixed_file ? -1 : dfd, p);
  } else if (r.done < len) {
    p.refused = true;  // short: EOF moved, or the caller's memory ended; the page cache says which
  }
  return p;
}

File::Piece File::sync_body(hio_op op, int dfd, char* buf, uint64_t len, uint64_t offset, bool bounce) {
  Piece p;
  const uint64_t chunk_max = bounce ? rt_.config().bounce_size : kMaxDirectChunk;
  char* staging = bounce ? bounce_buffer(chunk_max, align_.mem_align) : nullptr;
  if (bounce && !staging) {
    p.refused = true;  // no memory for a bounce buffer: the buffered path needs none
    return p;
  }
  while (p.done < len) {
    uint64_t chunk = std::min(len - p.done, chunk_max);
    char* src = bounce ? staging : buf + p.done;
    if (bounce && op == HIO_OP_WRITE) memcpy(staging, buf + p.done, chunk);
    ssize_t n = sys_io(op, dfd, src, chunk, offset + p.done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      p = direct_failed(errno, dfd, p);
      break;
    }
    direct_proven_.store(true, std::memory_order_relaxed);
    if (bounce && op == HIO_OP_READ) memcpy(buf + p.done, staging, static_cast<size_t>(n));
    p.done += static_cast<uint64_t>(n);
    // A short transfer (EOF, or a full device) may leave the next offset
    // unaligned: the caller finishes the rest through the page cache.
    if (static_cast<uint64_t>(n) < chunk) break;
  }
  return p;
}

ssize_t File::execute(const hio_request& req, const hio_decision& d, char* buf) {
  const hio_op op = req.op;
  const uint64_t offset = req.offset;
  if (d.rule == HIO_RULE_CALLER_DIRECT) {
    // The caller's own O_DIRECT descriptor: exactly its system call, nothing added.
    ssize_t n = sys_io(op, fd_, buf, req.length, offset, 0);
    if (n < 0) return -errno;
    rt_.stats().count_bytes(op, HIO_PATH_DIRECT, static_cast<uint64_t>(n));
    return n;
  }
  if (d.path != HIO_PATH_DIRECT) return single_buffered(op, buf, req.length, offset, d.path);
  if (op == HIO_OP_WRITE) {
    // RLIMIT_FSIZE (fsize_limit.h): no piece may raise a SIGXFSZ that the
    // plain write would not have raised.  Beyond the limit: the kernel's own
    // answer, EFBIG with one SIGXFSZ; across it: the part below it.
    const uint64_t allowed = fsize_allowance(offset, req.length);
    if (allowed == 0) return single_buffered(op, buf, req.length, offset, HIO_PATH_BUFFERED);
    if (allowed < req.length) {
      hio_request below = req;
      below.length = allowed;
      hio_decision cut;
      hio_policy_decide(&rt_.policy(), &below, &cut);
      return execute(below, cut, buf);
    }
  }

  Stats& s = rt_.stats();
  if (d.split) s.add(s.splits);
  uint64_t done = 0;
  if (d.head_len) {
    Piece head = loop_buffered(op, buf, d.head_len, offset);
    done += head.done;
    if (head.done < d.head_len) return result_of(done, head.error);
  }
  if (op == HIO_OP_WRITE && write_behind(buf + done, d.body_len, offset + done, offset + req.length)) {
    done += d.body_len;
    if (d.tail_len) {
      Piece tail = loop_buffered(op, buf + done, d.tail_len, offset + done);
      done += tail.done;
      if (tail.error) return result_of(done, tail.error);
    }
    return static_cast<ssize_t>(done);
  }
  Piece body = loop_direct(op, buf + done, d.body_len, offset + done, d.bounce);
  done += body.done;
  if (body.error) return result_of(done, body.error);
  // Whatever the direct body left (refused, short at EOF or a full disk) and
  // the tail go through the page cache, which reports EOF or errors itself.
  const uint64_t end = d.head_len + d.body_len + d.tail_len;
  if (done < end) {
    Piece rest = loop_buffered(op, buf + done, end - done, offset + done);
    done += rest.done;
    if (rest.error) return result_of(done, rest.error);
  }
  return static_cast<ssize_t>(done);
}

bool File::write_behind(char* buf, uint64_t len, uint64_t offset, uint64_t request_end) {
  const EngineSettings engine = engine_settings();
  // Only once a direct write has worked on this file: a refusal (EINVAL on
  // first use) must be seen by the caller's own call.
  if (!engine.write_behind || len > engine.write_behind_limit || !direct_proven_.load() || PinnedRequest::current())
    return false;
  int dfd = direct_fd();
  if (dfd < 0) return false;
  // The size is right before the call returns.  If the request extends the
  // file and has no tail to do it, the body's last page is written through
  // the page cache now (a write only ever grows the size) and only the body
  // before that page is queued.  Not fallocate, as the synchronous engine
  // does: fallocate waits for every direct write in flight on the inode
  // (10-20 us idle, 15-75 ms behind a queue of 4 MiB writes on the
  // development VM), which would drain the queue at every queued write.
  // Not a page-cache byte that a queued direct write then covers: the kernel
  // flushes such a page before the direct write, under the inode lock,
  // behind the whole device queue.
  uint64_t queued = len;
  if (request_end == offset + len) {
    struct stat st;
    if (sys().fstat(fd_, &st) != 0) return false;
    if (static_cast<uint64_t>(st.st_size) < request_end) {
      const uint64_t page = page_bytes();
      const uint64_t last_page = (request_end - 1) / page * page;
      if (last_page <= offset || (last_page - offset) % std::max<uint32_t>(align_.offset_align, 1) != 0)
        return false;  // nothing worth queueing before it: do it now
      queued = last_page - offset;
      Piece tail = loop_buffered(HIO_OP_WRITE, buf + queued, len - queued, last_page);
      if (tail.done < len - queued) return false;  // the synchronous path redoes it and reports
    }
  }
  // false: the caller writes the body synchronously, the page above included.
  return write_behind_submit(wb_, dfd, fd_, buf, queued, offset, engine.write_behind_limit, rt_.stats());
}

ssize_t File::pread(void* buf, size_t len, uint64_t offset) {
  if (len > SSIZE_MAX) len = SSIZE_MAX;
  return transfer(HIO_OP_READ, static_cast<char*>(buf), len, offset);
}

ssize_t File::pwrite(const void* buf, size_t len, uint64_t offset) {
  if (len > SSIZE_MAX) len = SSIZE_MAX;
  // The engine never writes into the caller's buffer on the write path.
  return transfer(HIO_OP_WRITE, const_cast<char*>(static_cast<const char*>(buf)), len, offset);
}

ssize_t File::read(void* buf, size_t len) {
  std::lock_guard<std::mutex> lock(position_mu_);
  off_t pos = lseek(fd_, 0, SEEK_CUR);
  if (pos < 0) return -errno;
  ssize_t n = pread(buf, len, static_cast<uint64_t>(pos));
  if (n > 0 && lseek(fd_, pos + n, SEEK_SET) < 0) return -errno;
  return n;
}

ssize_t File::write(const void* buf, size_t len) {
  std::lock_guard<std::mutex> lock(position_mu_);
  if (open_flags_ & O_APPEND) {
    wb_.wait_all();  // the kernel picks the offset: it may be anywhere queued writes land
    // The kernel picks the offset and moves the position atomically.
    hio_request req = describe(HIO_OP_WRITE, static_cast<const char*>(buf), len, 0);
    hio_decision d;
    hio_policy_decide(&rt_.policy(), &req, &d);
    rt_.stats().count_rule(d.rule, len);
    rt_.stats().count_request(HIO_OP_WRITE, d.path);
    ssize_t n = sys().write(fd_, buf, len);
    if (n < 0) return -errno;
    rt_.stats().count_bytes(HIO_OP_WRITE, HIO_PATH_BUFFERED, static_cast<uint64_t>(n));
    return n;
  }
  off_t pos = lseek(fd_, 0, SEEK_CUR);
  if (pos < 0) return -errno;
  ssize_t n = pwrite(buf, len, static_cast<uint64_t>(pos));
  if (n > 0 && lseek(fd_, pos + n, SEEK_SET) < 0) return -errno;
  return n;
}

int File::sync(bool data_only) {
  // Direct writes bypassed the cache but not the device's volatile cache or
  // the inode's size update: one fsync on any descriptor covers both paths.
  rt_.stats().add(rt_.stats().fsyncs);
  wb_.wait_all();
  const uint64_t pending = learn_.attached() ? pending_writeback_bytes() : kPendingUnknown;
  const uint64_t started = learn_.attached() ? monotonic_ns() : 0;
  int rc = data_only ? sys().fdatasync(fd_) : sys().fsync(fd_);
  rc = rc == 0 ? 0 : -errno;
  // The flush is what the writes through the cache still owed.
  if (started && rc == 0) learn_.flush(monotonic_ns() - started, pending);
  // A queued write that failed is reported here, once (as writeback errors are).
  int deferred = wb_.take_error();
  return deferred ? -deferred : rc;
}

void File::note_sync(uint64_t ns, uint64_t pending_bytes) {
  rt_.stats().add(rt_.stats().fsyncs);
  learn_.flush(ns, pending_bytes);
}

uint64_t File::pending_writeback_bytes() const {
  if (!learn_.attached()) return kPendingUnknown;
  const int saved = errno;
  CacheState s;
  const bool known = probe_cachestat(fd_, 0, 0, &s) && s.dirty_pages >= 0;  // length 0: to the end
  errno = saved;
  return known ? static_cast<uint64_t>(s.dirty_pages) * rt_.policy().page_size : kPendingUnknown;
}

int File::truncate(uint64_t length) {
  wb_.wait_all();
  return sys().ftruncate(fd_, static_cast<off_t>(length)) == 0 ? 0 : -errno;
}

void File::set_mapped(bool mapped) {
  if (mapped) {
    wb_.wait_all();  // a mapping sees the file, not the queue
  }
  mapped_.store(mapped, std::memory_order_relaxed);
}

int File::close() {
  wb_.wait_all();
  const int deferred = wb_.take_error();
  int dfd = direct_fd_.exchange(-1);
  if (dfd >= 0) {
    release_private_fd(dfd);
    sys().close(dfd);
  }
  int rc = 0;
  if (owns_fd_ && fd_ >= 0) {
    const uint64_t started = learn_.attached() ? monotonic_ns() : 0;
    rc = sys().close(fd_);
    rc = rc == 0 || errno == EINTR ? 0 : -errno;  // Linux always releases the fd, even on EINTR
    if (started) learn_.flush(monotonic_ns() - started, kPendingUnknown);  // what close flushed
  }
  fd_ = -1;
  return deferred ? -deferred : rc;
}

}  // namespace hybridio
