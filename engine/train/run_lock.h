// The run-folder lock: one writer per run folder (an advisory flock on run_dir/run.lock), the owner
// it records, and the probes the run list uses to tell a running run from a dead one. Torch-free.
#pragma once
#include <string>

namespace gllm {

// The owner of a run folder: the process holding the advisory lock on run_dir/run.lock.
struct RunOwner {
  long pid = 0;
  std::string host;
  std::string started;           // local time, "YYYY-mm-dd HH:MM:SS"
  std::string purpose;           // "train", "resume", …
  std::string describe() const;  // "pid 123 on host h since 2024-… (gllm resume)"
};

// One writer per run folder: an advisory lock (flock) on run_dir/run.lock, held for the whole
// run and released by the kernel when the process ends, so a lock left by a dead process is
// taken over. The file stays (emptied on release): removing it would let two writers lock two
// different files.
class RunLock {
 public:
  // Takes the lock or throws gllm::Error naming the owner (pid, host, start time, purpose).
  // The folder must exist. `previous` receives what a dead owner left in the file, if anything.
  static RunLock acquire(const std::string& run_dir, const std::string& purpose,
                         RunOwner* previous = nullptr);
  RunLock() = default;
  RunLock(RunLock&& other) noexcept;
  RunLock& operator=(RunLock&& other) noexcept;
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;
  ~RunLock();
  bool held() const { return fd_ >= 0; }
  void release();

 private:
  int fd_ = -1;
};

// The owner recorded in run_dir/run.lock and whether a live process holds the lock now.
RunOwner read_run_owner(const std::string& run_dir, bool* locked);

// 1 when a process holds run_dir's run.lock now, 0 when none does, -1 when that cannot be told
// (no lock file: a folder older than the lock, or one copied without it).
int run_lock_held(const std::string& run_dir);

// Whether process `pid` exists on this machine (a process of another user counts).
bool process_alive(long pid);

}  // namespace gllm
