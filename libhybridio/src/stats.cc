// stats.cc - see stats.h.
#include "stats.h"

#include <sstream>

namespace hybridio {

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
    if (r < HIO_STATS_RULES_V1) {
      s.rule_requests[r] = load(rule_requests_[r]);
      s.rule_bytes[r] = load(rule_bytes_[r]);
    } else {
      s.rule_requests_ext[r - HIO_STATS_RULES_V1] = load(rule_requests_[r]);
      s.rule_bytes_ext[r - HIO_STATS_RULES_V1] = load(rule_bytes_[r]);
    }
  }
  s.splits = load(splits);
  s.bounces = load(bounces);
  s.bounce_bytes = load(bounce_bytes);
  s.direct_open_refused = load(direct_open_refused);
  s.direct_io_refused = load(direct_io_refused);
  s.dontcache_refused = load(dontcache_refused);
  s.probe_cachestat = load(probe_cachestat);
  s.probe_mincore = load(probe_mincore);
  s.probe_failed = load(probe_failed);
  s.fsyncs = load(fsyncs);
  s.cached_first_reads = load(cached_first_reads);
  s.cached_first_bytes = load(cached_first_bytes);
  s.uring_requests = load(uring_requests);
  s.uring_chunks = load(uring_chunks);
  s.uring_retries = load(uring_retries);
  s.uring_trimmed = load(uring_trimmed);
  s.uring_unavailable = load(uring_unavailable);
  s.sync_fallback_requests = load(sync_fallback_requests);
  s.write_behind_writes = load(write_behind_writes);
  s.write_behind_bytes = load(write_behind_bytes);
  s.write_behind_stalls = load(write_behind_stalls);
  s.write_behind_waits = load(write_behind_waits);
  s.write_behind_errors = load(write_behind_errors);
  s.read_ahead_hits = load(read_ahead_hits);
  s.read_ahead_bytes = load(read_ahead_bytes);
  s.read_ahead_dropped = load(read_ahead_dropped);
  return s;
}

void Stats::reset() {
  for (auto& row : requests_)
    for (auto& c : row) c.store(0);
  for (auto& row : bytes_)
    for (auto& c : row) c.store(0);
  for (auto& c : rule_requests_) c.store(0);
  for (auto& c : rule_bytes_) c.store(0);
  for (auto* c : {&splits, &bounces, &bounce_bytes, &direct_open_refused, &direct_io_refused,
                  &dontcache_refused, &probe_cachestat, &probe_mincore, &probe_failed, &fsyncs, &cached_first_reads, &cached_first_bytes,
                  &uring_requests, &uring_chunks, &uring_retries, &uring_trimmed, &uring_unavailable,
                  &sync_fallback_requests, &write_behind_writes, &write_behind_bytes,
                  &write_behind_stalls, &write_behind_waits, &write_behind_errors, &read_ahead_hits,
                  &read_ahead_bytes, &read_ahead_dropped})
    c->store(0);
}

std::string Stats::to_json(const hio_policy_config& policy) const {
  const hio_stats s = snapshot();
  std::ostringstream j;
  j << "{\n  \"schema\": \"" << HYBRIDIO_STATS_SCHEMA << "\",\n";
  j << "  \"policy\": {\"mode\": \"" << hio_mode_name(policy.mode)
    << "\", \"write_threshold\": " << policy.write_threshold
    << ", \"read_threshold\": " << policy.read_threshold
    << ", \"sync_write_threshold\": " << policy.sync_write_threshold
    << ", \"stream_threshold\": " << policy.stream_threshold
    << ", \"dontcache_threshold\": " << policy.dontcache_threshold << "},\n";
  const char* ops[] = {"read", "write"};
  for (int op = 0; op < 2; ++op) {
    j << "  \"" << ops[op] << "\": {";
    for (int p = 0; p < HIO_PATH_COUNT; ++p) {
      j << (p ? ", " : "") << "\"" << hio_path_name(static_cast<hio_path>(p))
        << "\": {\"requests\": " << s.requests[op][p] << ", \"bytes\": " << s.bytes[op][p] << "}";
    }
    j << "},\n";
  }
  j << "  \"rules\": {";
  bool first = true;
  for (int r = 0; r < HIO_RULE_COUNT; ++r) {
    const hio_rule rule = static_cast<hio_rule>(r);
    if (!hio_stats_rule_requests(&s, rule)) continue;
    j << (first ? "" : ", ") << "\"" << hio_rule_name(rule) << "\": {\"requests\": "
      << hio_stats_rule_requests(&s, rule) << ", \"bytes\": " << hio_stats_rule_bytes(&s, rule) << "}";
    first = false;
  }
  j << "},\n";
  j << "  \"splits\": " << s.splits << ",\n  \"bounces\": " << s.bounces
    << ",\n  \"bounce_bytes\": " << s.bounce_bytes << ",\n";
  j << "  \"fallbacks\": {\"direct_open_refused\": " << s.direct_open_refused
    << ", \"direct_io_refused\": " << s.direct_io_refused
    << ", \"dontcache_refused\": " << s.dontcache_refused << "},\n";
  j << "  \"probes\": {\"cachestat\": " << s.probe_cachestat << ", \"mincore\": " << s.probe_mincore
    << ", \"failed\": " << s.probe_failed << "},\n";
  j << "  \"cached_first\": {\"reads\": " << s.cached_first_reads << ", \"bytes\": " << s.cached_first_bytes
    << "},\n";
  j << "  \"engine\": {\"uring_requests\": " << s.uring_requests << ", \"uring_chunks\": " << s.uring_chunks
    << ", \"uring_retries\": " << s.uring_retries << ", \"uring_trimmed\": " << s.uring_trimmed
    << ", \"uring_unavailable\": " << s.uring_unavailable
    << ", \"sync_fallback_requests\": " << s.sync_fallback_requests << "},\n";
  j << "  \"write_behind\": {\"writes\": " << s.write_behind_writes << ", \"bytes\": " << s.write_behind_bytes
    << ", \"stalls\": " << s.write_behind_stalls << ", \"waits\": " << s.write_behind_waits
    << ", \"errors\": " << s.write_behind_errors << "},\n";
  j << "  \"read_ahead\": {\"hits\": " << s.read_ahead_hits << ", \"bytes\": " << s.read_ahead_bytes
    << ", \"dropped\": " << s.read_ahead_dropped << "},\n";
  j << "  \"fsyncs\": " << s.fsyncs << "\n}\n";
  return j.str();
}

}  // namespace hybridio
