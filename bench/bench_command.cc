// bench_command.cc - see bench_command.h.
#include "bench_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bench_engine.h"
#include "bench_options.h"
#include "bench_runner.h"
#include "checkpoint_job.h"
#include "job_file.h"
#include "machine_info.h"
#include "report.h"
#include "train_job.h"

namespace hybridio::bench {
namespace {

constexpr const char* kProg = "hybridio bench";

void usage(FILE* out) {
  fprintf(out,
          "usage: hybridio bench [options] [JOBFILE]\n"
          "       hybridio bench checkpoint [options]   (see hybridio bench checkpoint --help)\n"
          "       hybridio bench train [options]        (see hybridio bench train --help)\n\n"
          "Runs fio-style jobs through the Hybrid-IO library under each I/O policy, interleaved,\n"
          "and reports GB/s, IOPS, latency percentiles, CPU seconds per GB and the policy's\n"
          "decisions (docs/bench.md).  A JOBFILE has a [global] section and one [section] per job\n"
          "with the option names below (name = value); command-line options override it.\n\n"
          "options:\n");
  print_option_help(out, bench_option_table(), BenchJob{});
  fprintf(out, "\nengines (--ioengine):\n");
  for (const EngineOps* e : engines()) fprintf(out, "  %-10s %s\n", e->name, e->help);
  fprintf(out, "\nSizes take K/M/G/T suffixes (binary).  Exit status: 0 measured, 1 a run failed\n"
               "(an I/O error, --verify found wrong bytes), 2 bad usage or a job that could not start.\n");
}

bool is_dir(const std::string& p) {
  struct stat st{};
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

const char* bench_command_summary() {
  return "fio-style jobs (--rw, --bs, --size, --numjobs, ...) under each I/O policy; "
         "`bench checkpoint`: sharded model checkpoints; `bench train`: a training job's epochs";
}

int bench_command(int argc, char** argv) {
  if (argc >= 1 && std::string(argv[0]) == "checkpoint")
    return checkpoint_command(argc - 1, argv + 1, "hybridio bench checkpoint");
  if (argc >= 1 && std::string(argv[0]) == "train") return train_command(argc - 1, argv + 1, "hybridio bench train");
  const auto& table = bench_option_table();
  // Validate the command line once (and find the job file).
  BenchJob probe;
  std::vector<std::string> positional;
  std::string error;
  int st = parse_command_line(table, argc, argv, &probe, &positional, &error);
  if (st == 1) {
    usage(stdout);
    return 0;
  }
  if (st == 2) {
    fprintf(stderr, "%s: %s\n", kProg, error.c_str());
    return 2;
  }
  if (positional.size() > 1) {
    fprintf(stderr, "%s: one job file at most (got '%s' and '%s')\n", kProg, positional[0].c_str(), positional[1].c_str());
    return 2;
  }
  std::vector<BenchJob> jobs;
  if (positional.empty()) {
    jobs.push_back(probe);
  } else {
    std::vector<JobFileSection> sections;
    if (!read_job_file(positional[0], &sections, &error)) {
      fprintf(stderr, "%s: %s\n", kProg, error.c_str());
      return 2;
    }
    BenchJob global;
    auto apply_section = [&](const JobFileSection& s, BenchJob* j, bool is_global) {
      for (const auto& e : s.entries) {
        const OptionSpec<BenchJob>* o = find_option(table, e.key);
        if (o && !o->per_job && !is_global) {
          error = positional[0] + ":" + std::to_string(e.line) + ": " + e.key + " belongs in [global] or on the command line";
          return false;
        }
        if (!apply_option(table, e.key, e.value, e.has_value, j, &error)) {
          error = positional[0] + ":" + std::to_string(e.line) + ": " + error;
          return false;
        }
      }
      return true;
    };
    for (const auto& s : sections)
      if (s.name == "global" && !apply_section(s, &global, true)) {
        fprintf(stderr, "%s: %s\n", kProg, error.c_str());
        return 2;
      }
    for (const auto& s : sections) {
      if (s.name == "global") continue;
      BenchJob j = global;
      j.name = s.name;
      if (!apply_section(s, &j, false) || parse_command_line(table, argc, argv, &j, &positional, &error) != 0) {
        fprintf(stderr, "%s: %s\n", kProg, error.c_str());
        return 2;
      }
      jobs.push_back(j);
    }
  }
  std::map<std::string, int> names;
  for (const BenchJob& j : jobs) {
    if (++names[j.name] > 1) {
      fprintf(stderr, "%s: two jobs are named %s\n", kProg, j.name.c_str());
      return 2;
    }
    if (!validate_job(j, &error)) {
      fprintf(stderr, "%s: %s\n", kProg, error.c_str());
      return 2;
    }
    if (!is_dir(dir_of(j))) {
      fprintf(stderr, "%s: job %s: %s is not a directory\n", kProg, j.name.c_str(), dir_of(j).c_str());
      return 2;
    }
    if (access(dir_of(j).c_str(), W_OK) != 0) {
      fprintf(stderr, "%s: job %s: %s is not writable\n", kProg, j.name.c_str(), dir_of(j).c_str());
      return 2;
    }
  }

  Report report;
  report.kind = "bench";
  report.argv.push_back("hybridio");
  report.argv.push_back("bench");
  for (int i = 0; i < argc; ++i) report.argv.push_back(argv[i]);
  report.file_bytes = jobs[0].size;
  std::map<std::string, std::string> titles;
  int rc = 0;
  for (size_t k = 0; k < jobs.size(); ++k) {
    const BenchJob& j = jobs[k];
    MachineInfo m = probe_machine(dir_of(j));
    if (k == 0) report.machine = m;
    int r = run_bench_job(j, m, &report);
    if (r == 2) return 2;
    if (r) rc = r;
    titles[j.name] = "job " + j.name + ": " + echo_settings_line(table, j, true) + "\n(" +
                     (j.repeat > 1 ? "median [min-max] of " + std::to_string(j.repeat) + " runs, interleaved" : "one run") +
                     "; cache before each run: " + report.cold + (rw_writes(j.rw) && j.fsync == FsyncMode::kEnd ? "; fsync timed" : "") + ")";
  }
  report.write_settings = [&](JsonWriter& w) {
    w.begin_array("jobs");
    for (const BenchJob& j : jobs) {
      w.begin_object().field("name", j.name);
      w.begin_object("settings");
      echo_settings_json(w, table, j);
      w.end_object().end_object();
    }
    w.end_array();
  };
  const std::string& json = jobs[0].json_path;
  FILE* table_out = json == "-" ? stderr : stdout;  // JSON alone on its stream
  print_table(table_out, report, [&](const std::string& job) { return titles[job]; });
  if (!json.empty() && !write_report_json(report, json)) return 1;
  return rc;
}

}  // namespace hybridio::bench
