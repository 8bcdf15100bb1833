// `gllm resume DIR [--steps N] [--allow-config-change] [--if-unfinished]`: continues a run folder
// from its last valid checkpoint (same data order, RNG and optimizer state); a run with no
// checkpoint restarts in place. Stopped by SLURM's warning signal, it exits 75 (requeue me).
#include <csignal>
#include <iostream>
#include <string>

#include "app/gllm/command_registry.h"
#include "app/gllm/run_progress.h"
#include "engine/cluster/batch_script.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/paths.h"
#include "engine/train/run_store.h"
#include "engine/train/trainer.h"

namespace {

gllm::cli::RegisterCommand reg_resume("resume", [](CLI::App& root) {
  auto* cmd = root.add_subcommand("resume",
                                  "Continue a run folder from its last valid checkpoint (no "
                                  "checkpoint: start it again in place)");
  auto dir = std::make_shared<std::string>();
  auto steps = std::make_shared<int64_t>(0);
  auto json = std::make_shared<bool>(false);
  auto quiet = std::make_shared<bool>(false);
  auto allow_change = std::make_shared<bool>(false);
  auto if_unfinished = std::make_shared<bool>(false);
  cmd->add_option("dir", *dir, "Run folder")->required();
  gllm::cli::add_count_option(cmd, "--steps", *steps,
                              "Extend the run to N steps (changes its schedule from here on)", 1,
                              1000000000);
  cmd->add_flag(
      "--allow-config-change", *allow_change,
      "Resume although config.json was edited in a way that changes results since the last "
      "checkpoint (the change is recorded in metrics.jsonl)");
  cmd->add_flag("--if-unfinished", *if_unfinished,
                "A completed run (without a larger --steps) is not an error: say so and exit 0 "
                "(cluster tasks run this, so a rerun batch script skips finished runs)");
  cmd->add_flag("--json", *json, "Print the outcome as JSON");
  cmd->add_flag("--quiet", *quiet, "No progress bar");
  cmd->callback([dir, steps, json, quiet, allow_change, if_unfinished] {
    if (*if_unfinished && gllm::file_exists(gllm::join_path(*dir, "summary.json"))) {
      const gllm::RunInfo info = gllm::read_run(*dir);
      if (info.status == "completed" && (*steps == 0 || *steps <= info.total_steps)) {
        std::cout << "completed: " << *dir << " (step " << info.step << "); nothing to do\n";
        return;
      }
    }
    gllm::Trainer trainer;
    gllm::TrainerOptions opts;
    opts.steps_override = *steps;
    opts.allow_config_change = *allow_change;
    int stop_signal = 0;
    auto f = gllm::cli::drive_run(
        trainer, *quiet, [&](gllm::RunObserver* obs) { trainer.resume(*dir, obs, opts); },
        &stop_signal);
    if (*json)
      gllm::cli::print_json(gllm::to_json(f));
    else
      std::cout << f.status << ": " << f.run_dir << " at step " << f.step << ", loss "
                << f.final_loss
                << (f.heldout_bpb >= 0 ? ", held-out BPB " + std::to_string(f.heldout_bpb)
                                       : std::string())
                << "\n";
    if (f.status == "diverged") throw gllm::Error(f.message);
    if (f.status == "cancelled" && (stop_signal == SIGUSR1 || stop_signal == SIGUSR2))
      throw gllm::cli::ExitStatus{gllm::kExitRequeue,
                                  "checkpointed at step " + std::to_string(f.step) +
                                      " on the warning signal; requeue the task (or gllm resume " +
                                      *dir + ") to continue from there"};
  });
});

}  // namespace
