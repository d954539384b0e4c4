// policy_bench.cc - the cost of one policy decision (target: under 20 ns).
#include <benchmark/benchmark.h>

#include "hybridio/policy.hpp"

namespace {

void run(benchmark::State& state, hio_request r) {
  const hio_policy_config cfg = hybridio::default_policy();
  hio_decision d;
  for (auto _ : state) {
    benchmark::DoNotOptimize(r);
    hio_policy_decide(&cfg, &r, &d);
    benchmark::DoNotOptimize(d);
    r.offset += 4096;  // vary the input so nothing is hoisted out of the loop
  }
}

void BM_Decide_SmallWrite(benchmark::State& state) {
  run(state, hybridio::make_request(HIO_OP_WRITE, 0, 4096, reinterpret_cast<void*>(0x10000), 512, 512));
}
void BM_Decide_LargeAlignedWrite(benchmark::State& state) {
  run(state, hybridio::make_request(HIO_OP_WRITE, 0, 4 << 20, reinterpret_cast<void*>(0x100000), 512, 512));
}
void BM_Decide_LargeUnalignedWriteWithBounce(benchmark::State& state) {
  run(state, hybridio::make_request(HIO_OP_WRITE, 100, (4 << 20) + 77, reinterpret_cast<void*>(0x100003), 512, 512));
}
void BM_Decide_CachedRead(benchmark::State& state) {
  hio_request r = hybridio::make_request(HIO_OP_READ, 0, 16 << 20, reinterpret_cast<void*>(0x100000), 512, 512);
  r.file_size = 1ULL << 34;
  r.cached_pages = 4096;
  run(state, r);
}

BENCHMARK(BM_Decide_SmallWrite);
BENCHMARK(BM_Decide_LargeAlignedWrite);
BENCHMARK(BM_Decide_LargeUnalignedWriteWithBounce);
BENCHMARK(BM_Decide_CachedRead);

}  // namespace
