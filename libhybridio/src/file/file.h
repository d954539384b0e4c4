// file.h - the engine's synchronous path for one open regular file.
//
// A File owns (or borrows) the caller's descriptor, opened buffered, and
// lazily opens an O_DIRECT twin of the same inode the first time the
// policy sends a request direct.  Each request is decided by the policy
// core, then executed as up to three pieces: a buffered head, a direct (or
// uncached) body, possibly staged through an aligned bounce buffer, and a
// buffered tail.  The bytes left in the file are exactly those a plain
// pwrite(2) would have left; a file that refuses O_DIRECT silently falls
// back to buffered I/O, once, and the fallback is counted.
//
// Thread-safety: pread/pwrite/sync may be called concurrently; read/write
// serialise on the file position; close must not race with other calls.
// Errors are returned as -errno.
//
// The class is one, its code three files: file.cc (its life and public
// calls), decide.cc (describe, decide, plan, route, partly cached reads)
// and execute.cc (the execution paths), with buffered_io.h beneath them;
// the sequential stream is stream.h's, the learner's side FileLearner's
// (learner.h: steer, observe, flush).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "file/file_context.h"
#include "file/stream.h"
#include "hybridio/policy.h"
#include "io/uring_engine.h"
#include "io/write_behind.h"
#include "learn/learner.h"
#include "platform/private_fd.h"
#include "probe/cache_probe.h"
#include "probe/dio_alignment.h"

namespace hybridio {

class PinnedRequest;

class File final : public PrivateFdOwner {
 public:
  // Opens `path`; on success *out owns the new File, which shares `ctx`
  // (the runtime) with the process's other files.  Returns 0 or -errno.
  static int open(FileContext& ctx, const char* path, int flags, mode_t mode, File** out);
  // Wraps `fd` (opened by the caller); closes it in close() if `owns_fd`.
  static int adopt(FileContext& ctx, int fd, bool owns_fd, File** out);

  ~File();
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  int fd() const { return fd_; }
  ssize_t pread(void* buf, size_t len, uint64_t offset);
  ssize_t pwrite(const void* buf, size_t len, uint64_t offset);
  ssize_t read(void* buf, size_t len);
  ssize_t write(const void* buf, size_t len);
  int sync(bool data_only);
  int truncate(uint64_t length);
  void set_mapped(bool mapped);
  // Waits for queued write-behind writes, then closes the twin and (if
  // owned) the descriptor.  0, or -errno: a deferred write-behind error
  // first, else close(2)'s error on the owned descriptor (EINTR is 0: Linux
  // releases the descriptor even then).  The twin's close result is ignored.
  int close();

  const DioAlignment& alignment() const { return align_; }

  // What the policy would do with a request, without doing it or moving
  // the sequential-stream state on (the LD_PRELOAD shim plans a call, then
  // gives it to libc, to one RWF_DONTCACHE system call, or to execute_plan
  // inside a PinnedRequest).  With `explore`, the plan may be an
  // exploration of another path (learned thresholds), and its credit is
  // spent: its execution must then follow it.
  struct Plan {
    hio_request req;
    hio_decision decision;
    bool explores = false;    // decided with exploration (see execute_plan)
    uint64_t started_ns = 0;  // learned from (learner.h): timed from here; 0: not
  };
  Plan plan(hio_op op, const char* buf, size_t len, uint64_t offset, bool explore);
  // A direct plan executed by the engine, one piece [offset, offset + len)
  // at a time (the shim's direct section, an iovec element each): the
  // plan's own decision for a piece that is the whole planned request;
  // any other piece is decided afresh, exploring only when the plan did not.
  ssize_t execute_plan(const Plan& plan, void* buf, size_t len, uint64_t offset);
  // A planned request that the caller executed itself, moving `bytes`:
  // counts it and moves the sequential stream on, as a request this file
  // executes does (a plan only looks at the stream).
  void finish_passthrough(const Plan& plan, uint64_t bytes);
  // The caller synced the file itself (the shim's fsync/fdatasync), which
  // took `ns`: counted, and charged as sync() does to the writes since the
  // last.
  void note_sync(uint64_t ns);
  // RWF_DONTCACHE was refused (EOPNOTSUPP) on this file: uncached requests
  // take the page cache from now on.
  bool dontcache_refused() const { return dontcache_refused_.load(std::memory_order_relaxed); }
  // Whether an uncached write of `len` bytes is a drop-behind write
  // (drop_behind.h) rather than one with RWF_DONTCACHE: hybrid's own
  // uncached writes, not the dontcache policy's.
  bool drops_behind(uint64_t len) const;
  void note_dontcache_refused();
  // Whether a read of `len` bytes at `offset` into `buf` that goes through
  // the page cache is copied out of it through a bounce buffer
  // (buffered_io.h, buffered_read): reads of kBouncedReadMin or more into memory that the
  // kernel's copy from the cache is slow to (checked_copy.h).  The shim
  // runs such calls in its exact section (preload/exact_call.h).
  static constexpr size_t kBouncedReadMin = 256 << 10;
  static bool bounces_read(const char* buf, size_t len, uint64_t offset);
  // Gives the calling thread's staging slots for misaligned bodies back to
  // the pool and frees its bounce buffer (between calls; the next call that
  // needs them takes them again).
  static void release_thread_staging();

  // Called when the program closed or replaced the O_DIRECT twin `fd`
  // (see private_fd.h); the twin is reopened when next needed.
  void forget_direct_fd(int fd) override;

 private:
  File(FileContext& ctx, int fd, bool owns_fd, int open_flags);

  struct Piece {
    uint64_t done = 0;     // bytes transferred
    int error = 0;         // errno of the failure that stopped it, 0 if none
    bool refused = false;  // direct I/O refused (EINVAL on first use): redo buffered
  };

  ssize_t transfer(hio_op op, char* buf, size_t len, uint64_t offset, const Plan* plan = nullptr);
  // Decides and executes one request; `cached_first` allows serving a
  // cached prefix of a direct-bound read before deciding the rest; `plan`:
  // the request was planned (execute_plan).
  ssize_t route(hio_request req, char* buf, bool cached_first, const Plan* plan = nullptr);
  uint64_t read_cached_prefix(char* buf, uint64_t len, uint64_t offset);
  // Whether a partly cached read would go direct if none of it were
  // cached, and by which rule.
  bool direct_if_uncached(const hio_request& req, hio_rule* rule) const;
  // A partly cached read that `rule` sends direct: its cached start and end
  // from the cache, the part between direct.  false when neither end is
  // cached (the caller then executes its own decision); else *out is the
  // read's result.
  bool read_partly_cached(const hio_request& req, char* buf, hio_rule rule, ssize_t* out);
  // An uncached part of such a read: direct, cut as the core cuts a body.
  ssize_t read_uncached(hio_request part, char* buf, hio_rule rule);
  void count_probe(ProbeMethod method);
  // The cache state of a large range from three small windows when they agree.
  CacheState probe_cache_sampled(uint64_t offset, uint64_t len, uint32_t page_size);
  hio_request describe(hio_op op, const char* buf, size_t len, uint64_t offset, bool advance_stream = true);
  // The policy's decision, probing the cache when the first answer is
  // direct; on a learned filesystem, with the threshold and off-cache path
  // the learner steers it with, and (`may_explore`) sometimes down another
  // path.
  hio_decision decide(hio_request& req, bool probed, bool may_explore);
  // hio_policy_decide under `cfg` with the facts it needs gathered: the file
  // size and cache state once the answer is direct (`probed`: already known).
  hio_decision decide_with(const hio_policy_config& cfg, hio_request& req, bool& probed);

  // The trace's line for a decision, with the estimate behind a learned or explored one.
  void trace(const hio_request& req, const hio_decision& d);
  ssize_t execute(const hio_request& req, const hio_decision& d, char* buf);
  // execute(), timed and shown to the learner when it learns from `req`.
  ssize_t execute_measured(const hio_request& req, const hio_decision& d, char* buf);
  ssize_t single_buffered(hio_op op, char* buf, size_t len, uint64_t offset, hio_path path);
  Piece loop_buffered(hio_op op, char* buf, uint64_t len, uint64_t offset);
  Piece loop_direct(hio_op op, char* buf, uint64_t len, uint64_t offset, bool bounce);
  // Its two ways: chunks in flight together (parallel_direct; `fixed_file`:
  // `dfd` is the pinned request's twin slot), or one system call at a time.
  Piece parallel_body(hio_op op, int dfd, char* buf, uint64_t len, uint64_t offset, bool bounce,
                      const EngineSettings& engine, bool fixed_file);
  Piece sync_body(hio_op op, int dfd, char* buf, uint64_t len, uint64_t offset, bool bounce);
  // loop_direct under the shim: through the request's pin and twin.
  Piece pinned_direct(PinnedRequest& pin, hio_op op, char* buf, uint64_t len, uint64_t offset, bool bounce);
  // Counts bytes a direct body moved (and its bounce, if staged).
  void count_direct(hio_op op, uint64_t bytes, bool bounce);
  // Its misaligned-memory case: staged chunk by chunk, copies overlapping I/O.
  Piece pinned_staged(PinnedRequest& pin, hio_op op, char* buf, uint64_t len, uint64_t offset);
  // Classifies a direct I/O failure: refused (redo buffered) or a real error.
  Piece direct_failed(int err, int dfd, Piece p);
  // Queues a direct write body behind the call (write-behind); false: do it now.
  bool write_behind(char* buf, uint64_t len, uint64_t offset, uint64_t request_end);
  int direct_fd();
  uint32_t file_flags() const;

  FileContext& ctx_;
  int fd_;
  const bool owns_fd_;
  const int open_flags_;
  DioAlignment align_;
  const bool has_writeback_;  // its pages go to a device (not tmpfs, ramfs): drop-behind can help
  std::mutex twin_mu_;
  std::atomic<int> direct_fd_{-1};
  std::atomic<bool> no_direct_{false};       // twin refused or first direct I/O gave EINVAL
  std::atomic<bool> direct_proven_{false};   // a direct I/O has succeeded on this file
  std::atomic<bool> dontcache_refused_{false};
  std::atomic<bool> mapped_{false};
  SequentialStream stream_;                  // the sequential stream (stream.h)
  std::atomic<bool> stream_uncached_{false};  // the previous read was decided uncached
  std::atomic<uint32_t> writers_{0};         // writes in progress (the contention signal)
  std::mutex position_mu_;                   // read()/write() position updates
  WriteBehindFile wb_;                       // queued direct writes (HYBRIDIO_WRITE_BEHIND)
  FileLearner learn_;                        // this file's side of the learner (learner.h)
};

}  // namespace hybridio
