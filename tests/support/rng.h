// rng.h - the deterministic random source of the randomized tests
// (integrity_test, the exerciser): one seed replays a whole run.
// Not thread-safe; one per test.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace hybridio::testing {

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed ? seed : 0x9e3779b97f4a7c15ULL) {}
  uint64_t next() {  // xorshift64*
    s_ ^= s_ >> 12;
    s_ ^= s_ << 25;
    s_ ^= s_ >> 27;
    return s_ * 0x2545f4914f6cdd1dULL;
  }
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
  bool chance(unsigned percent) { return below(100) < percent; }
  // Log-uniform in [lo, hi]: as many tiny requests as huge ones per octave.
  uint64_t log_uniform(uint64_t lo, uint64_t hi) {
    double u = static_cast<double>(next() >> 11) / 9007199254740992.0;
    double v = std::exp(std::log(static_cast<double>(lo)) + u * std::log(static_cast<double>(hi) / lo));
    uint64_t r = static_cast<uint64_t>(v);
    return r < lo ? lo : (r > hi ? hi : r);
  }
  void fill(char* p, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t v = next();
      memcpy(p + i, &v, 8);
    }
    for (; i < n; ++i) p[i] = static_cast<char>(next());
  }

 private:
  uint64_t s_;
};

}  // namespace hybridio::testing
