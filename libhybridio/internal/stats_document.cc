// stats_document.cc - see hybridio_internal/stats_document.h.
#include "hybridio_internal/stats_document.h"

#include "platform/stats_json.h"

namespace hybridio::internal {

std::string stats_document(const hio_stats& s, uint64_t processes, const hio_policy_config& policy) {
  return stats_json(s, processes, policy);
}

bool add_stats_document(const std::string& text, hio_stats* sum, uint64_t* processes) {
  return add_stats_json(text, sum, processes);
}

}  // namespace hybridio::internal
