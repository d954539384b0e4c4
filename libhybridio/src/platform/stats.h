// stats.h - process-wide counters: what each request did and why.
//
// All counters are relaxed atomics: any thread may count at any time; a
// snapshot is consistent per counter, not across counters.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "hybridio/hybridio.h"

namespace hybridio {

class Stats {
 public:
  // One caller request, by the path of its body.
  void count_request(hio_op op, hio_path path) { add(requests_[op][path]); }
  // Bytes moved on a path (a split request adds its pieces to their paths).
  void count_bytes(hio_op op, hio_path path, uint64_t bytes) { add(bytes_[op][path], bytes); }
  void count_rule(hio_rule rule, uint64_t bytes);
  void add(std::atomic<uint64_t>& counter, uint64_t n = 1) { counter.fetch_add(n, std::memory_order_relaxed); }

  hio_stats snapshot() const;
  void reset();

  // The snapshot as JSON (schema HYBRIDIO_STATS_SCHEMA), with the policy in effect.
  std::string to_json(const hio_policy_config& policy) const;

  // One counter outside the per-path and per-rule tables: its place in the
  // JSON document ("name" or "group.name"), where it is counted, and where
  // hio_stats reports it.  kScalarCounters lists every one, in document
  // order; snapshot, reset, the JSON writer and the JSON reader
  // (stats_json.h) all walk it, so a new counter is one new row.
  struct ScalarCounter {
    const char* json_path;
    std::atomic<uint64_t> Stats::*live;
    uint64_t hio_stats::*reported;
  };
  static const ScalarCounter kScalarCounters[];
  static const size_t kScalarCounterCount;

  std::atomic<uint64_t> splits{0}, bounces{0}, bounce_bytes{0};
  std::atomic<uint64_t> direct_open_refused{0}, direct_io_refused{0}, dontcache_refused{0};
  std::atomic<uint64_t> probe_cachestat{0}, probe_mincore{0}, probe_failed{0};
  std::atomic<uint64_t> fsyncs{0};
  std::atomic<uint64_t> cached_first_reads{0}, cached_first_bytes{0};
  std::atomic<uint64_t> uring_requests{0}, uring_chunks{0}, uring_retries{0}, uring_trimmed{0};
  std::atomic<uint64_t> uring_unavailable{0}, sync_fallback_requests{0};
  std::atomic<uint64_t> write_behind_writes{0}, write_behind_bytes{0}, write_behind_stalls{0};
  std::atomic<uint64_t> write_behind_waits{0}, write_behind_errors{0};
  std::atomic<uint64_t> read_ahead_hits{0}, read_ahead_bytes{0}, read_ahead_dropped{0};
  std::atomic<uint64_t> learn_samples{0}, learn_deferred{0}, learn_moves{0};
  std::atomic<uint64_t> learn_explored_buffered{0}, learn_explored_direct{0}, learn_explored_dontcache{0};
  std::atomic<uint64_t> drop_behind_writes{0}, drop_behind_bytes{0}, drop_behind_waits{0}, drop_behind_refused{0};
  std::atomic<uint64_t> reuse_admitted_reads{0}, reuse_admitted_bytes{0}, reuse_hit_reads{0}, reuse_hit_bytes{0};

 private:
  std::atomic<uint64_t> requests_[2][HIO_PATH_COUNT]{};
  std::atomic<uint64_t> bytes_[2][HIO_PATH_COUNT]{};
  std::atomic<uint64_t> rule_requests_[HIO_RULE_COUNT]{};
  std::atomic<uint64_t> rule_bytes_[HIO_RULE_COUNT]{};
};

// Where `s` keeps the counters of `rule`: rules from HIO_STATS_RULES_V1 on
// live in the _ext arrays (the writable twins of hio_stats_rule_requests()
// and hio_stats_rule_bytes()).
inline uint64_t* rule_requests_slot(hio_stats* s, hio_rule rule) {
  const unsigned r = static_cast<unsigned>(rule);
  return r < HIO_STATS_RULES_V1 ? &s->rule_requests[r] : &s->rule_requests_ext[r - HIO_STATS_RULES_V1];
}
inline uint64_t* rule_bytes_slot(hio_stats* s, hio_rule rule) {
  const unsigned r = static_cast<unsigned>(rule);
  return r < HIO_STATS_RULES_V1 ? &s->rule_bytes[r] : &s->rule_bytes_ext[r - HIO_STATS_RULES_V1];
}

}  // namespace hybridio
