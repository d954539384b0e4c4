/* learned: per-client threshold learning at scale (see learned.hpp). */
#include "learned.hpp"
#include "config.hpp"
#include "policy.hpp"
#include "units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>

namespace hiosim {
namespace {

constexpr int kClasses        = 13; // 64 KiB .. 256 MiB
constexpr double kSmallest    = 65536;
constexpr double kMinLog2     = 16; // thresholds kept within [64 KiB, 512 MiB]
constexpr double kMaxLog2     = 29;

double class_size(int k) { return kSmallest * std::exp2(k); }

struct Client {
  double log2_threshold = 21;
  double hysteresis     = 0;
};

/* One client's bytes and requests per path for one round. */
struct Split {
  double direct = 0, direct_reqs = 0, buffered = 0, buffered_calls = 0;
};

/* The policy core decides each size class with the client's threshold (write and stream). */
Split split_for(const hio_policy_config& base, double threshold, double shard, double exploration)
{
  hio_policy_config cfg = base;
  cfg.mode              = HIO_MODE_HYBRID;
  cfg.write_threshold   = static_cast<uint64_t>(std::llround(threshold));
  cfg.stream_threshold  = cfg.write_threshold;
  CacheFacts empty;
  empty.probe = [](double& cached, double& dirty) { cached = dirty = 0; };
  Split s;
  double per_class = shard / kClasses;
  int nearest_other = -1; // the class across the threshold nearest to it: where exploration goes
  double nearest_gap = 1e300;
  bool direct_of[kClasses];
  for (int k = 0; k < kClasses; k++) {
    RequestFacts f;
    f.op        = Op::Write;
    f.length    = static_cast<uint64_t>(class_size(k));
    f.offset    = 0;
    f.file_size = f.length;
    direct_of[k] = decide_request(cfg, f, empty).path == HIO_PATH_DIRECT;
    (direct_of[k] ? s.direct : s.buffered) += per_class;
    (direct_of[k] ? s.direct_reqs : s.buffered_calls) += per_class / class_size(k);
  }
  for (int k = 0; k < kClasses; k++) { // nearest class on the other side of the threshold
    double gap = std::fabs(std::log2(class_size(k)) - std::log2(threshold));
    bool other = direct_of[k] != (class_size(k) >= threshold);
    if (other)
      continue; // decided against its size (a rule other than the size): not an exploration target
    if (gap < nearest_gap) {
      nearest_gap   = gap;
      nearest_other = k;
    }
  }
  if (exploration > 0 && nearest_other >= 0) {
    // Move `exploration` of the bytes of the nearest class (or its neighbour across) to the
    // other path: from buffered to direct if the client is mostly buffered, else the reverse.
    double moved = std::min(exploration * shard, per_class);
    bool to_direct = s.direct <= s.buffered;
    double size = class_size(nearest_other);
    if (to_direct && s.buffered >= moved) {
      s.buffered -= moved;
      s.buffered_calls -= moved / size;
      s.direct += moved;
      s.direct_reqs += moved / size;
    } else if (not to_direct && s.direct >= moved) {
      s.direct -= moved;
      s.direct_reqs -= moved / size;
      s.buffered += moved;
      s.buffered_calls += moved / size;
    }
  }
  return s;
}

/* The common rate of every direct transfer: each client's direct requests are spread through its
 * checkpoint, so the OSTs see sum(direct_i / time_i) on average; at the thread's stream cap while
 * that fits the OSTs, else the rate at which it just fits (bisection: the load falls with the rate). */
double direct_rate(const std::vector<double>& direct, const std::vector<double>& fixed_s, double ost_bw, double cap)
{
  auto load = [&](double r) {
    double sum = 0;
    for (size_t i = 0; i < direct.size(); i++)
      if (direct[i] > 0)
        sum += direct[i] / (fixed_s[i] + direct[i] / r);
    return sum;
  };
  if (load(cap) <= ost_bw)
    return cap;
  double lo = 0, hi = cap;
  for (int it = 0; it < 60; it++) {
    double mid = 0.5 * (lo + hi);
    (load(mid) > ost_bw ? hi : lo) = mid;
  }
  return lo;
}

struct RoundCosts {
  std::vector<Split> split;
  std::vector<double> buffered_s, transfer_s, total_s;
  double rate = 0; // every direct transfer's rate this round
};

RoundCosts round_costs(const Params& p, const std::vector<double>& thresholds, double shard, double exploration)
{
  RoundCosts rc;
  size_t n = thresholds.size();
  std::vector<double> direct_bytes(n);
  for (size_t i = 0; i < n; i++) {
    if (i > 0 && thresholds[i] == thresholds[i - 1])
      rc.split.push_back(rc.split.back()); // the same threshold decides the same way
    else
      rc.split.push_back(split_for(p.policy.core, thresholds[i], shard, exploration));
    direct_bytes[i] = rc.split.back().direct;
  }
  double ost_bw = p.fs.oss * p.fs.osts_per_oss * p.fs.ost_write_bw;
  std::vector<double> fixed_s; // buffered time and direct latencies: no OST bandwidth used
  for (size_t i = 0; i < n; i++) {
    const Split& s = rc.split[i];
    double b = s.buffered_calls * p.client.buffered_write_cost + s.buffered / p.client.copy_bw_write;
    rc.buffered_s.push_back(b);
    fixed_s.push_back(b + s.direct_reqs * p.client.direct_write_lat);
  }
  rc.rate = direct_rate(direct_bytes, fixed_s, ost_bw, p.client.direct_write_stream_bw);
  for (size_t i = 0; i < n; i++) {
    rc.transfer_s.push_back(direct_bytes[i] / rc.rate);
    rc.total_s.push_back(fixed_s[i] + rc.transfer_s[i]);
  }
  return rc;
}

void check(bool ok, const char* what)
{
  if (not ok)
    throw std::invalid_argument(what);
}

} // namespace

double static_checkpoint_time(const Params& p, const LearnParams& lp, double threshold)
{
  std::vector<double> th(static_cast<size_t>(lp.clients), threshold);
  RoundCosts rc = round_costs(p, th, lp.shard, 0);
  return *std::max_element(rc.total_s.begin(), rc.total_s.end());
}

LearnResult run_learned(const Params& p, const LearnParams& lp)
{
  check(lp.clients >= 1 && lp.rounds >= 4, "learn: clients >= 1 and rounds >= 4");
  check(lp.exploration >= 0 && lp.exploration <= 0.03, "learn: exploration must be within [0, 0.03]");
  check(lp.damping > 0 && lp.damping <= 1, "learn: damping must be within (0, 1]");
  check(lp.hysteresis >= 0 && lp.noise >= 0, "learn: hysteresis and noise must not be negative");
  std::mt19937_64 rng(lp.seed);
  std::uniform_real_distribution<double> uni(0, 1);
  std::normal_distribution<double> gauss(0, 1);
  double start = lp.initial_threshold > 0 ? lp.initial_threshold : static_cast<double>(p.policy.core.write_threshold);
  std::vector<Client> clients(static_cast<size_t>(lp.clients));
  for (auto& c : clients) {
    c.log2_threshold = std::log2(start);
    c.hysteresis     = lp.hysteresis * uni(rng);
  }
  LearnResult res;
  double lat = p.client.direct_write_lat;
  for (int r = 0; r < lp.rounds; r++) {
    std::vector<double> th;
    for (const auto& c : clients)
      th.push_back(std::exp2(c.log2_threshold));
    RoundCosts rc = round_costs(p, th, lp.shard, lp.exploration);
    LearnRound lr;
    double direct = 0, all = 0;
    int moved = 0;
    for (size_t i = 0; i < clients.size(); i++) {
      const Split& s = rc.split[i];
      direct += s.direct;
      all += s.direct + s.buffered;
      // What the client measures, each with its own noise.
      double buffered_rate = s.buffered > 0 ? s.buffered / rc.buffered_s[i] : p.client.copy_bw_write;
      buffered_rate *= std::max(0.1, 1 + lp.noise * gauss(rng));
      double direct_bw = s.direct > 0 ? rc.rate : p.client.direct_write_stream_bw;
      direct_bw *= std::max(0.1, 1 + lp.noise * gauss(rng));
      double per_byte_gain = 1 / buffered_rate - 1 / direct_bw;
      double target = per_byte_gain > 0 ? std::log2(lat / per_byte_gain) : kMaxLog2;
      target = std::clamp(target, kMinLog2, kMaxLog2);
      Client& c = clients[i];
      if (std::fabs(target - c.log2_threshold) > c.hysteresis) {
        double before = c.log2_threshold;
        c.log2_threshold += lp.damping * (target - c.log2_threshold);
        moved += std::fabs(c.log2_threshold - before) > 0.5;
      }
    }
    lr.direct_share = direct / all;
    lr.ckpt_s       = *std::max_element(rc.total_s.begin(), rc.total_s.end());
    lr.switched     = static_cast<double>(moved) / static_cast<double>(clients.size());
    std::sort(th.begin(), th.end());
    lr.median_threshold = th[th.size() / 2];
    res.rounds.push_back(lr);
  }
  size_t tail = std::max<size_t>(1, res.rounds.size() / 4), first_tail = res.rounds.size() - tail;
  double lo = 1, hi = 0, sum_ckpt = 0, sum_share = 0;
  for (size_t i = first_tail; i < res.rounds.size(); i++) {
    lo = std::min(lo, res.rounds[i].direct_share);
    hi = std::max(hi, res.rounds[i].direct_share);
    sum_ckpt += res.rounds[i].ckpt_s;
    sum_share += res.rounds[i].direct_share;
  }
  res.amplitude         = hi - lo;
  res.mean_ckpt_s       = sum_ckpt / static_cast<double>(tail);
  res.mean_direct_share = sum_share / static_cast<double>(tail);
  res.goodput_gbps      = lp.shard * lp.clients / res.mean_ckpt_s / 1e9;
  res.converged_round   = 0;
  for (size_t i = res.rounds.size(); i-- > 0;)
    if (std::fabs(res.rounds[i].direct_share - res.mean_direct_share) > 0.05) {
      res.converged_round = i + 1 >= first_tail ? -1 : static_cast<int>(i + 1);
      break;
    }
  res.best_static_ckpt_s = 1e300;
  for (double l = kMinLog2; l <= kMaxLog2 + 1e-9; l += 0.25) {
    double t = static_checkpoint_time(p, lp, std::exp2(l));
    if (t < res.best_static_ckpt_s) {
      res.best_static_ckpt_s    = t;
      res.best_static_threshold = std::exp2(l);
    }
  }
  return res;
}

int cmd_learn(std::vector<std::string>& args)
{
  LearnParams lp;
  bool trace = false;
  std::vector<double> dampings = {1.0, 0.5, 0.2, 0.1}, hystereses = {0, 1};
  for (size_t i = 0; i < args.size(); i++) {
    auto val = [&](const std::string& opt) { return option_value(args, i, opt); };
    auto list = [](const std::string& v) {
      std::vector<double> out;
      size_t at = 0;
      while (at <= v.size()) {
        size_t comma = v.find(',', at);
        out.push_back(std::stod(v.substr(at, comma - at)));
        if (comma == std::string::npos)
          break;
        at = comma + 1;
      }
      return out;
    };
    const std::string& a = args[i];
    if (a.rfind("--clients", 0) == 0)
      lp.clients = std::stoi(val("--clients"));
    else if (a.rfind("--rounds", 0) == 0)
      lp.rounds = std::stoi(val("--rounds"));
    else if (a.rfind("--shard", 0) == 0)
      lp.shard = parse_bytes(val("--shard"));
    else if (a.rfind("--exploration", 0) == 0)
      lp.exploration = std::stod(val("--exploration"));
    else if (a.rfind("--damping", 0) == 0)
      dampings = list(val("--damping"));
    else if (a.rfind("--hysteresis", 0) == 0)
      hystereses = list(val("--hysteresis"));
    else if (a.rfind("--noise", 0) == 0)
      lp.noise = std::stod(val("--noise"));
    else if (a.rfind("--seed", 0) == 0)
      lp.seed = std::stoull(val("--seed"));
    else if (a.rfind("--initial-threshold", 0) == 0)
      lp.initial_threshold = parse_bytes(val("--initial-threshold"));
    else if (a == "--trace")
      trace = true;
    else if (a.rfind("--platform", 0) == 0)
      load_description_file(val("--platform"));
    else
      throw ConfigError("learn: unknown argument '" + a + "'");
  }
  Params p = params_from_config();
  double ost_bw = p.fs.oss * p.fs.osts_per_oss * p.fs.ost_write_bw;
  std::printf("learned thresholds: %d clients x %s per checkpoint, %d rounds, OSTs %.0f GB/s (%.2f GB/s per client), "
              "exploration %.1f %% of bytes, measurement noise %.0f %%\n",
              lp.clients, format_bytes(lp.shard).c_str(), lp.rounds, ost_bw / 1e9, ost_bw / lp.clients / 1e9,
              100 * lp.exploration, 100 * lp.noise);
  std::printf("  (amplitude, direct share, checkpoint, goodput and clients switched: over the last quarter of the rounds)\n"
              "  damping  hysteresis  converged  amplitude  direct share  ckpt (s)  vs best static  goodput GB/s  "
              "switched (late)\n");
  LearnResult last;
  for (double h : hystereses)
    for (double d : dampings) {
      lp.damping    = d;
      lp.hysteresis = h;
      LearnResult r = run_learned(p, lp);
      double max_switched = 0; // over the last quarter, as the amplitude
      for (size_t k = r.rounds.size() - std::max<size_t>(1, r.rounds.size() / 4); k < r.rounds.size(); k++)
        max_switched = std::max(max_switched, r.rounds[k].switched);
      std::printf("  %7.2f  %7.2f oct  %9s  %9.3f  %12.3f  %8.2f  %+13.1f%%  %12.0f  %11.0f%%\n", d, h,
                  r.converged_round < 0 ? "never" : strf("round %d", r.converged_round).c_str(), r.amplitude,
                  r.mean_direct_share, r.mean_ckpt_s, 100 * (r.mean_ckpt_s / r.best_static_ckpt_s - 1), r.goodput_gbps,
                  100 * max_switched);
      last = r;
      if (trace)
        for (size_t k = 0; k < r.rounds.size(); k++)
          std::printf("    round %3zu  direct share %.3f  ckpt %.2f s  median threshold %s  switched %.0f %%\n", k,
                      r.rounds[k].direct_share, r.rounds[k].ckpt_s, format_bytes(r.rounds[k].median_threshold).c_str(),
                      100 * r.rounds[k].switched);
    }
  std::printf("  best static threshold (every client, no exploration): %s, checkpoint %.2f s\n",
              format_bytes(last.best_static_threshold).c_str(), last.best_static_ckpt_s);
  return 0;
}

} // namespace hiosim
