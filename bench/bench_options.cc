// bench_options.cc - see bench_options.h.
#include "bench_options.h"

#include <cstdlib>

#include "bench_engine.h"
#include "hybridio_internal/settings_text.h"

namespace hybridio::bench {
namespace {

bool size_in(const std::string& v, uint64_t lo, uint64_t hi, uint64_t* out) {
  uint64_t n;
  if (!internal::parse_size(v, &n) || n < lo || n > hi) return false;
  *out = n;
  return true;
}

std::vector<std::string> policy_names(const std::vector<hio_mode>& v) {
  std::vector<std::string> out;
  for (hio_mode m : v) out.push_back(hio_mode_name(m));
  return out;
}

}  // namespace

const char* rw_name(RwMode m) {
  switch (m) {
    case RwMode::kRead: return "read";
    case RwMode::kWrite: return "write";
    case RwMode::kRandRead: return "randread";
    case RwMode::kRandWrite: return "randwrite";
    case RwMode::kReadWrite: return "rw";
  }
  return "?";
}
bool rw_reads(RwMode m) { return m == RwMode::kRead || m == RwMode::kRandRead || m == RwMode::kReadWrite; }
bool rw_writes(RwMode m) { return m == RwMode::kWrite || m == RwMode::kRandWrite || m == RwMode::kReadWrite; }
bool rw_random(RwMode m) { return m == RwMode::kRandRead || m == RwMode::kRandWrite; }

const char* fsync_name(FsyncMode m) {
  switch (m) {
    case FsyncMode::kEnd: return "end";
    case FsyncMode::kEach: return "each";
    case FsyncMode::kNone: return "none";
  }
  return "?";
}

bool parse_policy_list(const std::string& text, std::vector<hio_mode>* out) {
  if (text == "all") {
    *out = {HIO_MODE_BUFFERED, HIO_MODE_DIRECT, HIO_MODE_DONTCACHE, HIO_MODE_HYBRID};
    return true;
  }
  std::vector<hio_mode> v;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    hio_mode m;
    if (!internal::parse_mode(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start), &m))
      return false;
    for (hio_mode seen : v)
      if (seen == m) return false;
    v.push_back(m);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  *out = v;
  return !v.empty();
}

std::string dir_of(const BenchJob& j) {
  if (j.filename.empty()) return j.directory;
  size_t slash = j.filename.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : j.filename.substr(0, slash);
}

const std::vector<OptionSpec<BenchJob>>& bench_option_table() {
  using J = BenchJob;
  static const std::vector<OptionSpec<J>> table = {
      {"name", "NAME", "job name (a job file's section name sets it)",
       [](J& j, const std::string& v) { j.name = v; return !v.empty() && v.find('/') == std::string::npos; },
       [](const J& j) { return OptValue::str(j.name); }},
      {"rw", "MODE", "read|write|randread|randwrite|rw (rw: mixed, see --rwmixread)",
       [](J& j, const std::string& v) {
         for (RwMode m : {RwMode::kRead, RwMode::kWrite, RwMode::kRandRead, RwMode::kRandWrite, RwMode::kReadWrite})
           if (v == rw_name(m)) {
             j.rw = m;
             return true;
           }
         return false;
       },
       [](const J& j) { return OptValue::str(rw_name(j.rw)); }},
      {"bs", "SIZE", "bytes per read/write call, a multiple of 64, 512 to 1G",
       [](J& j, const std::string& v) { return size_in(v, 512, 1ULL << 30, &j.bs) && j.bs % 64 == 0; },
       [](const J& j) { return OptValue::size(static_cast<double>(j.bs)); }},
      {"size", "SIZE", "bytes per thread: its own file, or its region of --filename",
       [](J& j, const std::string& v) { return size_in(v, 512, 1ULL << 50, &j.size) && j.size % 64 == 0; },
       [](const J& j) { return OptValue::size(static_cast<double>(j.size)); }},
      {"numjobs", "N", "threads, each with its own file (or region), 1-256",
       [](J& j, const std::string& v) { return parse_count(v, 1, 256, &j.numjobs); },
       [](const J& j) { return OptValue::num(j.numjobs); }},
      {"iodepth", "N",
       "the library's queue depth (HYBRIDIO_QUEUE_DEPTH): chunks of one large direct request in flight "
       "together, 1-256; 0 keeps the library's setting. Each thread issues one call at a time",
       [](J& j, const std::string& v) { return parse_count(v, 0, 256, &j.iodepth); },
       [](const J& j) { return OptValue::num(j.iodepth); }},
      {"fsync", "WHEN", "end (one fsync per file, timed), each (after every write) or none",
       [](J& j, const std::string& v) {
         for (FsyncMode m : {FsyncMode::kEnd, FsyncMode::kEach, FsyncMode::kNone})
           if (v == fsync_name(m)) {
             j.fsync = m;
             return true;
           }
         return false;
       },
       [](const J& j) { return OptValue::str(fsync_name(j.fsync)); }},
      {"directory", "DIR", "where the per-thread files are made",
       [](J& j, const std::string& v) { j.directory = v; return !v.empty(); },
       [](const J& j) { return OptValue::str(j.directory); }},
      {"filename", "FILE", "one file shared by all threads, each in its own region (instead of --directory)",
       [](J& j, const std::string& v) { j.filename = v; return !v.empty(); },
       [](const J& j) { return OptValue::str(j.filename); }},
      {"runtime", "SECONDS", "stop each run after this long (0: when --size is done)",
       [](J& j, const std::string& v) {
         char* end;
         j.runtime = strtod(v.c_str(), &end);
         return *end == '\0' && !v.empty() && j.runtime >= 0 && j.runtime <= 86400;
       },
       [](const J& j) { return OptValue::num(j.runtime); }},
      {"verify", nullptr, "check every byte read (reads) or read back after the run (writes)",
       [](J& j, const std::string& v) { return parse_flag(v, &j.verify); },
       [](const J& j) { return OptValue::yes(j.verify); }},
      {"drop-caches", "0|1", "drop the page cache before every run (whole cache when root, else the files)",
       [](J& j, const std::string& v) { return parse_flag(v, &j.drop_caches); },
       [](const J& j) { return OptValue::yes(j.drop_caches); }},
      {"warm-up", "0|1",
       "before every run, untimed, read and drop a sparse file as large as the job's files, so every policy starts "
       "from the same page-cache memory state (see docs/bench.md)",
       [](J& j, const std::string& v) { return parse_flag(v, &j.warm_up); },
       [](const J& j) { return OptValue::yes(j.warm_up); }},
      {"repeat", "N", "runs per policy, interleaved and rotated; min/median/max reported (1-1000)",
       [](J& j, const std::string& v) { return parse_count(v, 1, 1000, &j.repeat); },
       [](const J& j) { return OptValue::num(j.repeat); }},
      {"policy", "LIST", "buffered|direct|dontcache|hybrid, comma-separated, or all",
       [](J& j, const std::string& v) { return parse_policy_list(v, &j.policies); },
       [](const J& j) { return OptValue::strings(policy_names(j.policies)); }},
      {"ioengine", "NAME", "hybridio (the library, routed by --policy) or psync (plain calls, no library)",
       [](J& j, const std::string& v) { j.ioengine = v; return find_engine(v) != nullptr; },
       [](const J& j) { return OptValue::str(j.ioengine); }},
      {"rwmixread", "PERCENT", "--rw=rw: percent of calls that are reads (0-100)",
       [](J& j, const std::string& v) { return parse_count(v, 0, 100, &j.rwmixread); },
       [](const J& j) { return OptValue::num(j.rwmixread); }},
      {"buffer-offset", "BYTES", "misalign the caller's buffer by this many bytes (0-4095)",
       [](J& j, const std::string& v) { return size_in(v, 0, 4095, &j.buffer_offset); },
       [](const J& j) { return OptValue::size(static_cast<double>(j.buffer_offset)); }},
      {"keep-files", nullptr, "leave the files behind when done",
       [](J& j, const std::string& v) { return parse_flag(v, &j.keep_files); },
       [](const J& j) { return OptValue::yes(j.keep_files); }},
      {"json", "FILE", "write the report as JSON (schema hybridio-bench/1) to FILE, '-' for stdout",
       [](J& j, const std::string& v) { j.json_path = v; return !v.empty(); },
       [](const J& j) { return OptValue::str(j.json_path); }, false},
      {"inject-corruption", "OFFSET", "testing: flip one byte of the first file before it is verified",
       [](J& j, const std::string& v) {
         uint64_t n;
         if (!internal::parse_size(v, &n) || n > (1ULL << 50)) return false;
         j.inject_corruption = static_cast<int64_t>(n);
         return true;
       },
       [](const J& j) { return j.inject_corruption < 0 ? OptValue::size(-1) : OptValue::size(static_cast<double>(j.inject_corruption)); },
       false},
  };
  return table;
}

bool validate_job(const BenchJob& j, std::string* error) {
  const std::string where = "job " + j.name + ": ";
  if (j.bs > j.size) {
    *error = where + "--bs=" + internal::format_size(j.bs) + " is larger than --size=" + internal::format_size(j.size);
    return false;
  }
  if (j.size % j.bs != 0) {
    *error = where + "--size must be a multiple of --bs (" + internal::format_size(j.size) + " is not a multiple of " +
             internal::format_size(j.bs) + ")";
    return false;
  }
  if (j.inject_corruption >= 0 && static_cast<uint64_t>(j.inject_corruption) >= j.size) {
    *error = where + "--inject-corruption is past the end of the first file";
    return false;
  }
  return true;
}

}  // namespace hybridio::bench
