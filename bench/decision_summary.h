// decision_summary.h - one line per phase that says why the hybrid policy
// routed a run's bytes as it did: the share of bytes per path, and for the
// largest shares the rule that decided them with the threshold in effect.
//
//   hybrid write: 97 % direct: sequential (a stream of calls >= the 1M stream threshold);
//                 3 % buffered: small (calls below the 2M write threshold)
#pragma once

#include <string>

#include "hybridio/hybridio.h"

namespace hybridio::bench {

// The reason, from one run's counters (`s`, the run's own, reset before it)
// and the policy configuration the run used.  Rules moving less than 1 % of
// the direction's bytes are left out; "" when the run moved no bytes.
std::string explain_decisions(const hio_stats& s, hio_op op, const hio_policy_config& cfg);

}  // namespace hybridio::bench
