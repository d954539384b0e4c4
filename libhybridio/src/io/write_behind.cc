// write_behind.cc - see write_behind.h.
#include "io/write_behind.h"

#include <liburing.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include "io/ring_loop.h"
#include "io/uring_engine.h"
#include "memory/buffer_pool.h"
#include "platform/fork_order.h"
#include "platform/library_thread.h"
#include "platform/log.h"
#include "platform/stats.h"
#include "platform/syscall_table.h"

namespace hybridio {

void WriteBehindFile::add(Range* r) {
  std::lock_guard<std::mutex> lock(mu_);
  r->prev = nullptr;
  r->next = ranges_;
  if (ranges_) ranges_->prev = r;
  ranges_ = r;
  pending_.fetch_add(1, std::memory_order_release);
}

void WriteBehindFile::done(Range* r, int error) {
  std::lock_guard<std::mutex> lock(mu_);
  (r->prev ? r->prev->next : ranges_) = r->next;
  if (r->next) r->next->prev = r->prev;
  r->prev = r->next = nullptr;
  if (error && !error_) error_ = error;
  pending_.fetch_sub(1, std::memory_order_release);
  cv_.notify_all();
}

void WriteBehindFile::wait_overlap(uint64_t offset, uint64_t len) {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t end = offset + std::max<uint64_t>(len, 1);
  bool waited = false;
  cv_.wait(lock, [&] {
    for (const Range* r = ranges_; r; r = r->next)
      if (r->offset < end && offset < r->offset + r->len) {
        waited = true;
        return false;
      }
    return true;
  });
  if (waited) stats_.add(stats_.write_behind_waits);
}

void WriteBehindFile::wait_all() {
  if (idle()) return;
  std::unique_lock<std::mutex> lock(mu_);
  stats_.add(stats_.write_behind_waits);
  cv_.wait(lock, [&] { return ranges_ == nullptr; });
}

int WriteBehindFile::take_error() {
  std::lock_guard<std::mutex> lock(mu_);
  int e = error_;
  error_ = 0;
  if (e) stats_.add(stats_.write_behind_errors);
  return e;
}

namespace {

// One queued write, from write_behind_submit() to retire().  Allocated once
// (without throwing) by the submitting thread; the queue and the writer's
// pipeline link it through `next`, so neither allocates.
struct Job {
  static constexpr uint64_t kNone = ~0ULL;

  WriteBehindFile* file = nullptr;
  Stats* stats = nullptr;  // the counters of write_behind_submit()
  int dfd = -1;
  int fd = -1;
  WriteBehindFile::Range range;  // offset, len
  PoolBuffer staging;
  Job* next = nullptr;

  // In the writer's pipeline: its chunks, submitted in order.
  uint64_t chunk = 0;
  uint64_t nchunks = 0;
  uint64_t next_chunk = 0;  // next chunk to submit
  uint32_t inflight = 0;
  bool stop = false;        // a chunk failed or came back short: submit no more
  uint64_t bad_chunk = kNone;  // the lowest chunk that did (every one before it is whole)
  int bad_res = 0;             // its result: short bytes or -errno

  uint64_t offset() const { return range.offset; }
  uint64_t len() const { return range.len; }
  uint64_t chunk_len(uint64_t k) const { return std::min(chunk, len() - k * chunk); }
  bool finished() const { return inflight == 0 && (stop || next_chunk == nchunks); }
  void chunk_done(uint64_t k, int res) {
    if (res >= 0 && static_cast<uint64_t>(res) == chunk_len(k)) return;
    stop = true;
    if (bad_chunk == kNone || k < bad_chunk) {
      bad_chunk = k;
      bad_res = res;
    }
  }
  // The contiguous prefix written, and the errno that ended it.
  int prefix(uint64_t* done) const {
    if (bad_chunk == kNone) {
      *done = std::min(len(), next_chunk * chunk);
      return 0;
    }
    *done = bad_chunk * chunk + (bad_res > 0 ? static_cast<uint64_t>(bad_res) : 0);
    return bad_res < 0 ? -bad_res : 0;
  }
};

// A first-in first-out list of jobs, linked through Job::next.
struct JobList {
  Job* head = nullptr;
  Job* tail = nullptr;

  bool empty() const { return head == nullptr; }
  void push(Job* j) {
    j->next = nullptr;
    (tail ? tail->next : head) = j;
    tail = j;
  }
  Job* pop() {
    Job* j = head;
    if (j) {
      head = j->next;
      if (!head) tail = nullptr;
      j->next = nullptr;
    }
    return j;
  }
};

// The process-wide queue and its writer thread.  Never destroyed: exit()
// handlers and late threads may still use it.  A forked child gets a fresh
// one (the parent's writer thread does not exist there).
struct Queue {
  std::mutex mu;
  std::condition_variable work;   // jobs queued
  std::condition_variable space;  // staging released / a job finished
  JobList jobs;
  uint64_t staged = 0;            // bytes queued or being written
  uint32_t active = 0;            // jobs queued or being written
  bool started = false;
};

std::atomic<Queue*> g_queue{new Queue()};

Queue& queue() { return *g_queue.load(std::memory_order_acquire); }

// What the direct writes of a job left undone: a short or refused direct
// write (EINVAL: not supported; EBADF: the twin went away; EAGAIN) is
// finished through the page cache, as a synchronous one is; a real error
// (EIO, ENOSPC) is returned, to be deferred.
int finish_job(Job& j, uint64_t done, int error) {
  Stats& stats = *j.stats;
  if (done) stats.count_bytes(HIO_OP_WRITE, HIO_PATH_DIRECT, done);
  if (done >= j.len() || (error != 0 && error != EINVAL && error != EBADF && error != EAGAIN)) return error;
  const char* buf = j.staging.data();
  uint64_t rest = 0;
  error = 0;
  while (done + rest < j.len()) {
    ssize_t n = sys().pwrite(j.fd, buf + done + rest, j.len() - done - rest,
                             static_cast<off_t>(j.offset() + done + rest));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : EIO;
      break;
    }
    rest += static_cast<uint64_t>(n);
  }
  if (rest) stats.count_bytes(HIO_OP_WRITE, HIO_PATH_BUFFERED, rest);
  return error;
}

// Writes one job with synchronous system calls (io_uring unusable or off).
int write_job_sync(Job& j) {
  const char* buf = j.staging.data();
  uint64_t done = 0;
  int error = 0;
  while (done < j.len()) {
    ssize_t n = sys().pwrite(j.dfd, buf + done, j.len() - done, static_cast<off_t>(j.offset() + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = errno;
      break;
    }
    if (n == 0) break;
    done += static_cast<uint64_t>(n);
  }
  return finish_job(j, done, error);
}

// The job is written (or failed): release it and wake whoever waits for it.
void retire(Queue& q, Job* job, int error) {
  if (error) HIO_INFO("write-behind: write of %llu bytes at %llu failed: %s; reported at fsync/close",
                      static_cast<unsigned long long>(job->len()), static_cast<unsigned long long>(job->offset()),
                      strerror(error));
  const uint64_t len = job->len();
  job->file->done(&job->range, error);
  delete job;  // its staging goes back to the pool
  {
    std::lock_guard<std::mutex> lock(q.mu);
    q.staged -= len;
    q.active -= 1;
  }
  q.space.notify_all();
}

// The writer keeps up to queue_depth chunks in flight *across* jobs, so the
// device never idles between one queued write and the next (one job at a
// time drained the queue at every job's end, like a synchronous caller).
// Jobs may complete out of order: queued writes never overlap (a write
// overlapping a queued one waits for it before it is queued).
class Pipeline {
 public:
  explicit Pipeline(Queue& q) : q_(q) {}

  void run() {
    for (;;) {
      take_jobs();
      submit();
      if (inflight_ == 0) continue;
      reap();
      retire_finished();
    }
  }

 private:
  struct Slot {
    Job* job;
    uint64_t chunk;
  };

  // Moves queued jobs into the pipeline; blocks only when nothing is in it.
  void take_jobs() {
    JobList taken;
    {
      std::unique_lock<std::mutex> lock(q_.mu);
      if (flights_.empty()) q_.work.wait(lock, [&] { return !q_.jobs.empty(); });
      taken = q_.jobs;
      q_.jobs = JobList{};
    }
    while (Job* job = taken.pop()) {
      if (flights_.empty()) settle_settings();
      if (!ring_) {
        retire(q_, job, write_job_sync(*job));
        continue;
      }
      job->chunk = chunk_;
      job->nchunks = (job->len() + chunk_ - 1) / chunk_;
      flights_.push(job);
      job->stats->add(job->stats->uring_requests);
    }
  }

  // Settings (and the ring's size) change only while nothing is in flight.
  void settle_settings() {
    const EngineSettings e = engine_settings();
    depth_ = std::clamp<uint32_t>(e.queue_depth, 1, kMaxQueueDepth);
    chunk_ = e.chunk_size;
    ring_ = e.uring ? calling_thread_ring() : nullptr;
    loop_.reset(ring_);
    nfree_ = 0;
    for (uint32_t i = depth_; i-- > 0;) free_[nfree_++] = i;
  }

  void submit() {
    for (Job* f = flights_.head; f; f = f->next) {
      uint64_t submitted = 0;
      while (!f->stop && f->next_chunk < f->nchunks && inflight_ < depth_) {
        io_uring_sqe* sqe = io_uring_get_sqe(ring_);
        if (!sqe) break;
        const uint64_t k = f->next_chunk++;
        const uint32_t slot = free_[--nfree_];
        slots_[slot] = Slot{f, k};
        io_uring_prep_write(sqe, f->dfd, f->staging.data() + k * f->chunk, static_cast<unsigned>(f->chunk_len(k)),
                            f->offset() + k * f->chunk);
        io_uring_sqe_set_data64(sqe, slot);
        ++f->inflight;
        ++inflight_;
        ++submitted;
      }
      if (submitted) f->stats->add(f->stats->uring_chunks, submitted);
    }
  }

  void reap() {
    const int rc = loop_.pump([this](uint64_t data, int res) { complete(static_cast<uint32_t>(data), res); });
    if (rc < 0) ring_failed(-rc);
  }

  void complete(uint32_t slot, int res) {
    Job& f = *slots_[slot].job;
    const uint64_t k = slots_[slot].chunk;
    free_[nfree_++] = slot;
    const uint64_t at = f.offset() + k * f.chunk;
    f.chunk_done(k, chunk_result(HIO_OP_WRITE, f.dfd, f.staging.data() + k * f.chunk, f.chunk_len(k), at, res,
                                 *f.stats));
    --f.inflight;
    --inflight_;
  }

  // The ring refused work (ring_loop.h); nothing is in flight any more.
  // Every job in the pipeline ends where its chunks did, with the errno
  // (deferred like any other write error); the next jobs get a fresh ring.
  void ring_failed(int err) {
    HIO_WARN("write-behind: io_uring: %s; the queued writes in flight end there", strerror(err));
    for (Job* f = flights_.head; f; f = f->next) {
      if (f->next_chunk < f->nchunks) f->chunk_done(f->next_chunk, -err);
      f->stop = true;
    }
    discard_calling_thread_ring();
    ring_ = nullptr;
    loop_.reset(nullptr);
  }

  void retire_finished() {
    JobList keep;
    while (Job* f = flights_.pop()) {
      if (!f->finished()) {
        keep.push(f);
        continue;
      }
      uint64_t done = 0;
      const int error = f->prefix(&done);
      retire(q_, f, finish_job(*f, done, error));
    }
    flights_ = keep;
  }

  Queue& q_;
  JobList flights_;  // in the pipeline, in queue order
  io_uring* ring_ = nullptr;
  RingLoop loop_;
  uint32_t depth_ = 1;
  uint64_t chunk_ = 1 << 20;
  uint32_t inflight_ = 0;
  Slot slots_[kMaxQueueDepth];
  uint32_t free_[kMaxQueueDepth];
  uint32_t nfree_ = 0;
};

void writer_thread(void* q) { Pipeline(*static_cast<Queue*>(q)).run(); }
LibraryThread g_writer;  // library_thread.h

void drain_at_fork() { write_behind_drain(); }
void drain_at_exit() { write_behind_drain(); }
// The child has no writer thread, and the parent's queue lock may be held by
// a thread that does not exist there: it starts with a queue of its own.
void fresh_queue_in_child() {
  Queue* fresh = new (std::nothrow) Queue();
  if (fresh) {
    g_queue.store(fresh, std::memory_order_release);
  } else {
    // No memory: the inherited queue is empty (drained before fork) and
    // nobody else runs here; start it over in place.
    Queue* q = g_queue.load(std::memory_order_relaxed);
    new (q) Queue();
  }
}

}  // namespace

void write_behind_drain() {
  Queue& q = queue();
  std::unique_lock<std::mutex> lock(q.mu);
  q.space.wait(lock, [&] { return q.active == 0; });
}

bool write_behind_submit(WriteBehindFile& wb, int dfd, int fd, const char* data, uint64_t len,
                         uint64_t offset, uint64_t limit, Stats& stats) {
  if (len == 0 || len > limit) return false;
  Job* job = new (std::nothrow) Job;
  if (!job) return false;
  Queue& q = queue();
  {
    std::unique_lock<std::mutex> lock(q.mu);
    if (!q.started) {
      // A writer thread that exit() and fork() wait for.
      if (g_writer.start("hybridio-write", writer_thread, &q) != 0) {
        delete job;
        return false;
      }
      q.started = true;
      static std::once_flag handlers;
      std::call_once(handlers, [] {
        atexit(drain_at_exit);
        ForkHandlers h;
        h.prepare = drain_at_fork;
        h.child = fresh_queue_in_child;
        install_fork_handlers(ForkLevel::kWriteBehindDrain, h);
      });
    }
    if (q.staged + len > limit) {
      stats.add(stats.write_behind_stalls);
      q.space.wait(lock, [&] { return q.staged + len <= limit; });
    }
    q.staged += len;
    q.active += 1;
  }
  job->staging = BufferPool::get().acquire(len);
  if (!job->staging) {
    delete job;
    std::lock_guard<std::mutex> lock(q.mu);
    q.staged -= len;
    q.active -= 1;
    q.space.notify_all();
    return false;
  }
  memcpy(job->staging.data(), data, len);
  job->file = &wb;
  job->stats = &stats;
  job->dfd = dfd;
  job->fd = fd;
  job->range.offset = offset;
  job->range.len = len;
  wb.add(&job->range);
  stats.add(stats.write_behind_writes);
  stats.add(stats.write_behind_bytes, len);
  {
    std::lock_guard<std::mutex> lock(q.mu);
    q.jobs.push(job);
  }
  q.work.notify_one();
  return true;
}

}  // namespace hybridio
