// write_behind.cc - see write_behind.h.
#include "write_behind.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
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
// handlers and late threads may still use it.
struct Queue {
  std::mutex mu;
  std::condition_variable work;   // jobs queued
  std::condition_variable space;  // staging released / a job finished
  std::deque<Job> jobs;
  uint64_t staged = 0;            // bytes queued or being written
  uint32_t active = 0;            // jobs queued or being written
  bool started = false;
};

Queue& queue() {
  static Queue* q = new Queue();
  return *q;
}

// Writes one job; returns 0 or the errno to defer.
int write_job(Job& j) {
  Stats& stats = Runtime::get().stats();
  char* buf = j.staging.data();
  uint64_t done = 0;
  int error = 0;
  const EngineSettings engine = engine_settings();
  if (engine.uring && j.len >= 2 * engine.chunk_size && uring_usable()) {
    ChunkedResult r = parallel_direct(HIO_OP_WRITE, j.dfd, buf, j.len, j.offset, false, engine, stats);
    done = r.done;
    error = r.error;
  } else {
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
  }
  if (done) stats.count_bytes(HIO_OP_WRITE, HIO_PATH_DIRECT, done);
  // A short or refused direct write (EINVAL: not supported; EBADF: the twin
  // went away) is finished through the page cache, as a synchronous one is.
  if (done < j.len && (error == 0 || error == EINVAL || error == EBADF || error == EAGAIN)) {
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
  }
  return error;
}

void writer_thread() {
  Queue& q = queue();
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(q.mu);
      q.work.wait(lock, [&] { return !q.jobs.empty(); });
      job = std::move(q.jobs.front());
      q.jobs.pop_front();
    }
    int error = write_job(job);
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
}

void drain_at_fork() { write_behind_drain(); }
void drain_at_exit() { write_behind_drain(); }

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
        std::thread(writer_thread).detach();
      } catch (...) {
        return false;
      }
      q.started = true;
      atexit(drain_at_exit);
      pthread_atfork(drain_at_fork, nullptr, nullptr);
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
