// `gllm train PRESET [--steps N] [--eval-every N] [--checkpoint-every N] [--seed S] [--out DIR]
// [--nproc N] [--fork CKPT]` (or one rank of a torchrun / srun job) and `gllm train --sweep FILE`.
#include <filesystem>
#include <iostream>

#include "app/gllm/command_registry.h"
#include "app/gllm/run_progress.h"
#include "engine/config/run_config.h"
#include "engine/config/run_paths.h"
#include "engine/config/sweep.h"
#include "engine/dist/batch_plan.h"
#include "engine/dist/launcher.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"
#include "engine/train/fork.h"
#include "engine/train/run_store.h"
#include "engine/train/sweep_plan.h"
#include "engine/train/trainer.h"

namespace {

struct TrainOpts {
  std::string preset;
  std::string sweep;
  int64_t steps = 0;
  int eval_every = -1;
  int checkpoint_every = -1;
  int seed = -1;
  int threads = -1;
  std::string device;
  std::string out;
  std::string fork;
  std::string seeds;  // sweep: "41,42" or "auto" (the ladder plan's number, from --pilot)
  std::string pilot;
  int max_seeds = 10;
  bool dry_run = false;  // sweep: list the runs it would train, train none
  bool json = false;
  bool quiet = false;
  int nproc = 1;
};

gllm::RunOverrides overrides_of(const TrainOpts& o) {
  gllm::RunOverrides r;
  r.steps = o.steps;
  r.eval_every = o.eval_every;
  r.checkpoint_every = o.checkpoint_every;
  r.seed = o.seed;
  r.threads = o.threads;
  r.device = o.device;
  return r;
}

gllm::FinishedRecord train_one(const gllm::RunConfig& c, const std::string& dir, bool quiet,
                               const std::string& fork = "") {
  gllm::Trainer trainer;
  gllm::TrainerOptions options;
  options.fork_from = fork;
  return gllm::cli::drive_run(trainer, quiet,
                              [&](gllm::RunObserver* obs) { trainer.start(c, dir, obs, options); });
}

gllm::FinishedRecord resume_one(const std::string& dir, bool quiet) {
  gllm::Trainer trainer;
  return gllm::cli::drive_run(trainer, quiet,
                              [&](gllm::RunObserver* obs) { trainer.resume(dir, obs); });
}

gllm::SweepRequest sweep_request(const TrainOpts& o) {
  gllm::SweepRequest r;
  r.sweep_file = o.sweep;
  r.out = o.out;
  r.seeds = o.seeds;
  r.pilot = o.pilot;
  r.max_seeds = o.max_seeds;
  r.overrides = overrides_of(o);
  return r;
}

// Sweep file (engine/config/sweep.h): arms × seeds, each run in <out>/<arm>-s<seed>, one after
// another in this process (`gllm submit` sends the same plan to SLURM).
void run_sweep(const TrainOpts& o) {
  const gllm::SweepPlan plan = gllm::plan_sweep(sweep_request(o));
  if (!plan.seeds_note.empty()) std::cerr << "plan: " << plan.seeds_note << "\n";
  const auto& jobs = plan.jobs;
  const std::string& name = plan.name;
  const std::string& out = plan.out;
  const std::vector<int>& seeds = plan.seeds;
  if (o.dry_run) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& j : jobs) {
      const bool done = gllm::file_exists(gllm::join_path(j.dir, "config.json")) &&
                        gllm::read_run(j.dir).status == "completed";
      list.push_back({{"arm", j.arm},
                      {"seed", j.config.train.seed},
                      {"run_dir", j.dir},
                      {"fork", j.fork},
                      {"completed", done}});
    }
    if (o.json) {
      gllm::cli::print_json({{"sweep", name}, {"out", out}, {"seeds", seeds}, {"runs", list}});
    } else {
      std::cout << "sweep " << name << ": " << jobs.size() << " runs into " << out << "\n";
      for (const auto& r : list)
        std::cout << "  " << r["arm"].get<std::string>() << " seed " << r["seed"].get<int>()
                  << (r["completed"].get<bool>() ? " (completed)" : "") << "\n";
    }
    return;
  }
  gllm::make_directories(out);
  std::cerr << "sweep " << name << ": " << jobs.size() << " runs into " << out << "\n";
  nlohmann::json results = nlohmann::json::array();
  for (size_t i = 0; i < jobs.size(); ++i) {
    const auto& j = jobs[i];
    std::cerr << "[" << i + 1 << "/" << jobs.size() << "] " << j.arm << " seed "
              << j.config.train.seed << "\n";
    gllm::FinishedRecord f;
    if (gllm::file_exists(gllm::join_path(j.dir, "config.json"))) {
      const auto info = gllm::existing_arm_run(j);
      if (info.status == "completed") {
        std::cerr << "  already completed; skipped\n";
        results.push_back({{"arm", j.arm},
                           {"seed", j.config.train.seed},
                           {"run_dir", j.dir},
                           {"status", "completed"},
                           {"val_bpb", info.val_bpb},
                           {"heldout_bpb", info.heldout_bpb}});
        continue;
      }
      f = resume_one(j.dir, o.quiet);
    } else {
      f = train_one(j.config, j.dir, o.quiet, j.fork);
    }
    auto r = gllm::to_json(f);
    r["arm"] = j.arm;
    r["seed"] = j.config.train.seed;
    results.push_back(r);
  }
  if (o.json)
    gllm::cli::print_json({{"sweep", name}, {"out", out}, {"runs", results}});
  else
    std::cout << "sweep " << name << " done: " << results.size() << " runs in " << out << "\n";
}

gllm::cli::RegisterCommand reg_train("train", [](CLI::App& root) {
  auto* cmd =
      root.add_subcommand("train", "Train a preset (or a sweep of arms x seeds) into a run folder");
  auto o = std::make_shared<TrainOpts>();
  cmd->add_option("preset", o->preset, "Preset name (see presets/) or path to a RunConfig JSON");
  cmd->add_option("--sweep", o->sweep, "Sweep file: arms x seeds run one after another");
  using gllm::cli::add_count_option;
  add_count_option(cmd, "--steps", o->steps, "Override train.steps", 1, 1000000000);
  add_count_option(cmd, "--eval-every", o->eval_every,
                   "Override train.eval_every (0 = only at the end)", 0, 1000000000);
  add_count_option(cmd, "--checkpoint-every", o->checkpoint_every,
                   "Override train.checkpoint_every (0 = only at the end)", 0, 1000000000);
  cmd->add_option("--seed", o->seed, "Override train.seed")->check(CLI::Range(0, 2147483647));
  cmd->add_option("--threads", o->threads, "Override train.threads (0 = all cores)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--device", o->device, "Override train.device")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  cmd->add_option("--out", o->out,
                  "Run folder (default: runs/<name>-<time>); for a sweep, the parent folder");
  cmd->add_option("--fork", o->fork,
                  "Start from another run's checkpoint (RUN_FOLDER, RUN_FOLDER@STEP or "
                  "RUN/checkpoints/step_N.safetensors): its weights, optimizer state and data "
                  "position, with this preset's grades; recorded in parent.json");
  cmd->add_option("--seeds", o->seeds,
                  "Sweep: the seeds to run instead of the file's (\"41,42\"), or \"auto\": the "
                  "number the ladder plan asks for (gllm ladder plan; needs --pilot)");
  cmd->add_option("--pilot", o->pilot,
                  "Sweep with --seeds auto: folder of pilot runs (the uniform arm, ≥ 2 seeds) the "
                  "plan reads its slope and seed noise from");
  cmd->add_flag("--dry-run", o->dry_run,
                "Sweep: list the runs (arm, seed, folder, completed or not) and train none");
  cmd->add_option("--max-seeds", o->max_seeds,
                  "Sweep with --seeds auto: the most seeds per arm the plan may ask for")
      ->check(CLI::Range(2, 1000))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print the outcome as JSON");
  cmd->add_flag("--quiet", o->quiet, "No progress bar");
  cmd->add_option(
         "--nproc", o->nproc,
         "Data-parallel processes on this machine (c10d over Gloo; NCCL when built with it). The "
         "global "
         "batch stays the preset's (train.total_batch_tokens, else device_batch x grad_accum x "
         "sequence_len): "
         "the processes share its micro-steps, or each micro-step's rows, so N processes reproduce "
         "a "
         "one-process run; only rank 0 writes the run folder. Under torchrun or srun, leave "
         "--nproc out: "
         "each process joins the job from RANK, WORLD_SIZE, MASTER_ADDR, … (or SLURM_PROCID, …)")
      ->check(CLI::Range(1, 1024));
  cmd->callback([o] {
    if (!o->sweep.empty()) {
      if (!o->preset.empty()) throw gllm::Error("give either a preset or --sweep FILE, not both");
      if (o->nproc > 1)
        throw gllm::Error(
            "--nproc applies to one run; run the sweep's arms one at a time with --nproc");
      if (!o->fork.empty())
        throw gllm::Error(
            "--fork names one checkpoint; in a sweep give \"fork\" in the sweep "
            "file (with {seed} for per-seed trunks)");
      run_sweep(*o);
      return;
    }
    if (o->preset.empty()) o->preset = "tiny-cpu";
    const gllm::dist::LaunchEnv launch = gllm::dist::launch_env();
    if (o->nproc > 1 && (launch.source == "torchrun" || launch.source == "slurm"))
      throw gllm::Error("this process is rank " + std::to_string(launch.rank) + " of " +
                        std::to_string(launch.world_size) + " started by " + launch.source +
                        "; leave --nproc out (the launcher starts the processes)");
    if (launch.rank > 0) o->quiet = true;  // rank 0 reports progress
    gllm::RunConfig c = gllm::RunConfig::load(gllm::resolve_preset_path(o->preset));
    gllm::apply_overrides(c, overrides_of(*o));
    std::string dir = o->out.empty() ? gllm::new_run_dir(gllm::runs_dir(), c.name) : o->out;
    gllm::FinishedRecord f;
    // A fork continues its parent's seed (data order and RNG come from the checkpoint) unless the
    // run is given another on purpose.
    if (!o->fork.empty() && o->seed < 0) {
      c.train.seed = gllm::locate_fork(o->fork).parent.train.seed;
      c = gllm::RunConfig::from_json(c.to_json());
    }
    if (!o->fork.empty() && (o->nproc > 1 || launch.world_size > 1))
      throw gllm::Error("--fork runs in one process; drop --nproc (or the launcher) for a fork");
    if (o->nproc > 1 && !gllm::dist::launched_child()) {
      // Refuse an impossible split before starting anything.
      gllm::dist::plan_batch(c.train.device_batch, c.train.grad_accum, o->nproc, 0);
      // Ranks 1..N-1: this program on the resolved config, writing nothing but their logs.
      gllm::dist::Launcher launcher(o->nproc,
                                    {"train", "@DIR@/config.json", "--out", dir, "--quiet"},
                                    {{"config.json", c.to_json().dump(2)}});
      try {
        f = train_one(c, dir, o->quiet);
      } catch (const gllm::Error& e) {
        std::string others = launcher.wait_children(15);
        throw gllm::Error(std::string(e.what()) + (others.empty() ? "" : "\n" + others));
      }
      std::string others = launcher.wait_children(f.status == "completed" ? 300 : 15);
      if (!others.empty() && f.status == "completed")
        throw gllm::Error("rank 0 completed but " + others);
    } else {
      f = train_one(c, dir, o->quiet, o->fork);
    }
    if (o->json) {
      gllm::cli::print_json(gllm::to_json(f));
    } else {
      std::cout << f.status << ": " << f.run_dir << "\n  step " << f.step << ", loss "
                << f.final_loss;
      if (f.val_bpb >= 0) {
        std::cout << ", val BPB " << f.val_bpb;
        // A run cancelled between evaluations: its last one is from an earlier step.
        if (f.val_bpb_step >= 0 && f.val_bpb_step != f.step)
          std::cout << " (at step " << f.val_bpb_step << ")";
      }
      if (f.heldout_bpb >= 0) std::cout << ", held-out BPB " << f.heldout_bpb;
      std::cout << "\n  " << static_cast<int64_t>(f.tokens_per_s) << " tokens/s, peak "
                << static_cast<int64_t>(f.peak_mem_mib) << " MiB (estimate "
                << static_cast<int64_t>(f.estimate_mem_mib)
                << " MiB: " << static_cast<int64_t>(f.resident_start_mib) << " resident at start + "
                << static_cast<int64_t>(f.analytic_mem_mib) << " training tensors), " << f.wall_s
                << " s\n";
      if (f.status == "diverged") std::cout << "  " << f.message << "\n";
    }
    if (f.status == "diverged") throw gllm::Error(f.message);
  });
});

}  // namespace
