// ring_submitter.cc - see ring_submitter.h.
#include "ring_submitter.h"

#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <new>

#include "library_thread.h"
#include "syscall_table.h"

namespace hybridio {

// The process's submitter thread and its queue of rings to enter (one per
// process: process_instance()).
class Submitter {
 public:
  bool ready() {
    std::lock_guard<std::mutex> lock(mu_);
    return start();
  }

  bool request(RemoteRing* r, io_uring* ring) {
    r->ring_ = ring;
    return enqueue(r);
  }

  int call(int (*fn)(void*), void* arg) {
    RemoteRing r;
    r.call_ = fn;
    r.call_arg_ = arg;
    if (!enqueue(&r)) return -EAGAIN;
    wait_done(&r);
    return r.take_error();
  }

  void wait_done(RemoteRing* r) {
    std::unique_lock<std::mutex> lock(mu_);
    ++waiters_;
    done_.wait(lock, [r] { return r->done(); });
    --waiters_;
  }

  // fork(2): the lock is taken before and released in both processes; the
  // child has no submitter thread and starts its own.
  void before_fork() { mu_.lock(); }
  void after_fork_parent() { mu_.unlock(); }
  void after_fork_child() {
    // The copies count the parent's waiters, who are not here: new ones.
    new (&work_) std::condition_variable();
    new (&done_) std::condition_variable();
    for (RemoteRing* r = head_; r; r = r->next_) r->busy_.store(false, std::memory_order_relaxed);
    if (current_) current_->busy_.store(false, std::memory_order_relaxed);
    head_ = current_ = nullptr;
    tail_ = &head_;
    running_ = sleeping_ = false;
    waiters_ = 0;
    mu_.unlock();
  }

 private:
  bool start() {
    if (running_) return true;
    if (thread_.start("hybridio-sq", &Submitter::main, this) != 0) return false;
    running_ = true;
    return true;
  }

  // Queues `r` for the thread; false when there is no thread.
  bool enqueue(RemoteRing* r) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!start()) return false;
    r->next_ = nullptr;
    r->busy_.store(true, std::memory_order_relaxed);
    *tail_ = r;
    tail_ = &r->next_;
    if (sleeping_) work_.notify_one();
    return true;
  }

  static void main(void* self) { static_cast<Submitter*>(self)->run(); }

  void run() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      sleeping_ = true;
      work_.wait(lock, [this] { return head_ != nullptr; });
      sleeping_ = false;
      RemoteRing* r = current_ = head_;
      head_ = r->next_;
      if (!head_) tail_ = &head_;
      lock.unlock();
      // The caller prepares nothing in the ring until busy_ clears, so
      // liburing's submission-side fields are this thread's meanwhile.
      const int rc = r->call_ ? r->call_(r->call_arg_) : sys().ring_enter(r->ring_, 0, true);
      lock.lock();
      r->error_ = rc < 0 ? rc : 0;
      r->busy_.store(false, std::memory_order_release);
      current_ = nullptr;
      if (waiters_) done_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable work_;  // the thread: a ring queued
  std::condition_variable done_;  // callers: a request done
  RemoteRing* head_ = nullptr;    // rings to enter, in request order
  RemoteRing** tail_ = &head_;
  RemoteRing* current_ = nullptr;  // the ring being entered
  unsigned waiters_ = 0;
  bool running_ = false, sleeping_ = false;
  LibraryThread thread_;
};

namespace {

Submitter& submitter() { return process_instance<Submitter>(); }

}  // namespace

bool ring_submitter_ready() { return submitter().ready(); }

int call_on_submitter_thread(int (*fn)(void*), void* arg) { return submitter().call(fn, arg); }

bool RemoteRing::request(io_uring* ring) {
  if (!done()) return true;  // asked already: the thread reads the ring's tail when it enters
  return submitter().request(this, ring);
}

void RemoteRing::wait_done() {
  if (!done()) submitter().wait_done(this);
}

int RemoteRing::take_error() {
  const int e = error_;
  error_ = 0;
  return e;
}

}  // namespace hybridio
