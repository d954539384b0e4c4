// uring_engine.cc - see uring_engine.h.
#include "io/uring_engine.h"

#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <new>

#include "io/ring_loop.h"
#include "memory/buffer_pool.h"
#include "memory/checked_copy.h"
#include "platform/fork_order.h"
#include "platform/log.h"
#include "platform/snapshots.h"
#include "platform/stats.h"
#include "platform/syscall_table.h"

namespace hybridio {
namespace {

// ---- settings ---------------------------------------------------------------

// Published whole: first the configured settings (publish_first_engine_settings()),
// then each set_engine_settings().
Snapshots<EngineSettings> g_settings;

std::atomic<Stats*> g_stats{nullptr};  // set_engine_stats()

const EngineSettings& current_settings() {
  static const EngineSettings defaults;
  const EngineSettings* s = g_settings.current();
  return s ? *s : defaults;
}

// ---- detection ----------------------------------------------------------------

enum Detect : int { kUnknown = 0, kUsable = 1, kUnusable = 2 };
std::atomic<int> g_detect{kUnknown};
std::atomic<CompletionHook> g_hook{nullptr};
// Bumped in a forked child: a ring inherited from the parent must not be used.
std::atomic<uint64_t> g_generation{1};
std::once_flag g_atfork_once;

std::atomic<bool> g_transparent{false};

// ---- rings out of the program's way ------------------------------------------

// io_uring_register(2) through the ring's registered index (Linux 6.3+).
constexpr unsigned kUseRegisteredRing = 1u << 31;  // IORING_REGISTER_USE_REGISTERED_RING

// io_uring_queue_exit() without the close(2): for a ring with no descriptor.
void unmap_ring(io_uring* ring) {
  munmap(ring->sq.sqes, *ring->sq.kring_entries * sizeof(io_uring_sqe));
  munmap(ring->sq.ring_ptr, ring->sq.ring_sz);
  if (ring->cq.ring_ptr && ring->cq.ring_ptr != ring->sq.ring_ptr) munmap(ring->cq.ring_ptr, ring->cq.ring_sz);
}

// Moves the ring's descriptor to a high number (as the O_DIRECT twins), out
// of the way of a program that expects the lowest free numbers.
void move_ring_fd_high(io_uring* ring) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur < 64) return;
  int floor = static_cast<int>(std::min<rlim_t>(rl.rlim_cur - rl.rlim_cur / 8, 60000));
  if (floor <= ring->ring_fd) return;
  int high = fcntl(ring->ring_fd, F_DUPFD_CLOEXEC, floor);
  if (high < 0) return;
  ::close(ring->ring_fd);
  ring->ring_fd = high;
  ring->enter_ring_fd = high;
}

// Whether `fd` still is an io_uring: a program that closes every descriptor
// may have closed it and reused the number for its own file.
bool fd_is_a_ring(int fd) {
  char link[64], path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(path, link, sizeof link - 1);
  if (n <= 0) return false;
  link[n] = '\0';
  return strcmp(link, "anon_inode:[io_uring]") == 0;
}

// A ring used by its creating thread alone: one submitter, whose
// completions are posted only when it waits in io_uring_enter.  0 or -errno.
//
// Why DEFER_TASKRUN: without it a completion is task work of the thread,
// and the kernel flags pending task work with TIF_NOTIFY_SIGNAL, which
// signal_pending() counts as a signal (COOP_TASKRUN only spares the IPI).
// A request finished by an io_uring worker (an open, or a direct write
// that extends an ext4 file) posts its completion first and queues the
// freeing of the request as task work afterwards, so that work can arrive
// after the thread saw the completion and returned to the program: the
// program's next long read of /dev/zero stopped early and came back short
// (dd under the shim, about one run in a hundred on a loaded machine).
// Deferred, task work waits in the ring's own list for the next wait and
// flags nothing.
int init_thread_ring(io_uring* ring, unsigned depth) {
  // Newest first; a kernel that does not know a flag answers -EINVAL
  // (DEFER_TASKRUN is 6.1, SINGLE_ISSUER and COOP_TASKRUN 6.0 and 5.19).
  constexpr unsigned kFlagSets[] = {
      IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
      IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN,
      0,
  };
  int rc = -EINVAL;
  for (unsigned flags : kFlagSets) {
    io_uring_params p{};
    p.flags = flags;
    rc = io_uring_queue_init_params(depth, ring, &p);
    if (rc != -EINVAL) break;
  }
  return rc;
}

// ---- the calling thread's ring ------------------------------------------------

struct ThreadRing {
  io_uring ring{};
  bool ok = false;
  uint64_t generation = 0;
  // Staging slots for misaligned (bounce) bodies: `nslots` of `slot_size`.
  PoolBuffer* slots = nullptr;
  unsigned nslots = 0;
  uint64_t slot_size = 0;
  bool registered = false;       // slots are fixed buffers of the ring
  bool ring_registered = false;  // the ring is reached by its registered index

  bool fd_less = false;           // transparent mode: no descriptor, fixed-file slots for pinned requests

  ~ThreadRing() { close(); }

  void close() {
    if (!ok) return;
    if (registered) register_call(IORING_UNREGISTER_BUFFERS, nullptr, 0);
    if (fd_less) {
      close_fdless_ring(&ring);
    } else {
      close_ring(&ring);
    }
    ok = false;
    fd_less = false;
    registered = false;
    release_slots();
  }

  void release_slots() {
    delete[] slots;
    slots = nullptr;
    nslots = 0;
    slot_size = 0;
  }

  // Always with the most entries any request uses: a ring reopened for a
  // deeper queue would be torn down, and a ring's teardown sends its
  // creator task work that the kernel flags as a pending signal.  0, or -errno from io_uring_queue_init.
  int open() {
    constexpr unsigned depth = kMaxQueueDepth;
    close();
    if (transparent_mode()) {
      // Under the shim the ring must not show in the program's descriptor
      // table: fixed-file slots for pinned requests (pinned_request.h).
      int rc = open_fdless_ring(&ring, depth, kPinnedSlots);
      if (rc < 0) return rc;
      fd_less = true;
      ring_registered = true;
    } else {
      int rc = init_thread_ring(&ring, depth);
      if (rc < 0) return rc;
      // Registered with the kernel so that submission does not go through the
      // number at all - a program closing every descriptor (close_range,
      // closefrom) cannot take the ring away mid-request.
      move_ring_fd_high(&ring);
      ring_registered = io_uring_register_ring_fd(&ring) == 1;  // 5.18+; without it the number is used
    }
    ok = true;
    generation = g_generation.load(std::memory_order_relaxed);
    return 0;
  }

  // `count` (at most kMaxQueueDepth) staging slots of `size` bytes; false
  // when there is no memory for them.
  bool ensure_slots(unsigned count, uint64_t size) {
    if (nslots >= count && slot_size == size) return true;
    if (registered) {
      register_call(IORING_UNREGISTER_BUFFERS, nullptr, 0);
      registered = false;
    }
    release_slots();
    slots = new (std::nothrow) PoolBuffer[count];
    if (!slots) return false;
    iovec iov[kMaxQueueDepth];
    for (unsigned i = 0; i < count; ++i) {
      slots[i] = BufferPool::get().acquire(size);
      if (!slots[i]) {
        release_slots();
        return false;
      }
      iov[i] = {slots[i].data(), size};
    }
    nslots = count;
    slot_size = size;
    // Fixed buffers save the per-I/O page pinning; refused (RLIMIT_MEMLOCK,
    // a kernel before 6.3) is fine: plain reads and writes of the same slots.
    registered = register_call(IORING_REGISTER_BUFFERS, iov, count) == 0;
    return true;
  }

  // io_uring_register(2) through the registered ring index (Linux 6.3+),
  // never through the descriptor number, which the program may have closed
  // and reused (even for another thread's ring).  -1 when not possible.
  int register_call(unsigned opcode, const void* arg, unsigned nr) {
    if (!ring_registered) return -1;
    long rc = syscall(__NR_io_uring_register, ring.enter_ring_fd, opcode | kUseRegisteredRing, arg, nr);
    return rc < 0 ? -1 : 0;
  }
};

ThreadRing& thread_ring() {
  thread_local ThreadRing ring;
  return ring;
}

bool probe_ops(io_uring* ring) {
  io_uring_probe* probe = io_uring_get_probe_ring(ring);
  if (!probe) return true;  // no probe (5.6+ has it): assume READ/WRITE
  bool ok = io_uring_opcode_supported(probe, IORING_OP_READ) &&
            io_uring_opcode_supported(probe, IORING_OP_WRITE);
  io_uring_free_probe(probe);
  return ok;
}

// The calling thread's ring, or nullptr.
io_uring* ring_for() {
  ThreadRing& t = thread_ring();
  if (t.ok && t.generation == g_generation.load(std::memory_order_relaxed) )
    return &t.ring;
  if (t.ok && t.generation != g_generation.load(std::memory_order_relaxed)) {
    // Forked: the ring's memory is shared with the parent.  Unmap ours, keep theirs.
    t.close();
  }
  int rc = t.open();
  if (rc == 0 && !probe_ops(&t.ring)) {
    t.close();
    rc = -EOPNOTSUPP;
  }
  if (rc < 0) {
    int expected = kUnknown;
    if (g_detect.compare_exchange_strong(expected, kUnusable) || expected == kUsable) {
      g_detect.store(kUnusable);
      if (Stats* s = g_stats.load(std::memory_order_acquire)) s->add(s->uring_unavailable);
      HIO_INFO("io_uring unavailable (%s); direct bodies are submitted synchronously", strerror(-rc));
    }
    return nullptr;
  }
  g_detect.store(kUsable, std::memory_order_relaxed);
  return &t.ring;
}

ssize_t sync_io(hio_op op, int fd, char* buf, size_t len, uint64_t offset) {
  for (;;) {
    ssize_t n = op == HIO_OP_READ ? sys().pread(fd, buf, len, static_cast<off_t>(offset))
                                  : sys().pwrite(fd, buf, len, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    return n < 0 ? -errno : n;
  }
}

}  // namespace

EngineSettings engine_settings() { return current_settings(); }

void publish_first_engine_settings(const EngineSettings* first) { g_settings.publish_permanent(first); }

void set_engine_settings(const hio_engine_config& s) {
  EngineSettings e;
  static_cast<hio_engine_config&>(e) = s;
  if (!g_settings.publish(e)) HIO_WARN("no memory for new engine settings; keeping the current ones");
}

void set_engine_stats(Stats* stats) { g_stats.store(stats, std::memory_order_release); }

void set_completion_hook(CompletionHook hook) { g_hook.store(hook); }

void set_transparent_mode(bool on) { g_transparent.store(on, std::memory_order_release); }

bool transparent_mode() { return g_transparent.load(std::memory_order_acquire); }

io_uring* calling_thread_ring() {
  if (!uring_usable()) return nullptr;
  return ring_for();
}

int chunk_result(hio_op op, int fd, char* buf, uint64_t len, uint64_t offset, int res, Stats& stats) {
  const CompletionHook hook = g_hook.load(std::memory_order_relaxed);
  if (hook) res = hook(op, offset, len, res);
  if ((res == -EAGAIN || res == -EINTR) && fd >= 0) {
    // Retried synchronously, as a blocking system call would have done.
    stats.add(stats.uring_retries);
    res = static_cast<int>(sync_io(op, fd, buf, len, offset));
  }
  return res;
}

void close_ring(io_uring* ring) {
  // Never close a descriptor number that is no longer ours.
  if (!fd_is_a_ring(ring->ring_fd)) ring->ring_fd = -1;
  io_uring_queue_exit(ring);
}

int open_fdless_ring(io_uring* ring, unsigned depth, unsigned slots) {
  int rc = init_thread_ring(ring, depth);
  if (rc < 0) return rc;
  // Fixed-file slots, the ring registered with the task, then its
  // descriptor closed: nothing of it shows in the descriptor table.
  if (io_uring_register_files_sparse(ring, slots) != 0 || io_uring_register_ring_fd(ring) != 1) {
    io_uring_queue_exit(ring);
    return -EOPNOTSUPP;
  }
  syscall(SYS_close, ring->ring_fd);
  ring->ring_fd = -1;
  return 0;
}

bool fdless_ring_supports(io_uring* ring, std::initializer_list<int> ops) {
  // liburing's probe goes through the descriptor, which this ring has not.
  constexpr unsigned kOps = 256;
  alignas(io_uring_probe) unsigned char mem[sizeof(io_uring_probe) + kOps * sizeof(io_uring_probe_op)] = {};
  auto* probe = reinterpret_cast<io_uring_probe*>(mem);
  if (syscall(__NR_io_uring_register, ring->enter_ring_fd, IORING_REGISTER_PROBE | kUseRegisteredRing, probe, kOps) < 0)
    return false;
  for (int op : ops)
    if (!io_uring_opcode_supported(probe, op)) return false;
  return true;
}

void close_fdless_ring(io_uring* ring) {
  // No descriptor to close: drop the registered index (6.3+; before that
  // the ring lives until the thread exits) and unmap.
  io_uring_rsrc_update up{};
  up.offset = static_cast<unsigned>(ring->enter_ring_fd);
  syscall(__NR_io_uring_register, ring->enter_ring_fd, IORING_UNREGISTER_RING_FDS | kUseRegisteredRing, &up, 1);
  unmap_ring(ring);
}

void reset_uring_detection_for_testing() {
  g_detect.store(kUnknown);
  thread_ring().close();
}

bool uring_usable() {
  std::call_once(g_atfork_once, [] {
    ForkHandlers h;
    h.child = [] { g_generation.fetch_add(1, std::memory_order_relaxed); };
    install_fork_handlers(ForkLevel::kRings, h);
  });
  int d = g_detect.load(std::memory_order_relaxed);
  if (d == kUnusable) return false;
  return ring_for() != nullptr;
}

namespace {

// One parallel_direct() call: its chunks, submitted in order, completed in
// any order.  Allocates nothing: a chunk's staging slot and number travel
// in its user_data, and only the lowest chunk that failed or came back
// short is kept (every chunk before it completed whole).
class ChunkedTransfer {
 public:
  ChunkedTransfer(hio_op op, int fd, char* buf, uint64_t len, uint64_t offset, bool bounce, bool fixed_file,
                  unsigned qd, uint64_t chunk, ThreadRing& t, Stats& stats)
      : op_(op), fd_(fd), buf_(buf), len_(len), offset_(offset), bounce_(bounce), fixed_file_(fixed_file),
        qd_(qd), chunk_(chunk), nchunks_((len + chunk - 1) / chunk), t_(t), stats_(stats) {
    if (bounce_)
      for (unsigned i = qd_; i-- > 0;) free_slots_[nfree_++] = static_cast<int>(i);
  }

  // Keeps up to the queue depth of chunks in flight until the prefix's end
  // is known and nothing is in flight any more.
  void run() {
    RingLoop loop(&t_.ring);
    auto on_completion = [this](uint64_t data, int res) { complete(data, res); };
    while ((!stop_ && next_ < nchunks_) || inflight_ > 0) {
      while (!stop_ && next_ < nchunks_ && inflight_ < qd_) {
        io_uring_sqe* sqe = io_uring_get_sqe(&t_.ring);
        if (!sqe) break;
        prepare(sqe);
        // A staged write starts at once, so the next chunk's copy overlaps it.
        if (bounce_ && op_ == HIO_OP_WRITE) ring_failed(loop.submit(on_completion));
      }
      ring_failed(loop.pump(on_completion));
    }
  }

  uint64_t submitted() const { return next_; }
  // The furthest byte any submitted chunk may have reached: a failed chunk
  // may still have written part of its range (an EIO after allocation).
  uint64_t submitted_end() const { return next_ ? std::min(len_, next_ * chunk_) : 0; }
  bool ring_error() const { return ring_error_ != 0; }

  // The contiguous prefix transferred and the errno that ended it.
  ChunkedResult result() const {
    ChunkedResult out;
    if (bad_chunk_ != kNone) {
      out.done = bad_chunk_ * chunk_ + (bad_res_ > 0 ? static_cast<uint64_t>(bad_res_) : 0);
      if (bad_res_ < 0) out.error = -bad_res_;
    } else {
      out.done = submitted_end();
      if (out.done < len_) out.error = ring_error_;  // the ring stopped before the end
    }
    return out;
  }

 private:
  static constexpr uint64_t kNone = ~0ULL;

  uint64_t chunk_len(uint64_t k) const { return std::min(chunk_, len_ - k * chunk_); }

  // Chunk next_ into `sqe`: on the caller's memory, or through a staging slot.
  void prepare(io_uring_sqe* sqe) {
    const uint64_t k = next_++;
    const unsigned n = static_cast<unsigned>(chunk_len(k));
    const uint64_t at = offset_ + k * chunk_;
    const bool write = op_ == HIO_OP_WRITE;
    char* io_buf = buf_ + k * chunk_;
    int slot = -1;
    if (bounce_) {
      slot = free_slots_[--nfree_];
      char* staging = t_.slots[slot].data();
      if (write) memcpy(staging, io_buf, n);
      io_buf = staging;
    }
    if (slot >= 0 && t_.registered) {
      if (write)
        io_uring_prep_write_fixed(sqe, fd_, io_buf, n, at, slot);
      else
        io_uring_prep_read_fixed(sqe, fd_, io_buf, n, at, slot);
    } else if (write) {
      io_uring_prep_write(sqe, fd_, io_buf, n, at);
    } else {
      io_uring_prep_read(sqe, fd_, io_buf, n, at);
    }
    io_uring_sqe_set_data64(sqe, (k << 9) | static_cast<uint64_t>(slot + 1));
    if (fixed_file_) sqe->flags |= IOSQE_FIXED_FILE;
    ++inflight_;
  }

  void complete(uint64_t data, int res) {
    const uint64_t k = data >> 9;
    const int slot = static_cast<int>(data & 511) - 1;
    const uint64_t n = chunk_len(k);
    char* user = buf_ + k * chunk_;
    char* io_buf = slot >= 0 ? t_.slots[slot].data() : user;
    // A fixed file has no descriptor to retry on synchronously: its
    // -EAGAIN ends the prefix like an error, and the caller redoes the rest.
    res = chunk_result(op_, fixed_file_ ? -1 : fd_, io_buf, n, offset_ + k * chunk_, res, stats_);
    if (res > 0 && slot >= 0 && op_ == HIO_OP_READ) {
      // Under the shim the caller's memory is not trusted (checked_copy.h).
      if (fixed_file_) {
        const size_t copied = copy_checked(io_buf, user, static_cast<size_t>(res), false);
        if (copied < static_cast<size_t>(res)) res = copied ? static_cast<int>(copied) : -EFAULT;
      } else {
        memcpy(user, io_buf, static_cast<size_t>(res));
      }
    }
    if (slot >= 0) free_slots_[nfree_++] = slot;
    if (res < 0 || static_cast<uint64_t>(res) < n) {
      stop_ = true;
      if (bad_chunk_ == kNone || k < bad_chunk_) {
        bad_chunk_ = k;
        bad_res_ = res;
      }
    }
    --inflight_;
  }

  // The ring refused work (ring_loop.h): every chunk is accounted for by
  // now; submit nothing more.
  void ring_failed(int rc) {
    if (rc >= 0) return;
    if (!ring_error_) HIO_WARN("io_uring: %s; the request ends where its chunks did", strerror(-rc));
    ring_error_ = -rc;
    stop_ = true;
  }

  const hio_op op_;
  const int fd_;
  char* const buf_;
  const uint64_t len_, offset_;
  const bool bounce_, fixed_file_;
  const unsigned qd_;
  const uint64_t chunk_, nchunks_;
  ThreadRing& t_;
  Stats& stats_;
  int free_slots_[kMaxQueueDepth];
  unsigned nfree_ = 0;
  uint64_t next_ = 0;      // next chunk to submit
  unsigned inflight_ = 0;  // prepared and not yet completed
  bool stop_ = false;      // the prefix's end is known: submit nothing more
  uint64_t bad_chunk_ = kNone;
  int bad_res_ = 0;
  int ring_error_ = 0;
};

// A direct write past EOF is an "extending" write: ext4 (and others) run it
// under the exclusive inode lock and complete it synchronously, so its
// chunks would go one at a time.  Allocating the range first (fallocate
// mode 0: blocks as unwritten extents, the size only ever grows, to no more
// than this request's end) turns every chunk into an overwrite within the
// size, which runs in parallel.  Whether it did.
bool preallocate(int fd, uint64_t offset, uint64_t len, off_t size_before) {
  if (size_before < 0 || offset + len <= static_cast<uint64_t>(size_before)) return false;
  return sys().fallocate(fd, 0, static_cast<off_t>(offset), static_cast<off_t>(len)) == 0;
}

// A write that reports less than it moved: later chunks may have grown the
// file past the prefix (up to `reach` bytes from `offset`).  Gives the file
// the size a synchronous write reporting `done` would have left - only if
// nobody else grew it further meanwhile (then the size is theirs to keep).
void trim_to_prefix(int fd, uint64_t offset, uint64_t done, uint64_t reach, off_t size_before, Stats& stats) {
  if (size_before < 0 || reach <= done) return;
  struct stat after {};
  // Nothing reported written: the size stays; else at least the end of the prefix.
  const uint64_t keep = std::max<uint64_t>(static_cast<uint64_t>(size_before), done ? offset + done : 0);
  if (sys().fstat(fd, &after) == 0 && static_cast<uint64_t>(after.st_size) > keep &&
      static_cast<uint64_t>(after.st_size) <= offset + reach) {
    if (sys().ftruncate(fd, static_cast<off_t>(keep)) == 0) stats.add(stats.uring_trimmed);
  }
}

}  // namespace

ChunkedResult parallel_direct(hio_op op, int fd, char* buf, uint64_t len, uint64_t offset,
                              bool bounce, const EngineSettings& settings, Stats& stats, bool fixed_file) {
  ChunkedResult out;
  const bool write = op == HIO_OP_WRITE;
  if (fixed_file && write) {
    out.error = EINVAL;  // reads only: see the header
    return out;
  }
  const unsigned qd = std::clamp<uint32_t>(settings.queue_depth, 1, kMaxQueueDepth);
  io_uring* ring = ring_for();
  ThreadRing& t = thread_ring();
  if (!ring || (bounce && !t.ensure_slots(qd, settings.chunk_size))) {
    // Not expected (the caller checked uring_usable; or no memory for the
    // staging slots): the caller does it synchronously.
    out.error = EAGAIN;
    return out;
  }
  struct stat before {};
  if (write && sys().fstat(fd, &before) != 0) before.st_size = -1;
  const bool preallocated = write && preallocate(fd, offset, len, before.st_size);

  ChunkedTransfer transfer(op, fd, buf, len, offset, bounce, fixed_file, qd, settings.chunk_size, t, stats);
  stats.add(stats.uring_requests);
  transfer.run();
  stats.add(stats.uring_chunks, transfer.submitted());
  out = transfer.result();
  if (write && out.done < len)
    trim_to_prefix(fd, offset, out.done, preallocated ? len : transfer.submitted_end(), before.st_size, stats);
  // A ring that refused to enter is replaced at the next request (nothing
  // of it is in flight now).  Not under a pinned request, which holds its
  // fixed-file slots.
  if (transfer.ring_error() && !fixed_file) t.close();
  return out;
}

void discard_calling_thread_ring() { thread_ring().close(); }

void release_calling_thread_buffers() {
  ThreadRing& t = thread_ring();
  if (t.nslots == 0) return;
  if (t.registered) {
    t.register_call(IORING_UNREGISTER_BUFFERS, nullptr, 0);
    t.registered = false;
  }
  t.release_slots();
}

}  // namespace hybridio
