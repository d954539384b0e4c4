/* policy: per-request path decisions of each I/O policy. */
#include "policy.hpp"

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

Path choose_path(Policy pol, Op op, double size, bool cached, const PolicyParams& pp)
{
  switch (pol) {
    case Policy::Buffered:
      return Path::Buffered;
    case Policy::Direct:
      return Path::Direct;
    case Policy::Dontcache:
      return Path::Dontcache;
    case Policy::Async: // the persist phase writes from pinned memory; the restore reads direct
      return Path::Direct;
    case Policy::Hybrid:
      if (op == Op::Read && cached)
        return Path::Buffered;
      return size >= (op == Op::Write ? pp.write_threshold : pp.read_threshold) ? Path::Direct : Path::Buffered;
  }
  return Path::Buffered;
}

} // namespace hiosim
