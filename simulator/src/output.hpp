/* output: what a run prints and writes. A readable summary (stdout), one CSV row per policy
 * (or per bench point) with a header, and a JSON document {"schema": "hybridio-sim/1",
 * "config": {...every flag...}, "run": {...}, "results": [...]}: UTF-8, indented by 2, numbers
 * at full precision, null for a value that is not finite. Writers throw
 * std::runtime_error when a file cannot be written. */
#pragma once
#include "params.hpp"
#include "simulation.hpp"

#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace hiosim {

using FlagList = std::vector<std::pair<std::string, std::string>>;

void print_summary(std::ostream& os, const Params& p, const RunResult& rr);
void write_csv(std::ostream& os, const Params& p, const RunResult& rr, const FlagList& tags, bool header);
void write_json(std::ostream& os, const Params& p, const RunResult& rr, const FlagList& config);
std::string csv_header(const RunResult& rr, const FlagList& tags);

} // namespace hiosim
