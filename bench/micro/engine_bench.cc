// engine_bench.cc - the engine's added cost per call for small cached I/O
// (against plain pread/pwrite on the same file) and bounce-copy throughput.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "file/file.h"
#include "memory/aligned_buffer.h"
#include "runtime/runtime.h"
#include "temp_dir.h"

namespace {

struct SmallFile {
  hybridio::testing::TempDir dir;
  hybridio::File* file = nullptr;
  SmallFile() {
    if (hybridio::File::open(hybridio::Runtime::get(), dir.file("small").c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &file) != 0) abort();
    std::vector<char> data(1 << 20, 's');
    if (file->pwrite(data.data(), data.size(), 0) != static_cast<ssize_t>(data.size())) abort();
  }
  ~SmallFile() { delete file; }
};

SmallFile& small() {
  static SmallFile f;
  return f;
}

void BM_SmallCachedRead_Plain(benchmark::State& state) {
  char buf[4096];
  uint64_t off = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(pread(small().file->fd(), buf, sizeof buf, static_cast<off_t>(off)));
    off = (off + 4096) % (1 << 20);
  }
}

void BM_SmallCachedRead_Hybridio(benchmark::State& state) {
  char buf[4096];
  uint64_t off = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(small().file->pread(buf, sizeof buf, off));
    off = (off + 4096) % (1 << 20);
  }
}

void BM_SmallWrite_Plain(benchmark::State& state) {
  char buf[512] = {1};
  uint64_t off = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(pwrite(small().file->fd(), buf, sizeof buf, static_cast<off_t>(off)));
    off = (off + 4096) % (1 << 20);
  }
}

void BM_SmallWrite_Hybridio(benchmark::State& state) {
  char buf[512] = {1};
  uint64_t off = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(small().file->pwrite(buf, sizeof buf, off));
    off = (off + 4096) % (1 << 20);
  }
}

// The bounce copy is a memcpy into an aligned staging buffer.
void BM_BounceCopy(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  hybridio::AlignedBuffer staging(n, 4096);
  std::vector<char> src(n + 1, 'b');
  for (auto _ : state) {
    memcpy(staging.data(), src.data() + 1, n);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n));
}

BENCHMARK(BM_SmallCachedRead_Plain);
BENCHMARK(BM_SmallCachedRead_Hybridio);
BENCHMARK(BM_SmallWrite_Plain);
BENCHMARK(BM_SmallWrite_Hybridio);
BENCHMARK(BM_BounceCopy)->Arg(1 << 20)->Arg(8 << 20);

}  // namespace
