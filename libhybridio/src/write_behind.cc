// write_behind.cc - see write_behind.h.
#include "write_behind.h"

#include <liburing.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <list>
#include <thread>

#include "buffer_pool.h"
#include "log.h"
#include "runtime.h"
#include "stats.h"
#include "uring_engine.h"

namespace hybridio {

void WriteBehindFile::add(uint64_t offset, uint64_t len) {
  std::lock_guard<std::mutex> lock(mu_);
  ranges_.emplace_back(offset, len);
  pending_.fetch_add(1, std::memory_order_release);
}

void WriteBehindFile::done(uint64_t offset, uint64_t len, int error) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find(ranges_.begin(), ranges_.end(), std::make_pair(offset, len));
  if (it != ranges_.end()) ranges_.erase(it);
  if (error && !error_) error_ = error;
  pending_.fetch_sub(1, std::memory_order_release);
  cv_.notify_all();
}

void WriteBehindFile::wait_overlap(uint64_t offset, uint64_t len) {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t end = offset + std::max<uint64_t>(len, 1);
  bool waited = false;
  cv_.wait(lock, [&] {
    for (const auto& r : ranges_)
      if (r.first < end && offset < r.first + r.second) {
        waited = true;
        return false;
      }
    return true;
  });
  if (waited) Runtime::get().stats().add(Runtime::get().stats().write_behind_waits);
}

void WriteBehindFile::wait_all() {
  if (idle()) return;
  std::unique_lock<std::mutex> lock(mu_);
  Runtime::get().stats().add(Runtime::get().stats().write_behind_waits);
  cv_.wait(lock, [&] { return ranges_.empty(); });
}

int WriteBehindFile::take_error() {
  std::lock_guard<std::mutex> lock(mu_);
  int e = error_;
  error_ = 0;
  if (e) Runtime::get().stats().add(Runtime::get().stats().write_behind_errors);
  return e;
}

namespace {

struct Job {
  WriteBehindFile* file;
  int dfd;
  int fd;
  uint64_t offset;
  uint64_t len;
  PoolBuffer staging;
};

// The process-wide queue and its writer thread.  Never destroyed: exit()
// handlers and late threads may still use it.  A forked child gets a fresh
// one (the parent's writer thread does not exist there).
struct Queue {
  std::mutex mu;
  std::condition_variable work;   // jobs queued
  std::condition_variable space;  // staging released / a job finished
  std::deque<Job> jobs;
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
  Stats& stats = Runtime::get().stats();
  if (done) stats.count_bytes(HIO_OP_WRITE, HIO_PATH_DIRECT, done);
  if (done >= j.len || (error != 0 && error != EINVAL && error != EBADF && error != EAGAIN)) return error;
  const char* buf = j.staging.data();
  uint64_t rest = 0;
  error = 0;
  while (done + rest < j.len) {
    ssize_t n = ::pwrite(j.fd, buf + done + rest, j.len - done - rest, static_cast<off_t>(j.offset + done + rest));
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
  while (done < j.len) {
    ssize_t n = ::pwrite(j.dfd, buf + done, j.len - done, static_cast<off_t>(j.offset + done));
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
void retire(Queue& q, Job& job, int error) {
  if (error) HIO_INFO("write-behind: write of %llu bytes at %llu failed: %s; reported at fsync/close",
                      static_cast<unsigned long long>(job.len), static_cast<unsigned long long>(job.offset),
                      strerror(error));
  const uint64_t len = job.len;
  job.file->done(job.offset, job.len, error);
  job.staging.reset();
  {
    std::lock_guard<std::mutex> lock(q.mu);
    q.staged -= len;
    q.active -= 1;
  }
  q.space.notify_all();
}

// One job in the pipeline: its chunks, submitted in order.
struct Flight {
  Job job;
  uint64_t chunk = 0;
  uint64_t nchunks = 0;
  uint64_t next = 0;         // next chunk to submit
  uint32_t inflight = 0;
  bool stop = false;         // a chunk failed or came back short: submit no more
  std::vector<int> results;  // per chunk: bytes or -errno

  uint64_t chunk_len(uint64_t k) const { return std::min(chunk, job.len - k * chunk); }
  bool finished() const { return inflight == 0 && (stop || next == nchunks); }
  // The contiguous prefix written, and the errno that ended it.
  int prefix(uint64_t* done) const {
    *done = 0;
    for (uint64_t k = 0; k < next; ++k) {
      if (results[k] < 0) return -results[k];
      *done += static_cast<uint64_t>(results[k]);
      if (static_cast<uint64_t>(results[k]) < chunk_len(k)) return 0;
    }
    return 0;
  }
};

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
    Flight* flight;
    uint64_t chunk;
  };

  // Moves queued jobs into the pipeline; blocks only when nothing is in it.
  void take_jobs() {
    std::deque<Job> taken;
    {
      std::unique_lock<std::mutex> lock(q_.mu);
      if (flights_.empty()) q_.work.wait(lock, [&] { return !q_.jobs.empty(); });
      taken.swap(q_.jobs);
    }
    for (Job& job : taken) {
      if (flights_.empty()) settle_settings();
      if (!ring_) {
        retire(q_, job, write_job_sync(job));
        continue;
      }
      Flight f;
      f.job = std::move(job);
      f.chunk = chunk_;
      f.nchunks = (f.job.len + chunk_ - 1) / chunk_;
      f.results.assign(f.nchunks, 0);
      flights_.push_back(std::move(f));
      Stats& s = Runtime::get().stats();
      s.add(s.uring_requests);
    }
  }

  // Settings (and the ring's size) change only while nothing is in flight.
  void settle_settings() {
    const EngineSettings e = engine_settings();
    depth_ = std::clamp<uint32_t>(e.queue_depth, 1, 256);
    chunk_ = e.chunk_size;
    ring_ = e.uring ? calling_thread_ring(depth_) : nullptr;
    slots_.assign(depth_, Slot{nullptr, 0});
    free_.clear();
    for (uint32_t i = depth_; i-- > 0;) free_.push_back(i);
  }

  void submit() {
    uint64_t submitted = 0;
    for (Flight& f : flights_) {
      while (!f.stop && f.next < f.nchunks && inflight_ < depth_) {
        io_uring_sqe* sqe = io_uring_get_sqe(ring_);
        if (!sqe) break;
        const uint64_t k = f.next++;
        const uint32_t slot = free_.back();
        free_.pop_back();
        slots_[slot] = Slot{&f, k};
        io_uring_prep_write(sqe, f.job.dfd, f.job.staging.data() + k * f.chunk,
                            static_cast<unsigned>(f.chunk_len(k)), f.job.offset + k * f.chunk);
        io_uring_sqe_set_data64(sqe, slot);
        ++f.inflight;
        ++inflight_;
        ++submitted;
      }
    }
    if (submitted) {
      Stats& s = Runtime::get().stats();
      s.add(s.uring_chunks, submitted);
    }
  }

  void reap() {
    int rc = io_uring_submit_and_wait(ring_, 1);
    if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
      // The ring refusing to enter is not an I/O error: the staged data must
      // stay until the kernel is done with it, so keep waiting.
      HIO_WARN("write-behind: io_uring_submit_and_wait: %s; retrying", strerror(-rc));
      usleep(1000);
    }
    io_uring_cqe* cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(ring_, head, cqe) {
      ++seen;
      const uint32_t slot = static_cast<uint32_t>(io_uring_cqe_get_data64(cqe));
      Flight& f = *slots_[slot].flight;
      const uint64_t k = slots_[slot].chunk;
      free_.push_back(slot);
      const uint64_t n = f.chunk_len(k);
      const uint64_t at = f.job.offset + k * f.chunk;
      const int res = chunk_result(HIO_OP_WRITE, f.job.dfd, f.job.staging.data() + k * f.chunk, n, at, cqe->res,
                                   Runtime::get().stats());
      f.results[k] = res;
      if (res < 0 || static_cast<uint64_t>(res) < n) f.stop = true;
      --f.inflight;
      --inflight_;
    }
    io_uring_cq_advance(ring_, seen);
  }

  void retire_finished() {
    for (auto it = flights_.begin(); it != flights_.end();) {
      if (!it->finished()) {
        ++it;
        continue;
      }
      uint64_t done = 0;
      int error = it->prefix(&done);
      retire(q_, it->job, finish_job(it->job, done, error));
      it = flights_.erase(it);
    }
  }

  Queue& q_;
  std::list<Flight> flights_;  // stable addresses: slots point into it
  io_uring* ring_ = nullptr;
  uint32_t depth_ = 1;
  uint64_t chunk_ = 1 << 20;
  uint32_t inflight_ = 0;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
};

void writer_thread(Queue* q) { Pipeline(*q).run(); }

void drain_at_fork() { write_behind_drain(); }
void drain_at_exit() { write_behind_drain(); }
// The child has no writer thread, and the parent's queue lock may be held by
// a thread that does not exist there: it starts with a queue of its own.
void fresh_queue_in_child() { g_queue.store(new Queue(), std::memory_order_release); }

}  // namespace

void write_behind_drain() {
  Queue& q = queue();
  std::unique_lock<std::mutex> lock(q.mu);
  q.space.wait(lock, [&] { return q.active == 0; });
}

bool write_behind_submit(WriteBehindFile& wb, int dfd, int fd, const char* data, uint64_t len,
                         uint64_t offset, uint64_t limit, Stats& stats) {
  if (len == 0 || len > limit) return false;
  Queue& q = queue();
  {
    std::unique_lock<std::mutex> lock(q.mu);
    if (!q.started) {
      // A writer thread that exit() and fork() wait for.
      try {
        std::thread(writer_thread, &q).detach();
      } catch (...) {
        return false;
      }
      q.started = true;
      static std::once_flag handlers;
      std::call_once(handlers, [] {
        atexit(drain_at_exit);
        pthread_atfork(drain_at_fork, nullptr, fresh_queue_in_child);
      });
    }
    if (q.staged + len > limit) {
      stats.add(stats.write_behind_stalls);
      q.space.wait(lock, [&] { return q.staged + len <= limit; });
    }
    q.staged += len;
    q.active += 1;
  }
  PoolBuffer staging = BufferPool::get().acquire(len);
  if (!staging) {
    std::lock_guard<std::mutex> lock(q.mu);
    q.staged -= len;
    q.active -= 1;
    q.space.notify_all();
    return false;
  }
  memcpy(staging.data(), data, len);
  wb.add(offset, len);
  stats.add(stats.write_behind_writes);
  stats.add(stats.write_behind_bytes, len);
  {
    std::lock_guard<std::mutex> lock(q.mu);
    q.jobs.push_back(Job{&wb, dfd, fd, offset, len, std::move(staging)});
  }
  q.work.notify_one();
  return true;
}

}  // namespace hybridio
