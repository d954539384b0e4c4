// train_epochs.h - the timed part of the training workload (`hybridio bench
// train`, train_job.h): E epochs over a dataset of sample files, each
// epoch reading every sample once in a shuffled order, by N readers
// (threads, or forked processes, as a PyTorch DataLoader's workers are),
// while the caller's thread plays the accelerator: it takes the batches in
// order and "computes" on each (a sleep), as DLIO does.
//
// The model (after DLIO, the benchmark behind MLPerf Storage's training
// workloads):
//   - sample s of file f is bytes [s x stride, s x stride + sample_bytes)
//     of it, read with one call through an engine (bench_engine.h): a whole
//     file for one sample per file (np.load), a record of a larger file
//     otherwise (TFRecord-like);
//   - epoch e reads the samples in epoch_order(samples, seed, e): the same
//     for every policy and round, different for every epoch;
//   - batch b is samples [b x batch, (b + 1) x batch) of that order and is
//     read by reader b mod N; a reader starts a batch only while it is
//     fewer than `prefetch` batches ahead of the accelerator (a
//     DataLoader's prefetch_factor x workers);
//   - the accelerator waits for batch b, then sleeps compute_s; accelerator
//     utilisation is the compute time over the epoch's time less the wait
//     for the first batch (MLPerf Storage leaves the first step's I/O out).
// Before each read the range's page-cache residency is taken (cachestat(2),
// else mincore(2) on a mapping of the file): the epoch's hit rate is the
// share of its bytes that were cached when their read was issued.  With
// `verify` every byte read is checked against the file's pattern
// (verify_pattern.h) inside the reader's time, as a loader decodes.
//
// Not thread-safe: one run at a time per process (the library's policy and
// counters are process-wide, as in io_runner.h).  Readers in processes are
// forked per epoch (the DataLoader's default, persistent_workers=False) and
// inherit the library's policy; their counters come back through shared
// memory.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench_engine.h"
#include "hybridio/hybridio.h"
#include "io_runner.h"
#include "verify_pattern.h"

namespace hybridio::bench {

// The sample files: what is on disk and the pattern each file holds.
struct TrainDataset {
  std::vector<std::string> paths;
  uint64_t sample_bytes = 0;  // one read
  uint64_t stride = 0;        // sample k of a file starts at k x stride (a multiple of 64)
  unsigned samples_per_file = 1;
  uint64_t key_base = 0x7a1b0000d1a00000ULL;  // file f's pattern key: key_base + f

  uint64_t file_bytes() const { return stride * samples_per_file; }
  uint64_t samples() const { return static_cast<uint64_t>(paths.size()) * samples_per_file; }
  uint64_t bytes() const { return samples() * sample_bytes; }  // one epoch
  uint64_t key(size_t file) const { return key_base + file; }
};

// Writes every file of `d` whole with its pattern (plain pwrite, fsync),
// untimed; "" or why not (the files written so far are left for the caller
// to remove).
std::string write_train_dataset(const TrainDataset& d);

// The order of epoch `epoch`: a permutation of [0, samples) (Fisher-Yates
// driven by splitmix64 of seed and epoch: the same on every machine and
// build, for every policy; a different one per epoch).
std::vector<uint32_t> epoch_order(uint64_t samples, uint64_t seed, unsigned epoch);

// How the page-cache hit rate is measured.
enum class HitMethod { kCachestat, kMincore };
const char* hit_method_name(HitMethod m);
// cachestat(2) when the kernel has it (Linux 6.5+, syscall 451) for `path`,
// else mincore(2).
HitMethod probe_hit_method(const std::string& path);

// Reader buffers in shared memory (so that forked readers write into the
// parent's pages, touched once here, not into fresh copy-on-write ones).
class ReaderBuffers {
 public:
  ReaderBuffers(unsigned readers, uint64_t bytes_each);
  ~ReaderBuffers();
  ReaderBuffers(const ReaderBuffers&) = delete;
  ReaderBuffers& operator=(const ReaderBuffers&) = delete;
  bool ok() const { return base_ != nullptr; }
  char* data(unsigned reader) const { return base_ + reader * each_; }

 private:
  char* base_ = nullptr;
  uint64_t each_ = 0, len_ = 0;
};

struct EpochPlan {
  const EngineOps* engine = nullptr;
  unsigned epochs = 1;
  unsigned batch = 1;  // samples per batch (the last one may be short)
  unsigned readers = 1;
  bool processes = false;  // readers are forked processes, not threads
  unsigned prefetch = 2;   // batches the readers may be ahead of the accelerator
  double compute_s = 0;    // per batch
  uint64_t seed = 1;
  bool verify = true;
  HitMethod hit = HitMethod::kCachestat;
  const ReaderBuffers* buffers = nullptr;  // readers x sample_bytes, at least
};

struct EpochResult {
  double seconds = 0;             // readers started (or forked) to the accelerator's last batch done
  double first_batch_wait_s = 0;  // epoch start to the first batch ready
  double compute_s = 0;           // batches x compute per batch
  uint64_t bytes = 0, samples = 0, verified_bytes = 0;
  double cached_bytes = 0;                   // bytes that were in the page cache when their read was issued
  uint64_t path_bytes[HIO_PATH_COUNT] = {};  // the library's routing of the epoch's reads
  double gbps() const { return seconds > 0 ? bytes / seconds / 1e9 : 0; }
  double hit_rate() const { return bytes ? cached_bytes / bytes : 0; }
  // MLPerf Storage's accelerator utilisation: compute time over run time,
  // the first step's I/O left out; 0 without compute.
  double au() const {
    const double t = seconds - first_batch_wait_s;
    return compute_s > 0 && t > 0 ? compute_s / t : 0;
  }
};

// Runs the epochs and returns the whole run as run_threads does (seconds
// and bytes of all epochs, every read's latency, CPU of this process and
// its reader processes, the library's counters of all readers, the page
// cache left, memory events of config.cgroup), with one EpochResult per
// epoch in *epochs.  The first failure (an open, a short read, a wrong
// byte, a reader process that died) ends the run: its text is in .error.
RunOutcome run_epochs(const TrainDataset& d, const EpochPlan& plan, const RunConfig& config,
                      std::vector<EpochResult>* epochs);

}  // namespace hybridio::bench
