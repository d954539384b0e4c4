// trace.cc - see trace.h.  Format (one line, space-separated key=value):
//   op=write fd=5 off=0 len=4194304 path=direct rule=write_size head=0 body=4194304 tail=0 bounce=0
//   ... and, for a learned or explored decision, the measurements behind it:
//   estimate=4096K,buffered=1.95GB/s,direct=2.51GB/s,dontcache=-
//   ... and, for a read the re-use history admitted (HIO_FILE_REUSE): reuse=1
#include "platform/trace.h"

#include <cinttypes>

namespace hybridio {

bool Trace::open(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  file_ = fopen(path.c_str(), "ae");
  return file_ != nullptr;
}

void Trace::record(int fd, const hio_request& req, const hio_decision& d, const std::string& estimate) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!file_) return;
  fprintf(file_,
          "op=%s fd=%d off=%" PRIu64 " len=%" PRIu64 " path=%s rule=%s head=%" PRIu64
          " body=%" PRIu64 " tail=%" PRIu64 " bounce=%d cached=%" PRId64 " dirty=%" PRId64
          " pressure=%u seq=%u%s%s%s\n",
          req.op == HIO_OP_WRITE ? "write" : "read", fd, static_cast<uint64_t>(req.offset),
          static_cast<uint64_t>(req.length), hio_path_name(d.path), hio_rule_name(d.rule),
          static_cast<uint64_t>(d.head_len), static_cast<uint64_t>(d.body_len),
          static_cast<uint64_t>(d.tail_len), d.bounce ? 1 : 0,
          static_cast<int64_t>(req.cached_pages), static_cast<int64_t>(req.dirty_pages),
          req.pressure, req.seq_run, estimate.empty() ? "" : " estimate=", estimate.c_str(),
          req.op == HIO_OP_READ && (req.file_flags & HIO_FILE_REUSE) ? " reuse=1" : "");
  fflush(file_);
}

void Trace::close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (file_) fclose(file_);
  file_ = nullptr;
}

}  // namespace hybridio
