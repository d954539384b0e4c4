/* output: summary table, CSV rows and JSON document of a run. */
#include "output.hpp"
#include "units.hpp"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

namespace hiosim {
namespace {

std::string num(double v, int prec = 6)
{
  if (not std::isfinite(v))
    return "null";
  std::ostringstream os;
  os << std::setprecision(prec) << v;
  return os.str();
}


const char* policy_columns = "policy,write_s,durable_s,restore_s,write_gbps,read_gbps,frac_peak,direct_share,"
                             "throttled_bytes,train_wall_h,goodput,failures,gpu_h_ckpt,gpu_h_rework,gpu_h_recover,"
                             "young_s,daly_s";

std::string csv_field(const std::string& s)
{
  if (s.find_first_of(",\"\n") == std::string::npos)
    return s;
  std::string out = "\"";
  for (char c : s)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

} // namespace

void print_summary(std::ostream& os, const Params& p, const RunResult& rr)
{
  if (not rr.bench.empty()) {
    const WorkloadParams& w = p.workload;
    if (w.bench_threads == 1)
      os << "bench: one thread, one file of " << format_bytes(w.bench_bytes);
    else
      os << "bench: " << w.bench_threads << " threads, "
         << (w.bench_shared ? "one shared file, a region of " : "one file each of ") << format_bytes(w.bench_bytes)
         << (w.bench_shared ? " each" : "") << " (GB/s of all threads)";
    os << ", fs/kind=" << p.fs.kind << "\n  rw     policy     block        GB/s\n";
    for (const auto& b : rr.bench)
      os << "  " << std::left << std::setw(6) << b.rw << " " << std::setw(10) << b.policy << " " << std::setw(10)
         << format_bytes(b.bs) << std::right << std::setw(8) << strf("%.3f", b.gbps) << "\n";
    return;
  }
  const auto& pl = rr.plan;
  os << "hybridio-sim: " << pl.preset << " checkpoint, " << format_bytes(pl.bytes) << " ("
     << strf("%.3g", pl.params) << " parameters)\n"
     << "  layout TP " << pl.tp << " x PP " << pl.pp << " x DP " << pl.dp << " = " << pl.ranks << " ranks on "
     << rr.nodes << " nodes (" << rr.gpus << " GPUs); " << pl.writers.size() << " writers of "
     << format_bytes(pl.writers.empty() ? 0 : pl.writers[0].bytes) << " each ("
     << (p.workload.writers == "all" ? "fully sharded" : "one data-parallel replica") << ")\n";
  if (rr.peak_write > 0)
    os << "  storage: " << (p.fs.kind == "lustre" ? std::to_string(p.fs.oss) + " OSS x " + std::to_string(p.fs.osts_per_oss) + " OSTs, stripe " +
                                                        std::to_string(p.fs.stripe_count) + " x " + format_bytes(p.fs.stripe_size)
                                                  : std::string("local disks"))
       << ", peak write " << strf("%.1f", rr.peak_write / 1e9) << " GB/s, read " << strf("%.1f", rr.peak_read / 1e9)
       << " GB/s\n";
  os << "  training: " << format_duration(p.training.work) << " of compute, checkpoint every "
     << format_duration(p.training.interval) << ", node MTBF " << format_duration(p.training.node_mtbf)
     << " -> system MTBF " << format_duration(rr.system_mtbf) << "\n\n";
  os << "  policy     ckpt write  durable     GB/s  %peak  restore     GB/s  | wall clock  goodput  GPU-h ckpt  GPU-h lost\n";
  for (const auto& r : rr.policies) {
    os << "  " << std::left << std::setw(10) << r.policy << std::right << std::setw(11) << format_duration(r.write_s)
       << std::setw(9) << format_duration(r.durable_s) << std::setw(9) << strf("%.1f", r.write_gbps) << std::setw(7)
       << strf("%.1f", 100 * r.frac_peak) << std::setw(9) << format_duration(r.restore_s) << std::setw(9)
       << strf("%.1f", r.read_gbps) << "  | " << std::setw(10) << format_duration(r.training.wall) << std::setw(8)
       << strf("%.2f%%", 100 * r.training.goodput) << std::setw(12) << strf("%.0f", r.training.gpu_h_ckpt)
       << std::setw(12) << strf("%.0f", r.training.gpu_h_rework + r.training.gpu_h_recover) << "\n";
  }
  if (rr.policies.size() > 1) {
    const PolicyResult* best = &rr.policies[0];
    for (const auto& r : rr.policies)
      if (r.training.goodput > best->training.goodput)
        best = &r;
    os << "\n  best goodput: " << best->policy << "; its optimal checkpoint interval: Young "
       << format_duration(best->training.young) << ", Daly " << format_duration(best->training.daly) << "\n";
  } else if (not rr.policies.empty()) {
    os << "\n  optimal checkpoint interval: Young " << format_duration(rr.policies[0].training.young) << ", Daly "
       << format_duration(rr.policies[0].training.daly) << "\n";
  }
  os << "  (simulated in " << strf("%.2f", rr.sim_wall_s) << " s of wall time)\n";
}

std::string csv_header(const RunResult& rr, const FlagList& tags)
{
  std::string h;
  for (const auto& t : tags)
    h += csv_field(t.first) + ",";
  if (not rr.bench.empty())
    return h + "rw,policy,bs_bytes,gbps";
  return h + "preset,ckpt_bytes,nodes,gpus,writers,peak_write_gbps," + policy_columns;
}

void write_csv(std::ostream& os, const Params& p, const RunResult& rr, const FlagList& tags, bool header)
{
  (void)p;
  if (header)
    os << csv_header(rr, tags) << "\n";
  std::string prefix;
  for (const auto& t : tags)
    prefix += csv_field(t.second) + ",";
  if (not rr.bench.empty()) {
    for (const auto& b : rr.bench)
      os << prefix << b.rw << "," << b.policy << "," << num(b.bs, 12) << "," << num(b.gbps) << "\n";
    return;
  }
  for (const auto& r : rr.policies) {
    const auto& t = r.training;
    os << prefix << rr.plan.preset << "," << num(rr.plan.bytes, 15) << "," << rr.nodes << "," << rr.gpus << ","
       << rr.plan.writers.size() << "," << num(rr.peak_write / 1e9) << "," << r.policy << "," << num(r.write_s) << ","
       << num(r.durable_s) << "," << num(r.restore_s) << "," << num(r.write_gbps) << "," << num(r.read_gbps) << ","
       << num(r.frac_peak) << "," << num(r.direct_share) << "," << num(r.throttled_bytes, 12) << ","
       << num(t.wall / 3600) << "," << num(t.goodput, 8) << "," << num(t.failures) << "," << num(t.gpu_h_ckpt) << ","
       << num(t.gpu_h_rework) << "," << num(t.gpu_h_recover) << "," << num(t.young) << "," << num(t.daly) << "\n";
  }
}

namespace {

using ojson = nlohmann::ordered_json;

// {"rule": share of the bytes, ...} over the policy core's rules that decided any bytes.
ojson rule_shares(const double (&bytes)[HIO_RULE_COUNT])
{
  double all = 0;
  for (double b : bytes)
    all += b;
  ojson out = ojson::object();
  for (int r = 0; r < HIO_RULE_COUNT; r++)
    if (bytes[r] > 0)
      out[hio_rule_name(static_cast<hio_rule>(r))] = bytes[r] / all;
  return out;
}

} // namespace

void write_json(std::ostream& os, const Params& p, const RunResult& rr, const FlagList& config)
{
  (void)p;
  ojson doc;
  doc["schema"] = "hybridio-sim/1";
  ojson& flags  = doc["config"] = ojson::object();
  for (const auto& [name, value] : config)
    flags[name] = value;
  ojson& run = doc["run"] = {{"nodes", rr.nodes},
                             {"gpus", rr.gpus},
                             {"peak_write_gbps", rr.peak_write / 1e9},
                             {"peak_read_gbps", rr.peak_read / 1e9},
                             {"system_mtbf_s", rr.system_mtbf},
                             {"wall_s", rr.sim_wall_s}};
  if (rr.bench.empty()) {
    run["preset"]     = rr.plan.preset;
    run["params"]     = rr.plan.params;
    run["ckpt_bytes"] = rr.plan.bytes;
    run["tp"]         = rr.plan.tp;
    run["pp"]         = rr.plan.pp;
    run["dp"]         = rr.plan.dp;
    run["writers"]    = rr.plan.writers.size();
  }
  ojson& results = doc["results"] = ojson::array();
  for (const auto& b : rr.bench)
    results.push_back({{"rw", b.rw}, {"policy", b.policy}, {"bs_bytes", b.bs}, {"gbps", b.gbps}});
  for (const auto& r : rr.policies) {
    const auto& t = r.training;
    results.push_back({{"policy", r.policy},
                       {"write_s", r.write_s},
                       {"durable_s", r.durable_s},
                       {"restore_s", r.restore_s},
                       {"write_gbps", r.write_gbps},
                       {"read_gbps", r.read_gbps},
                       {"frac_peak", r.frac_peak},
                       {"direct_share", r.direct_share},
                       {"write_rules", rule_shares(r.write_rule_bytes)},
                       {"read_rules", rule_shares(r.read_rule_bytes)},
                       {"training",
                        {{"wall_s", t.wall},
                         {"goodput", t.goodput},
                         {"failures", t.failures},
                         {"gpu_h_ckpt", t.gpu_h_ckpt},
                         {"gpu_h_rework", t.gpu_h_rework},
                         {"gpu_h_recover", t.gpu_h_recover},
                         {"young_s", t.young},
                         {"daly_s", t.daly}}}});
  }
  os << doc.dump(2, ' ', false, ojson::error_handler_t::replace) << "\n";
}

} // namespace hiosim
