// execute.cc - see file.h: how a File executes a decision.  A buffered
// head, a direct (or uncached) body and a buffered tail; the body in
// chunks in flight together, one system call at a time, through the
// shim's pinned request, or queued behind the call (write-behind); what
// the body leaves, the page cache finishes.
#include "file/file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "file/buffered_io.h"
#include "io/drop_behind.h"
#include "io/pinned_request.h"
#include "io/uring_engine.h"
#include "io/write_behind.h"
#include "memory/checked_copy.h"
#include "platform/fsize_limit.h"
#include "platform/syscall_table.h"

namespace hybridio {
namespace {

ssize_t result_of(uint64_t done, int error) {
  if (done > 0 || error == 0) return static_cast<ssize_t>(done);
  return -error;
}

}  // namespace

ssize_t File::execute(const hio_request& req, const hio_decision& d, char* buf) {
  const hio_op op = req.op;
  const uint64_t offset = req.offset;
  if (d.rule == HIO_RULE_CALLER_DIRECT) {
    // The caller's own O_DIRECT descriptor: exactly its system call, nothing added.
    ssize_t n = sys_io(op, fd_, buf, req.length, offset, 0);
    if (n < 0) return -errno;
    ctx_.stats().count_bytes(op, HIO_PATH_DIRECT, static_cast<uint64_t>(n));
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
      hio_policy_decide(&ctx_.policy(), &below, &cut);
      return execute(below, cut, buf);
    }
  }

  Stats& s = ctx_.stats();
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

ssize_t File::single_buffered(hio_op op, char* buf, size_t len, uint64_t offset, hio_path path) {
  Stats& s = ctx_.stats();
  if (path == HIO_PATH_DONTCACHE && op == HIO_OP_WRITE && drops_behind(len)) {
    DropBehind drop(ctx_.file_settings().drop_behind_limit, ctx_.stats());
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
  if (p.done) ctx_.stats().count_bytes(op, HIO_PATH_BUFFERED, p.done);
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
    if (chunked) ctx_.stats().add(ctx_.stats().sync_fallback_requests);
    p = sync_body(op, dfd, buf, len, offset, bounce);
  }
  count_direct(op, p.done, bounce);
  return p;
}

File::Piece File::parallel_body(hio_op op, int dfd, char* buf, uint64_t len, uint64_t offset, bool bounce,
                                const EngineSettings& engine, bool fixed_file) {
  Piece p;
  const ChunkedResult r = parallel_direct(op, dfd, buf, len, offset, bounce, engine, ctx_.stats(), fixed_file);
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
  const uint64_t chunk_max = bounce ? ctx_.file_settings().bounce_size : kMaxDirectChunk;
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

File::Piece File::pinned_direct(PinnedRequest& pin, hio_op op, char* buf, uint64_t len, uint64_t offset,
                                bool bounce) {
  Piece p;
  Stats& s = ctx_.stats();
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

File::Piece File::direct_failed(int err, int dfd, Piece p) {
  Stats& s = ctx_.stats();
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
  Stats& s = ctx_.stats();
  s.count_bytes(op, HIO_PATH_DIRECT, bytes);
  if (bounce) {
    s.add(s.bounces);
    s.add(s.bounce_bytes, bytes);
  }
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
  // does: fallocate waits for every direct write in flight on the inode,
  // which would drain the queue at every queued write.
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
  return write_behind_submit(wb_, dfd, fd_, buf, queued, offset, engine.write_behind_limit, ctx_.stats());
}

}  // namespace hybridio
