// expect_bytes.h - read-back-and-compare for the engine's tests: whether
// memory or a file holds the expected bytes, and where they first differ
// when not (a bare memcmp only says "not equal").
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "file_bytes.h"

namespace hybridio::testing {

// `len` bytes at `got` are those at `want`.
inline ::testing::AssertionResult same_bytes(const char* got, const char* want, size_t len) {
  for (size_t i = 0; i < len; ++i)
    if (got[i] != want[i])
      return ::testing::AssertionFailure() << "first difference at byte " << i << " of " << len;
  return ::testing::AssertionSuccess();
}

// The file at `path`, read as a plain program reads it, is `size` bytes
// long and holds want[0, len) at offset `at`.
inline ::testing::AssertionResult file_holds(const std::string& path, uint64_t size, uint64_t at, const char* want,
                                             size_t len) {
  const std::vector<char> disk = file_bytes(path);
  if (disk.size() != size)
    return ::testing::AssertionFailure() << path << " is " << disk.size() << " bytes, expected " << size;
  if (at + len > disk.size())
    return ::testing::AssertionFailure() << "[" << at << ", " << at + len << ") is past the end of " << path;
  ::testing::AssertionResult r = same_bytes(disk.data() + at, want, len);
  if (!r) r << " at offset " << at << " of " << path;
  return r;
}

// The file at `path` is exactly `want`.
inline ::testing::AssertionResult file_holds(const std::string& path, const std::vector<char>& want) {
  return file_holds(path, want.size(), 0, want.data(), want.size());
}

}  // namespace hybridio::testing
