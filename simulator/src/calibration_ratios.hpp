/* calibration_ratios: the calibration judged on ratios, which one interleaved measurement run
 * can judge when its absolute values drift. For each held-out block size and direction, the
 * ratios direct/buffered and hybrid/buffered: predicted (the model's two predictions divided)
 * against measured (the median over the repeats of the ratio within one repeat; `hybridio
 * bench` runs every policy once per repeat, so runs[k] of each policy are neighbours in time
 * and the machine's slow drift cancels in their ratio). Without per-run values the measured
 * ratio is the ratio of the medians, and the output says so. Plain C++, no SimGrid. */
#pragma once
#include "calibration.hpp"

#include <functional>
#include <string>
#include <vector>

namespace hiosim {

struct RatioRow {
  std::string rw, policy; // policy / buffered
  double bs        = 0;
  double measured  = 0;   // median of within-repeat ratios (or ratio of medians)
  double predicted = 0;
  double spread    = -1;  // (max - min) / median of the within-repeat ratios, -1 if unknown
  int repeats      = 0;   // repeats paired, 0: ratio of medians
  double error() const { return 100.0 * (predicted - measured) / measured; }
};

/* `predict(rw, policy, bs)` gives the model's GB/s (<= 0: none). Rows for every size in
 * `sizes` where the file has the buffered row and the policy's row. */
std::vector<RatioRow> ratio_rows(const std::vector<BenchPoint>& pts, const std::vector<double>& sizes,
                                 const std::function<double(const std::string&, const std::string&, double)>& predict);

/* Prints the table (TARGET MET / NOT MET per ratio against `max_error` %) and the summary line
 * "held-out ratios: N of M within E %; worst ratio error W % (where)". Returns N. */
int print_ratio_table(const std::vector<RatioRow>& rows, double max_error);

} // namespace hiosim
