// `gllm submit (PRESET | --sweep FILE) --cluster PROFILE [--throttle N] [--dry-run]`: a run or a
// sweep as one SLURM job array; `gllm cancel` and `gllm requeue` steer its tasks.
#include <iostream>

#include "app/gllm/command_registry.h"
#include "engine/cluster/cluster_profile.h"
#include "engine/cluster/scheduler_record.h"
#include "engine/cluster/submit.h"
#include "engine/config/run_config.h"
#include "engine/io/error.h"
#include "engine/io/paths.h"
#include "engine/train/sweep_plan.h"
#include "engine/train/trainer.h"

namespace {

struct SubmitOpts {
  std::string preset, sweep, cluster, out, seeds, pilot;
  int max_seeds = 10;
  int throttle = -1;
  bool dry_run = false, json = false;
  gllm::RunOverrides overrides;
};

void submit(const SubmitOpts& o) {
  const gllm::ClusterProfile profile = gllm::load_cluster_profile(o.cluster);
  const std::string root = profile.runs_root.empty() ? gllm::runs_dir() : profile.runs_root;
  gllm::SubmitRequest rq;
  rq.profile = profile;
  rq.throttle = o.throttle;
  rq.dry_run = o.dry_run;
  if (!o.sweep.empty()) {
    gllm::SweepRequest sr;
    sr.sweep_file = o.sweep;
    sr.out = o.out;
    sr.seeds = o.seeds;
    sr.pilot = o.pilot;
    sr.max_seeds = o.max_seeds;
    sr.overrides = o.overrides;
    // With a profile's shared root, the sweep's folder lies there unless --out or the file says.
    gllm::SweepPlan plan = gllm::plan_sweep(sr);
    if (o.out.empty() && !profile.runs_root.empty() &&
        plan.out == gllm::join_path(gllm::runs_dir(), gllm::folder_name(plan.name))) {
      sr.out = gllm::join_path(root, gllm::folder_name(plan.name));
      plan = gllm::plan_sweep(sr);
    }
    if (!plan.seeds_note.empty()) std::cerr << "plan: " << plan.seeds_note << "\n";
    rq.name = plan.name;
    rq.sweep_dir = plan.out;
    rq.jobs = plan.jobs;
  } else {
    if (!o.seeds.empty() || !o.pilot.empty())
      throw gllm::Error("--seeds and --pilot size a sweep; give --sweep FILE");
    gllm::RunConfig c = gllm::RunConfig::load(gllm::resolve_preset_path(o.preset));
    gllm::apply_overrides(c, o.overrides);
    rq = gllm::plan_seed_submission(c, {c.train.seed}, profile, root, o.out);
    rq.throttle = o.throttle;
    rq.dry_run = o.dry_run;
  }
  const gllm::SubmitOutcome r = gllm::submit_to_slurm(rq);
  if (o.json) {
    gllm::cli::print_json({{"dry_run", o.dry_run},
                           {"job_id", r.job_id},
                           {"script_path", r.script_path},
                           {"script", r.script},
                           {"runs", r.run_dirs},
                           {"completed", r.completed}});
    return;
  }
  if (o.dry_run) {
    std::cout << r.script;
    std::cerr << "dry run: " << r.run_dirs.size() << " tasks, nothing submitted"
              << (r.completed.empty()
                      ? ""
                      : " (" + std::to_string(r.completed.size()) + " completed runs left out)")
              << "\n";
    return;
  }
  std::cout << "submitted job " << r.job_id << ": " << r.run_dirs.size() << " tasks from "
            << r.script_path << "\n";
  for (size_t i = 0; i < r.run_dirs.size(); ++i)
    std::cout << "  " << r.job_id << "_" << i << "  " << r.run_dirs[i] << "\n";
  if (!r.completed.empty())
    std::cout << "  (" << r.completed.size() << " completed runs left out)\n";
  std::cout << "watch with: gllm runs " << rq.sweep_dir
            << (rq.jobs.size() == 1 && o.sweep.empty() ? "" : "") << "\n";
}

gllm::cli::RegisterCommand reg_submit("submit", [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "submit", "Submit a preset or a sweep to SLURM as one job array (one task per arm x seed)");
  auto o = std::make_shared<SubmitOpts>();
  cmd->add_option("preset", o->preset, "Preset name or RunConfig JSON (one run)");
  cmd->add_option("--sweep", o->sweep, "Sweep file: arms x seeds, one array task each");
  cmd->add_option("--cluster", o->cluster,
                  "Cluster profile (gllm cluster list; gllm cluster set NAME … makes one)")
      ->required();
  cmd->add_option("--throttle", o->throttle,
                  "Array tasks running at once (%N; default: the profile's max_parallel; 0: no "
                  "limit)")
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--out", o->out,
                  "Run folder (one run) or sweep folder (default: under the profile's runs_root)");
  cmd->add_option("--seeds", o->seeds, "Sweep: seeds instead of the file's, or \"auto\" (--pilot)");
  cmd->add_option("--pilot", o->pilot, "Sweep with --seeds auto: the pilot runs folder");
  cmd->add_option("--max-seeds", o->max_seeds, "Sweep with --seeds auto: most seeds per arm")
      ->check(CLI::Range(2, 1000));
  using gllm::cli::add_count_option;
  add_count_option(cmd, "--steps", o->overrides.steps, "Override train.steps", 1, 1000000000);
  add_count_option(cmd, "--eval-every", o->overrides.eval_every, "Override train.eval_every", 0,
                   1000000000);
  add_count_option(cmd, "--checkpoint-every", o->overrides.checkpoint_every,
                   "Override train.checkpoint_every", 0, 1000000000);
  cmd->add_option("--seed", o->overrides.seed, "Override train.seed (one run)")
      ->check(CLI::Range(0, 2147483647));
  cmd->add_option("--threads", o->overrides.threads, "Override train.threads")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--device", o->overrides.device, "Override train.device")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  cmd->add_flag("--dry-run", o->dry_run, "Print the batch script; submit nothing, make nothing");
  cmd->add_flag("--json", o->json, "Print the outcome as JSON");
  cmd->callback([o] {
    if (o->sweep.empty() == o->preset.empty())
      throw gllm::Error("give a preset (one run) or --sweep FILE");
    if (!o->sweep.empty() && o->overrides.seed >= 0)
      throw gllm::Error("--seed applies to one run; a sweep's seeds come from the file or --seeds");
    submit(*o);
  });
});

void print_ids(const char* verb, const std::vector<std::string>& ids) {
  std::cout << verb << " " << ids.size() << (ids.size() == 1 ? " task:" : " tasks:");
  for (const auto& id : ids) std::cout << " " << id;
  std::cout << "\n";
}

// A run folder as given; a sweep folder as its cluster runs.
std::vector<std::string> cluster_folders(const std::vector<std::string>& paths) {
  std::vector<std::string> dirs;
  for (const auto& p : paths) {
    const auto found = gllm::run_folders_of(p);
    const bool sweep = found.size() != 1 || found[0] != p;
    size_t added = 0;
    for (const auto& d : found)
      if (!sweep || gllm::has_scheduler_record(d)) {
        dirs.push_back(d);
        ++added;
      }
    if (added == 0) throw gllm::Error(p + " holds no cluster run (no scheduler.json)");
  }
  return dirs;
}

gllm::cli::RegisterCommand reg_cancel("cancel", [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "cancel", "Cancel cluster runs (scancel): a run folder, or a whole sweep folder");
  auto paths = std::make_shared<std::vector<std::string>>();
  cmd->add_option("paths", *paths, "Run folders or sweep folders")->required();
  cmd->callback([paths] {
    const auto ids = gllm::cancel_cluster_runs(cluster_folders(*paths));
    if (ids.empty())
      std::cout << "nothing to cancel: every task has ended\n";
    else
      print_ids("cancelled", ids);
  });
});

gllm::cli::RegisterCommand reg_requeue("requeue", [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "requeue",
      "Requeue cluster runs (scontrol requeue): a running task checkpoints and resumes exactly");
  auto paths = std::make_shared<std::vector<std::string>>();
  cmd->add_option("paths", *paths, "Run folders or sweep folders")->required();
  cmd->callback(
      [paths] { print_ids("requeued", gllm::requeue_cluster_runs(cluster_folders(*paths))); });
});

}  // namespace
