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
  EXPECT_EQ(parse_bytes("1.5GB"), 1.5e9);
  EXPECT_EQ(parse_bytes("18TiB"), 18 * 1099511627776.0);
  EXPECT_THROW(parse_bytes("12parsecs"), std::invalid_argument);
  EXPECT_THROW(parse_bytes("abc"), std::invalid_argument);
  EXPECT_THROW(parse_bytes("-1"), std::invalid_argument);
}

TEST(Units, Bandwidth)
{
  EXPECT_EQ(parse_bandwidth("25GBps"), 25e9);
  EXPECT_EQ(parse_bandwidth("25GB/s"), 25e9);
  EXPECT_EQ(parse_bandwidth("400Gbps"), 50e9);
  EXPECT_EQ(parse_bandwidth("1.7e9"), 1.7e9);
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
