// settings_text.cc - see hybridio_internal/settings_text.h.
#include "hybridio_internal/settings_text.h"

#include "runtime/config.h"

namespace hybridio::internal {

bool parse_size(const std::string& text, uint64_t* out) { return hybridio::parse_size(text, out); }

std::string format_size(uint64_t bytes) { return hybridio::format_size(bytes); }

bool parse_mode(const std::string& text, hio_mode* out) { return hybridio::parse_mode(text, out); }

std::string describe_settings() { return hybridio::describe_settings(); }

std::vector<SettingDoc> setting_docs() {
  std::vector<SettingDoc> docs;
  for (const SettingInfo& s : list_settings()) docs.push_back({s.key, s.variable, s.accepted, s.default_value, s.help});
  return docs;
}

}  // namespace hybridio::internal
