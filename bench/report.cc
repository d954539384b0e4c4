// report.cc - see report.h.
#include "report.h"

#include <cmath>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>

#include "hybridio/policy.h"

namespace hybridio::bench {
namespace {

struct Stat3 {
  double min = 0, median = 0, max = 0;
};

Stat3 stat3(std::vector<double> v) {
  Stat3 s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  size_t m = v.size() / 2;
  s.median = v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
  return s;
}

template <typename F>
Stat3 over_runs(const ResultRow& row, F f) {
  std::vector<double> v;
  for (const RunSample& r : row.runs) v.push_back(f(r));
  return stat3(v);
}

double per_gb(double s, uint64_t bytes) { return bytes ? s / (bytes / 1e9) : 0; }

std::string human_ns(double ns) {
  char b[32];
  if (ns < 1e3)
    snprintf(b, sizeof b, "%.0fns", ns);
  else if (ns < 1e6)
    snprintf(b, sizeof b, "%.1fus", ns / 1e3);
  else if (ns < 1e9)
    snprintf(b, sizeof b, "%.2fms", ns / 1e6);
  else
    snprintf(b, sizeof b, "%.2fs", ns / 1e9);
  return b;
}

double path_share(const hio_stats& s, hio_op op, hio_path p) {
  uint64_t total = 0;
  for (int k = 0; k < HIO_PATH_COUNT; ++k) total += s.bytes[op][k];
  return total ? 100.0 * s.bytes[op][p] / total : 0;
}

void write_counters(JsonWriter& w, const hio_stats& s, hio_op op) {
  w.begin_object("counters");
  w.begin_object("requests");
  for (int p = 0; p < HIO_PATH_COUNT; ++p) w.field(hio_path_name(static_cast<hio_path>(p)), s.requests[op][p]);
  w.end_object();
  w.begin_object("bytes");
  for (int p = 0; p < HIO_PATH_COUNT; ++p) w.field(hio_path_name(static_cast<hio_path>(p)), s.bytes[op][p]);
  w.end_object();
  w.begin_object("rules");  // both directions: the library counts rules per process
  for (int r = 0; r < HIO_RULE_COUNT; ++r) {
    uint64_t n = hio_stats_rule_requests(&s, static_cast<hio_rule>(r));
    if (n) w.field(hio_rule_name(static_cast<hio_rule>(r)), n);
  }
  w.end_object();
  w.field("splits", s.splits).field("bounces", s.bounces).field("bounce_bytes", s.bounce_bytes);
  w.field("uring_requests", s.uring_requests).field("uring_chunks", s.uring_chunks);
  w.field("sync_fallback_requests", s.sync_fallback_requests);
  w.field("direct_open_refused", s.direct_open_refused).field("direct_io_refused", s.direct_io_refused);
  w.field("dontcache_refused", s.dontcache_refused).field("fsyncs", s.fsyncs);
  w.end_object();
}

}  // namespace

void add_run(ResultRow* row, const RunOutcome& run, hio_op op) {
  RunSample s;
  s.seconds = run.seconds;
  s.usr_s = run.usr_s;
  s.sys_s = run.sys_s;
  s.slowest_thread_s = run.slowest_thread_s;
  s.bytes = run.bytes[op];
  s.ios = run.ios[op];
  s.all_bytes = run.bytes[0] + run.bytes[1];
  s.page_cache_growth = run.page_cache_growth;
  s.memory = run.memory;
  row->runs.push_back(s);
  row->run_stats.push_back(run.stats);
  row->latency.merge(run.latency[op]);
}

size_t median_run(const ResultRow& row) {
  std::vector<size_t> idx(row.runs.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return row.runs[a].gbps() < row.runs[b].gbps(); });
  return idx.empty() ? 0 : idx[(idx.size() - 1) / 2];
}

double median_gbps(const ResultRow& row) {
  return over_runs(row, [](const RunSample& r) { return r.gbps(); }).median;
}

RoundRatios round_ratios(const ResultRow& row, const ResultRow& other) {
  std::vector<double> ratios;
  for (size_t i = 0; i < row.runs.size() && i < other.runs.size(); ++i)
    if (other.runs[i].gbps() > 0) ratios.push_back(row.runs[i].gbps() / other.runs[i].gbps());
  const Stat3 s = stat3(ratios);
  RoundRatios r;
  r.rounds = ratios.size();
  r.min = s.min;
  r.median = s.median;
  r.max = s.max;
  return r;
}

void print_table(FILE* out, const Report& r, const std::function<std::string(const std::string&)>& title) {
  std::string last_job;
  fprintf(out, "\n%s\n", machine_summary(r.machine).c_str());
  for (const ResultRow& row : r.rows) {
    if (row.job != last_job) {
      fprintf(out, "\n%s\n", title(row.job).c_str());
      fprintf(out, "%-10s %-5s %21s %10s %9s %9s %9s %8s %8s %7s %7s  %s\n", "policy", "rw", "GB/s median [min-max]",
              "IOPS", "lat p50", "p99", "p99.9", "usr s/GB", "sys s/GB", "direct", "cached", "notes");
      last_job = row.job;
    }
    const char* dir = row.op == HIO_OP_WRITE ? "write" : "read";
    if (row.status != "ok" || row.runs.empty()) {
      fprintf(out, "%-10s %-5s %21s  %s: %s\n", row.policy.c_str(), dir, "-", row.status == "ok" ? "skipped" : row.status.c_str(),
              row.reason.c_str());
      continue;
    }
    Stat3 g = over_runs(row, [](const RunSample& s) { return s.gbps(); });
    Stat3 iops = over_runs(row, [](const RunSample& s) { return s.iops(); });
    Stat3 usr = over_runs(row, [](const RunSample& s) { return per_gb(s.usr_s, s.all_bytes); });
    Stat3 sys = over_runs(row, [](const RunSample& s) { return per_gb(s.sys_s, s.all_bytes); });
    Stat3 cached = over_runs(row, [](const RunSample& s) { return s.cache_per_byte(); });
    double cached_percent = std::round(100 * cached.median);
    if (cached_percent == 0) cached_percent = 0;  // no "-0%"
    const hio_stats& st = row.run_stats[median_run(row)];
    char gb[64];
    snprintf(gb, sizeof gb, "%.3f [%.3f-%.3f]", g.median, g.min, g.max);
    std::string notes;
    for (const auto& n : row.notes) notes += (notes.empty() ? "" : "; ") + n;
    fprintf(out, "%-10s %-5s %21s %10.0f %9s %9s %9s %8.3f %8.3f %6.0f%% %6.0f%%  %s\n", row.policy.c_str(), dir, gb,
            iops.median, human_ns(row.latency.quantile(0.50)).c_str(), human_ns(row.latency.quantile(0.99)).c_str(),
            human_ns(row.latency.quantile(0.999)).c_str(), usr.median, sys.median, path_share(st, row.op, HIO_PATH_DIRECT),
            cached_percent, notes.c_str());
  }
}

std::string report_json(const Report& r) {
  JsonWriter w;
  w.begin_object();
  w.field("schema", kBenchSchema);
  w.field("kind", r.kind);
  w.begin_object("tool").field("name", "hybridio bench").field("version", std::to_string(HYBRIDIO_VERSION_MAJOR) + "." + std::to_string(HYBRIDIO_VERSION_MINOR)).end_object();
  w.begin_array("argv");
  for (const auto& a : r.argv) w.value(a);
  w.end_array();
  char when[64];
  time_t t = time(nullptr);
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
  w.field("time", when);
  write_machine_json(w, r.machine, r.file_bytes);
  w.field("cold", r.cold);
  if (r.write_settings) r.write_settings(w);
  if (r.write_extra) r.write_extra(w);
  w.begin_array("results");
  for (const ResultRow& row : r.rows) {
    if (row.status != "ok" || row.runs.empty()) continue;
    Stat3 g = over_runs(row, [](const RunSample& s) { return s.gbps(); });
    Stat3 iops = over_runs(row, [](const RunSample& s) { return s.iops(); });
    Stat3 usr = over_runs(row, [](const RunSample& s) { return per_gb(s.usr_s, s.all_bytes); });
    Stat3 sys = over_runs(row, [](const RunSample& s) { return per_gb(s.sys_s, s.all_bytes); });
    Stat3 slow = over_runs(row, [](const RunSample& s) { return s.slowest_thread_s; });
    size_t m = median_run(row);
    w.begin_object();
    w.field("job", row.job).field("policy", row.policy).field("engine", row.engine);
    w.field("rw", row.op == HIO_OP_WRITE ? "write" : "read").field("pattern", row.pattern);
    w.field("bs_bytes", row.bs_bytes).field("threads", row.threads);
    w.field("bytes", row.runs[m].bytes).field("reps", static_cast<unsigned>(row.runs.size()));
    w.field("gbps_median", g.median).field("gbps_min", g.min).field("gbps_max", g.max);
    w.field("iops_median", iops.median).field("iops_min", iops.min).field("iops_max", iops.max);
    w.begin_object("latency_ns")
        .field("p50", row.latency.quantile(0.50))
        .field("p90", row.latency.quantile(0.90))
        .field("p99", row.latency.quantile(0.99))
        .field("p99_9", row.latency.quantile(0.999))
        .field("mean", row.latency.mean())
        .field("max", row.latency.max())
        .field("count", row.latency.count())
        .end_object();
    w.begin_object("cpu_s_per_gb")
        .field("usr", usr.median)
        .field("sys", sys.median)
        .field("usr_min", usr.min)
        .field("usr_max", usr.max)
        .field("sys_min", sys.min)
        .field("sys_max", sys.max)
        .end_object();
    w.field("slowest_thread_s_median", slow.median);
    w.field("page_cache_per_byte_median",
            over_runs(row, [](const RunSample& s) { return s.cache_per_byte(); }).median);
    w.begin_array("notes");
    for (const auto& n : row.notes) w.value(n);
    w.end_array();
    write_counters(w, row.run_stats[m], row.op);
    w.begin_array("runs");
    for (const RunSample& s : row.runs) {
      w.begin_object()
          .field("seconds", s.seconds)
          .field("bytes", s.bytes)
          .field("ios", s.ios)
          .field("gbps", s.gbps())
          .field("iops", s.iops())
          .field("usr_s", s.usr_s)
          .field("sys_s", s.sys_s)
          .field("slowest_thread_s", s.slowest_thread_s)
          .field("page_cache_growth_bytes", static_cast<double>(s.page_cache_growth))
          .field("memory_stall_s", s.memory.stall_s)
          .field("memory_limit_hits", s.memory.limit_hits)
          .field("oom_kills", s.memory.oom_kills)
          .end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.begin_array("skipped");
  for (const ResultRow& row : r.rows) {
    if (row.status == "ok" && !row.runs.empty()) continue;
    w.begin_object()
        .field("job", row.job)
        .field("policy", row.policy)
        .field("rw", row.op == HIO_OP_WRITE ? "write" : "read")
        .field("status", row.status == "ok" ? "skipped" : row.status)
        .field("reason", row.reason)
        .end_object();
  }
  w.end_array();
  w.end_object();
  return w.str();
}

bool write_report_json(const Report& r, const std::string& path) {
  std::string doc = report_json(r);
  if (path == "-") {
    fwrite(doc.data(), 1, doc.size(), stdout);
    fflush(stdout);
    return true;
  }
  std::ofstream f(path);
  f << doc;
  f.close();
  if (!f) {
    fprintf(stderr, "hybridio bench: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

}  // namespace hybridio::bench
