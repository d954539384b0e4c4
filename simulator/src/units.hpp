/* units: parsing and printing of byte sizes, bandwidths and durations ("2MiB", "25GBps", "30s").
 * Pure functions; they throw std::invalid_argument with a message naming what was expected. */
#pragma once
#include <string>
#include <vector>

namespace hiosim {

/* "4096", "4k", "4KiB", "2M", "1.5GB" (decimal), "1TiB". k/M/G/T alone mean binary units. */
double parse_bytes(const std::string& text);
/* "25GBps", "25GB/s", "200Gbps" (bits), "1.7e9" (bytes per second). */
double parse_bandwidth(const std::string& text);
/* "30", "30s", "5ms", "2min", "3h", "7d". */
double parse_duration(const std::string& text);
/* Comma-separated list of byte sizes. */
std::vector<double> parse_bytes_list(const std::string& text);
std::vector<std::string> split(const std::string& text, char sep);
std::string trim(const std::string& text);

/* printf into a std::string. */
std::string strf(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string format_bytes(double bytes);     // "1.50 GiB"
std::string format_duration(double secs);   // "1h 02m", "12.3 s", "850 ms"

} // namespace hiosim
