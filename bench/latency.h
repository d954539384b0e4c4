// latency.h - a latency histogram with bounded relative error: 64
// power-of-two groups of nanoseconds, each cut into 32 linear buckets
// (under 3.2 % error), merged across threads and repeats.  One histogram
// per thread while running; not thread-safe.
#pragma once

#include <array>
#include <cstdint>

namespace hybridio::bench {

class LatencyHistogram {
 public:
  void add(uint64_t ns);
  void merge(const LatencyHistogram& other);
  uint64_t count() const { return count_; }
  // The value at quantile q (0..1), from the bucket's midpoint; 0 when empty.
  double quantile(double q) const;
  double mean() const { return count_ ? static_cast<double>(sum_) / count_ : 0; }
  uint64_t max() const { return max_; }

 private:
  static constexpr int kSub = 32;
  static int bucket_of(uint64_t ns);
  static double value_of(int bucket);
  std::array<uint64_t, 64 * kSub> buckets_{};
  uint64_t count_ = 0, sum_ = 0, max_ = 0;
};

}  // namespace hybridio::bench
