// Run comparisons: grouping by arm, seed-matched paired statistics against a baseline, the 2×2
// difference of differences, and the tokens-to-target efficiency ratios.
#include "engine/train/compare.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"
#include "engine/stats/paired.h"

namespace gllm {
namespace {

double metric_of(const RunInfo& r, const std::string& metric) {
  if (metric == "heldout_bpb") return r.heldout_bpb;
  if (metric == "val_bpb") return r.val_bpb;
  if (metric == "final_loss") return r.final_loss;
  throw Error("unknown metric '" + metric + "'; use heldout_bpb, val_bpb or final_loss");
}

std::map<int, double> by_seed(const ArmRuns& a, const std::string& metric) {
  std::map<int, double> m;
  for (const auto& r : a.runs) {
    double v = metric_of(r, metric);
    if (v >= 0 && std::isfinite(v)) m[r.seed] = v;
  }
  return m;
}

// One value has no spread and no interval: "interval": false says so (sd and the bounds stay
// numbers, equal to the mean, for readers that expect numbers), with a note for people.
nlohmann::json with_interval(nlohmann::json j) {
  const bool one = j.value("n", 0) < 2;
  j["interval"] = !one;
  if (one) j["note"] = "one seed: no spread and no interval (run at least two seeds)";
  return j;
}

}  // namespace

std::vector<ArmRuns> group_by_arm(const std::vector<RunInfo>& runs) {
  std::vector<ArmRuns> arms;
  for (const auto& r : runs) {
    auto it =
        std::find_if(arms.begin(), arms.end(), [&](const ArmRuns& a) { return a.arm == r.name; });
    if (it == arms.end()) {
      arms.push_back({r.name, {}});
      it = arms.end() - 1;
    }
    for (const auto& e : it->runs)
      if (e.seed == r.seed)
        throw Error("arm '" + r.name + "' has two runs with seed " + std::to_string(r.seed) + " (" +
                    e.dir + " and " + r.dir + "); pass one run per arm and seed");
    it->runs.push_back(r);
  }
  for (auto& a : arms)
    std::sort(a.runs.begin(), a.runs.end(),
              [](const RunInfo& x, const RunInfo& y) { return x.seed < y.seed; });
  return arms;
}

nlohmann::json compare_runs(const std::vector<RunInfo>& runs, const std::string& baseline_arm,
                            const std::string& metric, bool two_by_two) {
  auto arms = group_by_arm(runs);
  auto base_it = std::find_if(arms.begin(), arms.end(),
                              [&](const ArmRuns& a) { return a.arm == baseline_arm; });
  if (base_it == arms.end())
    throw Error("no run of the baseline arm '" + baseline_arm + "' among the runs given");
  // Baseline first, the rest in order of appearance.
  std::vector<ArmRuns> ordered{*base_it};
  for (const auto& a : arms)
    if (a.arm != baseline_arm) ordered.push_back(a);
  auto base = by_seed(ordered[0], metric);
  nlohmann::json out;
  out["metric"] = metric;
  out["baseline"] = baseline_arm;
  nlohmann::json arms_j = nlohmann::json::array();
  for (const auto& a : ordered) {
    auto vals = by_seed(a, metric);
    std::vector<double> xs;
    for (auto& [s, v] : vals) xs.push_back(v);
    nlohmann::json aj = {{"arm", a.arm}, {"runs", a.runs.size()}};
    nlohmann::json seeds = nlohmann::json::object();
    for (auto& [s, v] : vals) seeds[std::to_string(s)] = v;
    aj["values"] = seeds;
    if (!xs.empty()) aj["summary"] = with_interval(stats::to_json(stats::summarize(xs)));
    if (&a != &ordered[0]) {
      std::vector<double> av, bv;
      std::vector<int> matched;
      for (auto& [s, v] : vals)
        if (base.count(s)) {
          av.push_back(base[s]);
          bv.push_back(v);
          matched.push_back(s);
        }
      if (!matched.empty()) {
        auto p = stats::paired(av, bv);
        aj["vs_baseline"] = with_interval(stats::to_json(p));
        aj["vs_baseline"]["seeds"] = matched;
      } else {
        aj["vs_baseline"] = nullptr;
        aj["note"] = "no seed in common with the baseline";
      }
    }
    arms_j.push_back(aj);
  }
  out["arms"] = arms_j;
  if (two_by_two) {
    if (ordered.size() != 4)
      throw Error("a 2x2 design needs exactly four arms (baseline 00, then 01, 10, 11); got " +
                  std::to_string(ordered.size()));
    std::vector<std::map<int, double>> cells;
    for (const auto& a : ordered) cells.push_back(by_seed(a, metric));
    std::vector<double> c00, c01, c10, c11;
    std::vector<int> seeds;
    for (auto& [s, v] : cells[0])
      if (cells[1].count(s) && cells[2].count(s) && cells[3].count(s)) {
        seeds.push_back(s);
        c00.push_back(v);
        c01.push_back(cells[1][s]);
        c10.push_back(cells[2][s]);
        c11.push_back(cells[3][s]);
      }
    if (seeds.empty()) throw Error("no seed is present in all four arms of the 2x2 design");
    auto dod = stats::difference_of_differences(c00, c01, c10, c11);
    out["dod"] = with_interval(stats::to_json(dod));
    out["dod"]["seeds"] = seeds;
    out["dod"]["formula"] = "(" + ordered[3].arm + " - " + ordered[2].arm + ") - (" +
                            ordered[1].arm + " - " + ordered[0].arm + ")";
  }
  return out;
}

std::string uniform_arm(const std::vector<std::string>& arms) {
  if (std::find(arms.begin(), arms.end(), "uniform") != arms.end()) return "uniform";
  for (const auto& a : arms)
    if (a.find("uniform") != std::string::npos) return a;
  return "";
}

nlohmann::json token_efficiency(const std::vector<RunInfo>& runs, const std::string& metric,
                                double target, const std::string& uniform_arm) {
  if (metric != "val_bpb" && metric != "heldout_bpb")
    throw Error("token efficiency reads val_bpb or heldout_bpb from metrics.jsonl; got '" + metric +
                "'");
  if (!std::isfinite(target) || target <= 0)
    throw Error("the target " + metric +
                " must be a positive finite number of bits per byte, got " +
                std::to_string(target) + "; give e.g. --target 2.5");
  if (!uniform_arm.empty()) {
    std::string arms;
    bool found = false;
    for (const auto& r : runs) {
      found = found || r.name == uniform_arm;
      if (arms.find("'" + r.name + "'") == std::string::npos)
        arms += (arms.empty() ? "'" : ", '") + r.name + "'";
    }
    if (!found)
      throw Error("--uniform '" + uniform_arm + "' names no arm of the runs given (arms: " +
                  brief_text(arms, 300) + "); give one of those, or leave --uniform out");
  }
  struct Row {
    const RunInfo* run;
    FirstReach reach;
  };
  std::vector<Row> rows;
  for (const auto& r : runs) {
    auto m = read_metrics(join_path(r.dir, "metrics.jsonl"));
    rows.push_back({&r, first_reach(m.records, metric, target)});
  }
  std::string uniform = uniform_arm;
  if (uniform.empty()) {
    std::vector<std::string> names;
    for (const auto& r : runs) names.push_back(r.name);
    uniform = gllm::uniform_arm(names);
  }
  std::map<int, double> uni_tokens;
  double uni_sum = 0;
  int uni_n = 0;
  for (const auto& row : rows)
    if (row.run->name == uniform && row.reach.found) {
      uni_tokens[row.run->seed] = static_cast<double>(row.reach.tokens);
      uni_sum += row.reach.tokens;
      ++uni_n;
    }
  nlohmann::json out;
  out["metric"] = metric;
  out["target"] = target;
  out["uniform_arm"] = uniform.empty() ? nlohmann::json(nullptr) : nlohmann::json(uniform);
  nlohmann::json list = nlohmann::json::array();
  std::map<std::string, std::vector<double>> ratios_by_arm;
  for (const auto& row : rows) {
    nlohmann::json j = {{"dir", row.run->dir},
                        {"arm", row.run->name},
                        {"seed", row.run->seed},
                        {"reached", row.reach.found}};
    if (row.reach.found) {
      j["tokens"] = row.reach.tokens;
      j["step"] = row.reach.step;
      j["value"] = row.reach.value;
      double denom = uni_tokens.count(row.run->seed) ? uni_tokens[row.run->seed]
                                                     : (uni_n ? uni_sum / uni_n : 0.0);
      if (denom > 0) {
        double ratio = row.reach.tokens / denom;
        j["ratio_to_uniform"] = ratio;
        ratios_by_arm[row.run->name].push_back(ratio);
      } else {
        j["ratio_to_uniform"] = nullptr;
      }
    } else {
      j["tokens"] = nullptr;
      j["ratio_to_uniform"] = nullptr;
    }
    list.push_back(j);
  }
  out["runs"] = list;
  nlohmann::json arms = nlohmann::json::object();
  for (auto& [arm, rs] : ratios_by_arm)
    arms[arm] = with_interval(stats::to_json(stats::summarize(rs)));
  out["arms"] = arms;
  if (uniform.empty())
    out["note"] = "no uniform arm among the runs; give --uniform ARM";
  else if (uni_n == 0)
    out["note"] = "the uniform arm never reached the target; lower --target";
  return out;
}

}  // namespace gllm
