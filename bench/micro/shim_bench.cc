// shim_bench.cc - what the LD_PRELOAD shim adds per call, and what the
// parallel engine's io_uring submission costs per chunk.
//
// Shim: libhybridio_preload.so is dlopen'ed (RTLD_LOCAL, so it interposes
// nothing in this process) and its exported open/pread/pwrite/close are
// called directly, against libc's on the same file: the difference is the
// shim's added cost per call (descriptor lookup, policy decision, counters)
// for 4 KiB cached reads and 512-byte writes.  HYBRIDIO_PRELOAD_SO
// overrides the library's path.
//
// io_uring: one direct read of `chunks` x 64 KiB through parallel_direct()
// (all chunks in flight together) against the same bytes read with one
// synchronous O_DIRECT pread per chunk.  The device time is in both; the
// per-chunk counter is the figure to compare.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "io/uring_engine.h"
#include "memory/aligned_buffer.h"
#include "platform/stats.h"
#include "runtime/runtime.h"
#include "temp_dir.h"

#ifndef HYBRIDIO_PRELOAD_PATH
#define HYBRIDIO_PRELOAD_PATH ""
#endif

namespace {

struct Shim {
  void* handle = nullptr;
  int (*open)(const char*, int, ...) = nullptr;
  ssize_t (*pread)(int, void*, size_t, off_t) = nullptr;
  ssize_t (*pwrite)(int, const void*, size_t, off_t) = nullptr;
  int (*close)(int) = nullptr;
  std::string error;
  Shim() {
    const char* env = getenv("HYBRIDIO_PRELOAD_SO");
    const char* path = env && *env ? env : HYBRIDIO_PRELOAD_PATH;
    handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      error = std::string("cannot dlopen the shim: ") + dlerror();
      return;
    }
    open = reinterpret_cast<decltype(open)>(dlsym(handle, "open"));
    pread = reinterpret_cast<decltype(pread)>(dlsym(handle, "pread"));
    pwrite = reinterpret_cast<decltype(pwrite)>(dlsym(handle, "pwrite"));
    close = reinterpret_cast<decltype(close)>(dlsym(handle, "close"));
    if (!open || !pread || !pwrite || !close) error = "the shim does not export open/pread/pwrite/close";
  }
};

Shim& shim() {
  static Shim s;
  return s;
}

constexpr size_t kFile = 1 << 20;

struct CachedFile {
  hybridio::testing::TempDir dir;
  std::string path = dir.file("shim-bench");
  CachedFile() {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    std::vector<char> data(kFile, 'c');
    if (fd < 0 || ::pwrite(fd, data.data(), data.size(), 0) != static_cast<ssize_t>(data.size())) abort();
    ::close(fd);
  }
};

CachedFile& cached() {
  static CachedFile f;
  return f;
}

// via_shim: the shim's symbols; else libc's.
template <bool kWrite>
void small_io(benchmark::State& state, bool via_shim) {
  if (via_shim && !shim().error.empty()) {
    state.SkipWithError(shim().error.c_str());
    return;
  }
  auto do_open = via_shim ? shim().open : reinterpret_cast<int (*)(const char*, int, ...)>(::open);
  int fd = do_open(cached().path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    state.SkipWithError("cannot open the file");
    return;
  }
  char buf[4096];
  memset(buf, 'w', sizeof buf);
  const size_t len = kWrite ? 512 : 4096;
  uint64_t off = 0;
  for (auto _ : state) {
    ssize_t n = kWrite ? (via_shim ? shim().pwrite(fd, buf, len, static_cast<off_t>(off))
                                   : ::pwrite(fd, buf, len, static_cast<off_t>(off)))
                       : (via_shim ? shim().pread(fd, buf, len, static_cast<off_t>(off))
                                   : ::pread(fd, buf, len, static_cast<off_t>(off)));
    benchmark::DoNotOptimize(n);
    off = (off + 4096) % kFile;
  }
  (via_shim ? shim().close : ::close)(fd);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * len));
}

void BM_Shim_CachedRead4K_Libc(benchmark::State& s) { small_io<false>(s, false); }
void BM_Shim_CachedRead4K_Shim(benchmark::State& s) { small_io<false>(s, true); }
void BM_Shim_Write512_Libc(benchmark::State& s) { small_io<true>(s, false); }
void BM_Shim_Write512_Shim(benchmark::State& s) { small_io<true>(s, true); }

BENCHMARK(BM_Shim_CachedRead4K_Libc);
BENCHMARK(BM_Shim_CachedRead4K_Shim);
BENCHMARK(BM_Shim_Write512_Libc);
BENCHMARK(BM_Shim_Write512_Shim);

// --- io_uring submission per chunk ---
constexpr uint64_t kChunk = 64 << 10;

struct DirectFile {
  hybridio::testing::TempDir dir;
  int fd = -1;
  DirectFile() {
    std::string p = dir.file("uring-bench");
    int w = ::open(p.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    std::vector<char> data(16 << 20, 'u');
    if (w < 0 || ::pwrite(w, data.data(), data.size(), 0) != static_cast<ssize_t>(data.size())) abort();
    fsync(w);
    ::close(w);
    fd = ::open(p.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  }
  ~DirectFile() {
    if (fd >= 0) ::close(fd);
  }
};

DirectFile& direct_file() {
  static DirectFile f;
  return f;
}

void BM_Uring_ParallelDirectRead(benchmark::State& state) {
  const uint64_t chunks = static_cast<uint64_t>(state.range(0));
  if (direct_file().fd < 0) {
    state.SkipWithError("no O_DIRECT on the scratch filesystem");
    return;
  }
  if (!hybridio::uring_usable()) {
    state.SkipWithError("io_uring unavailable in this process");
    return;
  }
  hybridio::AlignedBuffer buf(chunks * kChunk, 4096);
  hybridio::Stats stats;
  hybridio::Runtime::get();  // publishes the configured engine settings
  hybridio::EngineSettings s = hybridio::engine_settings();
  s.chunk_size = kChunk;
  s.queue_depth = static_cast<uint32_t>(chunks);
  for (auto _ : state) {
    auto r = hybridio::parallel_direct(HIO_OP_READ, direct_file().fd, buf.data(), chunks * kChunk, 0, false, s, stats);
    benchmark::DoNotOptimize(r);
  }
  state.counters["per_chunk_ns"] =
      benchmark::Counter(static_cast<double>(state.iterations() * chunks), benchmark::Counter::kIsRate |
                                                                            benchmark::Counter::kInvert);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * chunks * kChunk));
}

void BM_Uring_SyncDirectRead(benchmark::State& state) {
  const uint64_t chunks = static_cast<uint64_t>(state.range(0));
  if (direct_file().fd < 0) {
    state.SkipWithError("no O_DIRECT on the scratch filesystem");
    return;
  }
  hybridio::AlignedBuffer buf(chunks * kChunk, 4096);
  for (auto _ : state) {
    for (uint64_t c = 0; c < chunks; ++c)
      benchmark::DoNotOptimize(::pread(direct_file().fd, buf.data() + c * kChunk, kChunk, static_cast<off_t>(c * kChunk)));
  }
  state.counters["per_chunk_ns"] =
      benchmark::Counter(static_cast<double>(state.iterations() * chunks), benchmark::Counter::kIsRate |
                                                                            benchmark::Counter::kInvert);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * chunks * kChunk));
}

BENCHMARK(BM_Uring_ParallelDirectRead)->ArgName("chunks")->Arg(2)->Arg(8)->Arg(32)->UseRealTime();
BENCHMARK(BM_Uring_SyncDirectRead)->ArgName("chunks")->Arg(2)->Arg(8)->Arg(32)->UseRealTime();

}  // namespace
