// engine_fixture.h - a test fixture for the direct engine's tests: every
// aligned body goes direct, the engine runs with small chunks so that a few
// hundred KiB already exercise chunking, and the process-wide settings, the
// completion hook and the counters are restored or reset around each test.
#pragma once

#include <gtest/gtest.h>

#include "hybridio/hybridio.h"
#include "io/uring_engine.h"
#include "temp_dir.h"

namespace hybridio::testing {

class DirectEngineTest : public ::testing::Test {
 protected:
  // The engine settings a test starts with, from the saved ones.
  virtual void configure(hio_engine_config& e) {
    e.queue_depth = 4;
    e.chunk_size = 64 << 10;
  }

  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    hio_engine_get(&saved_);
    hio_policy_get(&saved_policy_);
    hio_policy_config c = saved_policy_;
    hio_policy_config_defaults(&c);
    c.mode = HIO_MODE_DIRECT;
    hio_policy_set(&c);
    hio_engine_config e = saved_;
    configure(e);
    hio_engine_set(&e);
    hio_stats_reset();
  }

  void TearDown() override {
    set_completion_hook(nullptr);
    hio_engine_set(&saved_);
    hio_policy_set(&saved_policy_);
  }

  // Changes the engine settings for the rest of the test (TearDown restores
  // them): `change` gets the current ones.
  template <typename Change>
  static void change_engine(Change change) {
    hio_engine_config e;
    hio_engine_get(&e);
    change(e);
    hio_engine_set(&e);
  }

  static hio_stats stats() {
    hio_stats s;
    hio_stats_get(&s);
    return s;
  }

  TempDir dir_;
  hio_engine_config saved_{};
  hio_policy_config saved_policy_{};
};

}  // namespace hybridio::testing
