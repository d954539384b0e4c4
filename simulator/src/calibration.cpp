/* calibration: bench JSON reader, model fit and prediction check (see calibration.hpp). */
#include "calibration.hpp"
#include "config.hpp"
#include "json.hpp"
#include "output.hpp"
#include "simulation.hpp"
#include "units.hpp"

#include <xbt/log.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>

XBT_LOG_NEW_DEFAULT_CATEGORY(hio_calibration, "hybridio-sim calibration from bench JSON");

namespace hiosim {
namespace {

// Weighted least squares y = a + b x with weights 1/y^2: minimises relative error.
std::pair<double, double> fit_line(const std::vector<double>& x, const std::vector<double>& y)
{
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); i++) {
    double w = 1.0 / (y[i] * y[i]);
    sw += w;
    sx += w * x[i];
    sy += w * y[i];
    sxx += w * x[i] * x[i];
    sxy += w * x[i] * y[i];
  }
  double det = sw * sxx - sx * sx;
  if (std::fabs(det) < 1e-300)
    throw std::runtime_error("calibration: degenerate fit (need two different block sizes)");
  double b = (sw * sxy - sx * sy) / det;
  double a = (sy - b * sx) / sw;
  return {a, b};
}

std::vector<const BenchPoint*> select(const std::vector<BenchPoint>& pts, const char* rw, const char* policy,
                                      const std::vector<double>& sizes)
{
  std::vector<const BenchPoint*> out;
  for (const auto& p : pts)
    if (p.rw == rw && p.policy == policy &&
        std::any_of(sizes.begin(), sizes.end(), [&](double s) { return std::fabs(s - p.bs) < 0.5; }))
      out.push_back(&p);
  if (out.size() < 2)
    throw std::runtime_error(std::string("calibration: need at least two fit block sizes for ") + rw + " " + policy);
  return out;
}


} // namespace

BenchFile read_bench_json(const std::string& path, const std::string& stat)
{
  Json doc = read_json_file(path);
  BenchFile bf;
  if (not doc.has("schema") || doc.at("schema").s != "hybridio-bench/1")
    throw std::runtime_error(path + ": field 'schema' must be \"hybridio-bench/1\"");
  if (doc.has("machine") && doc.at("machine").has("file_bytes"))
    bf.file_bytes = doc.at("machine").at("file_bytes").n;
  const Json& res = doc.at("results");
  if (res.type != Json::Type::Array || res.a.empty())
    throw std::runtime_error(path + ": field 'results' must be a non-empty array");
  for (size_t i = 0; i < res.a.size(); i++) {
    const Json& r = res.a[i];
    std::string where = path + ": results[" + std::to_string(i) + "]";
    auto need = [&](const char* key, Json::Type t) -> const Json& {
      if (not r.has(key) || r.at(key).type != t)
        throw std::runtime_error(where + ": field '" + key + "' missing or of the wrong type");
      return r.at(key);
    };
    BenchPoint p;
    p.rw     = need("rw", Json::Type::String).s;
    p.policy = need("policy", Json::Type::String).s;
    p.bs     = need("bs_bytes", Json::Type::Number).n;
    p.gbps   = need("gbps_median", Json::Type::Number).n;
    if (p.rw != "write" && p.rw != "read")
      throw std::runtime_error(where + ": field 'rw' must be \"write\" or \"read\"");
    if (p.policy != "buffered" && p.policy != "direct" && p.policy != "dontcache" && p.policy != "hybrid")
      throw std::runtime_error(where + ": field 'policy' must be buffered, direct, dontcache or hybrid");
    if (r.has("gbps_min") && r.has("gbps_max"))
      p.spread = (r.at("gbps_max").n - r.at("gbps_min").n) / p.gbps;
    if (stat == "max")
      p.gbps = need("gbps_max", Json::Type::Number).n;
    if (p.bs <= 0 || p.gbps <= 0)
      throw std::runtime_error(where + ": fields 'bs_bytes' and 'gbps_median' must be positive");
    bf.points.push_back(p);
  }
  return bf;
}

Calibration fit_calibration(const std::vector<BenchPoint>& pts, const std::vector<double>& fit_sizes,
                            double writeback_req, int writeback_inflight)
{
  Calibration c;
  auto fit_direct = [&](const char* rw, double& lat, double& bw) {
    std::vector<double> x, y;
    for (auto* p : select(pts, rw, "direct", fit_sizes)) {
      x.push_back(p->bs);
      y.push_back(p->bs / (p->gbps * 1e9)); // seconds per request
    }
    auto [a, b] = fit_line(x, y);
    lat = std::max(0.0, a);
    bw  = b > 0 ? 1.0 / b : 1e12;
  };
  fit_direct("write", c.direct_write_lat, c.direct_write_bw);
  fit_direct("read", c.direct_read_lat, c.direct_read_bw);
  c.disk_write_bw = c.direct_write_bw;

  // Buffered write with end fsync: the writeback of the whole file happens at fsync time.
  double wb_per_byte = c.direct_write_lat / (writeback_req * writeback_inflight) + 1.0 / c.disk_write_bw;
  {
    std::vector<double> x, y;
    for (auto* p : select(pts, "write", "buffered", fit_sizes)) {
      x.push_back(1.0 / p->bs);
      y.push_back(std::max(1e-12, 1.0 / (p->gbps * 1e9) - wb_per_byte));
    }
    auto [a, b] = fit_line(x, y);
    c.buffered_write_cost = std::max(0.0, b);
    c.copy_write_bw       = a > 0 ? 1.0 / a : 1e12;
  }
  {
    std::vector<double> x, y;
    for (auto* p : select(pts, "read", "buffered", fit_sizes)) {
      x.push_back(1.0 / p->bs);
      y.push_back(1.0 / (p->gbps * 1e9));
    }
    auto [a, b] = fit_line(x, y);
    c.buffered_read_cost = std::max(0.0, b);
    // Copy and readahead overlap: only their minimum is observable, so both get at least it.
    c.copy_read_bw = a > 0 ? 1.0 / a : 1e12;
    c.disk_read_bw = std::max(c.direct_read_bw, c.copy_read_bw);
  }
  return c;
}

int cmd_calibrate(std::vector<std::string>& args)
{
  std::string bench_path, platform_out;
  std::vector<double> fit_sizes;
  double max_error = 15;
  std::string stat = "median";
  for (size_t i = 0; i < args.size(); i++) {
    auto val = [&](const std::string& opt) {
      const std::string& a = args[i];
      if (a.size() > opt.size() && a[opt.size()] == '=')
        return a.substr(opt.size() + 1);
      if (i + 1 >= args.size())
        throw ConfigError("option " + opt + " needs a value");
      return args[++i];
    };
    const std::string& a = args[i];
    if (a.rfind("--bench", 0) == 0)
      bench_path = val("--bench");
    else if (a.rfind("--fit-sizes", 0) == 0)
      fit_sizes = parse_bytes_list(val("--fit-sizes"));
    else if (a.rfind("--max-error", 0) == 0)
      max_error = std::stod(val("--max-error"));
    else if (a.rfind("--stat", 0) == 0)
      stat = val("--stat");
    else if (a.rfind("--write-platform", 0) == 0)
      platform_out = val("--write-platform");
    else if (a.rfind("--platform", 0) == 0)
      load_description_file(val("--platform"));
    else
      throw ConfigError("calibrate: unknown argument '" + a + "'");
  }
  if (bench_path.empty())
    throw ConfigError("calibrate: --bench FILE is required");
  if (stat != "median" && stat != "max")
    throw ConfigError("calibrate: --stat must be median or max");
  BenchFile bf = read_bench_json(bench_path, stat);
  std::set<double> all_sizes;
  for (const auto& p : bf.points)
    all_sizes.insert(p.bs);
  if (fit_sizes.empty()) { // every other size, starting with the smallest
    int k = 0;
    for (double s : all_sizes)
      if (k++ % 2 == 0)
        fit_sizes.push_back(s);
  }
  Params base = params_from_config();
  Calibration c = fit_calibration(bf.points, fit_sizes, base.client.writeback_req, base.client.writeback_inflight);

  std::vector<std::pair<std::string, std::string>> fitted = {
      {"fs/kind", "local"},
      {"fs/ost-write-bw", strf("%.6g", c.disk_write_bw)},
      {"fs/ost-read-bw", strf("%.6g", c.disk_read_bw)},
      {"client/direct-write-latency", strf("%.6g", c.direct_write_lat)},
      {"client/direct-read-latency", strf("%.6g", c.direct_read_lat)},
      {"client/direct-write-stream-bw", strf("%.6g", c.direct_write_bw)},
      {"client/direct-read-stream-bw", strf("%.6g", c.direct_read_bw)},
      {"client/buffered-write-cost", strf("%.6g", c.buffered_write_cost)},
      {"client/buffered-read-cost", strf("%.6g", c.buffered_read_cost)},
      {"client/copy-bw-write", strf("%.6g", c.copy_write_bw)},
      {"client/copy-bw-read", strf("%.6g", c.copy_read_bw)},
  };
  std::cout << "calibrated on block sizes:";
  for (double s : fit_sizes)
    std::cout << " " << format_bytes(s);
  std::cout << "\n  direct write: " << strf("%.1f", c.direct_write_lat * 1e6) << " us/request + "
            << strf("%.3f", c.direct_write_bw / 1e9) << " GB/s;  direct read: " << strf("%.1f", c.direct_read_lat * 1e6)
            << " us/request + " << strf("%.3f", c.direct_read_bw / 1e9) << " GB/s\n"
            << "  buffered write: " << strf("%.2f", c.buffered_write_cost * 1e6) << " us/call, copy "
            << strf("%.3f", c.copy_write_bw / 1e9) << " GB/s;  buffered read: "
            << strf("%.2f", c.buffered_read_cost * 1e6) << " us/call, copy "
            << (c.copy_read_bw >= 1e12 ? std::string("not limiting") : strf("%.3f GB/s", c.copy_read_bw / 1e9)) << "\n";
  for (const auto& [k, v] : fitted)
    set_flag(k, v);
  set_flag("workload/kind", "bench");
  std::string sizes;
  for (double s : all_sizes)
    sizes += (sizes.empty() ? "" : ",") + strf("%.0f", s);
  set_flag("workload/bench-sizes", sizes);
  if (bf.file_bytes > 0)
    set_flag("workload/bench-bytes", strf("%.0f", bf.file_bytes));
  set_flag("policy/list", "buffered,direct");
  set_flag("pagecache/eager-writeback", "off");
  Params p     = params_from_config();
  RunResult rr = run_simulation(p);

  auto predicted = [&](const std::string& rw, const std::string& policy, double bs) {
    std::string pol = policy;
    if (policy == "hybrid") // hybrid takes one of the two paths by size
      pol = bs >= (rw == "write" ? p.policy.write_threshold : p.policy.read_threshold) ? "direct" : "buffered";
    for (const auto& b : rr.bench)
      if (b.rw == rw && b.policy == pol && std::fabs(b.bs - bs) < 0.5)
        return b.gbps;
    return -1.0;
  };
  auto measured = [&](const std::string& rw, const std::string& policy, double bs) -> const BenchPoint* {
    for (const auto& m : bf.points)
      if (m.rw == rw && m.policy == policy && std::fabs(m.bs - bs) < 0.5)
        return &m;
    if (policy == "hybrid") { // a fio file has no hybrid rows: the path hybrid takes at this size
      std::string pol = bs >= (rw == "write" ? p.policy.write_threshold : p.policy.read_threshold) ? "direct" : "buffered";
      for (const auto& m : bf.points)
        if (m.rw == rw && m.policy == pol && std::fabs(m.bs - bs) < 0.5)
          return &m;
    }
    return nullptr;
  };
  // A held-out point is judged only if its repetitions agree to within the limit: a prediction
  // cannot be checked more tightly than the measurement reproduces itself.
  std::cout << "\n  rw     policy     block       measured  predicted   error  spread  used for\n";
  double worst = 0, worst_all = 0;
  int checked = 0, noisy = 0;
  for (const char* rw : {"write", "read"})
    for (const char* policy : {"buffered", "direct", "hybrid"})
      for (double bs : all_sizes) {
        const BenchPoint* m = measured(rw, policy, bs);
        double s = predicted(rw, policy, bs);
        if (m == nullptr || s <= 0)
          continue;
        bool fit = std::any_of(fit_sizes.begin(), fit_sizes.end(), [&](double f) { return std::fabs(f - bs) < 0.5; });
        double err = 100.0 * (s - m->gbps) / m->gbps;
        const char* use = "fit";
        if (not fit) {
          worst_all = std::max(worst_all, std::fabs(err));
          if (m->spread >= 0 && 100.0 * m->spread > max_error) {
            use = "prediction, too noisy to judge";
            noisy++;
          } else {
            use = "prediction";
            worst = std::max(worst, std::fabs(err));
            checked++;
          }
        }
        std::printf("  %-6s %-10s %-10s %8.3f  %9.3f  %+6.1f%%  %s  %s\n", rw, policy, format_bytes(bs).c_str(), m->gbps,
                    s, err, m->spread >= 0 ? strf("%4.0f%%", 100 * m->spread).c_str() : "   -", use);
      }
  std::printf("\n  held-out points: %d judged, worst error %.1f %% (limit %.1f %%); %d with repetition spread over the "
              "limit not judged; worst error over all held-out points %.1f %%\n",
              checked, worst, max_error, noisy, worst_all);
  if (not platform_out.empty()) {
    std::ofstream out(platform_out);
    if (not out)
      throw ConfigError("cannot write '" + platform_out + "'");
    out << "# hybridio-sim description calibrated from " << bench_path << "\n";
    for (const auto& [k, v] : fitted)
      out << k << " = " << v << "\n";
  }
  if (checked == 0) {
    std::cerr << "hybridio-sim: calibrate: no held-out block size to predict\n";
    return 1;
  }
  return worst <= max_error ? 0 : 1;
}

} // namespace hiosim
