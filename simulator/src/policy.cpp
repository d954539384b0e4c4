/* policy: per-request path decisions through libhybridio's policy core (see policy.hpp). */
#include "policy.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace hiosim {

Policy parse_policy(const std::string& name)
{
  if (name == "buffered")
    return Policy::Buffered;
  if (name == "direct")
    return Policy::Direct;
  if (name == "dontcache")
    return Policy::Dontcache;
  if (name == "hybrid")
    return Policy::Hybrid;
  if (name == "async")
    return Policy::Async;
  throw std::invalid_argument("unknown policy '" + name + "'");
}

const char* policy_name(Policy p)
{
  switch (p) {
    case Policy::Buffered:
      return "buffered";
    case Policy::Direct:
      return "direct";
    case Policy::Dontcache:
      return "dontcache";
    case Policy::Hybrid:
      return "hybrid";
    case Policy::Async:
      return "async";
  }
  return "?";
}

const char* path_name(Path p)
{
  switch (p) {
    case Path::Buffered:
      return "buffered";
    case Path::Direct:
      return "direct";
    case Path::Dontcache:
      return "dontcache";
  }
  return "?";
}

Path path_of(hio_path p)
{
  switch (p) {
    case HIO_PATH_DIRECT:
      return Path::Direct;
    case HIO_PATH_DONTCACHE:
      return Path::Dontcache;
    default:
      return Path::Buffered;
  }
}

hio_mode mode_of(Policy p)
{
  switch (p) {
    case Policy::Buffered:
      return HIO_MODE_BUFFERED;
    case Policy::Direct:
    case Policy::Async: // the persist phase writes from pinned memory; the restore reads direct
      return HIO_MODE_DIRECT;
    case Policy::Dontcache:
      return HIO_MODE_DONTCACHE;
    case Policy::Hybrid:
      return HIO_MODE_HYBRID;
  }
  return HIO_MODE_HYBRID;
}

hio_policy_config policy_config(Policy pol, const PolicyParams& pp)
{
  hio_policy_config c = pp.core;
  c.mode = mode_of(pol);
  return c;
}

hio_decision decide_request(const hio_policy_config& cfg, const RequestFacts& f, const CacheFacts& cache,
                            hio_request* req_out)
{
  // Built as File::describe() builds it (libhybridio/src/file/decide.cc).
  hio_request req{};
  req.op       = f.op == Op::Write ? HIO_OP_WRITE : HIO_OP_READ;
  req.offset   = f.offset;
  req.length   = f.length;
  req.buf_addr = 0; // assumed: page-aligned user buffers (torch tensors, bench buffers)
  // Assumed: the device's STATX_DIOALIGN is at most a page; the library raises memory
  // alignment to a page, and under the shim offset alignment too.
  req.mem_align    = cfg.page_size;
  req.offset_align = cfg.page_size;
  req.file_size    = ~0ULL; // not needed unless the request may go direct
  req.cached_pages = HIO_PAGES_UNKNOWN;
  req.dirty_pages  = HIO_PAGES_UNKNOWN;
  req.file_flags   = f.dontcache_ok ? HIO_FILE_DONTCACHE_OK : 0;
  req.seq_run      = f.seq_run;
  if (f.op == Op::Write)
    req.writers = f.writers;

  // As File::decide(): pressure only matters for requests it could push over a threshold.
  hio_decision d;
  if (cfg.mode == HIO_MODE_HYBRID && cache.pressure &&
      f.length >= hio_policy_smallest_offcache(&cfg, req.op) &&
      f.length < std::max(cfg.write_threshold, cfg.read_threshold))
    req.pressure = cache.pressure();
  hio_policy_decide(&cfg, &req, &d);
  // Only a request headed direct is worth probing: the probe can only keep it buffered.
  if (d.path == HIO_PATH_DIRECT && d.rule != HIO_RULE_CALLER_DIRECT) {
    if (req.op == HIO_OP_READ)
      req.file_size = f.file_size;
    if (cfg.mode == HIO_MODE_HYBRID && cache.probe) {
      double cached = 0, dirty = 0;
      cache.probe(cached, dirty);
      double pages     = static_cast<double>(hio_range_pages(f.offset, f.length, cfg.page_size));
      req.cached_pages = static_cast<hio_s64>(std::llround(std::clamp(cached, 0.0, 1.0) * pages));
      req.dirty_pages  = static_cast<hio_s64>(std::llround(std::clamp(dirty, 0.0, 1.0) * pages));
    }
    hio_policy_decide(&cfg, &req, &d);
  }
  if (req_out)
    *req_out = req;
  return d;
}

Path stream_path(Policy pol, const PolicyParams& pp, Op op, uint64_t size)
{
  hio_policy_config cfg = policy_config(pol, pp);
  RequestFacts f;
  f.op           = op;
  f.length       = size;
  f.seq_run      = cfg.stream_min_run;
  f.offset       = size * cfg.stream_min_run;
  f.file_size    = f.offset + size;
  f.dontcache_ok = pp.dontcache_ok;
  CacheFacts empty;
  empty.probe    = [](double& cached, double& dirty) { cached = dirty = 0; };
  empty.pressure = [] { return 0u; };
  return path_of(decide_request(cfg, f, empty).path);
}

} // namespace hiosim
