// Ladder report (ladder_report.h): runs grouped by ladder arm and seed, paired deltas against the
// uniform arm, tokens to a fixed BPB, and Spearman's ρ between predicted and measured order.
#include "engine/train/ladder_report.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "engine/data/splits.h"
#include "engine/grading/cone.h"
#include "engine/grading/ladder.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"
#include "engine/train/compare.h"
#include "engine/train/model_grades.h"
#include "engine/train/run_store.h"

namespace gllm {

namespace {

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
  return v > 0 ? v : std::numeric_limits<double>::quiet_NaN();
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
  LadderReport rep;
  rep.runs_dir = runs_dir;
  rep.bootstrap = bootstrap;
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

  // The ladder every run names must be one file: its certificates are the pre-registration.
  rep.ladder_file = runs.front().config["grading"].value("ladder_file", std::string());
  for (const auto& r : runs)
    if (r.config["grading"].value("ladder_file", std::string()) != rep.ladder_file)
      throw Error("the runs under " + runs_dir + " name different ladder files (" +
                  rep.ladder_file + ", " + r.config["grading"].value("ladder_file", std::string()) +
                  "); report one ladder at a time");
  const grading::Ladder ladder = grading::load_ladder_file(rep.ladder_file);

  if (target_bpb <= 0) {
    for (const auto& r : runs) target_bpb = std::max(target_bpb, final_metric(r, "val_bpb"));
  }
  rep.target_bpb = target_bpb;

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
  double uniform_tokens = 0;
  int uniform_reached = 0;
  for (const auto& r : uniform->runs) {
    auto fr =
        first_reach(read_metrics(join_path(r.dir, "metrics.jsonl")).records, "val_bpb", target_bpb);
    if (fr.found) {
      uniform_tokens += static_cast<double>(fr.tokens);
      ++uniform_reached;
    }
  }
  if (uniform_reached > 0) uniform_tokens /= uniform_reached;

  for (const auto& a : arms) {
    LadderArmReport x;
    x.arm = a.arm;
    x.ladder_arm = a.runs.front().config["grading"].value("ladder_arm", std::string());
    const auto& la = ladder.arm(x.ladder_arm);
    x.program = la.program;
    x.certificate = la.certificate;
    x.lambda_q = la.lambda_q;
    x.has_heldout = la.has_heldout;
    x.certificate_heldout = la.certificate_heldout;
    x.lambda_q_heldout = la.lambda_q_heldout;
    x.gain_heldout = la.gain_heldout;
    x.gain = la.gain;
    x.predicted_rank = la.rank;
    x.certificate_readback = std::numeric_limits<double>::quiet_NaN();
    try {  // the grades the trained model holds, certified against the ladder's own profiles
      auto m = model_grades_from_checkpoint(a.runs.front().dir);
      if (!m.level_grades.empty() && m.level_grades.size() == ladder.alpha.size())
        x.certificate_readback = grading::certificate(ladder.alpha, ladder.tau, m.level_grades);
    } catch (const Error& e) {
      rep.warnings.push_back(a.runs.front().dir + ": grades not read back (" +
                             std::string(e.what()) + ")");
    }
    std::vector<double> ua, ub, va, vb;
    double tokens = 0;
    int reached = 0;
    for (const auto& r : a.runs) {
      x.seeds.push_back(r.seed);
      x.heldout_bpb.push_back(final_metric(r, "heldout_bpb"));
      x.val_bpb.push_back(final_metric(r, "val_bpb"));
      auto fr = first_reach(read_metrics(join_path(r.dir, "metrics.jsonl")).records, "val_bpb",
                            target_bpb);
      x.tokens_to_target.push_back(fr.found ? static_cast<double>(fr.tokens)
                                            : std::numeric_limits<double>::quiet_NaN());
      if (fr.found) {
        tokens += static_cast<double>(fr.tokens);
        ++reached;
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
    x.token_ratio = reached > 0 && uniform_reached > 0 ? (tokens / reached) / uniform_tokens : 0.0;
    rep.arms.push_back(std::move(x));
  }
  std::sort(rep.arms.begin(), rep.arms.end(),
            [](const LadderArmReport& p, const LadderArmReport& q) {
              return p.certificate > q.certificate;
            });

  // Measured order and Spearman's ρ between the certificate and the improvement −ΔBPB.
  std::vector<LadderArmReport*> with;
  for (auto& x : rep.arms)
    if (x.has_delta) with.push_back(&x);
  std::vector<double> cert, gain;
  for (auto* x : with) {
    cert.push_back(x->certificate);
    gain.push_back(-x->delta_heldout.delta.mean);
  }
  auto measured = average_ranks(gain);
  for (size_t i = 0; i < with.size(); ++i)
    with[i]->measured_rank =
        static_cast<int>(std::lround(static_cast<double>(with.size()) + 1.0 - measured[i]));
  // One arm against uniform has no order to correlate: no ρ rather than a number about nothing.
  const auto others = std::count_if(with.begin(), with.end(), [](const LadderArmReport* x) {
    return x->ladder_arm != "uniform";
  });
  rep.spearman = others >= 2 ? spearman(cert, gain) : NAN;
  if (others < 2)
    rep.warnings.push_back(
        "a rank correlation needs at least two ladder arms besides uniform with paired runs; " +
        std::to_string(others) + " here, so no Spearman ρ is given — train the other arms");
  // Bootstrap over seeds: each resample draws the common seeds with replacement, recomputes every
  // arm's mean paired Δ and ρ; the interval is the 2.5–97.5 % percentile range.
  if (bootstrap > 0 && with.size() >= 3) {
    std::vector<int> common;
    for (const auto& [s, r] : base) {
      bool all = true;
      for (auto* x : with)
        all = all && std::find(x->seeds.begin(), x->seeds.end(), s) != x->seeds.end();
      if (all) common.push_back(s);
    }
    if (common.size() >= 2) {
      SplitMix64 rng(seed ^ 0x1ADDE5ull);
      std::vector<double> rhos;
      for (int b = 0; b < bootstrap; ++b) {
        std::vector<int> draw;
        for (size_t i = 0; i < common.size(); ++i) draw.push_back(common[rng.below(common.size())]);
        std::vector<double> g;
        for (auto* x : with) {
          double sum = 0;
          for (int s : draw) {
            const size_t k = static_cast<size_t>(std::find(x->seeds.begin(), x->seeds.end(), s) -
                                                 x->seeds.begin());
            sum += x->heldout_bpb[k] - final_metric(*base.at(s), "heldout_bpb");
          }
          g.push_back(-sum / static_cast<double>(draw.size()));
        }
        rhos.push_back(spearman(cert, g));
      }
      std::sort(rhos.begin(), rhos.end());
      auto pct = [&](double p) {
        return rhos[static_cast<size_t>(std::floor(p * static_cast<double>(rhos.size() - 1)))];
      };
      rep.spearman_low = pct(0.025);
      rep.spearman_high = pct(0.975);
    } else {
      rep.warnings.push_back(
          "fewer than two seeds common to every arm: no bootstrap interval for ρ");
    }
  }
  return rep;
}

nlohmann::json to_json(const LadderReport& r) {
  nlohmann::json arms = nlohmann::json::array();
  auto num = [](double v) {
    return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
  };
  for (const auto& x : r.arms) {
    nlohmann::json tokens = nlohmann::json::array();
    for (double t : x.tokens_to_target) tokens.push_back(num(t));
    nlohmann::json j = {
        {"arm", x.arm},
        {"ladder_arm", x.ladder_arm},
        {"program", x.program},
        {"certificate", x.certificate},
        {"certificate_readback", num(x.certificate_readback)},
        {"lambda_q", x.lambda_q},
        {"certificate_heldout",
         x.has_heldout ? nlohmann::json(x.certificate_heldout) : nlohmann::json(nullptr)},
        {"lambda_q_heldout",
         x.has_heldout ? nlohmann::json(x.lambda_q_heldout) : nlohmann::json(nullptr)},
        {"gain", x.gain},
        {"predicted_rank", x.predicted_rank},
        {"measured_rank", x.measured_rank},
        {"seeds", x.seeds},
        {"heldout_bpb", x.heldout_bpb},
        {"val_bpb", x.val_bpb},
        {"tokens_to_target", tokens},
        {"token_ratio",
         x.token_ratio > 0 ? nlohmann::json(x.token_ratio) : nlohmann::json(nullptr)}};
    if (x.has_delta) {
      j["delta_heldout_bpb"] = stats::to_json(x.delta_heldout);
      j["delta_val_bpb"] = stats::to_json(x.delta_val);
    }
    arms.push_back(j);
  }
  return {{"runs_dir", r.runs_dir},
          {"ladder_file", r.ladder_file},
          {"metric", r.metric},
          {"target_bpb", r.target_bpb},
          {"arms", arms},
          {"spearman", r.spearman},
          {"spearman_ci", {r.spearman_low, r.spearman_high}},
          {"bootstrap", r.bootstrap},
          {"warnings", r.warnings}};
}

}  // namespace gllm
