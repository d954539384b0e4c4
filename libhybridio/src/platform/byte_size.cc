// byte_size.cc - see byte_size.h.
#include "platform/byte_size.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace hybridio {

bool parse_size(const std::string& text, uint64_t* out) {
  const char* p = text.c_str();
  if (!isdigit(static_cast<unsigned char>(*p))) return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = strtoull(p, &end, 10);
  if (errno == ERANGE) return false;
  std::string suffix = end;
  unsigned shift = 0;
  if (suffix.empty() || suffix == "B" || suffix == "b") {
    shift = 0;
  } else {
    switch (toupper(static_cast<unsigned char>(suffix[0]))) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      default: return false;
    }
    std::string rest = suffix.substr(1);
    if (!(rest.empty() || rest == "B" || rest == "iB" || rest == "ib" || rest == "b")) return false;
  }
  if (shift && v > (~0ULL >> shift)) return false;
  *out = static_cast<uint64_t>(v) << shift;
  return true;
}

std::string format_size(uint64_t bytes) {
  static const char kUnits[] = {'T', 'G', 'M', 'K'};
  for (int i = 0; i < 4; ++i) {
    unsigned shift = 40 - 10 * i;
    if (bytes != 0 && bytes % (1ULL << shift) == 0) return std::to_string(bytes >> shift) + kUnits[i];
  }
  return std::to_string(bytes);
}

}  // namespace hybridio
