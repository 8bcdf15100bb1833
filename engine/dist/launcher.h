// How a data-parallel rank was started (gllm --nproc, torchrun, SLURM srun), read from the
// environment, and the launcher of `gllm train --nproc N`: rank 0 starts ranks 1..N-1 as children
// of this program.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace gllm::dist {

// This process's place in a data-parallel job. The first source present wins:
//   gllm     GLLM_DIST_WORLD_SIZE, GLLM_DIST_RANK, GLLM_DIST_LOCAL_RANK, and GLLM_DIST_STORE_FILE
//   or
//            GLLM_DIST_MASTER_ADDR / GLLM_DIST_MASTER_PORT (set by `gllm train --nproc`, or by
//            hand)
//   torchrun WORLD_SIZE, RANK, LOCAL_RANK, MASTER_ADDR, MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE:
//            every rank joins the agent's store at MASTER_ADDR:MASTER_PORT as a client)
//   slurm    inside an srun step (SLURM_STEP_ID set): SLURM_NTASKS, SLURM_PROCID, SLURM_LOCALID;
//   the
//            store's host is MASTER_ADDR, else the first host of SLURM_STEP_NODELIST (or
//            SLURM_NODELIST), else SLURM_LAUNCH_NODE_IPADDR; its port MASTER_PORT, else 29500
// Without any of them the process is alone (source "none", world 1).
struct LaunchEnv {
  std::string source = "none";  // none | gllm | torchrun | slurm
  int rank = 0, world_size = 1, local_rank = 0;
  std::string store_file;  // a FileStore path (gllm only), else a TCPStore at master_addr
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  bool agent_store = false;  // torchrun's agent hosts the store: rank 0 is a client too
  std::string store_prefix;  // key prefix inside an agent's store ("/worker/attempt_N")
};
// Reads the variables above; throws gllm::Error naming the variable when one is malformed or
// missing.
LaunchEnv launch_env();
// The first host of a SLURM node list: "gpu[003-005,010],cpu01" → "gpu003", "a,b" → "a".
std::string first_slurm_host(const std::string& nodelist);

// True when this process is a non-zero rank of a data-parallel job (started by `--nproc`, torchrun
// or srun): it computes its share of each step and writes nothing to the run folder.
bool launched_child();

class Launcher {
 public:
  // Sets this process's GLLM_DIST_* variables to rank 0 of `nproc` and starts the others as
  // `<this executable> <child_args...>` with their own rank, stdout and stderr going to a log file
  // per rank. Children die with the parent. If a child fails while the parent still waits to form
  // the group (which would otherwise wait for the store timeout), the parent stops with its log.
  // `files` (name, content) are written into the private folder first; "@DIR@" inside a child
  // argument is replaced by that folder (e.g. the resolved config every rank reads).
  Launcher(int nproc, const std::vector<std::string>& child_args,
           const std::vector<std::pair<std::string, std::string>>& files = {});
  ~Launcher();  // stops children that are still running and removes the temporary folder
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  // Waits up to `timeout_s` for every child; returns "" when all exited with status 0, else one
  // line per failed rank with its exit status and the tail of its log. Children still running after
  // the timeout are stopped (and reported).
  std::string wait_children(double timeout_s);
  // Stops every running child (SIGTERM, then SIGKILL after a grace period).
  void stop_children();

  int nproc() const { return nproc_; }
  std::string log_path(int rank) const;
  std::string store_path() const;

 private:
  int nproc_ = 1;
  std::string dir_;
  std::vector<int> pids_;  // index rank-1; 0 once reaped
  std::vector<int> statuses_;
  std::atomic<bool> done_{false};
  std::thread monitor_;
  std::string describe(int rank, int status) const;
};

}  // namespace gllm::dist
