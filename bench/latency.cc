// latency.cc - see latency.h.
#include "latency.h"

#include <algorithm>

namespace hybridio::bench {

int LatencyHistogram::bucket_of(uint64_t ns) {
  if (ns < kSub) return static_cast<int>(ns);
  int top = 63 - __builtin_clzll(ns);  // >= 5
  int group = top - 4;                 // 1.. : values [2^top, 2^(top+1))
  int sub = static_cast<int>((ns >> (top - 5)) & (kSub - 1));
  return std::min(group * kSub + sub, 64 * kSub - 1);
}

double LatencyHistogram::value_of(int b) {
  if (b < kSub) return b;
  int group = b / kSub, sub = b % kSub;
  int top = group + 4;
  double lo = static_cast<double>((1ULL << top) + (static_cast<uint64_t>(sub) << (top - 5)));
  double width = static_cast<double>(1ULL << (top - 5));
  return lo + width / 2;
}

void LatencyHistogram::add(uint64_t ns) {
  ++buckets_[bucket_of(ns)];
  ++count_;
  sum_ += ns;
  max_ = std::max(max_, ns);
}

void LatencyHistogram::merge(const LatencyHistogram& o) {
  for (size_t i = 0; i < buckets_.size(); ++i) buckets_[i] += o.buckets_[i];
  count_ += o.count_;
  sum_ += o.sum_;
  max_ = std::max(max_, o.max_);
}

double LatencyHistogram::quantile(double q) const {
  if (!count_) return 0;
  uint64_t rank = static_cast<uint64_t>(q * static_cast<double>(count_ - 1)) + 1;
  uint64_t seen = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen >= rank) return std::min(value_of(static_cast<int>(i)), static_cast<double>(max_));
  }
  return static_cast<double>(max_);
}

}  // namespace hybridio::bench
