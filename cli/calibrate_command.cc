// calibrate_command.cc - see calibrate_command.h.
//
// For each request size from 256 KiB to 16 MiB, a file of --size bytes is
// written (fsync included) and read back cold, once buffered and once
// direct (through the library, with the engine's parallel chunks), the
// policies interleaved, --repeat times, by the measuring loop of
// `hybridio bench` (bench/measure_loop.h: the same cache drop and
// page-cache memory warm-up before every phase); medians are compared.
// The write threshold is the smallest size from which direct is at least
// as fast as buffered at every larger size measured (likewise for reads);
// if direct never wins, the threshold is set above the largest size
// measured.  The profile is "key = value" lines in the config-file format
// (libhybridio's settings), so HYBRIDIO_CONFIG=<profile> applies it; the
// environment still wins.  The same medians seed the learned path costs of
// DIR's filesystem (hybridio_internal/learned_seed.h), which programs there
// start from when learning is on.
#include "calibrate_command.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "bench_engine.h"
#include "hybridio/hybridio.h"
#include "hybridio_internal/learned_seed.h"
#include "hybridio_internal/settings_text.h"
#include "machine_info.h"
#include "measure_loop.h"
#include "option_table.h"
#include "report.h"
#include "verify_pattern.h"

namespace hybridio::cli {
namespace {

using bench::OptionSpec;
using bench::OptValue;
using internal::format_size;

constexpr const char* kProg = "hybridio calibrate";
constexpr uint64_t kMinSize = 16ULL << 20;  // the largest request size measured

std::string default_profile_path() {
  const char* xdg = getenv("XDG_CONFIG_HOME");
  const char* home = getenv("HOME");
  std::string base = xdg && *xdg ? xdg : std::string(home && *home ? home : ".") + "/.config";
  return base + "/hybridio/profile";
}

struct CalibrateSettings {
  uint64_t size = 512ULL << 20;
  unsigned repeat = 3;
  std::string output = default_profile_path();
};

const std::vector<OptionSpec<CalibrateSettings>>& calibrate_option_table() {
  using O = CalibrateSettings;
  static const std::vector<OptionSpec<O>> table = {
      {"size", "SIZE", "bytes per measurement, at least 16M (K/M/G suffixes)",
       [](O& o, const std::string& v) { return internal::parse_size(v, &o.size) && o.size >= kMinSize; },
       [](const O& o) { return OptValue::size(static_cast<double>(o.size)); }},
      {"repeat", "N", "interleaved runs per point (1-100); medians are compared",
       [](O& o, const std::string& v) { return bench::parse_count(v, 1, 100, &o.repeat); },
       [](const O& o) { return OptValue::num(o.repeat); }},
      {"output", "FILE", "where the profile goes",
       [](O& o, const std::string& v) { o.output = v; return !v.empty(); },
       [](const O& o) { return OptValue::str(o.output); }},
  };
  return table;
}

void usage(FILE* out) {
  fprintf(out,
          "usage: hybridio calibrate DIR [options]\n\n"
          "Measures buffered and direct write (fsync included) and cold read throughput on the\n"
          "filesystem of DIR for request sizes 256K..16M, and writes the measured crossovers as\n"
          "a profile; apply it with HYBRIDIO_CONFIG=<profile>.  The measurements also seed the\n"
          "learned path costs of DIR's filesystem (HYBRIDIO_LEARN, HYBRIDIO_STATE_DIR).\n\noptions:\n");
  bench::print_option_help(out, calibrate_option_table(), CalibrateSettings{});
}

// The smallest size from which direct >= buffered at it and every larger size.
uint64_t crossover(const std::vector<uint64_t>& sizes, const std::vector<double>& buffered,
                   const std::vector<double>& direct) {
  uint64_t at = 0;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (direct[i] < buffered[i]) break;
    at = sizes[i];
  }
  return at ? at : sizes.back() * 2;  // direct never won: above everything measured
}

// mkdir -p of the directory holding `path`.
void make_parent_dirs(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos || slash == 0) return;
  std::string parent = path.substr(0, slash);
  for (size_t at = 1; (at = parent.find('/', at)) != std::string::npos; ++at) mkdir(parent.substr(0, at).c_str(), 0755);
  mkdir(parent.c_str(), 0755);
}

}  // namespace

std::vector<bench::OptionDoc> calibrate_option_docs() { return bench::describe_options(calibrate_option_table(), CalibrateSettings{}); }

int calibrate_command(int argc, char** argv) {
  CalibrateSettings o;
  std::vector<std::string> positional;
  std::string error;
  int st = bench::parse_command_line(calibrate_option_table(), argc, argv, &o, &positional, &error);
  if (st == 1) {
    usage(stdout);
    return 0;
  }
  if (st == 0 && positional.size() > 1) {
    error = "unexpected argument '" + positional[1] + "' (see --help)";
    st = 2;
  }
  if (st == 2) {
    fprintf(stderr, "%s: %s\n", kProg, error.c_str());
    return 2;
  }
  const std::string dir = positional.empty() ? "" : positional[0];
  struct stat sb;
  if (dir.empty() || stat(dir.c_str(), &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    fprintf(stderr, "%s: %s is not a directory (see --help)\n", kProg, dir.empty() ? "(none)" : dir.c_str());
    return 2;
  }
  const std::vector<uint64_t> sizes = {256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20};
  const std::string path = dir + "/.hybridio-calibrate." + std::to_string(getpid());
  bench::MachineInfo machine = bench::probe_machine(dir);
  if (std::string why = bench::skip_reason(HIO_MODE_DIRECT, machine); !why.empty()) {
    fprintf(stderr, "%s: nothing to calibrate on %s: %s\n", kProg, dir.c_str(), why.c_str());
    return 1;
  }
  bench::PatternBuffer buffer(sizes.back(), 0, 0xca11b7a7e0000000ULL);
  if (!buffer.ok()) return 1;
  hio_policy_config saved;
  hio_policy_get(&saved);

  bench::Report report;
  const std::vector<hio_mode> policies = {HIO_MODE_BUFFERED, HIO_MODE_DIRECT};
  std::vector<double> wb, wd, rb, rd;
  printf("%-8s %12s %12s %12s %12s   (GB/s, median of %u; %s per point)\n", "size", "buf write", "dir write",
         "buf read", "dir read", o.repeat, format_size(o.size).c_str());
  for (uint64_t bs : sizes) {
    const uint64_t len = o.size / bs * bs;
    bench::MeasurePlan plan;
    plan.prog = kProg;
    plan.context = "size " + format_size(bs) + ", ";
    plan.row.job = format_size(bs);
    plan.row.engine = "hybridio";
    plan.row.pattern = "sequential";
    plan.row.bs_bytes = bs;
    plan.policies = policies;
    plan.ops = {HIO_OP_WRITE, HIO_OP_READ};
    plan.repeat = o.repeat;
    plan.files = {path};
    plan.remove_files_after_trial = true;
    plan.warm_up_bytes = len;
    plan.warm_up_dir = dir;
    plan.bytes_per_trial = 2 * len;
    plan.make_trial = [&](hio_mode mode, unsigned) {
      bench::Phase write;
      write.label = std::string(hio_mode_name(mode)) + " write " + format_size(bs);
      bench::ThreadPlan p;
      p.path = path;
      p.open_flags = O_WRONLY | O_CREAT | O_TRUNC;
      for (uint64_t off = 0; off < len; off += bs) p.units.push_back({off, bs, HIO_OP_WRITE});
      p.buffer = &buffer;
      write.plans.push_back(p);
      write.config.engine = bench::find_engine("hybridio");
      write.config.fsync_end = true;
      write.record_as = {HIO_OP_WRITE};
      bench::Phase read = write;
      read.label = std::string(hio_mode_name(mode)) + " read " + format_size(bs);
      read.plans[0].open_flags = O_RDONLY;
      for (bench::IoUnit& u : read.plans[0].units) u.op = HIO_OP_READ;
      read.cold = true;
      read.record_as = {HIO_OP_READ};
      bench::Trial t;
      t.phases.push_back(std::move(write));
      t.phases.push_back(std::move(read));
      return t;
    };
    bench::MeasureOutcome measured = bench::measure_policies(plan, machine, &report);
    if (measured.status != 0) {
      hio_policy_set(&saved);
      return 1;
    }
    auto gbps = [&](size_t policy, hio_op op) {
      return bench::median_gbps(report.rows[measured.first_row + 2 * policy + (op == HIO_OP_WRITE ? 0 : 1)]);
    };
    wb.push_back(gbps(0, HIO_OP_WRITE));
    wd.push_back(gbps(1, HIO_OP_WRITE));
    rb.push_back(gbps(0, HIO_OP_READ));
    rd.push_back(gbps(1, HIO_OP_READ));
    printf("%-8s %12.2f %12.2f %12.2f %12.2f\n", format_size(bs).c_str(), wb.back(), wd.back(), rb.back(), rd.back());
    fflush(stdout);
  }
  hio_policy_set(&saved);
  if (report.cold == "fadvise") printf("(not root: before each read only the test file's pages were dropped)\n");

  const uint64_t write_threshold = crossover(sizes, wb, wd);
  const uint64_t read_threshold = crossover(sizes, rb, rd);
  make_parent_dirs(o.output);
  std::ofstream out(o.output);
  if (!out) {
    fprintf(stderr, "%s: cannot write %s: %s\n", kProg, o.output.c_str(), strerror(errno));
    return 1;
  }
  utsname u{};
  uname(&u);
  char when[64];
  time_t t = time(nullptr);
  strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", gmtime(&t));
  out << "# hybridio calibrate " << dir << " (" << when << " UTC, Linux " << u.release << ")\n"
      << "# " << format_size(o.size) << " per point, median of " << o.repeat
      << "; direct at least as fast as buffered from these sizes on:\n"
      << "write_threshold = " << format_size(write_threshold) << "\n"
      << "read_threshold = " << format_size(read_threshold) << "\n";
  out.close();
  printf("\nwrite_threshold = %s, read_threshold = %s\nprofile written to %s; apply it with\n"
         "  export HYBRIDIO_CONFIG=%s\n",
         format_size(write_threshold).c_str(), format_size(read_threshold).c_str(), o.output.c_str(),
         o.output.c_str());
  // The same measurements seed the learned path costs of DIR's filesystem,
  // which every program using the library there starts from (HYBRIDIO_LEARN).
  std::vector<internal::CalibrationPoint> points;
  for (size_t i = 0; i < sizes.size(); ++i) points.push_back({sizes[i], wb[i] * 1e9, wd[i] * 1e9, rb[i] * 1e9, rd[i] * 1e9});
  std::string seed_error;
  const std::string seeded = internal::seed_learned(dir, points, &seed_error);
  if (seeded.empty())
    fprintf(stderr, "%s: learned path costs not seeded: %s\n", kProg, seed_error.c_str());
  else
    printf("learned path costs of this filesystem seeded in %s\n", seeded.c_str());
  return 0;
}

}  // namespace hybridio::cli
