// Sweep planning: arms (presets with edits) × seeds (the file's, a list, or the ladder plan's
// number) into resolved configs and run folders, checked before anything is trained or submitted.
#include "engine/train/sweep_plan.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "engine/config/run_paths.h"
#include "engine/config/sweep.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"
#include "engine/stats/paired.h"
#include "engine/train/ladder_plan.h"

namespace gllm {

void apply_overrides(RunConfig& c, const RunOverrides& o) {
  if (o.steps > 0) c.train.steps = o.steps;
  if (o.eval_every >= 0) c.train.eval_every = o.eval_every;
  if (o.checkpoint_every >= 0) c.train.checkpoint_every = o.checkpoint_every;
  if (o.seed >= 0) c.train.seed = o.seed;
  if (o.threads >= 0) c.train.threads = o.threads;
  if (!o.device.empty()) c.train.device = o.device;
  c = RunConfig::from_json(c.to_json());  // re-validate
}

namespace {

// A per-seed file spec: {seed} replaced, relative paths read beside the sweep file.
std::string for_seed(const std::string& spec, const std::string& sweep_dir, int seed) {
  if (spec.empty()) return spec;
  std::string s = spec;
  for (auto p = s.find("{seed}"); p != std::string::npos; p = s.find("{seed}"))
    s.replace(p, 6, std::to_string(seed));
  if (!std::filesystem::path(s).is_absolute() && !sweep_dir.empty()) s = join_path(sweep_dir, s);
  return s;
}

// A sweep arm's preset: by name from the presets folder, else beside the sweep file.
RunConfig load_arm_preset(const SweepArm& a, const std::string& sweep_dir) {
  std::string path;
  try {
    path = resolve_preset_path(a.preset);
  } catch (const Error&) {
    path = resolve_preset_path(join_path(sweep_dir, a.preset));
  }
  return RunConfig::load(path);
}

// The seeds a sweep runs: the file's, a list, or with "auto" the number the ladder plan asks for
// (from the pilot runs): the file's seeds first, then the following integers not yet used.
std::vector<int> sweep_seeds(const SweepRequest& r, const SweepFile& sw,
                             const std::string& sweep_dir, std::string* note) {
  if (r.seeds.empty()) {
    if (!r.pilot.empty()) throw Error("--pilot sizes a sweep with --seeds auto; add it");
    return sw.seeds;
  }
  if (r.seeds != "auto") {
    std::vector<int> out;
    for (double v : stats::parse_number_list(r.seeds, "--seeds")) {
      if (v < 0 || v > 2147483647 || v != std::floor(v))
        throw Error("--seeds: " + brief_text(r.seeds, 80) +
                    " holds a value that is not a seed (a whole number 0 … 2^31 − 1)");
      if (std::find(out.begin(), out.end(), static_cast<int>(v)) != out.end())
        throw Error("--seeds: seed " + std::to_string(static_cast<int>(v)) + " is given twice");
      out.push_back(static_cast<int>(v));
    }
    return out;
  }
  if (r.pilot.empty())
    throw Error(
        "--seeds auto needs --pilot RUNS: the pilot runs (a uniform arm with ≥ 2 seeds) the "
        "plan measures its slope and seed noise on");
  std::string ladder_file;
  for (const auto& a : sw.arms) {
    RunConfig c = load_arm_preset(a, sweep_dir);
    if (a.set.contains("grading.ladder_file") && a.set["grading.ladder_file"].is_string() &&
        a.set["grading.ladder_file"].get<std::string>().find("{seed}") == std::string::npos)
      c.grading.ladder_file =
          find_run_file(a.set["grading.ladder_file"].get<std::string>(), sweep_dir);
    if (c.grading.level_grades_source == "ladder") {
      ladder_file = c.grading.ladder_file;
      break;
    }
  }
  if (ladder_file.empty())
    throw Error(r.sweep_file +
                ": --seeds auto sizes ladder sweeps; no arm takes its grades from a ladder "
                "(grading.level_grades_source \"ladder\" with a ladder file without {seed})");
  PlanOptions po;
  po.max_seeds = r.max_seeds;
  const auto plan = ladder_plan(ladder_file, r.pilot, po);
  if (note) *note = std::to_string(plan.seeds_recommended) + " seeds (" + plan.recommendation + ")";
  std::vector<int> out = sw.seeds;
  if (static_cast<int>(out.size()) > plan.seeds_recommended)
    out.resize(static_cast<size_t>(plan.seeds_recommended));
  int next = out.empty() ? 41 : *std::max_element(out.begin(), out.end()) + 1;
  while (static_cast<int>(out.size()) < plan.seeds_recommended) out.push_back(next++);
  return out;
}

}  // namespace

SweepPlan plan_sweep(const SweepRequest& r) {
  const SweepFile sw = read_sweep_file(r.sweep_file);
  SweepPlan plan;
  plan.name = !sw.name.empty() ? sw.name : std::filesystem::path(r.sweep_file).stem().string();
  plan.out = !r.out.empty()    ? r.out
             : !sw.out.empty() ? sw.out
                               : join_path(runs_dir(), folder_name(plan.name));
  const std::string sweep_dir = std::filesystem::path(r.sweep_file).parent_path().string();
  plan.seeds = sweep_seeds(r, sw, sweep_dir, &plan.seeds_note);
  for (const auto& a : sw.arms) {
    RunConfig base = load_arm_preset(a, sweep_dir);
    for (auto it = a.set.begin(); it != a.set.end(); ++it) {
      try {
        set_config_value(base, it.key(), it.value());
      } catch (const Error& e) {
        throw Error(r.sweep_file + ": arm " + a.preset + ": " + e.what());
      }
    }
    if (!a.name.empty()) base.name = a.name;
    if (sw.steps > 0) base.train.steps = sw.steps;
    for (int seed : plan.seeds) {
      RunConfig c = base;
      // String values of "set" may name per-seed files ({seed}: route 2's per-trunk profiles).
      for (auto it = a.set.begin(); it != a.set.end(); ++it)
        if (it.value().is_string() &&
            it.value().get<std::string>().find("{seed}") != std::string::npos)
          set_config_value(c, it.key(), for_seed(it.value().get<std::string>(), sweep_dir, seed));
      c.train.seed = seed;
      apply_overrides(c, r.overrides);
      c.train.seed = seed;
      // Names are not paths: the folder comes from the one sanitiser (no separators, no "..").
      plan.jobs.push_back({c.name,
                           join_path(plan.out, folder_name(c.name + "-s" + std::to_string(seed))),
                           c, for_seed(sw.fork, sweep_dir, seed)});
    }
  }
  // Seed by seed: a sweep stopped early leaves complete paired sets rather than some arms with
  // every seed and others with none.
  const auto& seeds = plan.seeds;
  std::stable_sort(plan.jobs.begin(), plan.jobs.end(), [&](const SweepJob& a, const SweepJob& b) {
    return std::find(seeds.begin(), seeds.end(), a.config.train.seed) <
           std::find(seeds.begin(), seeds.end(), b.config.train.seed);
  });
  for (size_t i = 0; i < plan.jobs.size(); ++i)
    for (size_t k = 0; k < i; ++k)
      if (plan.jobs[i].dir == plan.jobs[k].dir)
        throw Error(r.sweep_file + ": arms \"" + plan.jobs[k].arm + "\" and \"" + plan.jobs[i].arm +
                    "\" (seed " + std::to_string(plan.jobs[i].config.train.seed) +
                    ") would share the run folder " + plan.jobs[i].dir +
                    "; give the arms distinct \"name\"s");
  return plan;
}

RunInfo existing_arm_run(const SweepJob& j) {
  RunInfo info = read_run(j.dir);
  nlohmann::json theirs;
  try {
    theirs = RunConfig::from_json(info.config).to_json();
  } catch (const Error& e) {
    throw Error(j.dir + " (arm " + j.arm + "): its config.json does not read (" + e.what() +
                "); move the folder aside or give the sweep another --out");
  }
  const auto diff =
      config_differences(portable_config(theirs), portable_config(j.config.to_json()));
  if (!diff.empty()) {
    std::string list;
    for (const auto& d : diff) list += (list.empty() ? "" : "; ") + d;
    throw Error(j.dir + " already holds a " + info.status + " run whose config is not arm " +
                j.arm + "'s (folder → arm: " + list +
                "); the sweep does not take another run as its own. Move the folder aside or "
                "give the sweep another --out");
  }
  return info;
}

}  // namespace gllm
