// decision_summary.cc - see decision_summary.h.
#include "decision_summary.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "hybridio_internal/settings_text.h"

namespace hybridio::bench {
namespace {

std::string size_text(uint64_t bytes) { return internal::format_size(bytes); }

// What a rule means for one direction, with the configured numbers.
std::string rule_reason(hio_rule rule, hio_op op, const hio_policy_config& c) {
  const bool write = op == HIO_OP_WRITE;
  const std::string size_threshold = size_text(write ? c.write_threshold : c.read_threshold);
  switch (rule) {
    case HIO_RULE_SMALL:
      return std::string("calls below the ") + size_threshold + (write ? " write" : " read") + " threshold";
    case HIO_RULE_WRITE_SIZE:
    case HIO_RULE_READ_SIZE:
      return "calls at or above the " + size_threshold + (write ? " write" : " read") + " threshold";
    case HIO_RULE_SEQUENTIAL:
      return "a stream of calls at or above the " + size_text(c.stream_threshold) + " stream threshold";
    case HIO_RULE_READ_CACHED:
      return "the range was already in the page cache";
    case HIO_RULE_WRITE_DIRTY:
      return "the range was already dirty in the page cache";
    case HIO_RULE_UNALIGNED:
      return "no aligned part large enough for direct I/O";
    case HIO_RULE_NO_DIRECT:
      return "the file or filesystem refuses O_DIRECT";
    case HIO_RULE_PRESSURE:
      return "memory pressure lowered the threshold";
    case HIO_RULE_CONTENDED:
      return "several threads writing one file lowered the threshold";
    case HIO_RULE_SYNC_WRITE:
      return "O_SYNC writes above the " + size_text(c.sync_write_threshold) + " sync threshold";
    case HIO_RULE_MAPPED:
      return "the file is memory-mapped";
    case HIO_RULE_APPEND:
      return "O_APPEND writes";
    case HIO_RULE_EMPTY:
      return "empty calls or reads at end of file";
    default:
      return "";
  }
}

}  // namespace

std::string explain_decisions(const hio_stats& s, hio_op op, const hio_policy_config& cfg) {
  uint64_t total = 0;
  for (int p = 0; p < HIO_PATH_COUNT; ++p) total += s.bytes[op][p];
  if (total == 0) return "";
  // Bytes per rule count requests' lengths as decided; split pieces and
  // cached prefixes make them differ a little from the bytes per path, so
  // the line gives the paths' shares and names the rules behind them.
  std::vector<std::pair<uint64_t, hio_rule>> rules;
  uint64_t ruled = 0;
  for (int r = 0; r < HIO_RULE_COUNT; ++r) {
    const uint64_t b = hio_stats_rule_bytes(&s, static_cast<hio_rule>(r));
    ruled += b;
    if (b) rules.push_back({b, static_cast<hio_rule>(r)});
  }
  std::sort(rules.rbegin(), rules.rend());
  std::string line;
  char part[64];
  for (int p = 0; p < HIO_PATH_COUNT; ++p) {
    const uint64_t b = s.bytes[op][p];
    if (b * 100 < total) continue;
    snprintf(part, sizeof part, "%s%.0f %% %s", line.empty() ? "" : ", ", 100.0 * b / total,
             hio_path_name(static_cast<hio_path>(p)));
    line += part;
  }
  line += "; decided by";
  bool first = true;
  for (const auto& [bytes, rule] : rules) {
    if (ruled == 0 || bytes * 100 < ruled) continue;
    snprintf(part, sizeof part, "%s %.0f %% ", first ? "" : ";", 100.0 * bytes / ruled);
    line += part;
    line += hio_rule_name(rule);
    const std::string why = rule_reason(rule, op, cfg);
    if (!why.empty()) line += " (" + why + ")";
    first = false;
  }
  return line;
}

}  // namespace hybridio::bench
