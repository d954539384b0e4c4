// stream_test.cc - the sequential stream (stream.h).
#include "file/stream.h"

#include <gtest/gtest.h>

namespace hybridio {
namespace {

TEST(SequentialStream, TheFirstRequestStartsAStream) {
  SequentialStream s;
  EXPECT_EQ(s.peek(0), 0u);
  EXPECT_EQ(s.extend(0, 4096), 0u);
}

TEST(SequentialStream, EachContiguousRequestContinuesIt) {
  SequentialStream s;
  s.extend(0, 4096);
  EXPECT_EQ(s.extend(4096, 4096), 1u);
  EXPECT_EQ(s.extend(8192, 100), 2u);
  EXPECT_EQ(s.extend(8292, 1), 3u);
}

TEST(SequentialStream, AGapOrARepeatStartsAgain) {
  SequentialStream s;
  s.extend(0, 4096);
  s.extend(4096, 4096);
  EXPECT_EQ(s.extend(1 << 20, 4096), 0u);      // a gap
  EXPECT_EQ(s.extend((1 << 20) + 4096, 4096), 1u);
  EXPECT_EQ(s.extend(1 << 20, 4096), 0u);      // a read again
}

TEST(SequentialStream, PeekLooksWithoutMovingTheStreamOn) {
  SequentialStream s;
  s.extend(0, 4096);
  s.extend(4096, 4096);
  EXPECT_EQ(s.peek(8192), 2u);
  EXPECT_EQ(s.peek(8192), 2u);
  EXPECT_EQ(s.peek(8193), 0u);
  EXPECT_EQ(s.extend(8192, 4096), 2u);
}

}  // namespace
}  // namespace hybridio
