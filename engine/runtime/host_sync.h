// Host syncs: the engine's deliberate device → host reads (host_read) and a counter of every
// operator that makes the host wait for a CUDA stream, for tests that hold the step to its budget.
#pragma once
// LibTorch header: engine .cpp files and tests only (see docs/design.md).
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>

namespace gllm {

// A copy of `t` on the host (contiguous): the one way the engine reads device values on purpose.
// Seen by HostSyncCounter as "gllm::host_read" (on the CPU the copy is free, but counted alike, so
// a CPU test sees the syncs a CUDA run would make).
torch::Tensor host_read(const torch::Tensor& t);

// Counts, while alive, the operators that wait for the device on CUDA: gllm::host_read and the
// ATen operators whose result the host must see (item/_local_scalar_dense, nonzero, unique,
// masked_select, bincount). Through a global RecordFunction callback, so it sees every thread and
// works on the CPU, where those operators run the same code paths. One counter at a time.
class HostSyncCounter {
 public:
  HostSyncCounter();
  ~HostSyncCounter();
  HostSyncCounter(const HostSyncCounter&) = delete;
  HostSyncCounter& operator=(const HostSyncCounter&) = delete;

  int64_t count() const;                         // syncs since construction or reset()
  std::map<std::string, int64_t> by_op() const;  // the same, per operator name
  void reset();

 private:
  uint64_t handle_ = 0;
};

}  // namespace gllm
