// Launcher for `gllm train PRESET --nproc N`: this process becomes rank 0 and starts ranks 1..N-1 as
// children (the same executable) joined through a FileStore in a private temporary folder.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace gllm::dist {

// True when this process was started as a non-zero rank by a launcher (GLLM_DIST_RANK > 0).
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
  std::vector<int> pids_;        // index rank-1; 0 once reaped
  std::vector<int> statuses_;
  std::atomic<bool> done_{false};
  std::thread monitor_;
  std::string describe(int rank, int status) const;
};

}  // namespace gllm::dist
