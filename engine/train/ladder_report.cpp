// Ladder report (ladder_report.h): runs grouped by ladder arm and seed, tokens to a target BPB and
// task error against the uniform arm, paired ΔBPB, and Spearman's ρ of predicted and measured
// order.
#include "engine/train/ladder_report.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "engine/config/run_paths.h"
#include "engine/data/splits.h"
#include "engine/grading/cone.h"
#include "engine/grading/ladder.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"
#include "engine/train/compare.h"
#include "engine/train/fork.h"
#include "engine/train/model_grades.h"
#include "engine/train/run_store.h"

namespace gllm {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> average_ranks(const std::vector<double>& v) {
  std::vector<size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double rank = 0.5 * static_cast<double>(i + j) + 1.0;
    for (size_t k = i; k <= j; ++k) r[idx[k]] = rank;
    i = j + 1;
  }
  return r;
}

double final_metric(const RunInfo& r, const std::string& key) {
  const double v = key == "heldout_bpb" ? r.heldout_bpb : r.val_bpb;
  return v > 0 ? v : kNaN;
}

// The records of run_dir/probe.jsonl for one task and layer (empty when there is no such file).
std::vector<nlohmann::json> probe_records(const std::string& run_dir, const std::string& task,
                                          int layer) {
  const std::string path = join_path(run_dir, "probe.jsonl");
  if (!file_exists(path)) return {};
  std::vector<nlohmann::json> out;
  for (auto& r : read_metrics(path).records)
    if (r.value("task", std::string()) == task && r.value("layer", -2) == layer)
      out.push_back(std::move(r));
  return out;
}

// The task and layer the runs' probe files hold: `want` when given, else the first task found;
// the deepest layer probed for it unless `want_layer` ≥ 0.
bool choose_task(const std::vector<RunInfo>& runs, const std::string& want, int want_layer,
                 std::string& task, int& layer) {
  task.clear();
  layer = -1;
  for (const auto& r : runs) {
    const std::string path = join_path(r.dir, "probe.jsonl");
    if (!file_exists(path)) continue;
    for (const auto& rec : read_metrics(path).records) {
      const std::string t = rec.value("task", std::string());
      const int l = rec.value("layer", -1);
      if (t.empty() || (!want.empty() && t != want)) continue;
      if (task.empty()) task = t;
      if (t != task) continue;
      if (want_layer >= 0 ? l == want_layer : l > layer) layer = l;
    }
  }
  return !task.empty() && layer >= 0;
}

// A run's curve of `key` in tokens since its start (metrics.jsonl, or the probe's records).
std::vector<CurvePoint> run_curve(const RunInfo& r, const std::string& key,
                                  const std::vector<nlohmann::json>* records = nullptr) {
  const auto recs = records ? *records : read_metrics(join_path(r.dir, "metrics.jsonl")).records;
  return since_start(metric_curve(recs, key), run_start_tokens(r.dir));
}

// Mean over the uniform runs of each one's curve value at half its own budget.
double half_budget_value(const std::vector<std::vector<CurvePoint>>& curves,
                         const std::vector<double>& budgets) {
  double sum = 0;
  int n = 0;
  for (size_t i = 0; i < curves.size(); ++i) {
    const double v = value_at_tokens(curves[i], budgets[i] / 2);
    if (std::isfinite(v)) sum += v, ++n;
  }
  return n > 0 ? sum / n : kNaN;
}

// ρ of `predicted` against per-arm means of per-seed `measured` values (seed → value), with a
// percentile bootstrap over the seeds every arm has. Arms without a value are left out.
RankCorrelation rank_correlation(const std::vector<double>& predicted,
                                 const std::vector<std::map<int, double>>& measured,
                                 const std::vector<bool>& is_uniform, int bootstrap,
                                 uint64_t seed) {
  RankCorrelation rc;
  rc.rho = kNaN;
  std::vector<size_t> with;
  for (size_t i = 0; i < measured.size(); ++i)
    if (!measured[i].empty()) with.push_back(i);
  rc.arms = static_cast<int>(with.size());
  const auto others =
      std::count_if(with.begin(), with.end(), [&](size_t i) { return !is_uniform[i]; });
  if (others < 2) return rc;
  auto mean_of = [&](size_t i, const std::vector<int>* draw) {
    double s = 0;
    int n = 0;
    if (!draw) {
      for (const auto& [k, v] : measured[i]) s += v, ++n;
    } else {
      for (int k : *draw) s += measured[i].at(k), ++n;
    }
    return s / n;
  };
  std::vector<double> x, y;
  for (size_t i : with) {
    x.push_back(predicted[i]);
    y.push_back(mean_of(i, nullptr));
  }
  rc.rho = spearman(x, y);
  rc.low = rc.high = rc.rho;
  std::vector<int> common;
  for (const auto& [k, v] : measured[with.front()]) {
    bool all = true;
    for (size_t i : with) all = all && measured[i].count(k);
    if (all) common.push_back(k);
  }
  rc.seeds = static_cast<int>(common.size());
  if (bootstrap <= 0 || common.size() < 2) return rc;
  SplitMix64 rng(seed ^ 0x1ADDE5ull);
  std::vector<double> rhos;
  for (int b = 0; b < bootstrap; ++b) {
    std::vector<int> draw;
    for (size_t i = 0; i < common.size(); ++i) draw.push_back(common[rng.below(common.size())]);
    std::vector<double> g;
    for (size_t i : with) g.push_back(mean_of(i, &draw));
    rhos.push_back(spearman(x, g));
  }
  std::sort(rhos.begin(), rhos.end());
  auto pct = [&](double p) {
    return rhos[static_cast<size_t>(std::floor(p * static_cast<double>(rhos.size() - 1)))];
  };
  rc.low = pct(0.025);
  rc.high = pct(0.975);
  return rc;
}

// Ranks 1 = largest value; NaN values rank after every finite one.
std::vector<int> descending_ranks(const std::vector<double>& v) {
  std::vector<double> key;
  for (double x : v) key.push_back(std::isfinite(x) ? -x : std::numeric_limits<double>::max());
  const auto r = average_ranks(key);
  std::vector<int> out;
  for (double x : r) out.push_back(static_cast<int>(std::lround(x)));
  return out;
}

}  // namespace

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) return 0;
  auto rx = average_ranks(x), ry = average_ranks(y);
  const double n = static_cast<double>(x.size());
  const double mx = std::accumulate(rx.begin(), rx.end(), 0.0) / n,
               my = std::accumulate(ry.begin(), ry.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0.0;
}

LadderReport ladder_report(const std::string& runs_dir, double target_bpb, int bootstrap,
                           uint64_t seed) {
  LadderReportOptions o;
  o.target_bpb = target_bpb;
  o.bootstrap = bootstrap;
  o.seed = seed;
  return ladder_report(runs_dir, o);
}

LadderReport ladder_report(const std::string& runs_dir, const LadderReportOptions& o) {
  LadderReport rep;
  rep.runs_dir = runs_dir;
  rep.bootstrap = o.bootstrap;
  std::vector<std::string> errors;
  std::vector<RunInfo> runs;
  for (auto& r : list_runs(runs_dir, &errors)) {
    const auto g = r.config.value("grading", nlohmann::json::object());
    if (!g.is_object() || json_string_or(g, "level_grades_source", "") != "ladder") {
      rep.warnings.push_back(r.dir +
                             ": not a ladder run (grading.level_grades_source is not \"ladder\"), "
                             "left out");
      continue;
    }
    if (r.status != "completed") {
      rep.warnings.push_back(r.dir + ": " + r.status + ", left out");
      continue;
    }
    runs.push_back(std::move(r));
  }
  for (const auto& e : errors) rep.warnings.push_back(e);
  if (runs.empty())
    throw Error(
        runs_dir +
        " holds no completed ladder runs (configs with grading.level_grades_source \"ladder\"); "
        "train them with `gllm train --sweep presets/sweeps/ladder-tiny.json`");
  const auto arms = group_by_arm(runs);

  // The ladder files the runs name are the pre-registration: one for route 1; one per seed for
  // route 2 (each seed's trunk has its own profiles), whose predictions are then averaged over
  // the seeds each arm ran. Run folders name them relative to the project (run_paths.h).
  auto ladder_of = [](const RunInfo& r) {
    return find_run_file(r.config["grading"].value("ladder_file", std::string()), r.dir);
  };
  std::map<std::string, grading::Ladder> ladders;
  for (const auto& r : runs)
    if (!ladders.count(ladder_of(r)))
      ladders.emplace(ladder_of(r), grading::load_ladder_file(ladder_of(r)));
  rep.ladder_file = ladder_of(runs.front());
  for (const auto& [file, l] : ladders) rep.ladder_files.push_back(file);
  if (ladders.size() > 1)
    rep.warnings.push_back("the runs name " + std::to_string(ladders.size()) +
                           " ladder files (one per seed: route 2); each arm's prediction is the "
                           "mean over the ladders of its seeds");
  const ArmRuns* uniform = nullptr;
  for (const auto& a : arms)
    if (!a.runs.empty() &&
        a.runs.front().config["grading"].value("ladder_arm", std::string()) == "uniform")
      uniform = &a;
  if (!uniform)
    throw Error(runs_dir +
                " has no run of the uniform ladder arm; the ladder is measured against it");
  std::map<int, const RunInfo*> base;
  for (const auto& r : uniform->runs) base[r.seed] = &r;

  // Targets every arm crosses during training (§8.2.2): by default the uniform arm's own figure
  // at half its budget, so uniform reaches it mid-run and the others are read where curves of a
  // constant-rate schedule are comparable.
  std::vector<std::vector<CurvePoint>> ucurves, utask;
  std::vector<double> ubudget;
  rep.has_task = choose_task(runs, o.task, o.task_layer, rep.task, rep.task_layer);
  bool forked = false;
  for (const auto& r : uniform->runs) {
    ucurves.push_back(run_curve(r, "val_bpb"));
    const double start = run_start_tokens(r.dir);
    forked = forked || start > 0;
    ubudget.push_back(static_cast<double>(r.tokens) - start);
    if (rep.has_task) {
      const auto recs = probe_records(r.dir, rep.task, rep.task_layer);
      utask.push_back(run_curve(r, "task_error", &recs));
    }
  }
  rep.forked = forked;
  if (forked)
    rep.warnings.push_back(
        "forked runs (route 2): tokens are counted from each run's fork, where "
        "its grades begin to act");
  rep.half_budget_tokens = std::accumulate(ubudget.begin(), ubudget.end(), 0.0) /
                           static_cast<double>(ubudget.size()) / 2;
  if (o.target_bpb > 0) {
    rep.target_bpb = o.target_bpb;
    rep.target_rule = "given";
  } else {
    rep.target_bpb = half_budget_value(ucurves, ubudget);
    rep.target_rule = "the uniform arm's val BPB at half its budget (mean over its seeds)";
    if (!std::isfinite(rep.target_bpb))
      throw Error(runs_dir +
                  ": the uniform runs have no validation BPB around half their budget; "
                  "evaluate more often (train.eval_every) or give --target");
  }
  if (rep.has_task) {
    if (o.target_task_error > 0) {
      rep.target_task_error = o.target_task_error;
      rep.task_target_rule = "given";
    } else {
      rep.target_task_error = half_budget_value(utask, ubudget);
      rep.task_target_rule = "the uniform arm's task error at half its budget (mean over seeds)";
      if (!std::isfinite(rep.target_task_error)) {
        rep.warnings.push_back(
            "the uniform runs' probe files do not cover half their budget; "
            "no task token ratios (run `gllm probe` on every checkpoint)");
        rep.has_task = false;
      }
    }
  } else {
    rep.warnings.push_back(
        "no probe.jsonl in the runs: no task endpoint (run `gllm probe RUN` on each run)");
  }
  std::map<int, double> u_tokens, u_task_tokens;
  for (size_t i = 0; i < uniform->runs.size(); ++i) {  // the curves read for the targets
    const int seed = uniform->runs[i].seed;
    u_tokens[seed] = tokens_to_target(ucurves[i], rep.target_bpb).tokens;
    if (rep.has_task)
      u_task_tokens[seed] = tokens_to_target(utask[i], rep.target_task_error).tokens;
  }

  for (const auto& a : arms) {
    LadderArmReport x;
    x.arm = a.arm;
    x.ladder_arm = a.runs.front().config["grading"].value("ladder_arm", std::string());
    std::vector<const grading::Ladder*> mine;  // the ladder of each of the arm's runs
    for (const auto& r : a.runs) mine.push_back(&ladders.at(ladder_of(r)));
    const double k = static_cast<double>(mine.size());
    x.has_heldout = true;
    x.certificate = x.lambda_q = x.gain = x.certificate_heldout = x.lambda_q_heldout =
        x.gain_heldout = 0;
    for (const auto* l : mine) {
      const auto& la = l->arm(x.ladder_arm);
      x.program = la.program;
      x.certificate += la.certificate / k;
      x.lambda_q += la.lambda_q / k;
      x.gain += la.gain / k;
      x.has_heldout = x.has_heldout && la.has_heldout;
      x.certificate_heldout += la.certificate_heldout / k;
      x.lambda_q_heldout += la.lambda_q_heldout / k;
      x.gain_heldout += la.gain_heldout / k;
    }
    x.certificate_readback = kNaN;
    try {  // the grades the trained model holds, certified against the ladder's own profiles
      const auto& ladder = *mine.front();
      auto m = model_grades_from_checkpoint(a.runs.front().dir);
      if (!m.level_grades.empty() && m.level_grades.size() == ladder.alpha.size())
        x.certificate_readback = grading::certificate(ladder.alpha, ladder.tau, m.level_grades);
    } catch (const Error& e) {
      rep.warnings.push_back(a.runs.front().dir + ": grades not read back (" +
                             std::string(e.what()) + ")");
    }
    std::vector<double> ua, ub, va, vb, ut, utt;
    for (const auto& r : a.runs) {
      x.seeds.push_back(r.seed);
      x.heldout_bpb.push_back(final_metric(r, "heldout_bpb"));
      x.val_bpb.push_back(final_metric(r, "val_bpb"));
      x.tokens_to_target.push_back(
          tokens_to_target(run_curve(r, "val_bpb"), rep.target_bpb).tokens);
      ut.push_back(u_tokens.count(r.seed) ? u_tokens[r.seed] : kNaN);
      if (rep.has_task) {
        const auto recs = probe_records(r.dir, rep.task, rep.task_layer);
        x.tokens_to_task_target.push_back(
            tokens_to_target(run_curve(r, "task_error", &recs), rep.target_task_error).tokens);
        utt.push_back(u_task_tokens.count(r.seed) ? u_task_tokens[r.seed] : kNaN);
      }
      auto it = base.find(r.seed);
      if (it == base.end()) continue;
      ua.push_back(final_metric(*it->second, "heldout_bpb"));
      ub.push_back(final_metric(r, "heldout_bpb"));
      va.push_back(final_metric(*it->second, "val_bpb"));
      vb.push_back(final_metric(r, "val_bpb"));
    }
    if (!ua.empty()) {
      x.has_delta = true;
      x.delta_heldout = stats::paired(ua, ub);
      x.delta_val = stats::paired(va, vb);
    }
    x.token_ratio = token_ratio(ut, x.tokens_to_target);
    if (rep.has_task) x.task_token_ratio = token_ratio(utt, x.tokens_to_task_target);
    const int missed =
        static_cast<int>(std::count_if(x.tokens_to_target.begin(), x.tokens_to_target.end(),
                                       [](double t) { return !std::isfinite(t); }));
    if (missed > 0)
      rep.warnings.push_back(x.arm + ": " + std::to_string(missed) + " of " +
                             std::to_string(x.seeds.size()) +
                             " runs never reached the target BPB within their budget");
    rep.arms.push_back(std::move(x));
  }
  const bool all_heldout = std::all_of(rep.arms.begin(), rep.arms.end(),
                                       [](const LadderArmReport& x) { return x.has_heldout; });
  rep.prediction = all_heldout ? "held-out" : "fit";
  auto predicted = [&](const LadderArmReport& x) {
    return all_heldout ? x.certificate_heldout : x.certificate;
  };
  std::stable_sort(rep.arms.begin(), rep.arms.end(),
                   [&](const LadderArmReport& p, const LadderArmReport& q) {
                     return predicted(p) > predicted(q);
                   });
  for (size_t i = 0; i < rep.arms.size(); ++i) rep.arms[i].predicted_rank = static_cast<int>(i + 1);

  // Measured orders and Spearman's ρ of the prediction against each outcome, per seed.
  std::vector<double> cert, mean_log_ratio, mean_gain;
  std::vector<std::map<int, double>> log_ratio(rep.arms.size()), task_log_ratio(rep.arms.size()),
      gain(rep.arms.size());
  std::vector<bool> is_uniform;
  for (size_t i = 0; i < rep.arms.size(); ++i) {
    const auto& x = rep.arms[i];
    cert.push_back(predicted(x));
    is_uniform.push_back(x.ladder_arm == "uniform");
    for (size_t k = 0; k < x.seeds.size(); ++k) {
      const double q = x.token_ratio.per_seed[k];
      if (std::isfinite(q)) log_ratio[i][x.seeds[k]] = std::log(q);
      if (rep.has_task && std::isfinite(x.task_token_ratio.per_seed[k]))
        task_log_ratio[i][x.seeds[k]] = std::log(x.task_token_ratio.per_seed[k]);
      auto it = base.find(x.seeds[k]);
      if (it != base.end() && std::isfinite(x.heldout_bpb[k]))
        gain[i][x.seeds[k]] = -(x.heldout_bpb[k] - final_metric(*it->second, "heldout_bpb"));
    }
    mean_log_ratio.push_back(x.token_ratio.n > 0 ? std::log(x.token_ratio.ratio) : kNaN);
    mean_gain.push_back(x.has_delta ? -x.delta_heldout.delta.mean : kNaN);
  }
  const auto mr = descending_ranks(mean_log_ratio), dr = descending_ranks(mean_gain);
  for (size_t i = 0; i < rep.arms.size(); ++i) {
    rep.arms[i].measured_rank = mr[i];
    rep.arms[i].delta_rank = dr[i];
  }
  rep.rho_tokens = rank_correlation(cert, log_ratio, is_uniform, o.bootstrap, o.seed);
  rep.rho_delta = rank_correlation(cert, gain, is_uniform, o.bootstrap, o.seed);
  if (rep.has_task)
    rep.rho_task = rank_correlation(cert, task_log_ratio, is_uniform, o.bootstrap, o.seed);
  else
    rep.rho_task.rho = kNaN;
  if (!std::isfinite(rep.rho_tokens.rho))
    rep.warnings.push_back(
        "a rank correlation needs at least two ladder arms besides uniform with measured token "
        "ratios; " +
        std::to_string(std::max(0, rep.rho_tokens.arms - 1)) +
        " here, so no Spearman ρ is given — train the other arms");
  else if (rep.rho_tokens.seeds < 2)
    rep.warnings.push_back("fewer than two seeds common to every arm: no bootstrap interval for ρ");
  return rep;
}

nlohmann::json to_json(const LadderReport& r) {
  auto num = [](double v) {
    return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
  };
  auto nums = [&](const std::vector<double>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (double t : v) a.push_back(num(t));
    return a;
  };
  auto rho = [&](const RankCorrelation& c) {
    return nlohmann::json{{"rho", num(c.rho)},
                          {"ci", {num(c.low), num(c.high)}},
                          {"arms", c.arms},
                          {"seeds", c.seeds}};
  };
  nlohmann::json arms = nlohmann::json::array();
  for (const auto& x : r.arms) {
    nlohmann::json j = {
        {"arm", x.arm},
        {"ladder_arm", x.ladder_arm},
        {"program", x.program},
        {"certificate", x.certificate},
        {"certificate_readback", num(x.certificate_readback)},
        {"lambda_q", x.lambda_q},
        {"gain", x.gain},
        {"certificate_heldout",
         x.has_heldout ? num(x.certificate_heldout) : nlohmann::json(nullptr)},
        {"lambda_q_heldout", x.has_heldout ? num(x.lambda_q_heldout) : nlohmann::json(nullptr)},
        {"gain_heldout", x.has_heldout ? num(x.gain_heldout) : nlohmann::json(nullptr)},
        {"predicted_gain", x.predicted_gain()},
        {"predicted_rank", x.predicted_rank},
        {"measured_rank", x.measured_rank},
        {"delta_rank", x.delta_rank},
        {"seeds", x.seeds},
        {"heldout_bpb", nums(x.heldout_bpb)},
        {"val_bpb", nums(x.val_bpb)},
        {"tokens_to_target", nums(x.tokens_to_target)},
        {"token_ratio", to_json(x.token_ratio)}};
    if (r.has_task) {
      j["tokens_to_task_target"] = nums(x.tokens_to_task_target);
      j["task_token_ratio"] = to_json(x.task_token_ratio);
    }
    if (x.has_delta) {
      j["delta_heldout_bpb"] = stats::to_json(x.delta_heldout);
      j["delta_val_bpb"] = stats::to_json(x.delta_val);
    }
    arms.push_back(j);
  }
  nlohmann::json out = {{"runs_dir", r.runs_dir},
                        {"ladder_file", r.ladder_file},
                        {"ladder_files", r.ladder_files},
                        {"prediction", r.prediction},
                        {"tokens_counted_from", r.forked ? "fork" : "start"},
                        {"half_budget_tokens", r.half_budget_tokens},
                        {"target_bpb", r.target_bpb},
                        {"target_rule", r.target_rule},
                        {"arms", arms},
                        {"spearman_tokens", rho(r.rho_tokens)},
                        {"spearman_delta_bpb", rho(r.rho_delta)},
                        {"bootstrap", r.bootstrap},
                        {"warnings", r.warnings}};
  if (r.has_task) {
    out["task"] = {{"name", r.task},
                   {"layer", r.task_layer},
                   {"target_error", r.target_task_error},
                   {"target_rule", r.task_target_rule}};
    out["spearman_task_tokens"] = rho(r.rho_task);
  }
  return out;
}

}  // namespace gllm
