// proc_files.h - reading the small text files of procfs, sysfs and cgroupfs
// (/proc/meminfo, memory.stat, ...) without allocating: what the memory
// pressure and memory headroom samplers read.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hybridio {

// Reads up to size - 1 bytes of `path` into buf, NUL-terminated; false if
// it cannot be read or is empty.
bool read_small_file(const char* path, char* buf, size_t size);

// The number after `key` on the line of `text` that starts with it
// ("MemAvailable:", "inactive_file "); false when no line does.
bool line_number(const char* text, const char* key, uint64_t* out);

}  // namespace hybridio
