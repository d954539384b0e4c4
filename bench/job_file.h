// job_file.h - the `hybridio bench` job file: an ini-like text with a
// [global] section and one section per job, each line "option = value"
// (or a bare flag), with the same option names as the command line.
// '#' and ';' start comments.
//
//   [global]
//   directory = /mnt/nvme
//   size = 4G
//   [seq-write]
//   rw = write
//   bs = 4M
//
// A job's settings: defaults, then [global], then its own section, then
// the command-line options (which override the file, so that a job file
// can be shrunk for a quick try).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace hybridio::bench {

struct JobFileSection {
  std::string name;
  struct Entry {
    std::string key, value;
    bool has_value;
    int line;
  };
  std::vector<Entry> entries;
};

// Parses the file at `path`; false with "FILE:LINE: what" in *error.
bool read_job_file(const std::string& path, std::vector<JobFileSection>* sections, std::string* error);

// Parses job file text (`origin` names it in errors).
bool parse_job_text(const std::string& text, const std::string& origin, std::vector<JobFileSection>* sections,
                    std::string* error);

}  // namespace hybridio::bench
