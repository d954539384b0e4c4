// policy_test.cc - one table row (at least) per rule of the policy core,
// plus the split plans.  Each row is a request and the decision it must get.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "hybridio/policy.hpp"

namespace hybridio {
namespace {

constexpr hio_u64 K = 1024, M = 1024 * 1024;
constexpr hio_uptr kAlignedBuf = 0x7f0000000000;  // 1 MiB aligned address

struct Case {
  std::string name;
  std::function<void(hio_policy_config&, hio_request&)> setup;
  hio_path path;
  hio_rule rule;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

hio_request base_request(hio_op op, hio_u64 offset, hio_u64 length) {
  hio_request r = make_request(op, offset, length, reinterpret_cast<void*>(kAlignedBuf), 512, 512);
  r.file_size = 1024 * M;
  return r;
}

class PolicyRules : public ::testing::TestWithParam<Case> {};

TEST_P(PolicyRules, DecidesAsDocumented) {
  const Case& c = GetParam();
  hio_policy_config cfg = default_policy();
  hio_request req = base_request(HIO_OP_WRITE, 0, 4 * M);
  c.setup(cfg, req);
  hio_decision d = decide(cfg, req);
  EXPECT_EQ(to_string(d.path), std::string(to_string(c.path))) << c.name;
  EXPECT_EQ(to_string(d.rule), std::string(to_string(c.rule))) << c.name;
  // Whatever the decision, the pieces never overlap and never exceed the request.
  EXPECT_LE(d.head_len + d.body_len + d.tail_len, req.length);
  if (d.path != HIO_PATH_DIRECT || d.rule == HIO_RULE_CALLER_DIRECT) {
    EXPECT_EQ(d.head_len, 0u);
    EXPECT_EQ(d.tail_len, 0u);
  }
}

const Case kCases[] = {
    {"caller opened O_DIRECT: never switched",
     [](auto&, auto& r) { r.file_flags = HIO_FILE_CALLER_DIRECT; r.length = 4 * K; },
     HIO_PATH_DIRECT, HIO_RULE_CALLER_DIRECT},
    {"policy buffered forces the cache",
     [](auto& c, auto& r) { c.mode = HIO_MODE_BUFFERED; r.length = 64 * M; },
     HIO_PATH_BUFFERED, HIO_RULE_FORCED_BUFFERED},
    {"zero-length request", [](auto&, auto& r) { r.length = 0; },
     HIO_PATH_BUFFERED, HIO_RULE_EMPTY},
    {"read at EOF",
     [](auto&, auto& r) { r.op = HIO_OP_READ; r.offset = r.file_size; r.length = 16 * M; },
     HIO_PATH_BUFFERED, HIO_RULE_EMPTY},
    {"O_APPEND write", [](auto&, auto& r) { r.file_flags = HIO_FILE_APPEND; r.length = 64 * M; },
     HIO_PATH_BUFFERED, HIO_RULE_APPEND},
    {"O_APPEND does not affect reads",
     [](auto&, auto& r) { r.op = HIO_OP_READ; r.file_flags = HIO_FILE_APPEND; r.length = 16 * M; },
     HIO_PATH_DIRECT, HIO_RULE_READ_SIZE},
    {"mapped file stays in the cache",
     [](auto&, auto& r) { r.file_flags = HIO_FILE_MAPPED; r.length = 64 * M; },
     HIO_PATH_BUFFERED, HIO_RULE_MAPPED},
    {"O_DIRECT refused", [](auto&, auto& r) { r.file_flags = HIO_FILE_NO_DIRECT; },
     HIO_PATH_BUFFERED, HIO_RULE_NO_DIRECT},
    {"O_DIRECT refused, large request goes uncached",
     [](auto&, auto& r) { r.file_flags = HIO_FILE_NO_DIRECT | HIO_FILE_DONTCACHE_OK; },
     HIO_PATH_DONTCACHE, HIO_RULE_NO_DIRECT},
    {"alignment unknown", [](auto&, auto& r) { r.mem_align = 0; },
     HIO_PATH_BUFFERED, HIO_RULE_NO_DIRECT},
    {"alignment not a power of two", [](auto&, auto& r) { r.offset_align = 768; },
     HIO_PATH_BUFFERED, HIO_RULE_NO_DIRECT},
    {"policy dontcache",
     [](auto& c, auto& r) { c.mode = HIO_MODE_DONTCACHE; r.file_flags = HIO_FILE_DONTCACHE_OK; r.length = 4 * K; },
     HIO_PATH_DONTCACHE, HIO_RULE_FORCED_DONTCACHE},
    {"policy dontcache without kernel support",
     [](auto& c, auto&) { c.mode = HIO_MODE_DONTCACHE; },
     HIO_PATH_BUFFERED, HIO_RULE_FORCED_DONTCACHE},
    {"read of a fully cached range",
     [](auto&, auto& r) { r.op = HIO_OP_READ; r.length = 16 * M; r.cached_pages = 4096; },
     HIO_PATH_BUFFERED, HIO_RULE_READ_CACHED},
    {"read of a half cached range",
     [](auto&, auto& r) { r.op = HIO_OP_READ; r.length = 16 * M; r.cached_pages = 2048; },
     HIO_PATH_BUFFERED, HIO_RULE_READ_CACHED},
    {"read of a range a quarter cached goes direct",
     [](auto&, auto& r) { r.op = HIO_OP_READ; r.length = 16 * M; r.cached_pages = 1024; },
     HIO_PATH_DIRECT, HIO_RULE_READ_SIZE},
    {"overwrite of a dirty range",
     [](auto&, auto& r) { r.dirty_pages = 1024; },
     HIO_PATH_BUFFERED, HIO_RULE_WRITE_DIRTY},
    {"overwrite of a range with a few dirty pages goes direct",
     [](auto&, auto& r) { r.dirty_pages = 2; },
     HIO_PATH_DIRECT, HIO_RULE_WRITE_SIZE},
    {"cached pages do not keep writes buffered",
     [](auto&, auto& r) { r.cached_pages = 1024; r.dirty_pages = 0; },
     HIO_PATH_DIRECT, HIO_RULE_WRITE_SIZE},
    {"small write", [](auto&, auto& r) { r.length = 1 * M; },
     HIO_PATH_BUFFERED, HIO_RULE_SMALL},
    {"write just below the threshold", [](auto&, auto& r) { r.length = 2 * M - 4 * K; },
     HIO_PATH_BUFFERED, HIO_RULE_SMALL},
    {"read below the read threshold", [](auto&, auto& r) { r.op = HIO_OP_READ; r.length = 4 * M; },
     HIO_PATH_BUFFERED, HIO_RULE_SMALL},
    {"no aligned body (huge device alignment)",
     [](auto&, auto& r) { r.offset_align = 4 * M; r.length = 2 * M; },
     HIO_PATH_BUFFERED, HIO_RULE_UNALIGNED},
    {"no aligned body, uncached instead",
     [](auto&, auto& r) { r.offset_align = 4 * M; r.length = 2 * M; r.file_flags = HIO_FILE_DONTCACHE_OK; },
     HIO_PATH_DONTCACHE, HIO_RULE_UNALIGNED},
    {"policy direct takes small aligned requests",
     [](auto& c, auto& r) { c.mode = HIO_MODE_DIRECT; r.length = 8 * K; },
     HIO_PATH_DIRECT, HIO_RULE_FORCED_DIRECT},
    {"policy direct cannot take a request without an aligned body",
     [](auto& c, auto& r) { c.mode = HIO_MODE_DIRECT; r.offset = 100; r.length = 100; },
     HIO_PATH_BUFFERED, HIO_RULE_UNALIGNED},
    {"policy direct ignores the cache",
     [](auto& c, auto& r) { c.mode = HIO_MODE_DIRECT; r.op = HIO_OP_READ; r.cached_pages = 1024; },
     HIO_PATH_DIRECT, HIO_RULE_FORCED_DIRECT},
    {"write at the write threshold", [](auto&, auto& r) { r.length = 2 * M; },
     HIO_PATH_DIRECT, HIO_RULE_WRITE_SIZE},
    {"read at the read threshold", [](auto&, auto& r) { r.op = HIO_OP_READ; r.length = 8 * M; },
     HIO_PATH_DIRECT, HIO_RULE_READ_SIZE},
    {"O_SYNC write above the sync threshold",
     [](auto&, auto& r) { r.file_flags = HIO_FILE_SYNC; r.length = 256 * K; },
     HIO_PATH_DIRECT, HIO_RULE_SYNC_WRITE},
    {"O_SYNC write below the sync threshold",
     [](auto&, auto& r) { r.file_flags = HIO_FILE_SYNC; r.length = 128 * K; },
     HIO_PATH_BUFFERED, HIO_RULE_SMALL},
    {"sequential stream", [](auto&, auto& r) { r.seq_run = 4; r.length = 1 * M; },
     HIO_PATH_DIRECT, HIO_RULE_SEQUENTIAL},
    {"sequential reads are left to readahead",
     [](auto&, auto& r) { r.op = HIO_OP_READ; r.seq_run = 10; r.length = 4 * M; },
     HIO_PATH_BUFFERED, HIO_RULE_SMALL},
    {"stream too short yet", [](auto&, auto& r) { r.seq_run = 3; r.length = 1 * M; },
     HIO_PATH_BUFFERED, HIO_RULE_SMALL},
    {"a long read stream stays below the read threshold in the cache",
     [](auto&, auto& r) { r.op = HIO_OP_READ; r.seq_run = 100; r.length = 4 * M; },
     HIO_PATH_BUFFERED, HIO_RULE_SMALL},
    {"a read stream at the read threshold goes direct by its size",
     [](auto&, auto& r) { r.op = HIO_OP_READ; r.seq_run = 10; r.length = 8 * M; },
     HIO_PATH_DIRECT, HIO_RULE_READ_SIZE},
    {"a read stream under pressure goes direct at the lowered read threshold",
     [](auto&, auto& r) { r.op = HIO_OP_READ; r.seq_run = 10; r.pressure = 90; r.length = 2 * M; },
     HIO_PATH_DIRECT, HIO_RULE_PRESSURE},
    {"a read stream under pressure stays in the cache below the lowered read threshold",
     [](auto&, auto& r) { r.op = HIO_OP_READ; r.seq_run = 10; r.pressure = 90; r.length = 1 * M; },
     HIO_PATH_BUFFERED, HIO_RULE_SMALL},
    {"memory pressure lowers the threshold", [](auto&, auto& r) { r.pressure = 90; r.length = 512 * K; },
     HIO_PATH_DIRECT, HIO_RULE_PRESSURE},
    {"several threads writing the file lower the write threshold",
     [](auto&, auto& r) { r.writers = 2; r.length = 512 * K; },
     HIO_PATH_DIRECT, HIO_RULE_CONTENDED},
    {"one writer is no contention", [](auto&, auto& r) { r.writers = 1; r.length = 512 * K; },
     HIO_PATH_BUFFERED, HIO_RULE_SMALL},
    {"contention does not lower the read threshold",
     [](auto&, auto& r) { r.op = HIO_OP_READ; r.writers = 4; r.length = 4 * M; },
     HIO_PATH_BUFFERED, HIO_RULE_SMALL},
    {"contention on top of pressure lowers further",
     [](auto&, auto& r) { r.pressure = 90; r.writers = 3; r.length = 128 * K; },
     HIO_PATH_DIRECT, HIO_RULE_CONTENDED},
    {"moderate pressure does not", [](auto&, auto& r) { r.pressure = 79; r.length = 512 * K; },
     HIO_PATH_BUFFERED, HIO_RULE_SMALL},
    {"measured: uncached beats direct for a large write",
     [](auto&, auto& r) { r.file_flags = HIO_FILE_PREFER_DONTCACHE | HIO_FILE_DONTCACHE_OK; },
     HIO_PATH_DONTCACHE, HIO_RULE_WRITE_SIZE},
    {"uncached preferred but not supported: direct",
     [](auto&, auto& r) { r.file_flags = HIO_FILE_PREFER_DONTCACHE; },
     HIO_PATH_DIRECT, HIO_RULE_WRITE_SIZE},
    {"uncached preferred, below the threshold: buffered",
     [](auto&, auto& r) { r.file_flags = HIO_FILE_PREFER_DONTCACHE | HIO_FILE_DONTCACHE_OK; r.length = 1 * M; },
     HIO_PATH_BUFFERED, HIO_RULE_SMALL},
    {"uncached preferred, under a page: as without",
     [](auto& c, auto& r) { c.write_threshold = 1 * K; r.length = 2 * K; r.file_flags = HIO_FILE_PREFER_DONTCACHE | HIO_FILE_DONTCACHE_OK; },
     HIO_PATH_BUFFERED, HIO_RULE_UNALIGNED},
    {"uncached preferred for a cached read: the cache",
     [](auto&, auto& r) {
       r.op = HIO_OP_READ; r.length = 16 * M; r.cached_pages = 4096;
       r.file_flags = HIO_FILE_PREFER_DONTCACHE | HIO_FILE_DONTCACHE_OK;
     },
     HIO_PATH_BUFFERED, HIO_RULE_READ_CACHED},
    {"a learned write threshold sent a write direct",
     [](auto& c, auto& r) { c.write_threshold = 1 * M; r.file_flags = HIO_FILE_LEARNED; r.length = 1 * M; },
     HIO_PATH_DIRECT, HIO_RULE_LEARNED},
    {"a learned read threshold kept a read buffered",
     [](auto& c, auto& r) { c.read_threshold = 32 * M; r.op = HIO_OP_READ; r.file_flags = HIO_FILE_LEARNED; r.length = 16 * M; },
     HIO_PATH_BUFFERED, HIO_RULE_LEARNED},
    {"learned, measured uncached",
     [](auto&, auto& r) { r.file_flags = HIO_FILE_LEARNED | HIO_FILE_PREFER_DONTCACHE | HIO_FILE_DONTCACHE_OK; },
     HIO_PATH_DONTCACHE, HIO_RULE_LEARNED},
    {"learned does not relabel a cache rule",
     [](auto&, auto& r) { r.file_flags = HIO_FILE_LEARNED; r.dirty_pages = 1024; },
     HIO_PATH_BUFFERED, HIO_RULE_WRITE_DIRTY},
    {"learned does not relabel a forced policy",
     [](auto& c, auto& r) { c.mode = HIO_MODE_DIRECT; r.file_flags = HIO_FILE_LEARNED; },
     HIO_PATH_DIRECT, HIO_RULE_FORCED_DIRECT},
    {"exploration sends a small write direct",
     [](auto& c, auto& r) { c.write_threshold = 64 * K; r.file_flags = HIO_FILE_EXPLORE | HIO_FILE_LEARNED; r.length = 256 * K; },
     HIO_PATH_DIRECT, HIO_RULE_EXPLORED},
    {"exploration sends a large read through the cache",
     [](auto& c, auto& r) { c.read_threshold = ~0ULL; r.op = HIO_OP_READ; r.file_flags = HIO_FILE_EXPLORE; r.length = 16 * M; },
     HIO_PATH_BUFFERED, HIO_RULE_EXPLORED},
    {"a large read of data read off the cache recently, admitted: the cache",
     [](auto&, auto& r) { r.op = HIO_OP_READ; r.length = 16 * M; r.file_flags = HIO_FILE_REUSE; },
     HIO_PATH_BUFFERED, HIO_RULE_REUSE},
    {"re-use admits a read that measurements send uncached",
     [](auto&, auto& r) {
       r.op = HIO_OP_READ; r.length = 16 * M;
       r.file_flags = HIO_FILE_REUSE | HIO_FILE_LEARNED | HIO_FILE_PREFER_DONTCACHE | HIO_FILE_DONTCACHE_OK;
     },
     HIO_PATH_BUFFERED, HIO_RULE_REUSE},
    {"re-use admits an undirectable read headed uncached",
     [](auto&, auto& r) { r.op = HIO_OP_READ; r.length = 16 * M; r.file_flags = HIO_FILE_REUSE | HIO_FILE_NO_DIRECT | HIO_FILE_DONTCACHE_OK; },
     HIO_PATH_BUFFERED, HIO_RULE_REUSE},
    {"re-use does not relabel a small read",
     [](auto&, auto& r) { r.op = HIO_OP_READ; r.length = 1 * M; r.file_flags = HIO_FILE_REUSE; },
     HIO_PATH_BUFFERED, HIO_RULE_SMALL},
    {"re-use is for reads: a large write still goes direct",
     [](auto&, auto& r) { r.file_flags = HIO_FILE_REUSE; },
     HIO_PATH_DIRECT, HIO_RULE_WRITE_SIZE},
    {"re-use does not override a forced policy",
     [](auto& c, auto& r) { c.mode = HIO_MODE_DIRECT; r.op = HIO_OP_READ; r.length = 16 * M; r.file_flags = HIO_FILE_REUSE; },
     HIO_PATH_DIRECT, HIO_RULE_FORCED_DIRECT},
};

INSTANTIATE_TEST_SUITE_P(Table, PolicyRules, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           std::string n;
                           for (char ch : param_info.param.name) n += isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return n;
                         });

TEST(PolicyCoverage, EveryRuleHasARow) {
  bool seen[HIO_RULE_COUNT] = {};
  for (const Case& c : kCases) seen[c.rule] = true;
  for (int r = 0; r < HIO_RULE_COUNT; ++r)
    EXPECT_TRUE(seen[r]) << "no table row for rule " << to_string(static_cast<hio_rule>(r));
}

TEST(PolicyPlan, UnalignedWriteIsSplitAtPageBoundaries) {
  hio_policy_config cfg = default_policy();
  hio_request r = base_request(HIO_OP_WRITE, 100, 4 * M);
  r.buf_addr = kAlignedBuf + 100;  // congruent with the offset: no bounce needed
  hio_decision d = decide(cfg, r);
  ASSERT_EQ(d.path, HIO_PATH_DIRECT);
  EXPECT_TRUE(d.split);
  EXPECT_FALSE(d.bounce);
  EXPECT_EQ(d.head_len, 4096u - 100);
  EXPECT_EQ(d.body_len, 4 * M - 4096);
  EXPECT_EQ(d.tail_len, 100u);
  EXPECT_EQ((r.offset + d.head_len) % 4096, 0u);
}

TEST(PolicyPlan, MisalignedBufferNeedsBounce) {
  hio_policy_config cfg = default_policy();
  hio_request r = base_request(HIO_OP_WRITE, 0, 4 * M);
  r.buf_addr = kAlignedBuf + 8;
  hio_decision d = decide(cfg, r);
  ASSERT_EQ(d.path, HIO_PATH_DIRECT);
  EXPECT_FALSE(d.split);
  EXPECT_TRUE(d.bounce);
  r.buf_addr = kAlignedBuf + 512;  // aligned for the device's 512-byte memory alignment
  EXPECT_FALSE(decide(cfg, r).bounce);
  r.mem_align = 4096;
  EXPECT_TRUE(decide(cfg, r).bounce);
}

TEST(PolicyPlan, ReadsAreClampedAtEndOfFile) {
  hio_policy_config cfg = default_policy();
  hio_request r = base_request(HIO_OP_READ, 0, 16 * M);
  r.file_size = 10 * M + 100;
  hio_decision d = decide(cfg, r);
  ASSERT_EQ(d.path, HIO_PATH_DIRECT);
  EXPECT_EQ(d.head_len, 0u);
  EXPECT_EQ(d.body_len, 10 * M);
  EXPECT_EQ(d.tail_len, 100u);
  r.file_size = 4 * M;  // what is left is below the read threshold
  EXPECT_EQ(decide(cfg, r).rule, HIO_RULE_SMALL);
}

TEST(PolicyPlan, CutsFollowALargerDeviceAlignment) {
  hio_policy_config cfg = default_policy();
  hio_request r = base_request(HIO_OP_WRITE, 4096, 4 * M);
  r.offset_align = 16384;
  hio_decision d = decide(cfg, r);
  ASSERT_EQ(d.path, HIO_PATH_DIRECT);
  EXPECT_EQ(d.head_len, 16384u - 4096);
  EXPECT_EQ((r.offset + d.head_len) % 16384, 0u);
  EXPECT_EQ(d.body_len % 16384, 0u);
}

TEST(PolicyPlan, WritesAreNeverPaddedPastTheirEnd) {
  hio_policy_config cfg = default_policy();
  hio_request r = base_request(HIO_OP_WRITE, 0, 4 * M + 1);
  r.file_size = 0;
  hio_decision d = decide(cfg, r);
  ASSERT_EQ(d.path, HIO_PATH_DIRECT);
  EXPECT_EQ(d.head_len + d.body_len + d.tail_len, r.length);
  EXPECT_EQ(d.tail_len, 1u);
}

TEST(PolicyNames, EveryEnumHasAName) {
  for (int r = 0; r < HIO_RULE_COUNT; ++r) EXPECT_STRNE(to_string(static_cast<hio_rule>(r)), "?");
  for (int p = 0; p < HIO_PATH_COUNT; ++p) EXPECT_STRNE(to_string(static_cast<hio_path>(p)), "?");
}

}  // namespace
}  // namespace hybridio

// hio_policy_smallest_offcache() against the core itself: under every
// configuration and every combination of request facts, nothing shorter
// than its answer leaves the page cache, and (hybrid) a request of exactly
// that size does for some facts.
TEST(PolicySmallestOffcache, NothingSmallerLeavesThePageCache) {
  const uint64_t sizes[] = {4096, 16384, 65536, 262144, 1 << 20, 2 << 20, 8 << 20};
  for (hio_mode mode : {HIO_MODE_HYBRID, HIO_MODE_DIRECT, HIO_MODE_DONTCACHE, HIO_MODE_BUFFERED}) {
    for (uint64_t wt : sizes) {
      for (uint64_t st : sizes) {
        hio_policy_config c;
        hio_policy_config_defaults(&c);
        c.mode = mode;
        c.write_threshold = wt;
        c.read_threshold = wt * 4;
        c.sync_write_threshold = st;
        c.stream_threshold = st * 2;
        c.dontcache_threshold = wt * 2;
        for (hio_op op : {HIO_OP_READ, HIO_OP_WRITE}) {
          const uint64_t smallest = hio_policy_smallest_offcache(&c, op);
          bool reached = false;
          for (uint32_t flags : {0u, HIO_FILE_SYNC, HIO_FILE_NO_DIRECT | HIO_FILE_DONTCACHE_OK, HIO_FILE_DONTCACHE_OK,
                                 HIO_FILE_SYNC | HIO_FILE_DONTCACHE_OK,
                                 HIO_FILE_PREFER_DONTCACHE | HIO_FILE_DONTCACHE_OK}) {
            for (uint32_t pressure : {0u, 100u}) {
              for (uint32_t writers : {1u, 4u}) {
                for (uint32_t run : {0u, 10u}) {
                  for (uint64_t len : {smallest > 1 ? smallest - 1 : 1, smallest}) {
                    if (smallest == ~0ULL) len = 64ULL << 20;
                    hio_request r{};
                    r.op = op;
                    r.offset = 0;
                    r.length = len;
                    r.buf_addr = 1 << 21;
                    r.mem_align = 4096;
                    r.offset_align = 512;
                    r.file_size = 1ULL << 40;
                    r.cached_pages = r.dirty_pages = 0;
                    r.pressure = pressure;
                    r.writers = writers;
                    r.seq_run = run;
                    r.file_flags = flags;
                    hio_decision d;
                    hio_policy_decide(&c, &r, &d);
                    if (len < smallest || smallest == ~0ULL) {
                      EXPECT_EQ(d.path, HIO_PATH_BUFFERED)
                          << "mode " << mode << " op " << op << " len " << len << " smallest " << smallest;
                    } else if (d.path != HIO_PATH_BUFFERED) {
                      reached = true;
                    }
                  }
                }
              }
            }
          }
          if (mode != HIO_MODE_BUFFERED) {
            EXPECT_TRUE(reached) << "mode " << mode << " op " << op << ": the bound is not tight (" << smallest << ")";
          }
        }
      }
    }
  }
}

// hio_policy_pressure(), row by row: each share alone, the larger wins, a
// stall raises it, 100 caps it.
TEST(PolicyPressure, TheLargerShareOrTheStall) {
  struct Row {
    const char* what;
    hio_u64 total, available, in_flight, dirty_limit;
    unsigned stall, expected;
  };
  const Row rows[] = {
      {"idle machine", 1000, 1000, 0, 200, 0, 0},
      {"half the dirty limit in flight", 1000, 1000, 100, 200, 0, 50},
      {"a quarter of memory not available", 1000, 750, 0, 200, 0, 25},
      {"the larger share wins", 1000, 750, 100, 200, 0, 50},
      {"a stall raises it", 1000, 1000, 0, 200, 60, 60},
      {"a smaller stall does not lower it", 1000, 1000, 100, 200, 10, 50},
      {"no dirty limit: full", 1000, 1000, 0, 0, 0, 100},
      {"over the dirty limit: capped", 1000, 1000, 500, 200, 0, 100},
      {"no memory figure: only the stall", 0, 0, 100, 200, 7, 7},
      {"more available than total", 1000, 2000, 0, 200, 0, 0},
  };
  for (const Row& r : rows)
    EXPECT_EQ(hio_policy_pressure(r.total, r.available, r.in_flight, r.dirty_limit, r.stall), r.expected) << r.what;
}
