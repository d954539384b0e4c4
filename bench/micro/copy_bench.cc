// copy_bench.cc - the kernel's copy at the distances it is slow at
// (checked_copy.h): the checked copy into memory 0 or 16 bytes into a page,
// and 1 MiB reads of a cached file into such memory, plain against the
// engine (which bounces the second, file/buffered_io.cc).  Arg: the page offset.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "file/file.h"
#include "memory/aligned_buffer.h"
#include "memory/checked_copy.h"
#include "runtime/runtime.h"
#include "temp_dir.h"

namespace {

constexpr size_t kCall = 1 << 20;
constexpr uint64_t kFileBytes = 64 << 20;

struct CachedFile {
  hybridio::testing::TempDir dir;
  hybridio::File* file = nullptr;
  CachedFile() {
    if (hybridio::File::open(hybridio::Runtime::get(), dir.file("cached").c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &file) != 0) abort();
    std::vector<char> data(kCall, 'c');
    for (uint64_t at = 0; at < kFileBytes; at += kCall)
      if (pwrite(file->fd(), data.data(), kCall, static_cast<off_t>(at)) != static_cast<ssize_t>(kCall)) abort();
  }
  ~CachedFile() { delete file; }
};

CachedFile& cached() {
  static CachedFile f;
  return f;
}

void BM_CheckedCopyOut(benchmark::State& state) {
  const size_t skew = static_cast<size_t>(state.range(0));
  hybridio::AlignedBuffer engine(kCall, 4096), user(kCall + 4096, 4096);
  memset(engine.data(), 'e', kCall);
  memset(user.data(), 0, kCall + 4096);
  for (auto _ : state) {
    benchmark::DoNotOptimize(hybridio::copy_checked(engine.data(), user.data() + skew, kCall, false));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kCall));
}

void BM_CachedRead_Plain(benchmark::State& state) {
  const size_t skew = static_cast<size_t>(state.range(0));
  hybridio::AlignedBuffer mem(kCall + 4096, 4096);
  uint64_t off = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(pread(cached().file->fd(), mem.data() + skew, kCall, static_cast<off_t>(off)));
    off = (off + kCall) % kFileBytes;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kCall));
}

void BM_CachedRead_Hybridio(benchmark::State& state) {
  const size_t skew = static_cast<size_t>(state.range(0));
  hio_policy_config c;
  hio_policy_config_defaults(&c);
  c.mode = HIO_MODE_BUFFERED;  // the path under test, whatever the learner would pick
  hybridio::Runtime::get().set_policy(c);
  hybridio::AlignedBuffer mem(kCall + 4096, 4096);
  uint64_t off = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(cached().file->pread(mem.data() + skew, kCall, off));
    off = (off + kCall) % kFileBytes;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kCall));
}

BENCHMARK(BM_CheckedCopyOut)->Arg(0)->Arg(16)->Arg(64);
BENCHMARK(BM_CachedRead_Plain)->Arg(0)->Arg(16);
BENCHMARK(BM_CachedRead_Hybridio)->Arg(0)->Arg(16);

}  // namespace
