// run_stats.cc - see run_stats.h.
#include "run_stats.h"

#include <dirent.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "hybridio_internal/stats_document.h"

namespace hybridio::cli {
namespace {

bool is_stats_file(const std::string& name) {
  return name.rfind("stats.", 0) == 0 && name.size() >= 5 && name.compare(name.size() - 5, 5, ".json") == 0;
}

// `v` to 6 significant digits, an integer when it has no fraction.
nlohmann::json six_digits(double v) {
  char text[32];
  snprintf(text, sizeof text, "%.6g", v);
  const double rounded = strtod(text, nullptr);
  if (rounded >= 0 && rounded < 9e15 && rounded == std::floor(rounded)) return static_cast<uint64_t>(rounded);
  return rounded;
}

}  // namespace

MergedStats merge_stats_dir(const std::string& dir) {
  MergedStats m;
  DIR* d = opendir(dir.c_str());
  if (!d) return m;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (!is_stats_file(name)) continue;
    const std::string path = dir + "/" + name;
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (!internal::add_stats_document(text.str(), &m.sum, &m.processes)) {
      fprintf(stderr, "hybridio run: ignoring %s: not a %s document\n", path.c_str(), HYBRIDIO_STATS_SCHEMA);
      continue;
    }
    ++m.documents;
    unlink(path.c_str());
  }
  closedir(d);
  return m;
}

std::string run_stats_json(const MergedStats& m, double seconds, const nlohmann::json& settings) {
  nlohmann::json doc = nlohmann::json::object();
  if (m.documents > 0) {
    doc = nlohmann::json::parse(internal::stats_document(m.sum, m.processes, hio_policy_config{}));
    doc.erase("policy");  // settings of one process, not counters
  }
  doc["schema"] = "hybridio-run/1";
  doc["processes"] = m.processes;
  doc["seconds"] = six_digits(seconds);
  doc["settings"] = settings;
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace hybridio::cli
