// probe_bench.cc - what each cache probe costs on an 8 MiB range, cached
// and not: cachestat(2), mmap + mincore(2), and a cached-first
// preadv2(RWF_NOWAIT) read of the range.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <vector>

#include "probe/cache_probe.h"
#include "temp_dir.h"

namespace {

constexpr size_t kRange = 8 << 20;

struct ProbeFile {
  hybridio::testing::TempDir dir;
  int fd = -1;
  ProbeFile() {
    fd = open(dir.file("probe").c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    std::vector<char> data(kRange, 'p');
    if (pwrite(fd, data.data(), data.size(), 0) != static_cast<ssize_t>(data.size())) abort();
    fsync(fd);
  }
  ~ProbeFile() { close(fd); }
  void set_cached(bool cached) {
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    if (cached) {
      std::vector<char> data(kRange);
      if (pread(fd, data.data(), data.size(), 0) < 0) abort();
    }
  }
};

ProbeFile& file() {
  static ProbeFile f;
  return f;
}

void BM_Probe_Cachestat(benchmark::State& state) {
  file().set_cached(state.range(0));
  hybridio::CacheState s;
  if (!hybridio::probe_cachestat(file().fd, 0, kRange, &s)) {
    state.SkipWithError("cachestat(2) unavailable on this kernel");
    return;
  }
  for (auto _ : state) {
    hybridio::probe_cachestat(file().fd, 0, kRange, &s);
    benchmark::DoNotOptimize(s);
  }
  state.counters["cached_pages"] = static_cast<double>(s.cached_pages);
}

void BM_Probe_Mincore(benchmark::State& state) {
  file().set_cached(state.range(0));
  hybridio::CacheState s;
  for (auto _ : state) {
    hybridio::probe_mincore(file().fd, 0, kRange, &s);
    benchmark::DoNotOptimize(s);
  }
  state.counters["cached_pages"] = static_cast<double>(s.cached_pages);
}

// RWF_NOWAIT answers by doing: a cached range is copied (8 MiB of memcpy),
// an uncached one fails with EAGAIN at once.
void BM_Probe_NowaitRead(benchmark::State& state) {
  std::vector<char> buf(kRange);
  iovec iov{buf.data(), buf.size()};
  ssize_t n = 0;
  for (auto _ : state) {
    state.PauseTiming();
    file().set_cached(state.range(0));
    state.ResumeTiming();
    n = preadv2(file().fd, &iov, 1, 0, RWF_NOWAIT);
    benchmark::DoNotOptimize(n);
  }
  state.counters["bytes_served"] = static_cast<double>(n < 0 ? 0 : n);
}

BENCHMARK(BM_Probe_Cachestat)->ArgName("cached")->Arg(0)->Arg(1);
BENCHMARK(BM_Probe_Mincore)->ArgName("cached")->Arg(0)->Arg(1);
BENCHMARK(BM_Probe_NowaitRead)->ArgName("cached")->Arg(0)->Arg(1)->Iterations(50);

}  // namespace
