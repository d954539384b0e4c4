/* calibration: bench JSON reader, model fit and prediction check (see calibration.hpp). */
#include "calibration.hpp"
#include "calibration_ratios.hpp"
#include "config.hpp"
#include "output.hpp"
#include "policy.hpp"
#include "simulation.hpp"
#include "units.hpp"

#include <nlohmann/json.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>

XBT_LOG_NEW_DEFAULT_CATEGORY(hio_calibration, "hybridio-sim calibration from bench JSON");

namespace hiosim {
namespace {

using nlohmann::json;

// The member `key` of `j`, or null when `j` is not an object or lacks it.
const json& member(const json& j, const char* key)
{
  static const json null;
  return j.is_object() && j.contains(key) ? j[key] : null;
}

// A number member, 0 when missing or not a number (reports write null for a value never measured).
double number_at(const json& j, const char* key)
{
  const json& v = member(j, key);
  return v.is_number() ? v.get<double>() : 0;
}

// A string member, "" when missing or not a string.
std::string text_at(const json& j, const char* key)
{
  const json& v = member(j, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

json read_json_file(const std::string& path)
{
  std::ifstream in(path);
  if (not in)
    throw std::runtime_error("cannot open '" + path + "'");
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

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
  const json doc = read_json_file(path);
  BenchFile bf;
  if (text_at(doc, "schema") != "hybridio-bench/1")
    throw std::runtime_error(path + ": field 'schema' must be \"hybridio-bench/1\"");
  const json& machine = member(doc, "machine");
  bf.file_bytes = number_at(machine, "file_bytes");
  bf.readahead  = number_at(member(machine, "filesystem"), "read_ahead_kb") * 1024;
  const json& res = member(doc, "results");
  if (not res.is_array() || res.empty())
    throw std::runtime_error(path + ": field 'results' must be a non-empty array");
  for (size_t i = 0; i < res.size(); i++) {
    const json& r = res[i];
    std::string where = path + ": results[" + std::to_string(i) + "]";
    auto need = [&](const char* key, json::value_t t) -> const json& {
      const json& v = member(r, key);
      if (v.type() != t && not(t == json::value_t::number_float && v.is_number()))
        throw std::runtime_error(where + ": field '" + key + "' missing or of the wrong type");
      return v;
    };
    BenchPoint p;
    p.rw     = need("rw", json::value_t::string).get<std::string>();
    p.policy = need("policy", json::value_t::string).get<std::string>();
    p.bs     = need("bs_bytes", json::value_t::number_float).get<double>();
    p.gbps   = need("gbps_median", json::value_t::number_float).get<double>();
    if (p.rw != "write" && p.rw != "read")
      throw std::runtime_error(where + ": field 'rw' must be \"write\" or \"read\"");
    if (p.policy != "buffered" && p.policy != "direct" && p.policy != "dontcache" && p.policy != "hybrid")
      throw std::runtime_error(where + ": field 'policy' must be buffered, direct, dontcache or hybrid");
    if (r.contains("gbps_min") && r.contains("gbps_max"))
      p.spread = (number_at(r, "gbps_max") - number_at(r, "gbps_min")) / p.gbps;
    if (stat == "max")
      p.gbps = need("gbps_max", json::value_t::number_float).get<double>();
    for (const json& run : member(r, "runs"))
      if (number_at(run, "gbps") > 0)
        p.runs.push_back(number_at(run, "gbps"));
    if (p.bs <= 0 || p.gbps <= 0)
      throw std::runtime_error(where + ": fields 'bs_bytes' and 'gbps_median' must be positive");
    const json& counters = member(r, "counters");
    const json& by       = member(counters, "bytes");
    double d = number_at(by, "direct"), all = d;
    for (const char* k : {"buffered", "dontcache"})
      all += number_at(by, k);
    if (all > 0) {
      p.direct_share   = d / all;
      p.uncached_share = number_at(by, "dontcache") / all;
    }
    bf.points.push_back(p);
    // The library's engine cut each direct request of this size into uring_chunks/uring_requests chunks.
    double reqs = number_at(counters, "uring_requests"), chunks = number_at(counters, "uring_chunks");
    if (reqs > 0 && chunks > reqs) {
      double chunk = std::exp2(std::round(std::log2(p.bs * reqs / chunks)));
      bf.direct_chunk = bf.direct_chunk > 0 ? std::min(bf.direct_chunk, chunk) : chunk;
      int depth = 8; // HYBRIDIO_QUEUE_DEPTH's default, kept when the job's iodepth is 0
      if (r.contains("job"))
        for (const json& j : member(doc, "jobs"))
          if (j.contains("name") && j["name"] == r["job"] && number_at(member(j, "settings"), "iodepth") > 0)
            depth = static_cast<int>(number_at(member(j, "settings"), "iodepth"));
      bf.direct_queue_depth = std::max(bf.direct_queue_depth, depth);
    }
  }
  return bf;
}

namespace {

// Nelder-Mead on f(x), a few hundred evaluations: enough for the three-parameter direct form.
std::vector<double> nelder_mead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> x0)
{
  size_t n = x0.size();
  std::vector<std::vector<double>> v(n + 1, x0);
  for (size_t i = 0; i < n; i++)
    v[i + 1][i] += 0.5;
  std::vector<double> fv(n + 1);
  for (size_t i = 0; i <= n; i++)
    fv[i] = f(v[i]);
  for (int it = 0; it < 2000; it++) {
    std::vector<size_t> idx(n + 1);
    for (size_t i = 0; i <= n; i++)
      idx[i] = i;
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return fv[a] < fv[b]; });
    size_t best = idx[0], worst = idx[n], second = idx[n - 1];
    if (std::fabs(fv[worst] - fv[best]) < 1e-14)
      break;
    std::vector<double> c(n, 0.0);
    for (size_t i = 0; i <= n; i++)
      if (i != worst)
        for (size_t k = 0; k < n; k++)
          c[k] += v[i][k] / n;
    auto along = [&](double t) {
      std::vector<double> x(n);
      for (size_t k = 0; k < n; k++)
        x[k] = c[k] + t * (v[worst][k] - c[k]);
      return x;
    };
    auto xr = along(-1);
    double fr = f(xr);
    if (fr < fv[best]) {
      auto xe = along(-2);
      double fe = f(xe);
      if (fe < fr)
        v[worst] = xe, fv[worst] = fe;
      else
        v[worst] = xr, fv[worst] = fr;
    } else if (fr < fv[second]) {
      v[worst] = xr, fv[worst] = fr;
    } else {
      auto xc = along(0.5);
      double fc = f(xc);
      if (fc < fv[worst]) {
        v[worst] = xc, fv[worst] = fc;
      } else {
        for (size_t i = 0; i <= n; i++)
          if (i != best) {
            for (size_t k = 0; k < n; k++)
              v[i][k] = v[best][k] + 0.5 * (v[i][k] - v[best][k]);
            fv[i] = f(v[i]);
          }
      }
    }
  }
  size_t best = 0;
  for (size_t i = 1; i <= n; i++)
    if (fv[i] < fv[best])
      best = i;
  return v[best];
}

} // namespace

double direct_request_time(double bs, double lat, double stream_bw, double queue_bw, const FitSetup& setup)
{
  double q = queue_bw > 0 ? queue_bw : 1e300;
  if (setup.chunk <= 0 || bs < 2 * setup.chunk - 1e-9)
    return lat + bs / std::min(stream_bw, q);
  double n = std::ceil(bs / setup.chunk - 1e-9);
  double d = std::min<double>(setup.queue_depth, n);
  return n / d * lat + bs / std::min(q, d * stream_bw);
}

Calibration fit_calibration(const std::vector<BenchPoint>& pts, const std::vector<double>& fit_sizes,
                            const FitSetup& setup)
{
  Calibration c;
  auto fit_direct = [&](const char* rw, double& lat, double& bw, double& queue) {
    std::vector<double> x, y; // requests that go out whole: seconds per request against size
    std::vector<const BenchPoint*> all = select(pts, rw, "direct", fit_sizes);
    for (auto* p : all)
      if (setup.chunk <= 0 || p->bs < 2 * setup.chunk - 1e-9) {
        x.push_back(p->bs);
        y.push_back(p->bs / (p->gbps * 1e9));
      }
    if (x.size() < 2)
      throw std::runtime_error(std::string("calibration: need two fit block sizes below two chunks for direct ") + rw);
    auto [a, b] = fit_line(x, y);
    lat   = std::max(1e-9, a);
    bw    = b > 0 ? 1.0 / b : 1e12;
    queue = 0;
    if (x.size() == all.size())
      return; // no chunked request among the fit sizes: latency + stream bandwidth
    // With chunked requests the three parameters are fitted together on every fit size.
    auto err = [&](const std::vector<double>& v) {
      double e = 0;
      for (auto* p : all) {
        double t = p->bs / (p->gbps * 1e9);
        double m = direct_request_time(p->bs, std::exp(v[0]), std::exp(v[1]), std::exp(v[2]), setup);
        e += (m - t) * (m - t) / (t * t);
      }
      return e;
    };
    auto v = nelder_mead(err, {std::log(lat), std::log(bw), std::log(bw)});
    lat   = std::exp(v[0]);
    bw    = std::exp(v[1]);
    queue = std::exp(v[2]);
  };
  fit_direct("write", c.direct_write_lat, c.direct_write_bw, c.direct_write_queue_bw);
  fit_direct("read", c.direct_read_lat, c.direct_read_bw, c.direct_read_queue_bw);

  // Buffered write with end fsync: a per-call cost and a per-byte cost. The copy into the page
  // cache, the allocation of its pages and the writeback at fsync all cost per byte; one
  // measurement cannot tell them apart, so the copy bandwidth carries them all and the local
  // disk does not bound the writeback (direct writes are bounded by their own stream).
  c.disk_write_bw    = 1e12;
  double wb_per_byte = c.direct_write_lat / (setup.writeback_req * setup.writeback_inflight);
  // Writes through the cache: cost / b + per byte, fitted on the rows of `policy`; false when
  // the report has no write rows of it (select() throws when it has fewer than two fit sizes).
  auto fit_cached_write = [&](const char* policy, double& cost, double& bw) {
    const bool some = std::any_of(pts.begin(), pts.end(), [&](const BenchPoint& p) {
      return p.rw == "write" && p.policy == policy;
    });
    if (!some)
      return false;  // select() says what is missing when there are some, but too few
    std::vector<double> x, y;
    for (auto* p : select(pts, "write", policy, fit_sizes)) {
      x.push_back(1.0 / p->bs);
      y.push_back(std::max(1e-12, 1.0 / (p->gbps * 1e9) - wb_per_byte));
    }
    auto [a, b] = fit_line(x, y);
    cost = std::max(0.0, b);
    bw   = a > 0 ? 1.0 / a : 1e12;
    return true;
  };
  if (!fit_cached_write("buffered", c.buffered_write_cost, c.copy_write_bw))
    throw std::runtime_error("calibration: need two fit block sizes for buffered write");
  fit_cached_write("dontcache", c.uncached_write_cost, c.copy_write_uncached_bw);
  {
    // Reads up to the readahead window: cost / b + 1 / min(copy, fetch).
    std::vector<double> x, y, big_b, big_y;
    for (auto* p : select(pts, "read", "buffered", fit_sizes)) {
      if (setup.readahead > 0 && p->bs > setup.readahead) {
        big_b.push_back(p->bs);
        big_y.push_back(1.0 / (p->gbps * 1e9));
      } else {
        x.push_back(1.0 / p->bs);
        y.push_back(1.0 / (p->gbps * 1e9));
      }
    }
    if (x.size() < 2)
      throw std::runtime_error("calibration: need two fit block sizes within the readahead window for buffered read");
    auto [a, b] = fit_line(x, y);
    c.buffered_read_cost = std::max(0.0, b);
    double slow = a > 0 ? a : 1e-12; // 1 / min(copy, fetch)
    c.copy_read_bw = c.disk_read_bw = 1.0 / slow;
    if (not big_b.empty()) {
      // Larger reads: cost / b + 1 / copy + 1 / fetch. Their per-byte time beyond the slower of
      // the two is the faster one; the device is taken to be the slower (a memory copy is fast).
      double sw = 0, sum = 0;
      for (size_t i = 0; i < big_b.size(); i++) {
        double w = 1.0 / (big_y[i] * big_y[i]);
        sw += w;
        sum += w * (big_y[i] - c.buffered_read_cost / big_b[i]);
      }
      double fast = std::clamp(sum / sw - slow, 0.0, slow);
      c.copy_read_bw = fast > 0 ? 1.0 / fast : 1e12;
    }
    // The disk also bounds direct reads in the simulation: never below what they reach. Where
    // the buffered stream fetches slower, that is the readahead's pace, not the disk's (this VM:
    // 2.0 GB/s buffered, 2.8 direct with 8 chunks in flight, warm memory for both).
    double direct_bound = c.direct_read_queue_bw > 0 ? c.direct_read_queue_bw : c.direct_read_bw;
    if (c.disk_read_bw < direct_bound)
      c.readahead_bw = c.disk_read_bw;
    c.disk_read_bw = std::max(c.disk_read_bw, direct_bound);
  }
  return c;
}

int cmd_calibrate(std::vector<std::string>& args)
{
  std::string bench_path, platform_out;
  std::vector<double> fit_sizes;
  double max_error = 15;
  double chunk_opt = -1, readahead_opt = -1; // -1: from the report
  std::string stat = "median";
  for (size_t i = 0; i < args.size(); i++) {
    auto val = [&](const std::string& opt) { return option_value(args, i, opt); };
    const std::string& a = args[i];
    if (a.rfind("--bench", 0) == 0)
      bench_path = val("--bench");
    else if (a.rfind("--fit-sizes", 0) == 0)
      fit_sizes = parse_bytes_list(val("--fit-sizes"));
    else if (a.rfind("--max-error", 0) == 0)
      max_error = std::stod(val("--max-error"));
    else if (a.rfind("--stat", 0) == 0)
      stat = val("--stat");
    else if (a.rfind("--direct-chunk", 0) == 0)
      chunk_opt = parse_bytes(val("--direct-chunk"));
    else if (a.rfind("--readahead", 0) == 0)
      readahead_opt = parse_bytes(val("--readahead"));
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
  FitSetup setup;
  setup.writeback_req      = base.client.writeback_req;
  setup.writeback_inflight = base.client.writeback_inflight;
  setup.chunk              = chunk_opt >= 0 ? chunk_opt : bf.direct_chunk;
  setup.queue_depth        = bf.direct_queue_depth > 0 ? bf.direct_queue_depth : base.client.direct_queue_depth;
  setup.readahead          = readahead_opt >= 0 ? readahead_opt : bf.readahead;
  Calibration c = fit_calibration(bf.points, fit_sizes, setup);

  std::vector<std::pair<std::string, std::string>> fitted = {
      {"fs/kind", "local"},
      {"fs/ost-write-bw", strf("%.6g", c.disk_write_bw)},
      {"fs/ost-read-bw", strf("%.6g", c.disk_read_bw)},
      {"client/direct-write-latency", strf("%.6g", c.direct_write_lat)},
      {"client/direct-read-latency", strf("%.6g", c.direct_read_lat)},
      {"client/direct-write-stream-bw", strf("%.6g", c.direct_write_bw)},
      {"client/direct-read-stream-bw", strf("%.6g", c.direct_read_bw)},
      {"client/direct-write-queue-bw", strf("%.6g", c.direct_write_queue_bw)},
      {"client/direct-read-queue-bw", strf("%.6g", c.direct_read_queue_bw)},
      {"client/direct-chunk", strf("%.0f", setup.chunk)},
      {"client/direct-queue-depth", strf("%d", setup.queue_depth)},
      {"client/readahead", strf("%.0f", setup.readahead)},
      {"client/buffered-write-cost", strf("%.6g", c.buffered_write_cost)},
      {"client/buffered-read-cost", strf("%.6g", c.buffered_read_cost)},
      {"client/copy-bw-write", strf("%.6g", c.copy_write_bw)},
      {"client/copy-bw-read", strf("%.6g", c.copy_read_bw)},
      {"client/readahead-bw", strf("%.6g", c.readahead_bw)},
  };
  const bool uncached_fitted = c.copy_write_uncached_bw > 0;
  if (uncached_fitted) {
    fitted.push_back({"client/copy-bw-write-uncached", strf("%.6g", c.copy_write_uncached_bw)});
    fitted.push_back({"client/uncached-write-cost", strf("%.6g", c.uncached_write_cost)});
  }
  auto queue_text = [](double q) { return q > 0 ? strf(", at most %.3f GB/s in flight", q / 1e9) : std::string(); };
  std::cout << "calibrated on block sizes:";
  for (double s : fit_sizes)
    std::cout << " " << format_bytes(s);
  if (setup.chunk > 0)
    std::cout << "  (direct requests of 2 chunks or more as " << format_bytes(setup.chunk) << " chunks, "
              << setup.queue_depth << " in flight)";
  if (setup.readahead > 0)
    std::cout << "  (readahead " << format_bytes(setup.readahead) << ")";
  std::cout << "\n  direct write: " << strf("%.1f", c.direct_write_lat * 1e6) << " us/request + "
            << strf("%.3f", c.direct_write_bw / 1e9) << " GB/s" << queue_text(c.direct_write_queue_bw)
            << ";  direct read: " << strf("%.1f", c.direct_read_lat * 1e6) << " us/request + "
            << strf("%.3f", c.direct_read_bw / 1e9) << " GB/s" << queue_text(c.direct_read_queue_bw) << "\n"
            << "  buffered write: " << strf("%.2f", c.buffered_write_cost * 1e6) << " us/call, copy "
            << strf("%.3f", c.copy_write_bw / 1e9) << " GB/s;  buffered read: "
            << strf("%.2f", c.buffered_read_cost * 1e6) << " us/call, copy "
            << (c.copy_read_bw >= 1e12 ? std::string("not limiting") : strf("%.3f GB/s", c.copy_read_bw / 1e9))
            << ", fetch " << strf("%.3f GB/s", (c.readahead_bw > 0 ? c.readahead_bw : c.disk_read_bw) / 1e9)
            << (c.readahead_bw > 0 ? strf(" (readahead; the disk %.3f GB/s)", c.disk_read_bw / 1e9) : std::string())
            << "\n";
  if (uncached_fitted)
    std::cout << "  uncached write: " << strf("%.2f", c.uncached_write_cost * 1e6) << " us/call, "
              << strf("%.3f", c.copy_write_uncached_bw / 1e9) << " GB/s\n";
  for (const auto& [k, v] : fitted)
    set_flag(k, v);
  set_flag("workload/kind", "bench");
  std::string sizes;
  for (double s : all_sizes)
    sizes += (sizes.empty() ? "" : ",") + strf("%.0f", s);
  set_flag("workload/bench-sizes", sizes);
  if (bf.file_bytes > 0)
    set_flag("workload/bench-bytes", strf("%.0f", bf.file_bytes));
  set_flag("policy/list", uncached_fitted ? "buffered,direct,dontcache" : "buffered,direct");
  set_flag("pagecache/eager-writeback", "off");
  Params p     = params_from_config();
  RunResult rr = run_simulation(p);

  // Without dontcache rows in the report, the simulation has buffered and direct only: an
  // uncached decision is then counted as buffered.
  auto hybrid_path = [&](const std::string& rw, double bs) -> std::string {
    Path path = stream_path(Policy::Hybrid, p.policy, rw == "write" ? Op::Write : Op::Read,
                            static_cast<uint64_t>(std::llround(bs)));
    return path == Path::Direct ? "direct" : "buffered";
  };
  auto simulated = [&](const std::string& rw, const std::string& pol, double bs) {
    for (const auto& b : rr.bench)
      if (b.rw == rw && b.policy == pol && std::fabs(b.bs - bs) < 0.5)
        return b.gbps;
    return -1.0;
  };
  auto predicted = [&](const std::string& rw, const std::string& policy, double bs, const BenchPoint* m) {
    if (policy != "hybrid")
      return simulated(rw, policy, bs);
    if (m != nullptr && m->policy == "hybrid" && m->direct_share >= 0) {
      // The bytes go the way the library's counters say they went (its rules are more than size).
      double d = simulated(rw, "direct", bs), b = simulated(rw, "buffered", bs);
      double u = uncached_fitted && rw == "write" ? simulated(rw, "dontcache", bs) : b;
      double us = std::max(0.0, m->uncached_share);
      if (d <= 0 || b <= 0 || u <= 0)
        return -1.0;
      return 1.0 / (m->direct_share / d + us / u + std::max(0.0, 1 - m->direct_share - us) / b);
    }
    // Without counters: the path the policy core gives a steady sequential stream of this size.
    return simulated(rw, hybrid_path(rw, bs), bs);
  };
  auto measured = [&](const std::string& rw, const std::string& policy, double bs) -> const BenchPoint* {
    for (const auto& m : bf.points)
      if (m.rw == rw && m.policy == policy && std::fabs(m.bs - bs) < 0.5)
        return &m;
    if (policy == "hybrid") { // a fio file has no hybrid rows: the path hybrid takes at this size
      std::string pol = hybrid_path(rw, bs);
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
  int checked = 0, noisy = 0, held_out = 0, within = 0, within_spread = 0, with_spread = 0;
  std::string worst_where;
  for (const char* rw : {"write", "read"})
    for (const char* policy : {"buffered", "direct", "dontcache", "hybrid"})
      for (double bs : all_sizes) {
        const BenchPoint* m = measured(rw, policy, bs);
        double s = predicted(rw, policy, bs, m);
        if (m == nullptr || s <= 0)
          continue;
        bool fit = std::any_of(fit_sizes.begin(), fit_sizes.end(), [&](double f) { return std::fabs(f - bs) < 0.5; });
        double err = 100.0 * (s - m->gbps) / m->gbps;
        const char* use = "fit";
        if (not fit) {
          held_out++;
          within += std::fabs(err) <= max_error;
          if (m->spread >= 0) {
            with_spread++;
            within_spread += std::fabs(err) <= 100.0 * m->spread;
          }
          if (std::fabs(err) > worst_all) {
            worst_all   = std::fabs(err);
            worst_where = std::string(rw) + " " + policy + " " + format_bytes(bs);
          }
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
  std::printf("\n  held-out points: %d of %d within %.1f %%; worst error over all held-out points %.1f %% (%s)\n",
              within, held_out, max_error, worst_all, worst_where.c_str());
  std::printf("  judged (repetitions spread within the limit): %d, worst error %.1f %%; %d with repetition spread over the "
              "limit not judged\n",
              checked, worst, noisy);
  if (with_spread > 0)
    std::printf("  held-out absolute predictions within their point's own repetition spread ((max - min) / median): "
                "%d of %d\n",
                within_spread, with_spread);
  // A hybrid row whose bytes all went one way is a second measurement of that path, interleaved
  // with the first: how far the two disagree is what the machine lets any model be judged to.
  std::vector<std::pair<double, std::string>> twice;
  for (const auto& h : bf.points) {
    if (h.policy != "hybrid" || (h.direct_share != 0 && h.direct_share != 1))
      continue;
    const char* path = h.direct_share == 1 ? "direct" : "buffered";
    for (const auto& o : bf.points)
      if (o.rw == h.rw && o.policy == path && std::fabs(o.bs - h.bs) < 0.5)
        twice.push_back({100.0 * std::fabs(h.gbps - o.gbps) / std::min(h.gbps, o.gbps),
                         h.rw + " " + path + " " + format_bytes(h.bs)});
  }
  if (not twice.empty()) {
    std::sort(twice.begin(), twice.end());
    std::printf("  the same path measured twice (hybrid rows whose bytes all went one way, against that path's row): "
                "%zu pairs differ by %.1f %% (median), at most %.1f %% (%s)\n",
                twice.size(), twice[twice.size() / 2].first, twice.back().first, twice.back().second.c_str());
  }
  // The calibration target: ratios, which drift between runs cannot move.
  std::vector<double> held_sizes;
  for (double bs : all_sizes)
    if (std::none_of(fit_sizes.begin(), fit_sizes.end(), [&](double f) { return std::fabs(f - bs) < 0.5; }))
      held_sizes.push_back(bs);
  print_ratio_table(ratio_rows(bf.points, held_sizes,
                               [&](const std::string& rw, const std::string& policy, double bs) {
                                 return predicted(rw, policy, bs, measured(rw, policy, bs));
                               }),
                    max_error);
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
