// file_learning_test.cc - learned thresholds through the C API on real
// files: requests are measured, flushes charged, exploration stays within
// its share, bytes stay exact, and the estimates reach the state directory.
// CTest runs this binary with HYBRIDIO_LEARN=on (the rest of the suite
// runs with learning off).  The process learns from nothing: its state
// directory is a new one (FreshStateDirectory), so what earlier runs
// learned on this machine cannot change what these tests see.
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "hybridio/hybridio.h"
#include "learned_store.h"
#include "memory_pressure.h"
#include "path_costs.h"
#include "proc_files.h"
#include "read_ahead.h"
#include "runtime.h"
#include "temp_dir.h"

namespace hybridio {
namespace {

using testing::TempDir;

constexpr size_t M = 1 << 20;

hio_stats stats() {
  hio_stats s;
  hio_stats_get(&s);
  return s;
}

std::vector<char> pattern(size_t len, unsigned seed) {
  std::vector<char> v(len);
  for (size_t i = 0; i < len; ++i) v[i] = static_cast<char>((i * 131 + seed * 7 + (i >> 12)) & 0xff);
  return v;
}

// Reads one record as torch.load does, its small header and then the
// record itself, into `back` at the record's offset `at`.
void read_header_and_record(hio_file* f, std::vector<char>& back, size_t at, size_t header, size_t record) {
  ASSERT_EQ(hio_pread(f, back.data() + at, header, static_cast<off_t>(at)), static_cast<ssize_t>(header));
  ASSERT_EQ(hio_pread(f, back.data() + at + header, record, static_cast<off_t>(at + header)),
            static_cast<ssize_t>(record));
}

// "rule=bytes" for every rule that decided bytes in `s`, for failure messages.
std::string rule_bytes(const hio_stats& s) {
  std::string out;
  for (int r = 0; r < HIO_RULE_COUNT; ++r) {
    const uint64_t bytes = hio_stats_rule_bytes(&s, static_cast<hio_rule>(r));
    if (bytes) out += std::string(out.empty() ? "" : " ") + hio_rule_name(static_cast<hio_rule>(r)) + "=" + std::to_string(bytes);
  }
  return out;
}

// The learned estimates of the filesystem holding `fd`.
void learned_fs_of(int fd, LearnedFs** out) {
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  *out = Runtime::get().learned()->filesystem(st.st_dev, fd);
  ASSERT_NE(*out, nullptr);
}

// Forgets the estimates, credits and verdicts of the filesystem holding `dir`.
void forget_learned(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  LearnedFs* fs = nullptr;
  learned_fs_of(fd, &fs);
  close(fd);
  ASSERT_NE(fs, nullptr);
  std::lock_guard<std::mutex> lock(fs->mu);
  fs->costs = FsCostSet(Runtime::get().learned()->tuning());
  fs->publish();
}

// Read estimates of the filesystem holding `fd` in the size class of
// `len`: buffered measured at 1 ns/byte, `dear` at 50 (it is looked at
// every fourth turn only, and its runs wait for their time credit), and
// `unmeasured` not at all: its first look comes first.
void seed_first_look(int fd, uint64_t len, hio_path unmeasured, hio_path dear) {
  LearnedFs* fs = nullptr;
  ASSERT_NO_FATAL_FAILURE(learned_fs_of(fd, &fs));
  std::lock_guard<std::mutex> lock(fs->mu);
  PathEstimate e;
  e.samples = 100;
  e.ns_per_byte = 1.0;
  fs->costs.streams.set_estimate(HIO_OP_READ, size_class(len), HIO_PATH_BUFFERED, e);
  e.ns_per_byte = 50;
  fs->costs.streams.set_estimate(HIO_OP_READ, size_class(len), dear, e);
  fs->costs.streams.set_estimate(HIO_OP_READ, size_class(len), unmeasured, PathEstimate());
  fs->publish();
}

// Which of a filesystem's costs (FsCostSet) a test seeds.
enum class Seeded { kStreams, kRandomReads };

// Read estimates of the filesystem holding `fd`: in the size class of
// `len`, direct and uncached reads cost these nanoseconds per byte, and
// buffered ones too when `buffered_ns` is given; those of streams, or of
// reads at random.
void seed_read_costs(int fd, uint64_t len, double direct_ns, double uncached_ns, double buffered_ns = 0,
                     Seeded which = Seeded::kStreams) {
  LearnedFs* fs = nullptr;
  ASSERT_NO_FATAL_FAILURE(learned_fs_of(fd, &fs));
  std::lock_guard<std::mutex> lock(fs->mu);
  FsCosts& costs = fs->costs.of(which == Seeded::kRandomReads);
  PathEstimate e;
  e.samples = 100;
  e.ns_per_byte = direct_ns;
  costs.set_estimate(HIO_OP_READ, size_class(len), HIO_PATH_DIRECT, e);
  e.ns_per_byte = uncached_ns;
  costs.set_estimate(HIO_OP_READ, size_class(len), HIO_PATH_DONTCACHE, e);
  if (buffered_ns > 0) {
    e.ns_per_byte = buffered_ns;
    costs.set_estimate(HIO_OP_READ, size_class(len), HIO_PATH_BUFFERED, e);
  }
  fs->publish();
}

// What reads of `len` bytes on `path` cost per byte, as the filesystem
// holding `dir` has learned for streams (0: not measured).
double learned_read_cost(const std::string& dir, uint64_t len, hio_path path) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  LearnedFs* fs = nullptr;
  learned_fs_of(fd, &fs);
  close(fd);
  if (!fs) return 0;
  std::lock_guard<std::mutex> lock(fs->mu);
  const PathEstimate& e = fs->costs.streams.estimate(HIO_OP_READ, size_class(len), path);
  return e.samples ? e.ns_per_byte : 0;
}

// Writes `data` to a new file at `path` (synced), and opens it again
// read-only - the read-ahead window may lease it - with nothing cached.
void write_cold_file(const std::string& path, const std::vector<char>& data, hio_file** out) {
  hio_file* f = nullptr;
  ASSERT_EQ(hio_open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  ASSERT_EQ(hio_pwrite(f, data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
  ASSERT_EQ(hio_fsync(f), 0);
  ASSERT_EQ(hio_close(f), 0);
  ASSERT_EQ(hio_open(path.c_str(), O_RDONLY, 0, out), 0);
  posix_fadvise(hio_fd(*out), 0, 0, POSIX_FADV_DONTNEED);
}

// Reads [from, to) of `f` into the same range of `back` (by default all of
// it), in sequential calls of `call` bytes.
void read_in_calls(hio_file* f, std::vector<char>& back, size_t call, size_t from = 0, size_t to = SIZE_MAX) {
  for (size_t at = from; at < std::min(to, back.size()); at += call)
    ASSERT_EQ(hio_pread(f, back.data() + at, call, static_cast<off_t>(at)), static_cast<ssize_t>(call)) << at;
}

// Writes `data` to a new cold file at `path`, reads all of it back in
// sequential calls of `call` bytes, checks every byte, and gives the
// stats of the reads.
void read_back_cold(const std::string& path, const std::vector<char>& data, size_t call, hio_stats* out) {
  hio_file* f = nullptr;
  ASSERT_NO_FATAL_FAILURE(write_cold_file(path, data, &f));
  hio_stats_reset();
  std::vector<char> back(data.size());
  ASSERT_NO_FATAL_FAILURE(read_in_calls(f, back, call));
  ASSERT_EQ(hio_close(f), 0);
  EXPECT_TRUE(back == data) << "every byte as written, " << path;
  hio_stats_get(out);
}

// write_cold_file(), with uncached reads measured the cheaper path at
// 1 MiB and direct at 8 MiB.
void write_mixed_cost_file(const std::string& path, const std::vector<char>& data, hio_file** out) {
  ASSERT_NO_FATAL_FAILURE(write_cold_file(path, data, out));
  ASSERT_NO_FATAL_FAILURE(seed_read_costs(hio_fd(*out), M, 2.0, 0.5));
  ASSERT_NO_FATAL_FAILURE(seed_read_costs(hio_fd(*out), 8 * M, 0.3, 2.0));
}

// Read bytes that went direct and uncached, not counting explorations
// (which take the other paths by design).
uint64_t decided_read_bytes(const hio_stats& s, hio_path path) {
  const uint64_t explored = path == HIO_PATH_DIRECT ? s.learn_explored_direct : s.learn_explored_dontcache;
  return s.bytes[HIO_OP_READ][path] - std::min(s.bytes[HIO_OP_READ][path], explored);
}

// Before the library reads its settings: HYBRIDIO_STATE_DIR becomes a new,
// empty directory (inside the one given, else the working directory),
// removed at exit - after the library saved what it learned there, as its
// exit handler was registered later.
class FreshStateDirectory : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* given = getenv("HYBRIDIO_STATE_DIR");
    const std::string parent = given && *given ? given : ".";
    mkdir(parent.c_str(), 0755);
    std::string pattern = parent + "/file_learning-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr) << pattern;
    dir() = pattern;
    setenv("HYBRIDIO_STATE_DIR", dir().c_str(), 1);
    atexit([] {
      nftw(dir().c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return remove(p); }, 16,
           FTW_DEPTH | FTW_PHYS);
    });
  }

 private:
  static std::string& dir() {
    static std::string* d = new std::string;  // outlives static destructors
    return *d;
  }
};
::testing::Environment* const kFreshState = ::testing::AddGlobalTestEnvironment(new FreshStateDirectory);

class FileLearning : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Runtime::get().learned()) GTEST_SKIP() << "learning is off in this environment (HYBRIDIO_LEARN=off)";
    ASSERT_TRUE(dir_.ok());
    hio_policy_get(&saved_);
    hio_policy_config c;
    hio_policy_config_defaults(&c);
    hio_policy_set(&c);
    hio_stats_reset();
    // Each test a process of its own, as ctest runs them: nothing learned
    // or seen by an earlier test of this process.
    ReadAhead::forget_overlap();
    ASSERT_NO_FATAL_FAILURE(forget_learned(dir_.path()));
    pipelined_reads_first_ = Runtime::get().learned()->pipelined_reads_first();
  }
  void TearDown() override {
    hio_policy_set(&saved_);
    if (Runtime::get().learned()) Runtime::get().learned()->set_pipelined_reads_first(pipelined_reads_first_);
  }
  // Cold read streams below the stream threshold start in the cache, as
  // they do with the setting learn_pipelined_reads off: for tests of what
  // such a stream explores.
  static void keep_small_read_streams_in_the_cache() { Runtime::get().learned()->set_pipelined_reads_first(false); }

  bool pipelined_reads_first_ = true;

  TempDir dir_;
  hio_policy_config saved_{};
};

TEST_F(FileLearning, AStreamIsMeasuredAndItsFlushCharged) {
  const std::string path = dir_.file("stream");
  hio_file* f = nullptr;
  ASSERT_EQ(hio_open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  constexpr int kWrites = 96;
  const std::vector<char> data = pattern(kWrites * M, 3);
  for (int i = 0; i < kWrites; ++i)
    ASSERT_EQ(hio_pwrite(f, data.data() + i * M, M, static_cast<off_t>(i * M)), static_cast<ssize_t>(M));
  ASSERT_EQ(hio_fsync(f), 0);
  posix_fadvise(hio_fd(f), 0, 0, POSIX_FADV_DONTNEED);
  std::vector<char> back(data.size());
  ASSERT_NO_FATAL_FAILURE(read_in_calls(f, back, 4 * M));
  EXPECT_TRUE(back == data) << "every byte as written, whichever path each request took";
  ASSERT_EQ(hio_close(f), 0);

  const hio_stats s = stats();
  EXPECT_GE(s.learn_samples, uint64_t{kWrites}) << "writes and reads of at least 64 KiB are measured";
  EXPECT_GE(s.learn_deferred, 1u) << "the fsync after buffered writes was charged to them";
  const uint64_t explored = s.learn_explored_buffered + s.learn_explored_direct + s.learn_explored_dontcache;
  EXPECT_LE(explored * 100, 3 * 2 * data.size()) << "at most 3 % of the bytes explore";
  EXPECT_EQ(hio_stats_rule_bytes(&s, HIO_RULE_EXPLORED), explored) << "each explored request says so";
}

TEST_F(FileLearning, AWriteStreamGoesUncachedBeforeAnythingIsMeasured) {
  // Off the page cache, writes start uncached (LearnTuning::
  // uncached_writes_first) where the kernel has RWF_DONTCACHE, direct
  // where it refuses it; explorations aside, the whole stream goes there.
  const std::string path = dir_.file("uncached-first");
  hio_file* f = nullptr;
  ASSERT_EQ(hio_open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  LearnedFs* fs = nullptr;
  ASSERT_NO_FATAL_FAILURE(learned_fs_of(hio_fd(f), &fs));
  const PackedVerdicts before = fs->verdicts[HIO_OP_WRITE].load();
  if (before >> 48)
    GTEST_SKIP() << "an earlier test in this process measured write classes both ways; run alone (ctest does)";
  constexpr int kWrites = 32;
  const std::vector<char> data = pattern(kWrites * 4 * M, 17);
  for (int i = 0; i < kWrites; ++i)
    ASSERT_EQ(hio_pwrite(f, data.data() + i * 4 * M, 4 * M, static_cast<off_t>(i * 4 * M)), static_cast<ssize_t>(4 * M));
  ASSERT_EQ(hio_fsync(f), 0);
  const hio_stats s = stats();
  const uint64_t explored = s.learn_explored_buffered + s.learn_explored_direct + s.learn_explored_dontcache;
  const hio_path expected = s.dontcache_refused ? HIO_PATH_DIRECT : HIO_PATH_DONTCACHE;
  const uint64_t expected_bytes = s.bytes[HIO_OP_WRITE][expected] -
                                  (expected == HIO_PATH_DONTCACHE ? s.learn_explored_dontcache : s.learn_explored_direct);
  EXPECT_EQ(expected_bytes + explored, data.size()) << (s.dontcache_refused ? "direct" : "uncached") << " but for explorations";
  EXPECT_LE(explored, data.size() / 8);
  std::vector<char> back(data.size());
  ASSERT_EQ(hio_pread(f, back.data(), back.size(), 0), static_cast<ssize_t>(back.size()));
  EXPECT_TRUE(back == data);
  ASSERT_EQ(hio_close(f), 0);
}

TEST_F(FileLearning, ARestoreOfRecordsWithHeadersIsMeasuredAndExplored) {
  // Read as torch.load reads a checkpoint: a small header, then its
  // record.  The kernel's readahead behind the first headers and records
  // (buffered: the stream is young) keeps ahead of the stream from then
  // on; that is no reason to keep it in the cache (the stream began
  // uncached), and the records go direct.  They are measured as any
  // direct read, and exploration runs go on over the headers.
  const std::string path = dir_.file("records");
  hio_file* f = nullptr;
  ASSERT_EQ(hio_open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  constexpr size_t kRecords = 320, kHeader = 64, kRecord = 1 * M;
  const std::vector<char> data = pattern(kRecords * (kHeader + kRecord), 9);
  ASSERT_EQ(hio_pwrite(f, data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
  ASSERT_EQ(hio_fsync(f), 0);
  posix_fadvise(hio_fd(f), 0, 0, POSIX_FADV_DONTNEED);
  ASSERT_EQ(hio_close(f), 0);
  ASSERT_EQ(hio_open(path.c_str(), O_RDONLY, 0, &f), 0);  // as a restore opens it: the read pipeline may lease it
  hio_stats_reset();
  // Exploration waits for credit in time as well as bytes, priced with what
  // direct reads are measured to take, which moves with the machine's
  // load: up to three cold restores, until one explored.
  constexpr int kMostPasses = 3;
  int passes = 0;
  uint64_t explored = 0;
  std::vector<char> back(data.size());
  while (passes < kMostPasses && explored <= kRecord) {
    ++passes;
    posix_fadvise(hio_fd(f), 0, 0, POSIX_FADV_DONTNEED);
    for (size_t at = 0; at < back.size(); at += kHeader + kRecord)
      ASSERT_NO_FATAL_FAILURE(read_header_and_record(f, back, at, kHeader, kRecord));
    EXPECT_TRUE(back == data) << "every byte as written, pass " << passes;
    const hio_stats s = stats();
    explored = s.learn_explored_buffered + s.learn_explored_direct + s.learn_explored_dontcache;
  }
  ASSERT_EQ(hio_close(f), 0);

  const hio_stats s = stats();
  EXPECT_GE(hio_stats_rule_bytes(&s, HIO_RULE_SEQUENTIAL), passes * kRecords / 2 * kRecord) << "the records went direct";
  EXPECT_GE(s.learn_samples, passes * kRecords * 3 / 4) << "nearly every record, or its uncached part, is a sample";
  EXPECT_GT(explored, kRecord) << "an exploration run went on over the headers, within " << passes << " restores";
  EXPECT_LE(explored * 100, 3 * passes * data.size() + 100 * 4 * kRecord)
      << "at most 3 % of the bytes, and one run's rounding";
  RecordProperty("restores_until_explored", passes);
}

TEST_F(FileLearning, AReadStreamKeepsOneOffCachePathWhateverItsRecordsClasses) {
  // Measurements say uncached reads win at 1 MiB and direct ones at
  // 8 MiB.  A restore of records of both sizes still takes one path off
  // the cache for all of them: switching at every record would restart
  // the kernel's readahead and give the direct read-ahead window up each
  // time.
  constexpr size_t kPairs = 24, kHeader = 64;
  const size_t pair = 2 * kHeader + M + 8 * M;
  const std::vector<char> data = pattern(kPairs * pair, 11);
  hio_file* f = nullptr;
  ASSERT_NO_FATAL_FAILURE(write_mixed_cost_file(dir_.file("mixed"), data, &f));
  hio_stats_reset();
  std::vector<char> back(data.size());
  for (size_t at = 0; at < back.size();) {
    for (size_t record : {size_t{M}, 8 * M}) {
      ASSERT_NO_FATAL_FAILURE(read_header_and_record(f, back, at, kHeader, record));
      at += kHeader + record;
    }
  }
  EXPECT_TRUE(back == data) << "every byte as written";
  ASSERT_EQ(hio_close(f), 0);
  const hio_stats s = stats();
  const uint64_t direct = decided_read_bytes(s, HIO_PATH_DIRECT), uncached = decided_read_bytes(s, HIO_PATH_DONTCACHE);
  EXPECT_TRUE(direct < 2 * 8 * M || uncached < 2 * 8 * M)
      << "one path off the cache for the stream: direct " << direct << " bytes, uncached " << uncached;
  EXPECT_GE(direct + uncached, data.size() / 2) << "the records left the cache";
}

TEST_F(FileLearning, ReadsOfAFileReadAtRandomGoUncachedUntilTheirSizeIsMeasuredAtRandom) {
  // Records read one call each, out of file order, as torch.load reads a
  // checkpoint: no read-ahead window serves them.  Where the kernel has
  // RWF_DONTCACHE they go uncached (LearnTuning::
  // uncached_random_reads_first) until their size class is measured both
  // ways as reads at random (FsCostSet::random_reads); then as it was
  // measured.  What streams of that size measured does not move them.  So
  // do the first one, which does not start at the file's beginning, and
  // two that lie side by side (a stream too short for a window), and the
  // one after them; not the one at offset 0, where a restore's stream
  // starts.  A sequential stream of the same file is not read at random.
  // What the kernel reads ahead behind each record (8 MiB on the
  // development VM), where it is not in flight still, is dropped before
  // the next: a record half cached stays in the cache (read_cached),
  // whatever else.
  constexpr size_t kRecords = 8, kRecord = 32 * M;
  const std::vector<char> data = pattern(kRecords * kRecord, 19);
  hio_file* f = nullptr;
  ASSERT_NO_FATAL_FAILURE(write_cold_file(dir_.file("at-random"), data, &f));
  std::vector<char> back(data.size());
  const size_t order[kRecords] = {5, 2, 3, 7, 6, 0, 4, 1};
  auto read_in_order = [&] {
    for (size_t i : order) {
      posix_fadvise(hio_fd(f), 0, 0, POSIX_FADV_DONTNEED);
      ASSERT_EQ(hio_pread(f, back.data() + i * kRecord, kRecord, static_cast<off_t>(i * kRecord)),
                static_cast<ssize_t>(kRecord));
    }
  };
  hio_stats_reset();
  ASSERT_NO_FATAL_FAILURE(read_in_order());
  EXPECT_TRUE(back == data) << "every byte as written";
  hio_stats s = stats();
  if (s.dontcache_refused) {
    ASSERT_EQ(hio_close(f), 0);
    GTEST_SKIP() << "this kernel refuses RWF_DONTCACHE (Linux 6.14+ has it): random reads go direct, as configured";
  }
  EXPECT_EQ(decided_read_bytes(s, HIO_PATH_DONTCACHE), (kRecords - 1) * kRecord)
      << "every record uncached but the one at offset 0; by rule: " << rule_bytes(s);
  {
    LearnedFs* fs = nullptr;
    ASSERT_NO_FATAL_FAILURE(learned_fs_of(hio_fd(f), &fs));
    std::lock_guard<std::mutex> lock(fs->mu);
    const int c = size_class(kRecord);
    EXPECT_GT(fs->costs.random_reads.estimate(HIO_OP_READ, c, HIO_PATH_DONTCACHE).samples, 0u)
        << "measured as reads at random";
    EXPECT_EQ(fs->costs.streams.estimate(HIO_OP_READ, c, HIO_PATH_DONTCACHE).samples, 0u) << "not as a stream";
  }

  // Streams of this size measured both ways, direct clearly cheaper: not
  // what a read at random costs.
  ASSERT_NO_FATAL_FAILURE(seed_read_costs(hio_fd(f), kRecord, 0.3, 2.0));
  hio_stats_reset();
  ASSERT_NO_FATAL_FAILURE(read_in_order());
  EXPECT_TRUE(back == data) << "every byte as written, streams measured";
  s = stats();
  EXPECT_EQ(decided_read_bytes(s, HIO_PATH_DONTCACHE), (kRecords - 1) * kRecord)
      << "what streams measured moved nothing; by rule: " << rule_bytes(s);

  // Reads at random measured both ways, direct clearly cheaper at this
  // size: as measured.
  ASSERT_NO_FATAL_FAILURE(seed_read_costs(hio_fd(f), kRecord, 0.3, 2.0, 0, Seeded::kRandomReads));
  hio_stats_reset();
  ASSERT_NO_FATAL_FAILURE(read_in_order());
  EXPECT_TRUE(back == data) << "every byte as written, measured";
  s = stats();
  EXPECT_EQ(decided_read_bytes(s, HIO_PATH_DONTCACHE), 0u) << "by rule: " << rule_bytes(s);
  EXPECT_GE(decided_read_bytes(s, HIO_PATH_DIRECT), (kRecords - 1) * kRecord) << "by rule: " << rule_bytes(s);

  // Nothing measured again, and a sequential stream of the same file,
  // which the read-ahead window serves: it stays direct.
  ASSERT_NO_FATAL_FAILURE(forget_learned(dir_.path()));
  posix_fadvise(hio_fd(f), 0, 0, POSIX_FADV_DONTNEED);
  hio_stats_reset();
  ASSERT_NO_FATAL_FAILURE(read_in_calls(f, back, kRecord));
  EXPECT_TRUE(back == data) << "every byte as written, in order";
  s = stats();
  EXPECT_EQ(decided_read_bytes(s, HIO_PATH_DONTCACHE), 0u) << "a stream from the file's start; " << rule_bytes(s);
  ASSERT_EQ(hio_close(f), 0);
}

TEST_F(FileLearning, ANewReadStreamChoosesItsPathAfresh) {
  // Uncached wins at 1 MiB, direct at 8 MiB.  A stream of 1 MiB records,
  // then another, elsewhere in the file, of 8 MiB records: the second,
  // which begins with a header too small to be learned, is judged by its
  // own first record and goes direct.
  constexpr size_t kHeader = 64, kSmall = 32, kLarge = 8;
  const size_t second = kSmall * (kHeader + M) + M;  // a megabyte nobody reads between the streams
  const std::vector<char> data = pattern(second + kLarge * (kHeader + 8 * M), 13);
  hio_file* f = nullptr;
  ASSERT_NO_FATAL_FAILURE(write_mixed_cost_file(dir_.file("two-streams"), data, &f));
  std::vector<char> back(data.size());
  for (size_t i = 0, at = 0; i < kSmall; ++i, at += kHeader + M)
    ASSERT_NO_FATAL_FAILURE(read_header_and_record(f, back, at, kHeader, M));
  hio_stats_reset();
  for (size_t i = 0, at = second; i < kLarge; ++i, at += kHeader + 8 * M)
    ASSERT_NO_FATAL_FAILURE(read_header_and_record(f, back, at, kHeader, 8 * M));
  ASSERT_EQ(hio_close(f), 0);
  EXPECT_EQ(memcmp(back.data() + second, data.data() + second, data.size() - second), 0) << "every byte as written";
  const hio_stats s = stats();
  EXPECT_LT(decided_read_bytes(s, HIO_PATH_DONTCACHE), 2 * 8 * M) << "the second stream did not take the first's path";
  EXPECT_GE(decided_read_bytes(s, HIO_PATH_DIRECT), kLarge / 2 * 8 * M) << "its records went direct";
}

// Bytes this process has had read from storage so far (/proc/self/io; the
// ring's workers are threads of the process and count too).
uint64_t storage_read_bytes() {
  char text[512];
  uint64_t bytes;
  return read_small_file("/proc/self/io", text, sizeof text) && line_number(text, "read_bytes:", &bytes) ? bytes : ~0ULL;
}

TEST_F(FileLearning, AnExploredDirectRunReadsNoFurtherAheadThanItGoes) {
  // A cold stream of 256 KiB reads goes through the page cache (`small`),
  // and now and then a run of it explores direct reads.  The first run is
  // 4 MiB long (a path not measured yet), and the read-ahead window that
  // direct streams get must stay within it: else every run put 32 MiB in
  // flight that the stream read again through the cache after it.
  if (storage_read_bytes() == ~0ULL) GTEST_SKIP() << "no read_bytes in /proc/self/io (kernel without task I/O accounting)";
  keep_small_read_streams_in_the_cache();
  constexpr size_t kRead = 256 << 10, kSize = 256 * M;
  const std::vector<char> data = pattern(kSize, 21);
  hio_file* f = nullptr;
  ASSERT_NO_FATAL_FAILURE(write_cold_file(dir_.file("explored-direct"), data, &f));
  // The kernel's readahead off: a reader that falls behind it (a loaded
  // machine) finds its next ranges cached, and reads decided by the cache
  // (`read_cached`) earn no exploration credit - on CI, once, not enough
  // for a run in 256 MiB.
  ASSERT_EQ(posix_fadvise(hio_fd(f), 0, 0, POSIX_FADV_RANDOM), 0);
  hio_stats_reset();
  const uint64_t before = storage_read_bytes();
  std::vector<char> back(kSize);
  ASSERT_NO_FATAL_FAILURE(read_in_calls(f, back, kRead));
  const uint64_t read = storage_read_bytes() - before;
  ASSERT_EQ(hio_close(f), 0);
  EXPECT_TRUE(back == data) << "every byte as written";
  const hio_stats s = stats();
  ASSERT_GT(s.learn_explored_direct, 0u) << "a direct run explored (3 % of 256 MiB pays for one of 4 MiB)";
  // Each run may round up to one 2 MiB block of the window (and the
  // kernel's readahead, were it on, overshoot the file's end by its window).
  const uint64_t runs = s.learn_explored_direct / (4 * M) + 1;
  EXPECT_LE(read, kSize + runs * 2 * M + 8 * M)
      << "read from storage for " << s.learn_explored_direct << " bytes explored direct in about " << runs << " runs";
}

TEST_F(FileLearning, ConcurrentReadStreamsDoNotExploreThroughTheCache) {
  // Two cold files read in step, in 4 MiB calls, as two ranks of a restore
  // read their shards: both go direct through read-ahead windows.  A run
  // through the page cache in one of them would queue behind the other's
  // window and leave its stream behind, so none is explored while both
  // windows are busy - although the class earns credit for several runs.
  constexpr size_t kCall = 4 * M, kSize = 384 * M, kMeasured = kSize * 7 / 8;
  const std::vector<char> data = pattern(kSize, 23);
  hio_file* f[2] = {nullptr, nullptr};
  for (int i = 0; i < 2; ++i) ASSERT_NO_FATAL_FAILURE(write_cold_file(dir_.file("rank" + std::to_string(i)), data, &f[i]));
  // Off the cache, direct is the measured path at 4 MiB, whatever the tests
  // before this one left in the process's estimates (uncached 1 MiB reads,
  // which larger classes follow until measured both ways themselves), and
  // the cache's paths only a little dearer: their runs are cheap, and only
  // the rule under test keeps the credit from being spent on them (without
  // it, 16-24 MiB of each part goes through the cache).
  ASSERT_NO_FATAL_FAILURE(seed_read_costs(hio_fd(f[0]), kCall, 0.3, 0.35, 0.35));
  hio_stats_reset();
  std::vector<char> back[2] = {std::vector<char>(kSize), std::vector<char>(kSize)};
  hio_stats s{};
  for (size_t at = 0; at < kSize; at += kCall) {
    if (at == kMeasured) s = stats();  // both windows still busy
    for (int i = 0; i < 2; ++i)
      ASSERT_EQ(hio_pread(f[i], back[i].data() + at, kCall, static_cast<off_t>(at)), static_cast<ssize_t>(kCall));
  }
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(hio_close(f[i]), 0);
    EXPECT_TRUE(back[i] == data) << "every byte as written, file " << i;
  }
  EXPECT_GT(s.read_ahead_hits, 0u) << "the streams were read ahead";
  EXPECT_GE(decided_read_bytes(s, HIO_PATH_DIRECT), kMeasured) << "nearly all of both went direct";
  EXPECT_EQ(s.learn_explored_buffered + s.learn_explored_dontcache, 0u)
      << "3 % of " << 2 * kMeasured / M << " MiB would pay for several 16 MiB runs";

  // The same process later reads one stream alone, as the last rank of a
  // restore does once the others are done: its time is the restore's, so
  // it explores nothing through the cache either, on credit it has earned.
  EXPECT_TRUE(ReadAhead::windows_overlapped());
  ASSERT_EQ(hio_open(dir_.file("rank0").c_str(), O_RDONLY, 0, &f[0]), 0);
  posix_fadvise(hio_fd(f[0]), 0, 0, POSIX_FADV_DONTNEED);
  hio_stats_reset();
  ASSERT_NO_FATAL_FAILURE(read_in_calls(f[0], back[0], kCall));
  ASSERT_EQ(hio_close(f[0]), 0);
  EXPECT_TRUE(back[0] == data) << "every byte as written, read alone";
  const hio_stats alone = stats();
  EXPECT_GE(decided_read_bytes(alone, HIO_PATH_DIRECT), kMeasured) << "it went direct";
  EXPECT_EQ(alone.learn_explored_buffered + alone.learn_explored_dontcache, 0u);
}

TEST_F(FileLearning, AStreamReadAloneExploresThroughTheCache) {
  // The control for the test above: the same stream, with the same
  // estimates, in a process that has only ever read one stream at a time
  // spends its credit on the cache.  A run's price is its time on the
  // explored path, and each call earns 3 % of its own time on the path in
  // use: a 16 MiB run takes about 133 x (cache cost / direct cost) calls
  // of 4 MiB to pay for, 156 at the costs seeded.  But the direct cost is
  // measured as the stream goes, and here it came out at 0.11-0.19
  // ns/byte (the host caches the new file), a ratio of 1.8-3.3: up to 440
  // calls.  The stream is read again, alone each time, as a restore reads
  // its file again; its credit waits for the next pass (a stream explores
  // through the cache only at the file's end), so it must explore within
  // three passes of 192 calls, enough for a ratio of 4.
  constexpr size_t kCall = 4 * M, kSize = 768 * M;
  constexpr int kPasses = 3;
  const std::vector<char> data = pattern(kSize, 29);
  hio_file* f = nullptr;
  ASSERT_NO_FATAL_FAILURE(write_cold_file(dir_.file("alone"), data, &f));
  ASSERT_NO_FATAL_FAILURE(seed_read_costs(hio_fd(f), kCall, 0.3, 0.35, 0.35));
  hio_stats_reset();
  std::vector<char> back(kSize);
  uint64_t explored = 0;
  int pass = 0;
  while (explored == 0 && pass < kPasses) {
    ++pass;
    posix_fadvise(hio_fd(f), 0, 0, POSIX_FADV_DONTNEED);
    std::fill(back.begin(), back.end(), 0);
    ASSERT_NO_FATAL_FAILURE(read_in_calls(f, back, kCall));
    ASSERT_TRUE(back == data) << "every byte as written, pass " << pass;
    const hio_stats s = stats();
    explored = s.learn_explored_buffered + s.learn_explored_dontcache;
  }
  ASSERT_EQ(hio_close(f), 0);
  EXPECT_FALSE(ReadAhead::windows_overlapped());
  EXPECT_GT(stats().read_ahead_hits, 0u);
  EXPECT_GT(explored, 0u) << "runs through the cache, between windows, in " << pass << " passes; direct measured at "
                          << learned_read_cost(dir_.path(), kCall, HIO_PATH_DIRECT) << " ns/byte";
}

TEST_F(FileLearning, AnUncachedReadRunDoesNotMeasureWhatTheStreamsReadaheadCached) {
  // A stream of 64 KiB reads goes through the cache (rule `small`), and
  // the kernel's readahead keeps its next few MiB cached.  An uncached run
  // explored there starts over them: copies from the cache, not reads of
  // the path.  Measured anyway, the first look came out at 0.08-0.17
  // ns/byte, 10-20 times cheaper than buffered reads of the same stream.
  constexpr size_t kCall = 64 << 10, kSize = 256 * M;
  const std::vector<char> data = pattern(kSize, 31);
  hio_file* f = nullptr;
  ASSERT_NO_FATAL_FAILURE(write_cold_file(dir_.file("small-calls"), data, &f));
  char byte;
  iovec one = {&byte, 1};
  if (preadv2(hio_fd(f), &one, 1, 0, 0x80 /* RWF_DONTCACHE */) < 0 && errno == EOPNOTSUPP)
    GTEST_SKIP() << "this kernel has no uncached buffered I/O (RWF_DONTCACHE, Linux 6.14+): nothing to explore";
  posix_fadvise(hio_fd(f), 0, 0, POSIX_FADV_DONTNEED);
  ASSERT_NO_FATAL_FAILURE(seed_first_look(hio_fd(f), kCall, HIO_PATH_DONTCACHE, HIO_PATH_DIRECT));
  hio_stats_reset();
  std::vector<char> back(kSize);
  ASSERT_NO_FATAL_FAILURE(read_in_calls(f, back, kCall));
  EXPECT_TRUE(back == data);
  const hio_stats s = stats();
  // The first look is one 4 MiB batch of measured calls; the calls over
  // what the stream's readahead had cached come on top of it.
  EXPECT_GT(s.learn_explored_dontcache, 4 * M)
      << "the first look went on past the cached part; decided by " << rule_bytes(s) << ", memory pressure "
      << memory_pressure(0);
  EXPECT_LE((s.learn_explored_direct + s.learn_explored_dontcache) * 100, 3 * kSize + 100 * 64 * M)
      << "the cached part is paid for with later credit: 3 %, and at most one readahead probe's worth";
  LearnedFs* fs = nullptr;
  ASSERT_NO_FATAL_FAILURE(learned_fs_of(hio_fd(f), &fs));
  std::lock_guard<std::mutex> lock(fs->mu);
  const PathEstimate uncached = fs->costs.streams.estimate(HIO_OP_READ, size_class(kCall), HIO_PATH_DONTCACHE);
  const PathEstimate buffered = fs->costs.streams.estimate(HIO_OP_READ, size_class(kCall), HIO_PATH_BUFFERED);
  ASSERT_GT(uncached.samples, 0u);
  // Read from the device, an uncached 64 KiB stream costs about what a
  // buffered one does (both wait for the same readahead); from the cache,
  // a tenth of it or less.
  EXPECT_GT(uncached.ns_per_byte, 0.3 * buffered.ns_per_byte)
      << "uncached " << uncached.ns_per_byte << " ns/byte, buffered " << buffered.ns_per_byte;
  ASSERT_EQ(hio_close(f), 0);
}

TEST_F(FileLearning, ADirectReadRunIsMeasuredPastItsWindowsStart) {
  // A stream of 64 KiB reads goes through the cache (rule `small`), and a
  // first look at direct reads explores 4 MiB of it.  The run's first call
  // queues behind the stream's readahead, its second starts the read-ahead
  // window, and the calls over the window's first blocks all wait for
  // them: 1.5-5.8 ns/byte timed, where the stream after them reads at
  // 0.3-0.4.  Measured, that start priced direct reads out of the class for
  // several GiB.  The run measures its 4 MiB past the start, and the start
  // is paid for with the class's credit.
  keep_small_read_streams_in_the_cache();
  constexpr size_t kCall = 64 << 10, kSize = 256 * M;
  const std::vector<char> data = pattern(kSize, 37);
  hio_file* f = nullptr;
  ASSERT_NO_FATAL_FAILURE(write_cold_file(dir_.file("first-look"), data, &f));
  ASSERT_NO_FATAL_FAILURE(seed_first_look(hio_fd(f), kCall, HIO_PATH_DIRECT, HIO_PATH_DONTCACHE));
  hio_stats_reset();
  std::vector<char> back(kSize);
  ASSERT_NO_FATAL_FAILURE(read_in_calls(f, back, kCall));
  EXPECT_TRUE(back == data) << "every byte as written";
  const hio_stats s = stats();
  EXPECT_GT(s.read_ahead_hits, 0u) << "the run read from its window";
  // 4 MiB measured, on top of them the first two calls and the window's
  // first blocks (4 MiB at most); no other run (3 % of 256 MiB pays for
  // no second one).  Counted in the run's 4 MiB, the start ended it there.
  // (Slower, in the sanitizer build, the run used up its time after 4.75
  // MiB, its start and 0.6 MiB measured.)
  EXPECT_GT(s.learn_explored_direct, 4 * M + kCall) << "the run went on past its start";
  EXPECT_LE(s.learn_explored_direct, 8 * M + 2 * kCall + 2 * M);
  LearnedFs* fs = nullptr;
  ASSERT_NO_FATAL_FAILURE(learned_fs_of(hio_fd(f), &fs));
  std::lock_guard<std::mutex> lock(fs->mu);
  const PathEstimate direct = fs->costs.streams.estimate(HIO_OP_READ, size_class(kCall), HIO_PATH_DIRECT);
  const PathEstimate buffered = fs->costs.streams.estimate(HIO_OP_READ, size_class(kCall), HIO_PATH_BUFFERED);
  EXPECT_EQ(direct.samples, 1u) << "the run's 4 MiB are one batch";
  RecordProperty("direct_ns_per_byte", std::to_string(direct.ns_per_byte));
  RecordProperty("buffered_ns_per_byte", std::to_string(buffered.ns_per_byte));
  ASSERT_EQ(hio_close(f), 0);
}

TEST_F(FileLearning, ALongColdReadStreamGoesDirectFromItsFirstCalls) {
  // Nothing measured: a cold stream of 128 KiB reads of a file with 64 MiB
  // or more left goes direct through its read-ahead window once it is a
  // stream (its 5th call), below the configured stream threshold (1 MiB);
  // the learner moves it back into the cache if buffered is measured
  // clearly cheaper.  Of a file with less left, it stays in the cache:
  // its window would start over too soon to pay.
  constexpr size_t kCall = 128 << 10, kLong = 96 * M, kShort = 32 * M;
  const std::vector<char> data = pattern(kLong, 41);
  hio_stats s{};
  ASSERT_NO_FATAL_FAILURE(read_back_cold(dir_.file("long"), data, kCall, &s));
  EXPECT_GT(s.read_ahead_hits, 0u) << "read from its window";
  EXPECT_GE(decided_read_bytes(s, HIO_PATH_DIRECT), kLong - 4 * kCall - 4 * M) << "all of it but its first calls";
  EXPECT_EQ(hio_stats_rule_bytes(&s, HIO_RULE_LEARNED), decided_read_bytes(s, HIO_PATH_DIRECT))
      << "the configured thresholds keep it in the cache: the learner moved it";

  const std::vector<char> small(data.begin(), data.begin() + kShort);
  ASSERT_NO_FATAL_FAILURE(read_back_cold(dir_.file("short"), small, kCall, &s));
  EXPECT_EQ(decided_read_bytes(s, HIO_PATH_DIRECT) + decided_read_bytes(s, HIO_PATH_DONTCACHE), 0u);
  // Kept there by the configured threshold, not by the learner; the kernel's
  // readahead ahead of the buffered calls may have cached the range of later
  // ones (more of them on a loaded machine, where the reader falls behind).
  EXPECT_GT(hio_stats_rule_bytes(&s, HIO_RULE_SMALL), 0u) << rule_bytes(s);
  EXPECT_EQ(hio_stats_rule_bytes(&s, HIO_RULE_SMALL) + hio_stats_rule_bytes(&s, HIO_RULE_READ_CACHED), kShort)
      << rule_bytes(s);
}

TEST_F(FileLearning, AReadStreamStaysInTheCacheWhereBufferedIsMeasuredCheaper) {
  // Buffered reads measured clearly cheaper at 128 KiB and at 1 MiB: a
  // long cold stream of either stays in the cache.  At 1 MiB that is the
  // configured stream threshold, which the verdict moves too, with small
  // streams started in the cache or not (before, a read stream with a
  // window went direct from there whatever was measured).
  constexpr size_t kSize = 96 * M;
  const std::vector<char> data = pattern(kSize, 43);
  for (size_t call : {size_t{128} << 10, M}) {
    if (call == M) keep_small_read_streams_in_the_cache();
    hio_file* f = nullptr;
    ASSERT_NO_FATAL_FAILURE(write_cold_file(dir_.file("measured-" + std::to_string(call)), data, &f));
    ASSERT_NO_FATAL_FAILURE(seed_read_costs(hio_fd(f), call, 1.0, 1.0, 0.2));
    LearnedFs* fs = nullptr;
    ASSERT_NO_FATAL_FAILURE(learned_fs_of(hio_fd(f), &fs));
    hio_stats_reset();
    std::vector<char> back(kSize);
    ASSERT_NO_FATAL_FAILURE(read_in_calls(f, back, call));
    ASSERT_EQ(hio_close(f), 0);
    EXPECT_TRUE(back == data) << "every byte as written, calls of " << call;
    const hio_stats s = stats();
    EXPECT_EQ(decided_read_bytes(s, HIO_PATH_DIRECT) + decided_read_bytes(s, HIO_PATH_DONTCACHE), 0u)
        << "calls of " << call;
    // Decided by the measured thresholds, not by what the stream's own
    // readahead cached of each next call (`read_cached`: the stream judged
    // begun on cached data at its second call, over the first call's
    // readahead, File::decide): such calls earn no exploration credit and
    // are not measured, and the class stayed in the cache whatever the
    // other paths came to cost.
    const uint64_t calls = kSize / call;
    EXPECT_LE(hio_stats_rule_requests(&s, HIO_RULE_READ_CACHED), calls / 50) << "calls of " << call;
    std::lock_guard<std::mutex> lock(fs->mu);
    // Seeded with 100 samples; the stream's reads are folded in batches of 4 MiB.
    EXPECT_GE(fs->costs.streams.estimate(HIO_OP_READ, size_class(call), HIO_PATH_BUFFERED).samples,
              100 + kSize / (8 * M))
        << "the stream measured, calls of " << call;
  }
}

TEST_F(FileLearning, AStreamThroughItsWindowExploresTheCache) {
  // A long cold stream of 64 KiB reads goes direct through its window from
  // nothing measured, and its credit pays for first looks through the
  // cache.  Each waits for the window to drain (16 MiB by default, 250 calls), and
  // meanwhile new direct samples move the look's price: a wait given up
  // when the price rose let the window grow again, and 1.15 GiB explored
  // nothing through the cache.
  constexpr size_t kCall = 64 << 10, kSize = 256 * M;
  const std::vector<char> data = pattern(kSize, 47);
  hio_stats s{};
  ASSERT_NO_FATAL_FAILURE(read_back_cold(dir_.file("window"), data, kCall, &s));
  EXPECT_GE(decided_read_bytes(s, HIO_PATH_DIRECT), kSize / 2) << "the stream went direct";
  EXPECT_GT(s.learn_explored_buffered + s.learn_explored_dontcache, 0u) << "a first look through the cache";
  EXPECT_LE((s.learn_explored_buffered + s.learn_explored_dontcache) * 100, 3 * kSize + 100 * 8 * M)
      << "within the share, and the look over what the window had cached";
}

TEST_F(FileLearning, AStreamThroughItsWindowLooksThroughTheCacheAtTheFilesEnd) {
  // Direct measured, buffered not yet: the credit covers a first look
  // through the cache (4 MiB of 64 KiB calls) after 133 MiB.  Taken there,
  // the window would drain for it and start over after it; the look waits
  // for the file's last 4 MiB instead, where the window stops anyway.
  constexpr size_t kCall = 64 << 10, kSize = 256 * M, kLook = 4 * M;
  const std::vector<char> data = pattern(kSize, 53);
  hio_file* f = nullptr;
  ASSERT_NO_FATAL_FAILURE(write_cold_file(dir_.file("end"), data, &f));
  ASSERT_NO_FATAL_FAILURE(seed_read_costs(hio_fd(f), kCall, 0.3, 50));
  hio_stats_reset();
  std::vector<char> back(kSize);
  constexpr size_t kBefore = kSize - 2 * kLook;
  ASSERT_NO_FATAL_FAILURE(read_in_calls(f, back, kCall, 0, kBefore));
  hio_stats s = stats();
  EXPECT_GE(decided_read_bytes(s, HIO_PATH_DIRECT), kBefore / 2) << "the stream went direct";
  EXPECT_EQ(s.learn_explored_buffered + s.learn_explored_dontcache, 0u) << "nothing looked at before the file's end";
  ASSERT_NO_FATAL_FAILURE(read_in_calls(f, back, kCall, kBefore));
  ASSERT_EQ(hio_close(f), 0);
  EXPECT_TRUE(back == data) << "every byte as written";
  s = stats();
  EXPECT_GT(s.learn_explored_buffered, 0u) << "the look through the cache, at the end";
  EXPECT_LE(s.learn_explored_buffered + s.learn_explored_dontcache, kLook);
}

TEST_F(FileLearning, AStreamsFirstRequestLeavesItsLookThroughTheCacheToTheFilesEnd) {
  // The credit for a run through the cache is there when a stream of 16
  // MiB reads begins at a file's start (its filesystem earned it in a
  // stream that ended before its file did).  Taken there, the run would
  // take the window's start away from the stream (ReadAhead::begin()); it
  // waits for the file's end instead.  Nothing is measured through the
  // cache: the run is a first look, priced at what the direct reads cost,
  // so the credit of 36 requests pays for it whatever the device's speed.
  // In the direct stream, the run's first requests start the kernel's
  // readahead cold: three are not measured, and the run is that much longer.
  constexpr size_t kCall = 16 * M, kSize = 40 * kCall, kFirst = 36 * kCall;
  const std::vector<char> data = pattern(kSize, 59);
  const std::string path = dir_.file("first-request");
  hio_file* f = nullptr;
  ASSERT_NO_FATAL_FAILURE(write_cold_file(path, data, &f));
  hio_stats_reset();
  std::vector<char> back(kSize);
  ASSERT_NO_FATAL_FAILURE(read_in_calls(f, back, kCall, 0, kFirst));
  ASSERT_EQ(hio_close(f), 0);
  auto explored = [] {
    const hio_stats s = stats();
    return s.learn_explored_buffered + s.learn_explored_dontcache;
  };
  EXPECT_EQ(explored(), 0u) << "the first stream ended before the file's end";
  // Again, opened anew (no window left over) and cold.
  ASSERT_EQ(hio_open(path.c_str(), O_RDONLY, 0, &f), 0);
  posix_fadvise(hio_fd(f), 0, 0, POSIX_FADV_DONTNEED);
  ASSERT_NO_FATAL_FAILURE(read_in_calls(f, back, kCall, 0, kCall));
  EXPECT_EQ(explored(), 0u) << "not at the stream's first request";
  ASSERT_NO_FATAL_FAILURE(read_in_calls(f, back, kCall, kCall));
  LearnedFs* fs = nullptr;
  ASSERT_NO_FATAL_FAILURE(learned_fs_of(hio_fd(f), &fs));
  ASSERT_EQ(hio_close(f), 0);
  EXPECT_TRUE(back == data) << "every byte as written";
  EXPECT_EQ(explored(), 4 * kCall) << "the look through the cache, at the file's end: its last four requests";
  std::lock_guard<std::mutex> lock(fs->mu);
  const hio_path looked = stats().learn_explored_dontcache ? HIO_PATH_DONTCACHE : HIO_PATH_BUFFERED;
  EXPECT_EQ(fs->costs.streams.estimate(HIO_OP_READ, size_class(kCall), looked).samples, 1u)
      << "one request measured: the fourth";
}

TEST_F(FileLearning, EstimatesReachTheStateDirectory) {
  const char* state = getenv("HYBRIDIO_STATE_DIR");
  if (!state || !*state) GTEST_SKIP() << "HYBRIDIO_STATE_DIR is not set: not writing the user's state directory";
  const std::string path = dir_.file("persist");
  hio_file* f = nullptr;
  ASSERT_EQ(hio_open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  // Enough for a sample on any path: uncached calls are folded 16 MiB at a time.
  const std::vector<char> data = pattern(32 * M, 5);
  for (size_t at = 0; at < data.size(); at += M)
    ASSERT_EQ(hio_pwrite(f, data.data() + at, M, static_cast<off_t>(at)), static_cast<ssize_t>(M));
  const std::string key = filesystem_key(hio_fd(f));
  ASSERT_EQ(hio_close(f), 0);
  ASSERT_FALSE(key.empty());
  Runtime::get().learned()->save_all();  // what exit() does
  FsCostSet loaded;
  ASSERT_TRUE(load_learned(state, key, &loaded)) << state << "/" << key;
  uint64_t samples = 0;
  for (int c = 0; c < kSizeClasses; ++c)
    for (int p = 0; p < HIO_PATH_COUNT; ++p)
      samples += loaded.streams.estimate(HIO_OP_WRITE, c, static_cast<hio_path>(p)).samples;
  EXPECT_GT(samples, 0u);
}

}  // namespace
}  // namespace hybridio
