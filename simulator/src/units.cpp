/* units: parsing and printing of byte sizes, bandwidths and durations. */
#include "units.hpp"
#include "hybridio_internal/settings_text.h"

#include <cctype>
#include <cstdarg>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace hiosim {

std::string trim(const std::string& text)
{
  size_t b = 0;
  size_t e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b])))
    b++;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1])))
    e--;
  return text.substr(b, e - b);
}

std::vector<std::string> split(const std::string& text, char sep)
{
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = text.find(sep, start);
    std::string item = trim(text.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
    if (not item.empty())
      out.push_back(item);
    if (pos == std::string::npos)
      break;
    start = pos + 1;
  }
  return out;
}

// Splits "12.5GiB" into 12.5 and "GiB"; throws when there is no leading number.
static double split_number(const std::string& text, std::string& unit, const char* what)
{
  std::string t = trim(text);
  size_t used = 0;
  double v;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument("expected " + std::string(what) + ", got '" + text + "'");
  }
  if (not std::isfinite(v) || v < 0)
    throw std::invalid_argument("expected a non-negative " + std::string(what) + ", got '" + text + "'");
  unit = trim(t.substr(used));
  return v;
}

uint64_t parse_size(const std::string& text)
{
  uint64_t v;
  if (not hybridio::internal::parse_size(text, &v))
    throw std::invalid_argument("expected a byte size such as 4096, 64K or 2MiB (binary units: K, M, G or T, "
                                "optionally followed by B or iB), got '" + text + "'");
  return v;
}

double parse_bytes(const std::string& text)
{
  return static_cast<double>(parse_size(text));
}

std::string format_size(uint64_t bytes)
{
  return hybridio::internal::format_size(bytes);
}

// Bandwidth prefixes: decimal (k, K, M, G, T, P) unless spelled binary (Ki, Mi, Gi, Ti, Pi).
static double rate_multiplier(const std::string& prefix, bool& known)
{
  known = true;
  static const struct {
    const char* name;
    double mult;
  } table[] = {{"", 1},       {"k", 1e3},         {"K", 1e3},          {"M", 1e6},
               {"G", 1e9},    {"T", 1e12},        {"P", 1e15},         {"Ki", 1024.0},
               {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0}, {"Pi", 1125899906842624.0}};
  for (const auto& row : table)
    if (prefix == row.name)
      return row.mult;
  known = false;
  return 0;
}

double parse_bandwidth(const std::string& text)
{
  std::string unit;
  double v = split_number(text, unit, "a bandwidth such as 25GBps or 200Gbps");
  if (unit.empty())
    return v;
  bool bits = false;
  std::string prefix;
  bool matched = false;
  for (const char* suffix : {"Bps", "B/s", "bps", "b/s"}) {
    std::string s(suffix);
    if (unit.size() >= s.size() && unit.compare(unit.size() - s.size(), s.size(), s) == 0) {
      prefix  = unit.substr(0, unit.size() - s.size());
      bits    = s[0] == 'b';
      matched = true;
      break;
    }
  }
  bool known = false;
  double m = matched ? rate_multiplier(prefix, known) : 0;
  if (not known)
    throw std::invalid_argument("unknown bandwidth unit '" + unit + "' in '" + text + "' (use MBps, GBps, GiBps, Gbps)");
  return v * m / (bits ? 8.0 : 1.0);
}

double parse_duration(const std::string& text)
{
  std::string unit;
  double v = split_number(text, unit, "a duration such as 30s, 5min or 2h");
  static const struct {
    const char* name;
    double mult;
  } table[] = {{"", 1}, {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"min", 60}, {"m", 60}, {"h", 3600}, {"d", 86400}};
  for (const auto& row : table)
    if (unit == row.name)
      return v * row.mult;
  throw std::invalid_argument("unknown duration unit '" + unit + "' in '" + text + "' (use us, ms, s, min, h, d)");
}

std::vector<double> parse_bytes_list(const std::string& text)
{
  std::vector<double> out;
  for (const auto& item : split(text, ','))
    out.push_back(parse_bytes(item)); // split() trims the blanks around each item
  if (out.empty())
    throw std::invalid_argument("expected a comma-separated list of sizes, got '" + text + "'");
  return out;
}

std::string strf(const char* format, ...)
{
  char buf[256];
  va_list ap;
  va_start(ap, format);
  std::vsnprintf(buf, sizeof buf, format, ap);
  va_end(ap);
  return buf;
}

std::string format_bytes(double bytes)
{
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 5) {
    bytes /= 1024.0;
    u++;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", bytes, units[u]);
  return buf;
}

std::string format_duration(double secs)
{
  char buf[64];
  if (secs < 1.0)
    std::snprintf(buf, sizeof buf, "%.1f ms", secs * 1e3);
  else if (secs < 120.0)
    std::snprintf(buf, sizeof buf, "%.2f s", secs);
  else if (secs < 7200.0)
    std::snprintf(buf, sizeof buf, "%.1f min", secs / 60.0);
  else if (secs < 3 * 86400.0)
    std::snprintf(buf, sizeof buf, "%.2f h", secs / 3600.0);
  else
    std::snprintf(buf, sizeof buf, "%.2f d", secs / 86400.0);
  return buf;
}

} // namespace hiosim
