// Data parallel over PyTorch's c10d: a process group (Gloo; NCCL on CUDA when built with it) joined
// through a TCP or file store, bucketed gradient all-reduce, visit-count sums, broadcast, failures.
#pragma once
#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/dist/batch_plan.h"

namespace gllm::optim {
class MuonAdamW;
}

namespace gllm::dist {

// Whether this build compiled the c10d backends in (headers found at build time).
bool gloo_compiled();
bool nccl_compiled();

// How a rank joins its group. Rank, world size, local rank and store come from the launch
// (engine/dist/launcher.h: `gllm train --nproc`, torchrun or SLURM srun); further variables:
//   GLLM_DIST_BACKEND     auto | gloo | nccl (auto: NCCL on CUDA when the build has it, else Gloo;
//                         NCCL is compiled only with -DGLLM_WITH_NCCL=ON)
//   GLLM_DIST_TIMEOUT_S   store and collective timeout (default 1800 s)
//   GLLM_DIST_JOIN_TIMEOUT_S  how long ranks wait for each other to join (default 300 s); then the
//                         join fails naming the ranks that did not come
//   GLLM_DIST_BUCKET_MB   gradient bucket size (default 25 MiB)
//   GLLM_DIST_IFNAME      network interface of Gloo (default: loopback for a local store, else the
//                         interface of this host's name)
struct DistOptions {
  std::string source = "none";  // none | gllm | torchrun | slurm
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string store_file;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  bool agent_store = false;  // every rank, rank 0 included, is a client of the TCP store
  std::string store_prefix;  // key prefix inside that store
  std::string backend = "auto";
  double timeout_s = 1800;
  double join_timeout_s = 300;
  double bucket_mb = 25;
};

// Reads the launch and the variables above (defaults where absent); throws gllm::Error on malformed
// values.
DistOptions options_from_env();

// Per-table visit counts of hashed n-gram rows for one optimizer step, kept apart from the
// optimizer so ranks can sum them before the moment-free update.
class VisitCounts {
 public:
  // Adds this micro-batch's looked-up rows (any shape, integer) of a table with `table_rows` rows.
  void add(const std::string& table, const torch::Tensor& rows, int64_t table_rows);
  // Feeds the (summed) counts into the optimizer: each row r reaches accumulate_visits count[r]
  // times, so the optimizer's counts equal these. Clears this object.
  void apply(optim::MuonAdamW& opt);
  std::map<std::string, torch::Tensor>& counts() { return counts_; }  // float32 (rows,)
  bool empty() const { return counts_.empty(); }

 private:
  std::map<std::string, torch::Tensor> counts_;
};

class Context {
 public:
  // A single-process context: every collective is the identity.
  Context();
  // Joins the group described by `options` on `device` (CUDA picks NCCL when available). Blocks
  // until every rank has joined or the timeout passes (then throws gllm::Error naming the missing
  // ranks).
  Context(const DistOptions& options, const torch::Device& device);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // From the environment: single-process when GLLM_DIST_WORLD_SIZE is absent or 1.
  static std::unique_ptr<Context> from_env(const torch::Device& device);

  int rank() const { return rank_; }
  int world_size() const { return world_; }
  bool distributed() const { return world_ > 1; }
  bool is_writer() const { return rank_ == 0; }
  std::string backend() const { return backend_; }

  // Sums every gradient over ranks in ~bucket_mb buckets (flattened per dtype and device, reduced
  // in fp32), divides by the world size and writes the mean back. A parameter whose gradient is
  // undefined here but defined on another rank gets zeros first; undefined everywhere stays so.
  void all_reduce_gradients(const std::vector<torch::Tensor>& params);
  // Sums each table's visit counts over ranks (call before the optimizer step).
  void all_reduce_counts(VisitCounts& visits);
  // Element-wise sum over ranks of a few doubles (losses, token counts, flags).
  std::vector<double> all_reduce_sum(const std::vector<double>& values);
  // True on every rank when `flag` is true on any rank (cancel requests, non-finite losses).
  bool any(bool flag);
  // Copies `tensors` (parameters, buffers) from rank `root` into every rank, in place.
  void broadcast(const std::vector<torch::Tensor>& tensors, int root = 0);
  void barrier();

  // Records that this rank failed (in the store, for the others' error messages). Never throws.
  void abort(const std::string& message) noexcept;
  // The first failure message a rank recorded, or "" (checks the store without waiting).
  std::string abort_message() noexcept;

  int64_t collectives() const { return collectives_; }  // collectives run so far (tests)
  int64_t buckets_last_reduce() const { return buckets_last_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int rank_ = 0, world_ = 1;
  std::string backend_ = "none";
  int64_t collectives_ = 0, buckets_last_ = 0;
  void run_work(const char* what, const std::function<void()>& fn);
  // Checks this rank in with the store and waits (at most the join timeout) for every rank;
  // throws gllm::Error naming the ranks that did not come.
  void join_all(const DistOptions& o, const std::string& where);
};

}  // namespace gllm::dist
