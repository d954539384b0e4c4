// policy_cases_test.cc - the rows of policy_cases.h, the table that the
// kernel module's VM test (kmod/tests/hfs_policy_test.c) runs as well.
#include "policy_cases.h"

#include <gtest/gtest.h>

#include "hybridio/policy.hpp"

namespace hybridio {
namespace {

TEST(PolicyCases, EveryDecisionRowHolds) {
  for (const hio_policy_case& c : hio_policy_cases) {
    hio_decision d{};
    EXPECT_TRUE(hio_policy_case_holds(&c, &d))
        << c.name << ": got " << to_string(d.path) << "/" << to_string(d.rule) << ", want "
        << to_string(c.path) << "/" << to_string(c.rule);
  }
}

TEST(PolicyCases, EveryExtentRowHolds) {
  for (const hio_reuse_extent_case& c : hio_reuse_extent_cases)
  {
    EXPECT_EQ(hio_reuse_extent_mask(c.size, c.offset, c.length), c.mask)
        << "size " << c.size << " offset " << c.offset << " length " << c.length;
    EXPECT_EQ(hio_reuse_finished_mask(c.size, c.offset, c.length), c.finished)
        << "finished: size " << c.size << " offset " << c.offset << " length " << c.length;
    EXPECT_EQ(hio_reuse_reread_mask(c.size, c.offset, c.length), c.reread)
        << "re-read: size " << c.size << " offset " << c.offset << " length " << c.length;
  }
}

TEST(PolicyCases, AdmissionContractHolds) {
  for (hio_u64 key : {1ULL, 0x5eedULL, 0x9e3779b97f4a7c15ULL})
    EXPECT_EQ(hio_reuse_admission_holds(key), 0) << "key " << key;
}

}  // namespace
}  // namespace hybridio
