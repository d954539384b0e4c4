/* main: the hybridio-sim command line. `hybridio-sim [run]` simulates one configuration,
 * `sweep` expands a parameter grid into independent runs, `merge` joins their results,
 * `calibrate` fits the client model to a hybridio-bench JSON and checks its predictions,
 * `learn` runs per-client threshold learning on shared OSTs. */
#include "calibration.hpp"
#include "config.hpp"
#include "output.hpp"
#include "simulation.hpp"
#include "learned.hpp"
#include "sweep.hpp"
#include "units.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <xbt/config.hpp>
#include <xbt/log.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

XBT_LOG_NEW_DEFAULT_CATEGORY(hio_main, "hybridio-sim command line");

namespace {

const char* usage_text = R"(hybridio-sim: SimGrid model of checkpoint write and restore under I/O policies at cluster scale.

usage:
  hybridio-sim [run] [--platform FILE] [--cfg=NAME:VALUE ...] [--csv FILE] [--json FILE] [--tags A,B]
  hybridio-sim sweep --grid NAME=V1,V2,... [--grid ...] --out DIR [--jobs N]
                     [--mode local|gnu-parallel|slurm] [run options...]
  hybridio-sim merge DIR
  hybridio-sim calibrate --bench FILE.json [--fit-sizes 4KiB,1MiB,...] [--max-error PCT]
                         [--stat median|max] [--direct-chunk SIZE] [--readahead SIZE]
                         [--write-platform FILE] [--cfg=...]
  hybridio-sim learn [--clients N] [--rounds N] [--damping A,B,...] [--hysteresis OCT,...]
                     [--exploration F] [--noise F] [--shard SIZE] [--initial-threshold SIZE]
                     [--seed N] [--trace] [--platform FILE] [--cfg=...]
  hybridio-sim --help

run (the default):
  Simulates the checkpoint write (fsync included) and the restore of a model under each policy of
  policy/list, then a training run with node failures driven by those costs, and prints a
  comparison. With no arguments: Llama3-70B (912 GiB, TP 8 x PP 8, 8 nodes of 8 GPUs) on an 8-OSS
  Lustre-like file system; finishes in about a second.
  --platform FILE   description file: one "name = value" per line with the names below ('#'
                    starts a comment); --cfg on the command line wins over the file
  --csv FILE        one row per policy (header included); "-" for stdout
  --json FILE       the whole run, every parameter included; "-" for stdout
  --tags A,B        put the values of these parameters in front of each CSV row (used by sweep)

policies:
  buffered   every request through the page cache (copy at client/copy-bw-* per thread)
  direct     every request O_DIRECT (client/direct-*-latency per request; small requests are slow)
  dontcache  buffered copy, written back at once and dropped (RWF_DONTCACHE)
  hybrid     each request decided by libhybridio's own policy core (hybridio/policy.h) with
             what the model knows: size, offset, sequential stream, cached and dirty share of
             the range, memory pressure (policy/* tunables; docs/simulator.md lists the inputs)
  async      two-phase checkpoint: snapshot to pinned host memory at cluster/d2h-bw (blocks
             training), then persist with direct I/O of policy/async-request in the background

sweep:
  Writes DIR/jobs.txt (one hybridio-sim command per run), DIR/slurm.sh (a job array over it) and,
  with --mode local (the default), runs the jobs --jobs at a time (default: number of cores) and
  merges the results into DIR/results.csv and DIR/results.json. With --mode gnu-parallel or slurm
  it only writes the job list; run `parallel < DIR/jobs.txt` or `sbatch DIR/slurm.sh`, then
  `hybridio-sim merge DIR`. Grid values are literal (--grid cluster/nodes=8,64,512).

calibrate:
  Reads a hybridio-bench/1 JSON (from `hybridio bench --json`, or calibrate/fio_to_bench_json.py),
  fits per-request costs and bandwidths of the direct and buffered paths on the block sizes of
  --fit-sizes (default: every other size), simulates every measured block size on one client
  with one local disk, and prints predicted vs measured throughput. Exit status 1 if a size not
  used for fitting is off by more than --max-error percent (default 15); points whose own
  repetitions spread more than that are shown but not judged. A report of `hybridio bench`
  tells the library's parallel direct engine (chunk size and depth, from its counters), which
  way each hybrid request went (counters) and the readahead window (machine); --direct-chunk
  and --readahead override the first and the last (0: off). It also prints the ratios
  direct/buffered and hybrid/buffered at every held-out size, predicted against measured (the
  median over the repeats of the ratio within one repeat), TARGET MET / NOT MET per ratio.

learn:
  Per-client threshold learning at scale: --clients clients (default 2048) each write a shard per
  checkpoint in request sizes 64 KiB-256 MiB, decided by the policy core with the client's own
  threshold, send --exploration of their bytes (at most 0.03) the other way, measure both paths
  (the direct one on OSTs shared by every client: fs/* flags) and move their log2 threshold
  toward the measured crossover by --damping (1: none), when it is further than their own
  hysteresis (uniform in [0, --hysteresis] octaves). One row per damping x hysteresis:
  convergence round, oscillation amplitude of the direct share, checkpoint time, goodput.

scale and accuracy:
  sim/chunk-bytes sets the model's granularity: each writer moves that many bytes per simulated
  step, so the number of concurrent activities is bounded by writers x OSTs per file, whatever
  the request size. The network uses SimGrid's CM02 fluid model (set by default here; override
  with --cfg=network/model:LV08).

model parameters (--cfg=NAME:VALUE, or NAME = VALUE in a description file; sizes are whole
numbers as libhybridio reads them, binary: 4096, 64K, 2M, 2MiB, 2MB (all 1024-based), 1G, 18T;
bandwidths are decimal: 25GBps = 25e9 bytes/s, also MBps, Gbps, GiBps; durations us, ms, s, min,
h, d):)";

std::string take_value(std::vector<std::string>& args, size_t& i, const std::string& opt)
{
  const std::string& a = args[i];
  if (a.size() > opt.size() && a[opt.size()] == '=')
    return a.substr(opt.size() + 1);
  if (i + 1 >= args.size())
    throw hiosim::ConfigError("option " + opt + " needs a value");
  return args[++i];
}

bool is_opt(const std::string& a, const std::string& opt)
{
  return a == opt || a.rfind(opt + "=", 0) == 0;
}

int cmd_run(std::vector<std::string>& args)
{
  std::string csv, json, tags_arg;
  for (size_t i = 0; i < args.size(); i++) {
    const std::string& a = args[i];
    if (is_opt(a, "--platform"))
      hiosim::load_description_file(take_value(args, i, "--platform"));
    else if (is_opt(a, "--csv"))
      csv = take_value(args, i, "--csv");
    else if (is_opt(a, "--json"))
      json = take_value(args, i, "--json");
    else if (is_opt(a, "--tags"))
      tags_arg = take_value(args, i, "--tags");
    else
      throw hiosim::ConfigError("unknown argument '" + a + "' (see hybridio-sim --help)");
  }
  hiosim::Params p = hiosim::params_from_config();
  hiosim::FlagList tags;
  for (const auto& name : hiosim::split(tags_arg, ',')) {
    if (not hiosim::is_model_flag(name))
      throw hiosim::ConfigError("--tags: unknown field '" + name + "'");
    tags.emplace_back(name, simgrid::config::get_value<std::string>(name));
  }
  hiosim::RunResult rr = hiosim::run_simulation(p);
  bool quiet = csv == "-" || json == "-";
  if (not quiet)
    hiosim::print_summary(std::cout, p, rr);
  auto emit = [&](const std::string& path, auto writer) {
    if (path.empty())
      return;
    if (path == "-") {
      writer(std::cout);
      return;
    }
    std::ofstream out(path);
    if (not out)
      throw hiosim::ConfigError("cannot write '" + path + "'");
    writer(out);
  };
  emit(csv, [&](std::ostream& os) { hiosim::write_csv(os, p, rr, tags, true); });
  emit(json, [&](std::ostream& os) { hiosim::write_json(os, p, rr, hiosim::all_flags()); });
  return 0;
}

} // namespace

int main(int argc, char** argv)
{
  std::string self = argv[0];
  std::string sub  = "run";
  int first        = 1;
  if (argc > 1 && (std::strcmp(argv[1], "run") == 0 || std::strcmp(argv[1], "sweep") == 0 ||
                   std::strcmp(argv[1], "merge") == 0 || std::strcmp(argv[1], "calibrate") == 0 ||
                   std::strcmp(argv[1], "learn") == 0)) {
    sub   = argv[1];
    first = 2;
  }
  for (int i = 1; i < argc; i++)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::cout << usage_text << hiosim::flags_help()
                << "\nSimGrid's own options (--cfg=network/model:..., --log=...) are accepted too; "
                   "see --help-cfg... of any SimGrid program.\n";
      return 0;
    }
  if (sub == "merge") {
    if (argc != 3) {
      std::cerr << "hybridio-sim: error: usage: hybridio-sim merge DIR\n";
      return 2;
    }
    try {
      hiosim::merge_results(argv[2]);
      return 0;
    } catch (const std::exception& e) {
      std::cerr << "hybridio-sim: error: " << e.what() << "\n";
      return 2;
    }
  }
  if (sub == "sweep") {
    std::vector<std::string> rest(argv + first, argv + argc);
    try {
      return hiosim::run_sweep(self, rest);
    } catch (const std::exception& e) {
      std::cerr << "hybridio-sim: error: " << e.what() << "\n";
      return 2;
    }
  }
  // Defaults placed before the user's arguments so that the user's own --cfg/--log win.
  std::vector<std::string> storage = {self, "--cfg=network/model:CM02", "--cfg=network/crosstraffic:0",
                                      "--log=root.thresh:warning", "--log=xbt_cfg.thresh:warning"};
  // Model flags are set after the Engine exists, one by one: SimGrid's own parser would split
  // list values such as policy/list:buffered,hybrid.
  std::vector<std::pair<std::string, std::string>> model_cfg;
  for (int i = first; i < argc; i++) {
    std::string a = argv[i];
    if (a.rfind("--cfg=", 0) == 0) {
      auto colon = a.find(':');
      std::string name = a.substr(6, colon == std::string::npos ? std::string::npos : colon - 6);
      if (hiosim::is_model_flag(name)) {
        if (colon == std::string::npos) {
          std::cerr << "hybridio-sim: error: " << a << ": expected --cfg=" << name << ":VALUE\n";
          return 2;
        }
        model_cfg.emplace_back(name, a.substr(colon + 1));
        continue;
      }
    }
    storage.push_back(a);
  }
  std::vector<char*> av;
  for (auto& s : storage)
    av.push_back(s.data());
  av.push_back(nullptr);
  int ac = static_cast<int>(storage.size());
  try {
    simgrid::s4u::Engine engine(&ac, av.data());
    for (const auto& [name, value] : model_cfg)
      hiosim::set_flag(name, value);
    std::vector<std::string> args(av.begin() + 1, av.begin() + ac);
    if (sub == "calibrate")
      return hiosim::cmd_calibrate(args);
    if (sub == "learn")
      return hiosim::cmd_learn(args);
    return cmd_run(args);
  } catch (const hiosim::ConfigError& e) {
    std::cerr << "hybridio-sim: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "hybridio-sim: error: " << e.what() << "\n";
    return 2;
  }
}
