// measure_loop.cc - see measure_loop.h.
#include "measure_loop.h"

#include <unistd.h>

#include <cstdio>

#include "progress.h"

namespace hybridio::bench {

std::string skip_reason(hio_mode policy, const MachineInfo& m) {
  if (policy == HIO_MODE_DIRECT && !m.o_direct) return "the filesystem refuses O_DIRECT (" + m.o_direct_error + ")";
  if (policy == HIO_MODE_DONTCACHE && !m.rwf_dontcache) return "RWF_DONTCACHE refused here (" + m.rwf_dontcache_error + ")";
  return "";
}

MeasureOutcome measure_policies(const MeasurePlan& plan, const MachineInfo& machine, Report* report) {
  MeasureOutcome out;
  out.first_row = report->rows.size();
  const size_t n_ops = plan.ops.size();
  for (hio_mode p : plan.policies)
    for (hio_op op : plan.ops) {
      ResultRow row = plan.row;
      row.policy = hio_mode_name(p);
      row.op = op;
      if (plan.routes_by_policy) row.reason = skip_reason(p, machine);
      if (!row.reason.empty()) row.status = "skipped";
      report->rows.push_back(row);
    }
  auto row_of = [&](size_t pi, hio_op op) -> ResultRow& {
    size_t k = 0;
    while (k + 1 < n_ops && plan.ops[k] != op) ++k;
    return report->rows[out.first_row + pi * n_ops + k];
  };
  auto measurable = [&](size_t pi) { return row_of(pi, plan.ops[0]).status == "ok"; };

  uint64_t total = 0;
  for (size_t pi = 0; pi < plan.policies.size(); ++pi)
    if (measurable(pi)) total += plan.bytes_per_trial * plan.repeat;
  Progress progress(total);
  auto warm_up = [&](hio_mode mode) {
    if (!plan.warm_up_bytes || !out.warm_up_error.empty()) return;
    progress.set_label(std::string(hio_mode_name(mode)) + " warm-up");
    std::string why = warm_page_cache_memory(plan.warm_up_dir, plan.warm_up_bytes);
    if (!why.empty()) {
      out.warm_up_error = why;
      fprintf(stderr, "%s: page-cache memory warm-up failed, continuing without: %s\n", plan.prog, why.c_str());
    }
  };

  // Interleave: every round runs every policy, and each round starts one
  // policy later, so that none always follows the same neighbour (on VMs,
  // whether page-cache memory was recently freed by the previous run
  // changes buffered throughput a lot).
  for (unsigned round = 0; round < plan.repeat && out.status == 0; ++round) {
    for (size_t k = 0; k < plan.policies.size() && out.status == 0; ++k) {
      const size_t pi = (k + round) % plan.policies.size();
      if (!measurable(pi)) continue;
      const hio_mode mode = plan.policies[pi];
      set_library_policy(mode, plan.queue_depth);
      Trial trial = plan.make_trial(mode, round);
      std::vector<RunOutcome> runs;
      std::string error;
      for (Phase& phase : trial.phases) {
        if (phase.before) phase.before();
        if (phase.cold) report->cold = plan.drop_caches ? drop_caches(plan.files) : "none";
        warm_up(mode);
        if (phase.last) phase.last();
        phase.config.progress = &progress;
        progress.set_label(phase.label);
        runs.push_back(phase.run ? phase.run(phase.config) : run_threads(phase.plans, phase.config));
        error = runs.back().error;
        if (error.empty() && phase.check) error = phase.check();
        if (!error.empty()) break;
      }
      if (plan.remove_files_after_trial)
        for (const std::string& f : plan.files) unlink(f.c_str());
      if (!error.empty()) {
        progress.finish();
        fprintf(stderr, "%s: %spolicy %s: %s\n", plan.prog, plan.context.c_str(), hio_mode_name(mode), error.c_str());
        for (hio_op op : plan.ops) {
          row_of(pi, op).status = "failed";
          row_of(pi, op).reason = error;
        }
        out.status = 1;
        break;
      }
      for (size_t ph = 0; ph < runs.size(); ++ph)
        for (hio_op op : trial.phases[ph].record_as) add_run(&row_of(pi, op), runs[ph], op);
    }
  }
  progress.finish();
  if (!out.warm_up_error.empty())
    for (size_t i = out.first_row; i < report->rows.size(); ++i)
      report->rows[i].notes.push_back("memory warm-up failed: " + out.warm_up_error);
  return out;
}

}  // namespace hybridio::bench
