/* units: parsing and printing of byte sizes, bandwidths and durations ("2MiB", "25GBps", "30s").
 * Pure functions; they throw std::invalid_argument with a message naming what was expected.
 * Sizes mean what they mean to libhybridio and the kernel module: they are parsed and printed by
 * the library's own code (hybridio_internal/settings_text.h), binary units. Bandwidths are decimal, as fio and network and
 * storage vendors print them (25GBps = 25e9 bytes/s), binary only when spelled with "i". */
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace hiosim {

/* A byte count as libhybridio spells it: digits, then nothing, B or b, or one of K M G T (either
 * case) alone or followed by B, b, iB or ib; always binary (4K = 4KB = 4KiB = 4096). No fraction,
 * exponent, sign or blank; overflow of 64 bits is an error. */
uint64_t parse_size(const std::string& text);
/* parse_size() as a double (the model computes in doubles). */
double parse_bytes(const std::string& text);
/* A byte count the way the library prints it and parse_size() reads it: "8M", "1536K", "100". */
std::string format_size(uint64_t bytes);
/* "25GBps", "25GB/s", "200Gbps" (bits), "2GiBps" (binary), "1.7e9" (bytes per second). */
double parse_bandwidth(const std::string& text);
/* "30", "30s", "5ms", "2min", "3h", "7d". */
double parse_duration(const std::string& text);
/* Comma-separated list of byte sizes (blanks around the commas are allowed). */
std::vector<double> parse_bytes_list(const std::string& text);
std::vector<std::string> split(const std::string& text, char sep);
std::string trim(const std::string& text);

/* printf into a std::string. */
std::string strf(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string format_bytes(double bytes);     // "1.50 GiB"
std::string format_duration(double secs);   // "1h 02m", "12.3 s", "850 ms"

} // namespace hiosim
