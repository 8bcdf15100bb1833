// Ladder power plan (ladder_plan.h): slope and seed noise from a uniform pilot, predicted effects
// from the ladder's Λ(q), seeds needed from the paired t-test's power.
#include "engine/train/ladder_plan.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "engine/grading/ladder.h"
#include "engine/io/error.h"
#include "engine/io/paths.h"
#include "engine/stats/paired.h"
#include "engine/stats/power.h"
#include "engine/train/compare.h"
#include "engine/train/fork.h"
#include "engine/train/run_store.h"

namespace gllm {

double log_token_slope(const std::vector<CurvePoint>& curve, double from_tokens) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& p : curve) {
    if (p.tokens < from_tokens) continue;
    const double x = std::log(p.tokens);
    n += 1, sx += x, sy += p.value, sxx += x * x, sxy += x * p.value;
  }
  const double den = n * sxx - sx * sx;
  return n >= 2 && den > 0 ? (n * sxy - sx * sy) / den : std::nan("");
}

LadderPlan ladder_plan(const std::string& ladder_file, const std::string& pilot_dir,
                       const PlanOptions& o) {
  if (!(o.alpha > 0 && o.alpha < 1) || !(o.power > 0 && o.power < 1))
    throw Error("the plan's α and power lie strictly between 0 and 1");
  if (o.max_seeds < 2) throw Error("the plan's budget needs at least 2 seeds per arm");
  LadderPlan plan;
  plan.ladder_file = ladder_file;
  plan.pilot_dir = pilot_dir;
  plan.options = o;
  const grading::Ladder ladder = grading::load_ladder_file(ladder_file);

  std::vector<std::string> errors;
  std::vector<RunInfo> runs;
  for (auto& r : list_runs(pilot_dir, &errors))
    if (r.status == "completed") runs.push_back(std::move(r));
  for (const auto& e : errors) plan.notes.push_back(e);
  const auto arms = group_by_arm(runs);
  auto is_uniform = [](const ArmRuns& a) {
    const auto& c = a.runs.front().config;
    const auto g = c.value("grading", nlohmann::json::object());
    return (g.is_object() && g.value("ladder_arm", std::string()) == "uniform") ||
           a.arm.find("uniform") != std::string::npos;
  };
  const ArmRuns* uniform = nullptr;
  for (const auto& a : arms)
    if (!a.runs.empty() && is_uniform(a)) uniform = &a;
  if (!uniform || uniform->runs.size() < 2)
    throw Error(pilot_dir +
                " needs completed runs of the uniform arm with at least 2 seeds (the pilot the "
                "plan measures its slope and seed noise on); train them first, e.g. `gllm train "
                "--sweep presets/sweeps/ladder-tiny.json --seeds 41,42`");
  plan.pilot_seeds = static_cast<int>(uniform->runs.size());

  // Slope: BPB against ln tokens over the last two e-folds of budget (tokens ≥ budget/e²), where
  // the arms' crossings of a half-budget target lie; per seed, then averaged.
  std::map<int, double> u_heldout;
  std::vector<double> u_final;
  for (const auto& r : uniform->runs) {
    const double start = run_start_tokens(r.dir);  // a fork counts from its fork
    const double budget = static_cast<double>(r.tokens) - start;
    plan.budget_tokens += budget;
    const auto curve = since_start(
        metric_curve(read_metrics(join_path(r.dir, "metrics.jsonl")).records, "val_bpb"), start);
    const double from = budget / std::exp(2.0);
    double b = -log_token_slope(curve, from);
    if (!std::isfinite(b)) b = -log_token_slope(curve, 0);
    if (std::isfinite(b)) plan.slope_per_seed.push_back(b);
    if (r.heldout_bpb > 0) {
      u_heldout[r.seed] = r.heldout_bpb;
      u_final.push_back(r.heldout_bpb);
    }
  }
  plan.budget_tokens /= static_cast<double>(uniform->runs.size());
  plan.slope_window = "validation evaluations at ≥ budget/e² tokens (the last two e-folds)";
  if (plan.slope_per_seed.empty())
    throw Error(pilot_dir +
                ": the uniform runs have fewer than two validation evaluations; "
                "evaluate more often (train.eval_every)");
  for (double b : plan.slope_per_seed) plan.slope += b;
  plan.slope /= static_cast<double>(plan.slope_per_seed.size());
  if (!(plan.slope > 0))
    plan.notes.push_back(
        "the uniform pilot's BPB does not fall with tokens over the window; "
        "predicted effects are 0 and no arm is in reach");

  // Seed noise: pooled SD of paired held-out differences of the pilot's other arms against
  // uniform; without such arms, √2 × the uniform seeds' SD (independent seeds).
  double ss = 0;
  int df = 0, paired_arms = 0;
  for (const auto& a : arms) {
    if (&a == uniform) continue;
    std::vector<double> d;
    for (const auto& r : a.runs)
      if (u_heldout.count(r.seed) && r.heldout_bpb > 0)
        d.push_back(r.heldout_bpb - u_heldout[r.seed]);
    if (d.size() < 2) continue;
    const auto s = stats::summarize(d);
    ss += s.sd * s.sd * static_cast<double>(d.size() - 1);
    df += static_cast<int>(d.size()) - 1;
    ++paired_arms;
  }
  if (df > 0) {
    plan.paired_sd = std::sqrt(ss / df);
    plan.paired_sd_source = "pooled SD of held-out ΔBPB against uniform, paired by seed, over " +
                            std::to_string(paired_arms) + " pilot arm(s) (" + std::to_string(df) +
                            " df)";
  } else if (u_final.size() >= 2) {
    plan.paired_sd = std::sqrt(2.0) * stats::summarize(u_final).sd;
    plan.paired_sd_source =
        "√2 × the SD of the uniform seeds' held-out BPB (the pilot has no paired arm; this "
        "assumes independent seeds, an upper bound when seeds share data order)";
  } else {
    throw Error(pilot_dir + ": the uniform runs carry no held-out BPB; the plan needs it");
  }
  if (!(plan.paired_sd > 0))
    throw Error(pilot_dir + ": the pilot's seeds agree exactly (SD 0); the plan needs seed noise");

  plan.seeds_at = o.seeds > 0 ? o.seeds : plan.pilot_seeds;
  const bool heldout =
      std::all_of(ladder.arms.begin(), ladder.arms.end(),
                  [](const grading::LadderArm& a) { return !a.available || a.has_heldout; });
  plan.prediction = heldout ? "held-out" : "fit";
  int most = 0;
  std::vector<std::string> out_of_reach;
  for (const auto& name : ladder.order) {
    const auto& la = ladder.arm(name);
    if (!la.available) continue;
    ArmPlan a;
    a.arm = name;
    a.certificate = heldout ? la.certificate_heldout : la.certificate;
    a.lambda_q = heldout ? la.lambda_q_heldout : la.lambda_q;
    a.predicted_gain = 1.0 / a.lambda_q;
    a.predicted_delta_bpb =
        plan.slope > 0 && name != "uniform" ? plan.slope * std::log(a.lambda_q) : 0.0;
    if (name != "uniform") {
      a.seeds_needed = stats::seeds_for_power(a.predicted_delta_bpb, plan.paired_sd, o.power,
                                              o.alpha, o.max_seeds);
      a.power_at_seeds =
          stats::paired_t_power(a.predicted_delta_bpb, plan.paired_sd, plan.seeds_at, o.alpha);
      a.in_reach = a.seeds_needed > 0;
      if (a.in_reach)
        most = std::max(most, a.seeds_needed);
      else
        out_of_reach.push_back(name);
    }
    plan.arms.push_back(a);
  }
  std::stable_sort(plan.arms.begin(), plan.arms.end(), [](const ArmPlan& p, const ArmPlan& q) {
    return p.certificate > q.certificate;  // the prediction's order
  });
  plan.seeds_recommended = std::max(2, most);
  std::ostringstream rec;
  if (most == 0) {
    rec << "no arm is in reach within " << o.max_seeds
        << " seeds: the predicted effects are below this scale's seed noise; train longer or "
           "wider (a larger slope × ln Λ) or raise --max-seeds";
  } else {
    rec << plan.seeds_recommended << " seeds resolve every arm in reach at "
        << static_cast<int>(std::lround(o.power * 100)) << " % power";
    if (!out_of_reach.empty()) {
      rec << "; out of reach within " << o.max_seeds << " seeds:";
      for (const auto& n : out_of_reach) rec << " " << n;
    }
  }
  plan.recommendation = rec.str();
  return plan;
}

nlohmann::json to_json(const LadderPlan& p) {
  nlohmann::json arms = nlohmann::json::array();
  for (const auto& a : p.arms)
    arms.push_back({{"arm", a.arm},
                    {"certificate", a.certificate},
                    {"lambda_q", a.lambda_q},
                    {"predicted_gain", a.predicted_gain},
                    {"predicted_delta_bpb", a.predicted_delta_bpb},
                    {"seeds_needed",
                     a.seeds_needed > 0 ? nlohmann::json(a.seeds_needed) : nlohmann::json(nullptr)},
                    {"power_at_seeds", a.arm == "uniform" ? nlohmann::json(nullptr)
                                                          : nlohmann::json(a.power_at_seeds)},
                    {"in_reach", a.in_reach}});
  return {{"ladder_file", p.ladder_file},
          {"pilot", p.pilot_dir},
          {"prediction", p.prediction},
          {"budget_tokens", p.budget_tokens},
          {"pilot_seeds", p.pilot_seeds},
          {"slope_bpb_per_efold", p.slope},
          {"slope_per_seed", p.slope_per_seed},
          {"slope_window", p.slope_window},
          {"paired_sd", p.paired_sd},
          {"paired_sd_source", p.paired_sd_source},
          {"alpha", p.options.alpha},
          {"power", p.options.power},
          {"max_seeds", p.options.max_seeds},
          {"seeds_at", p.seeds_at},
          {"arms", arms},
          {"seeds_recommended", p.seeds_recommended},
          {"recommendation", p.recommendation},
          {"notes", p.notes}};
}

}  // namespace gllm
