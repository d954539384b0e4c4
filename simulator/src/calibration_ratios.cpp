/* calibration_ratios: predicted against measured ratios (see calibration_ratios.hpp). */
#include "calibration_ratios.hpp"
#include "units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace hiosim {
namespace {

double median(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

const BenchPoint* find(const std::vector<BenchPoint>& pts, const std::string& rw, const std::string& policy, double bs)
{
  for (const auto& p : pts)
    if (p.rw == rw && p.policy == policy && std::fabs(p.bs - bs) < 0.5)
      return &p;
  return nullptr;
}

} // namespace

std::vector<RatioRow> ratio_rows(const std::vector<BenchPoint>& pts, const std::vector<double>& sizes,
                                 const std::function<double(const std::string&, const std::string&, double)>& predict)
{
  std::vector<RatioRow> rows;
  for (const char* rw : {"write", "read"})
    for (const char* policy : {"direct", "hybrid"})
      for (double bs : sizes) {
        const BenchPoint* x = find(pts, rw, policy, bs);
        const BenchPoint* b = find(pts, rw, "buffered", bs);
        double px = predict(rw, policy, bs), pb = predict(rw, "buffered", bs);
        if (x == nullptr || b == nullptr || px <= 0 || pb <= 0)
          continue;
        RatioRow r;
        r.rw        = rw;
        r.policy    = policy;
        r.bs        = bs;
        r.predicted = px / pb;
        if (not x->runs.empty() && x->runs.size() == b->runs.size()) {
          std::vector<double> within;
          for (size_t k = 0; k < x->runs.size(); k++)
            within.push_back(x->runs[k] / b->runs[k]);
          r.measured = median(within);
          r.repeats  = static_cast<int>(within.size());
          auto [lo, hi] = std::minmax_element(within.begin(), within.end());
          r.spread = (*hi - *lo) / r.measured;
        } else {
          r.measured = x->gbps / b->gbps;
        }
        rows.push_back(r);
      }
  return rows;
}

int print_ratio_table(const std::vector<RatioRow>& rows, double max_error)
{
  std::printf("\n  ratios at the held-out sizes (measured: median over the repeats of the ratio within one repeat,\n"
              "  the variants interleaved; spread: (max - min) / median of those ratios)\n"
              "  rw     ratio              block       measured  predicted   error  spread  target (within %.0f %%)\n",
              max_error);
  int within = 0, within_spread = 0, with_spread = 0;
  double worst = 0;
  std::string worst_where;
  for (const auto& r : rows) {
    double err = r.error();
    bool met   = std::fabs(err) <= max_error;
    within += met;
    if (r.spread >= 0) {
      with_spread++;
      within_spread += std::fabs(err) <= 100.0 * r.spread;
    }
    std::string what = r.policy + "/buffered";
    if (std::fabs(err) > worst) {
      worst       = std::fabs(err);
      worst_where = r.rw + " " + what + " " + format_bytes(r.bs);
    }
    std::printf("  %-6s %-18s %-10s %8.3f  %9.3f  %+6.1f%%  %s  %s%s\n", r.rw.c_str(), what.c_str(),
                format_bytes(r.bs).c_str(), r.measured, r.predicted, err,
                r.spread >= 0 ? strf("%4.0f%%", 100 * r.spread).c_str() : "   -",
                met ? "TARGET MET" : "TARGET NOT MET", r.repeats > 0 ? "" : " (ratio of medians: no per-run values)");
  }
  std::printf("  held-out ratios: %d of %zu within %.1f %%; worst ratio error %.1f %% (%s)\n", within, rows.size(),
              max_error, worst, worst_where.c_str());
  if (with_spread > 0)
    std::printf("  ratios within the spread of their own within-repeat ratios: %d of %d\n", within_spread, with_spread);
  return within;
}

} // namespace hiosim
