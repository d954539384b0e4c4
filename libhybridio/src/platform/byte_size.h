// byte_size.h - byte counts as settings, files and reports spell them.
// Pure functions of their arguments; safe from any thread; may allocate.
#pragma once

#include <cstdint>
#include <string>

namespace hybridio {

// Parses "123", "4k", "8M", "1G", "2MiB", "512KB" (binary units); false on
// overflow, garbage or an empty string.
bool parse_size(const std::string& text, uint64_t* out);

// Formats a byte count the way parse_size accepts it ("8M", "1536K", "100").
std::string format_size(uint64_t bytes);

}  // namespace hybridio
