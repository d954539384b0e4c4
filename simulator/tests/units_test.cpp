/* units_test: parsing of sizes, bandwidths and durations. */
#include "units.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

using namespace hiosim;

TEST(Units, Bytes)
{
  EXPECT_EQ(parse_bytes("4096"), 4096);
  EXPECT_EQ(parse_bytes("4k"), 4096);
  EXPECT_EQ(parse_bytes("2MiB"), 2097152);
  // Sizes are binary, as in libhybridio and the kernel module: "2GB" is 2 GiB, not 2e9, and a
  // fraction ("1.5GB", once 1.5e9) is refused as the library refuses it.
  EXPECT_EQ(parse_bytes("2GB"), 2 * 1073741824.0);
  EXPECT_THROW(parse_bytes("1.5GB"), std::invalid_argument);
  EXPECT_EQ(parse_bytes("18TiB"), 18 * 1099511627776.0);
  EXPECT_THROW(parse_bytes("12parsecs"), std::invalid_argument);
  EXPECT_THROW(parse_bytes("abc"), std::invalid_argument);
  EXPECT_THROW(parse_bytes("-1"), std::invalid_argument);
}

// The table of libhybridio's own parse_size test (libhybridio/src/runtime/config_test.cc), spelling for
// spelling: the simulator reads every size exactly as the library does.
TEST(Units, SizesParseAsTheLibraryParsesThem)
{
  const struct {
    const char* text;
    uint64_t bytes;
  } accepted[] = {{"123", 123},           {"4k", 4096},          {"8M", 8u << 20},     {"2MiB", 2u << 20},
                  {"1G", 1u << 30},       {"512KB", 512u << 10}, {"4K", 4096},         {"4KB", 4096},
                  {"4KiB", 4096},         {"4kib", 4096},        {"4kb", 4096},        {"4Mb", 4u << 20},
                  {"2T", 2ull << 40},     {"7B", 7},             {"7b", 7},            {"0", 0},
                  {"17179869183G", 17179869183ull << 30}};
  for (const auto& a : accepted)
    EXPECT_EQ(parse_size(a.text), a.bytes) << a.text;
  for (const char* bad : {"", "M", "-1", "4X", "4MM", "1.5M", " 4M", "99999999999999999999", "17179869184G",
                          "4 M", "4M ", "1e6", "+4", "4P", "4PiB", "4iB", "4MiBs"})
    EXPECT_THROW(parse_size(bad), std::invalid_argument) << bad;
}

TEST(Units, SizesPrintAsTheLibraryPrintsThem)
{
  for (uint64_t v : {0ULL, 100ULL, 4096ULL, 1536ULL << 10, 8ULL << 20, 3ULL << 30, 5ULL << 40})
    EXPECT_EQ(parse_size(format_size(v)), v) << format_size(v);
  EXPECT_EQ(format_size(8 << 20), "8M");
  EXPECT_EQ(format_size(1536 << 10), "1536K");
  EXPECT_EQ(format_size(100), "100");
}

TEST(Units, Bandwidth)
{
  EXPECT_EQ(parse_bandwidth("25GBps"), 25e9);
  EXPECT_EQ(parse_bandwidth("25GB/s"), 25e9);
  EXPECT_EQ(parse_bandwidth("400Gbps"), 50e9);
  EXPECT_EQ(parse_bandwidth("1.7e9"), 1.7e9);
  // Bandwidths stay decimal, as fio and vendors print them; binary only when spelled so.
  EXPECT_EQ(parse_bandwidth("2GiBps"), 2 * 1073741824.0);
  EXPECT_EQ(parse_bandwidth("500MBps"), 500e6);
  EXPECT_THROW(parse_bandwidth("3 furlongs"), std::invalid_argument);
}

TEST(Units, Durations)
{
  EXPECT_EQ(parse_duration("30"), 30);
  EXPECT_EQ(parse_duration("5min"), 300);
  EXPECT_EQ(parse_duration("2h"), 7200);
  EXPECT_EQ(parse_duration("7d"), 7 * 86400);
  EXPECT_DOUBLE_EQ(parse_duration("0.92ms"), 0.92e-3);
  EXPECT_THROW(parse_duration("soon"), std::invalid_argument);
}

TEST(Units, Lists)
{
  auto v = parse_bytes_list("4KiB, 1MiB,16MiB");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[2], 16777216);
  EXPECT_THROW(parse_bytes_list(""), std::invalid_argument);
}
