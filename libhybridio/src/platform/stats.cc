// stats.cc - see stats.h.
#include "platform/stats.h"

#include "platform/stats_json.h"

namespace hybridio {

const Stats::ScalarCounter Stats::kScalarCounters[] = {
    {"splits", &Stats::splits, &hio_stats::splits},
    {"bounces", &Stats::bounces, &hio_stats::bounces},
    {"bounce_bytes", &Stats::bounce_bytes, &hio_stats::bounce_bytes},
    {"fallbacks.direct_open_refused", &Stats::direct_open_refused, &hio_stats::direct_open_refused},
    {"fallbacks.direct_io_refused", &Stats::direct_io_refused, &hio_stats::direct_io_refused},
    {"fallbacks.dontcache_refused", &Stats::dontcache_refused, &hio_stats::dontcache_refused},
    {"probes.cachestat", &Stats::probe_cachestat, &hio_stats::probe_cachestat},
    {"probes.mincore", &Stats::probe_mincore, &hio_stats::probe_mincore},
    {"probes.failed", &Stats::probe_failed, &hio_stats::probe_failed},
    {"cached_first.reads", &Stats::cached_first_reads, &hio_stats::cached_first_reads},
    {"cached_first.bytes", &Stats::cached_first_bytes, &hio_stats::cached_first_bytes},
    {"engine.uring_requests", &Stats::uring_requests, &hio_stats::uring_requests},
    {"engine.uring_chunks", &Stats::uring_chunks, &hio_stats::uring_chunks},
    {"engine.uring_retries", &Stats::uring_retries, &hio_stats::uring_retries},
    {"engine.uring_trimmed", &Stats::uring_trimmed, &hio_stats::uring_trimmed},
    {"engine.uring_unavailable", &Stats::uring_unavailable, &hio_stats::uring_unavailable},
    {"engine.sync_fallback_requests", &Stats::sync_fallback_requests, &hio_stats::sync_fallback_requests},
    {"write_behind.writes", &Stats::write_behind_writes, &hio_stats::write_behind_writes},
    {"write_behind.bytes", &Stats::write_behind_bytes, &hio_stats::write_behind_bytes},
    {"write_behind.stalls", &Stats::write_behind_stalls, &hio_stats::write_behind_stalls},
    {"write_behind.waits", &Stats::write_behind_waits, &hio_stats::write_behind_waits},
    {"write_behind.errors", &Stats::write_behind_errors, &hio_stats::write_behind_errors},
    {"read_ahead.hits", &Stats::read_ahead_hits, &hio_stats::read_ahead_hits},
    {"read_ahead.bytes", &Stats::read_ahead_bytes, &hio_stats::read_ahead_bytes},
    {"read_ahead.dropped", &Stats::read_ahead_dropped, &hio_stats::read_ahead_dropped},
    {"learned.samples", &Stats::learn_samples, &hio_stats::learn_samples},
    {"learned.deferred", &Stats::learn_deferred, &hio_stats::learn_deferred},
    {"learned.explored_buffered", &Stats::learn_explored_buffered, &hio_stats::learn_explored_buffered},
    {"learned.explored_direct", &Stats::learn_explored_direct, &hio_stats::learn_explored_direct},
    {"learned.explored_dontcache", &Stats::learn_explored_dontcache, &hio_stats::learn_explored_dontcache},
    {"learned.moves", &Stats::learn_moves, &hio_stats::learn_moves},
    {"drop_behind.writes", &Stats::drop_behind_writes, &hio_stats::drop_behind_writes},
    {"drop_behind.bytes", &Stats::drop_behind_bytes, &hio_stats::drop_behind_bytes},
    {"drop_behind.waits", &Stats::drop_behind_waits, &hio_stats::drop_behind_waits},
    {"drop_behind.refused", &Stats::drop_behind_refused, &hio_stats::drop_behind_refused},
    {"reuse.admitted_reads", &Stats::reuse_admitted_reads, &hio_stats::reuse_admitted_reads},
    {"reuse.admitted_bytes", &Stats::reuse_admitted_bytes, &hio_stats::reuse_admitted_bytes},
    {"reuse.hit_reads", &Stats::reuse_hit_reads, &hio_stats::reuse_hit_reads},
    {"reuse.hit_bytes", &Stats::reuse_hit_bytes, &hio_stats::reuse_hit_bytes},
    {"fsyncs", &Stats::fsyncs, &hio_stats::fsyncs},
};
const size_t Stats::kScalarCounterCount = sizeof(kScalarCounters) / sizeof(kScalarCounters[0]);

void Stats::count_rule(hio_rule rule, uint64_t bytes) {
  add(rule_requests_[rule]);
  add(rule_bytes_[rule], bytes);
}

hio_stats Stats::snapshot() const {
  hio_stats s{};
  auto load = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  for (int op = 0; op < 2; ++op)
    for (int p = 0; p < HIO_PATH_COUNT; ++p) {
      s.requests[op][p] = load(requests_[op][p]);
      s.bytes[op][p] = load(bytes_[op][p]);
    }
  static_assert(HIO_RULE_COUNT >= HIO_STATS_RULES_V1 &&
                    HIO_RULE_COUNT <= HIO_STATS_RULES_V1 + HIO_STATS_RULES_EXT,
                "struct hio_stats has no room for every rule");
  for (int r = 0; r < HIO_RULE_COUNT; ++r) {
    const hio_rule rule = static_cast<hio_rule>(r);
    *rule_requests_slot(&s, rule) = load(rule_requests_[r]);
    *rule_bytes_slot(&s, rule) = load(rule_bytes_[r]);
  }
  for (size_t i = 0; i < kScalarCounterCount; ++i)
    s.*kScalarCounters[i].reported = load(this->*kScalarCounters[i].live);
  return s;
}

void Stats::reset() {
  for (auto& row : requests_)
    for (auto& c : row) c.store(0);
  for (auto& row : bytes_)
    for (auto& c : row) c.store(0);
  for (auto& c : rule_requests_) c.store(0);
  for (auto& c : rule_bytes_) c.store(0);
  for (size_t i = 0; i < kScalarCounterCount; ++i) (this->*kScalarCounters[i].live).store(0);
}

std::string Stats::to_json(const hio_policy_config& policy) const {
  return stats_json(snapshot(), 1, policy);
}

}  // namespace hybridio
