// hybridio/policy.hpp - C++ wrapper of the policy core (hybridio/policy.h).
//
// Pure functions over plain values; safe from any thread.
#pragma once

#include "hybridio/policy.h"

namespace hybridio {

// The documented defaults (Lustre's thresholds and Hybrid-IO's additions).
inline hio_policy_config default_policy() {
  hio_policy_config c;
  hio_policy_config_defaults(&c);
  return c;
}

// Decides one request; see hio_policy_decide.
inline hio_decision decide(const hio_policy_config& config, const hio_request& request) {
  hio_decision d;
  hio_policy_decide(&config, &request, &d);
  return d;
}

// A request with every optional fact unknown, ready for the caller to fill in.
inline hio_request make_request(hio_op op, hio_u64 offset, hio_u64 length, const void* buf,
                                hio_u32 mem_align, hio_u32 offset_align) {
  hio_request r{};
  r.op = op;
  r.offset = offset;
  r.length = length;
  r.buf_addr = reinterpret_cast<hio_uptr>(buf);
  r.mem_align = mem_align;
  r.offset_align = offset_align;
  r.file_size = ~static_cast<hio_u64>(0);
  r.cached_pages = HIO_PAGES_UNKNOWN;
  r.dirty_pages = HIO_PAGES_UNKNOWN;
  return r;
}

inline const char* to_string(hio_path p) { return hio_path_name(p); }
inline const char* to_string(hio_rule r) { return hio_rule_name(r); }
inline const char* to_string(hio_mode m) { return hio_mode_name(m); }

}  // namespace hybridio
