// Named SLURM cluster profiles (partition, account, time limit, GPUs, …) kept as JSON files in the
// user's config folder (<config>/clusters/NAME.json) and chosen by name by `gllm submit` and the
// GUI.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/io/config_schema.h"

namespace gllm {

struct ClusterProfile {
  std::string name;  // the file's stem; not stored in the file
  std::string partition;
  std::string account;
  std::string qos;
  std::string time_limit;  // SLURM's spelling: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS
  int nodes = 1;           // per task (one run); srun starts nodes × tasks_per_node ranks
  int tasks_per_node = 1;
  int gpus_per_node = 0;
  int cpus_per_task = 0;     // 0: SLURM's default
  std::string mem_per_task;  // "16G", "2000M"; empty: SLURM's default
  std::string constraint;    // --constraint
  std::vector<std::string>
      extra_sbatch;                // more "#SBATCH --key=value" lines, given as "--key=value"
  std::vector<std::string> setup;  // shell lines run before the trainer (module load …)
  std::string runs_root;  // shared folder sweeps and runs go into; empty: the local runs folder
  std::string signal = "USR1@120";  // warning signal and seconds before the end (--signal)
  bool requeue = true;              // --requeue: preempted or warned tasks go back to the queue
  int max_parallel = 0;             // default array throttle (%N); 0: no throttle
  std::string gllm;                 // the gllm the nodes run; empty: this gllm's absolute path

  static const Schema<ClusterProfile>& schema();
  static ClusterProfile from_json(const nlohmann::json& j, const std::string& name);
  nlohmann::json to_json() const;
  // The total ranks one task runs (nodes × tasks_per_node).
  int ranks() const { return nodes * tasks_per_node; }
  // --mem for one node: mem_per_task × tasks_per_node, in SLURM's units ("" when unset).
  std::string mem_per_node() const;
};

// $GLLM_CONFIG, else $XDG_CONFIG_HOME/gllm, else ~/.config/gllm.
std::string user_config_dir();
// <config>/clusters
std::string cluster_profiles_dir();
// A profile name is a name, not a path: letters, digits, '-', '_', '.', not starting with '.'.
void check_profile_name(const std::string& name);
// Reads <config>/clusters/NAME.json; errors name the file and the fix (`gllm cluster set`).
ClusterProfile load_cluster_profile(const std::string& name);
// Writes the profile atomically; returns the file.
std::string save_cluster_profile(const ClusterProfile& p);
// Removes a profile; false when there was none.
bool remove_cluster_profile(const std::string& name);
// The names of the profiles that read, sorted; files that do not read are described in `problems`.
std::vector<std::string> list_cluster_profiles(std::vector<std::string>* problems = nullptr);

}  // namespace gllm
