// engine_settings.h - the parallel direct engine's settings (uring_engine.h),
// with their defaults.  A plain value; the limits of each setting are rows
// of the settings table (runtime/config.h, clamp_engine_settings()).
#pragma once

#include "hybridio/hybridio.h"

namespace hybridio {

// The parallel direct engine's settings (uring_engine.h): the C API's own
// struct, so that hio_engine_get()/hio_engine_set() copy it whole, with the
// defaults.  At run time the engine publishes it as one snapshot
// (engine_settings()).
struct EngineSettings : hio_engine_config {
  EngineSettings() : hio_engine_config{} {
    queue_depth = 8;
    chunk_size = 1 << 20;
    uring = 1;
    write_behind = 0;
    write_behind_limit = 64 << 20;
    read_ahead = 0;  // ignored
  }
};

}  // namespace hybridio
