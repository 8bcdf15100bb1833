// c10d process groups for data parallel: store set-up (FileStore or TCPStore), Gloo / NCCL groups,
// bucketed fp32 gradient all-reduce, visit-count sums, broadcast, and failure messages via the
// store.
#include "engine/dist/process_group.h"

#include <netdb.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <torch/version.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <thread>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

// Gloo: Debian's LibTorch ships it (libgloo-dev headers); the headers only declare the group when
// USE_C10D_GLOO is defined, which torch's CMake config does not pass on.
#if __has_include(<gloo/config.h>) && __has_include(<torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>)
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO 1
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#define GLLM_DIST_GLOO 1
#endif
// NCCL: only when the build asks for it (-DGLLM_WITH_NCCL=ON: a CUDA build whose include path has
// nccl.h, e.g. from pip's nvidia-nccl package); otherwise CUDA ranks reduce over Gloo.
#if defined(GLLM_WITH_CUDA) && defined(GLLM_WITH_NCCL) && __has_include(<nccl.h>) && \
    __has_include(<torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>)
#ifndef USE_C10D_NCCL
#define USE_C10D_NCCL 1
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#define GLLM_DIST_NCCL 1
#endif

// Each CUDA rank makes its own GPU (cuda:LOCAL_RANK) the current device of its thread.
#if defined(GLLM_WITH_CUDA) && __has_include(<c10/cuda/CUDAFunctions.h>)
#include <c10/cuda/CUDAFunctions.h>
#define GLLM_DIST_SET_DEVICE 1
#endif

#include "engine/dist/launcher.h"
#include "engine/io/error.h"
#include "engine/optim/muon_adamw.h"
#include "engine/runtime/torch_compat.h"

namespace gllm::dist {

#ifdef GLLM_C10D_BACKENDS
using GroupBase = c10d::Backend;  // LibTorch 2.x: Gloo and NCCL are backends
#else
using GroupBase = c10d::ProcessGroup;
#endif

bool gloo_compiled() {
#ifdef GLLM_DIST_GLOO
  return true;
#else
  return false;
#endif
}

bool nccl_compiled() {
#ifdef GLLM_DIST_NCCL
  return true;
#else
  return false;
#endif
}

namespace {

const char* kAbortKey = "gllm/abort";

std::string env_str(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

double env_number(const char* name, double fallback, double lo, double hi) {
  std::string v = env_str(name);
  if (v.empty()) return fallback;
  char* end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0' || !(d >= lo && d <= hi))
    throw Error(std::string(name) + "=\"" + v + "\" is not a number in [" + std::to_string(lo) +
                ", " + std::to_string(hi) + "]; fix or unset it");
  return d;
}

// A store file must be a regular file (or not exist yet) in a writable folder of a real
// filesystem: one under /proc or /sys would never behave as a store and the join would hang.
void check_store_file(const std::string& path) {
  const std::string folder = std::filesystem::path(path).parent_path().string();
  const std::string dir = folder.empty() ? std::string(".") : folder;
  struct statfs fsinfo {};
  if (::statfs(dir.c_str(), &fsinfo) != 0)
    throw Error("the store file's folder " + dir + " is not usable (" + std::strerror(errno) +
                "); set GLLM_DIST_STORE_FILE to a path in an existing, writable folder");
  constexpr long kProcMagic = 0x9fa0, kSysfsMagic = 0x62656572;
  if (static_cast<long>(fsinfo.f_type) == kProcMagic ||
      static_cast<long>(fsinfo.f_type) == kSysfsMagic)
    throw Error("the store file " + path +
                " lies in /proc or /sys, which cannot hold a store; set GLLM_DIST_STORE_FILE to a "
                "path on a real filesystem shared by every rank");
  if (::access(dir.c_str(), W_OK) != 0)
    throw Error("the store file's folder " + dir +
                " is not writable; set GLLM_DIST_STORE_FILE to a path every rank can write");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw Error("the store file " + path +
                " exists and is not a regular file; remove it or choose another path");
}

// The master's address must resolve before anything waits on it: a name that does not resolve
// fails at once instead of after the store timeout.
void check_resolves(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (res) ::freeaddrinfo(res);
  if (rc != 0)
    throw Error(
        "the master address \"" + host.substr(0, 120) + "\" does not resolve (" +
        ::gai_strerror(rc) +
        "); set MASTER_ADDR (or GLLM_DIST_MASTER_ADDR) to rank 0's host name or IP address");
}

std::string this_host_name() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

std::string joined_key(int rank) {
  return "gllm/joined/" + std::to_string(rank);
}

std::string first_line(const std::string& s) {
  auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

}  // namespace

DistOptions options_from_env() {
  DistOptions o;
  const LaunchEnv e = launch_env();  // gllm --nproc, torchrun or srun
  o.source = e.source;
  o.world_size = e.world_size;
  o.rank = e.rank;
  o.local_rank = e.local_rank;
  o.store_file = e.store_file;
  o.master_addr = e.master_addr;
  o.master_port = e.master_port;
  o.agent_store = e.agent_store;
  o.store_prefix = e.store_prefix;
  if (!env_str("GLLM_DIST_BACKEND").empty()) o.backend = env_str("GLLM_DIST_BACKEND");
  if (o.backend != "auto" && o.backend != "gloo" && o.backend != "nccl")
    throw Error("GLLM_DIST_BACKEND=\"" + o.backend + "\"; use auto, gloo or nccl");
  o.timeout_s = env_number("GLLM_DIST_TIMEOUT_S", o.timeout_s, 1, 7 * 24 * 3600.0);
  o.join_timeout_s = env_number("GLLM_DIST_JOIN_TIMEOUT_S", o.join_timeout_s, 0.1, 7 * 24 * 3600.0);
  o.bucket_mb = env_number("GLLM_DIST_BUCKET_MB", o.bucket_mb, 1e-6, 1 << 16);
  return o;
}

// ----- VisitCounts -----

void VisitCounts::add(const std::string& table, const torch::Tensor& rows, int64_t table_rows) {
  auto it = counts_.find(table);
  if (it == counts_.end())
    it = counts_
             .emplace(
                 table,
                 torch::zeros({table_rows},
                              torch::TensorOptions().dtype(torch::kFloat32).device(rows.device())))
             .first;
  auto r = rows.reshape({-1}).to(torch::kLong);  // (B·T,)
  if (r.numel() == 0) return;
  // index_add_ checks the bounds (no min/max read: a host sync per micro-step on CUDA).
  try {
    it->second.index_add_(0, r, torch::ones({r.numel()}, it->second.options()));
  } catch (const c10::Error&) {
    throw Error("visit counts: a row index of table '" + table + "' is outside [0, " +
                std::to_string(table_rows) + "); pass the rows the model's oe_rows gives");
  }
}

void VisitCounts::apply(optim::MuonAdamW& opt) {
  for (auto& [table, c] : counts_) {
    auto n = c.round().to(torch::kLong);                                             // (rows,)
    auto rows = torch::repeat_interleave(torch::arange(n.size(0), n.options()), n);  // (Σ counts,)
    if (rows.numel() > 0) opt.accumulate_visits(table, rows);
  }
  counts_.clear();
}

// ----- Context -----

struct Context::Impl {
  DistOptions options;
  torch::Device device = torch::kCPU;
  torch::Device scalar_device = torch::kCPU;  // where small reductions live (CUDA for NCCL)
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<GroupBase> group;
};

Context::Context() : impl_(std::make_unique<Impl>()) {}

Context::~Context() = default;

Context::Context(const DistOptions& o, const torch::Device& device)
    : impl_(std::make_unique<Impl>()) {
  rank_ = o.rank;
  world_ = o.world_size;
  impl_->options = o;
  impl_->device = device;
  if (world_ <= 1) return;
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000));
  std::string where;
  try {
    if (!o.store_file.empty()) {
      where = "file store " + o.store_file;
      check_store_file(o.store_file);
      impl_->store = c10::make_intrusive<c10d::FileStore>(o.store_file, world_);
      impl_->store->setTimeout(timeout);
    } else {
      where = "TCP store " + o.master_addr + ":" + std::to_string(o.master_port);
      check_resolves(o.master_addr, o.master_port);
      c10d::TCPStoreOptions so;
      so.port = static_cast<std::uint16_t>(o.master_port);
      so.isServer = rank_ == 0 && !o.agent_store;  // torchrun's agent may host it for every rank
      so.numWorkers = static_cast<std::size_t>(world_);
      // Every rank checks in below with a bounded wait that names the ranks that did not come.
      so.waitWorkers = false;
      so.timeout = timeout;
      impl_->store = c10::make_intrusive<c10d::TCPStore>(o.master_addr, so);
      if (!o.store_prefix.empty())
        impl_->store = c10::make_intrusive<c10d::PrefixStore>(o.store_prefix, impl_->store);
    }
  } catch (const Error& e) {
    throw Error("data parallel rank " + std::to_string(rank_) + ": " + e.what());
  } catch (const std::exception& e) {
    throw Error("data parallel rank " + std::to_string(rank_) + ": could not join the " + where +
                " (" + first_line(e.what()) + "); check the launch variables (" + o.source +
                ": address, port, store file) and that every rank started");
  }
  join_all(o, where);
#ifdef GLLM_DIST_SET_DEVICE
  if (device.is_cuda()) c10::cuda::set_device(device.index());  // cuda:LOCAL_RANK for this thread
#endif
  std::string want = o.backend;
  if (want == "auto") want = device.is_cuda() && nccl_compiled() ? "nccl" : "gloo";
  auto prefixed = c10::make_intrusive<c10d::PrefixStore>("gllm/pg", impl_->store);
  try {
    if (want == "nccl") {
#ifdef GLLM_DIST_NCCL
      auto opts = c10d::ProcessGroupNCCL::Options::create();
      opts->timeout = timeout;
      impl_->group = c10::make_intrusive<c10d::ProcessGroupNCCL>(prefixed, rank_, world_, opts);
      impl_->scalar_device = device;
#else
      throw Error(
          "GLLM_DIST_BACKEND=nccl but this build has no NCCL process group (needs a CUDA LibTorch "
          "and nccl.h "
          "at build time); use gloo");
#endif
    } else {
#ifdef GLLM_DIST_GLOO
      auto opts = c10d::ProcessGroupGloo::Options::create(timeout);
      const std::string ifname = env_str("GLLM_DIST_IFNAME");
      if (!ifname.empty())
        opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
      else if (o.store_file.empty() && o.master_addr != "127.0.0.1" && o.master_addr != "localhost")
        opts->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      else
        opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      opts->threads = 2;
      impl_->group = c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, rank_, world_, opts);
#else
      throw Error(
          "this build has no Gloo process group (torch/csrc/distributed/c10d/ProcessGroupGloo.hpp "
          "and gloo "
          "headers were not found at build time); install libgloo-dev and rebuild, or train with "
          "one process");
#endif
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("data parallel rank " + std::to_string(rank_) + ": the " + want +
                " process group did not form (" + first_line(e.what()) +
                "); a rank may have failed to start — see its log");
  }
  backend_ = want;
}

void Context::join_all(const DistOptions& o, const std::string& where) {
  const std::string host = this_host_name();
  const double wait_s = std::min(o.join_timeout_s, o.timeout_s);
  try {
    impl_->store->set(joined_key(rank_), std::vector<uint8_t>(host.begin(), host.end()));
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<int64_t>(wait_s * 1000));
    std::vector<int> missing;
    for (;;) {
      missing.clear();
      for (int r = 0; r < world_; ++r)
        if (!impl_->store->check({joined_key(r)})) missing.push_back(r);
      if (missing.empty()) return;
      if (std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::string list;
    for (size_t i = 0; i < missing.size() && i < 16; ++i)
      list += (list.empty() ? "" : ", ") + std::to_string(missing[i]);
    if (missing.size() > 16) list += ", …";
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", wait_s);
    throw Error("data parallel rank " + std::to_string(rank_) + " on " + host + ": rank" +
                (missing.size() > 1 ? "s " : " ") + list + " of " + std::to_string(world_) +
                " did not join the " + where + " within " + secs +
                " s (GLLM_DIST_JOIN_TIMEOUT_S); start " + (missing.size() > 1 ? "them" : "it") +
                " with the same launch variables (" + o.source +
                ": MASTER_ADDR/MASTER_PORT or the store file), or check " +
                (missing.size() > 1 ? "their logs" : "its log"));
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("data parallel rank " + std::to_string(rank_) + ": could not check in with the " +
                where + " (" + first_line(e.what()) + "); check that every rank started");
  }
}

std::unique_ptr<Context> Context::from_env(const torch::Device& device) {
  DistOptions o = options_from_env();
  if (o.world_size <= 1) return std::make_unique<Context>();
  return std::make_unique<Context>(o, device);
}

void Context::run_work(const char* what, const std::function<void()>& fn) {
  ++collectives_;
  try {
    fn();
  } catch (const std::exception& e) {
    std::string other = abort_message();
    if (!other.empty())
      throw Error("data parallel: stopping rank " + std::to_string(rank_) + " because " + other);
    std::string msg = "data parallel: rank " + std::to_string(rank_) +
                      " lost the other ranks during " + what + " (" + first_line(e.what()) +
                      "); another rank has probably stopped — see its log";
    abort("rank " + std::to_string(rank_) + " failed: " + msg);
    throw Error(msg);
  }
}

void Context::all_reduce_gradients(const std::vector<torch::Tensor>& params) {
  if (!distributed()) return;
  torch::NoGradGuard ng;
  const int64_t n = static_cast<int64_t>(params.size());
  // Agree on which gradients exist: defined on any rank → zeros where missing.
  auto mask =
      torch::zeros({n}, torch::TensorOptions().dtype(torch::kFloat32).device(impl_->scalar_device));
  {
    auto cpu = torch::zeros({n}, torch::kFloat32);
    for (int64_t i = 0; i < n; ++i) cpu[i] = params[i].grad().defined() ? 1.0f : 0.0f;
    mask.copy_(cpu);
  }
  run_work("the gradient mask all-reduce", [&] {
    std::vector<at::Tensor> v{mask};
    impl_->group->allreduce(v)->wait();
  });
  auto have = mask.to(torch::kCPU);
  std::vector<torch::Tensor> grads;
  for (int64_t i = 0; i < n; ++i) {
    if (have[i].item<float>() == 0.0f) continue;
    auto p = params[i];
    if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    grads.push_back(p.grad());
  }
  // Buckets of ≈ bucket_mb MiB of fp32, one dtype and device per bucket.
  const int64_t cap =
      std::max<int64_t>(1, static_cast<int64_t>(impl_->options.bucket_mb * 1024 * 1024 / 4));
  struct Bucket {
    std::vector<torch::Tensor> grads;
    int64_t numel = 0;
  };
  std::vector<Bucket> done;
  std::map<std::pair<std::string, int>, Bucket> open;
  for (const auto& g : grads) {
    auto key = std::make_pair(g.device().str(), static_cast<int>(g.scalar_type()));
    auto& b = open[key];
    b.grads.push_back(g);
    b.numel += g.numel();
    if (b.numel >= cap) {
      done.push_back(std::move(b));
      open.erase(key);
    }
  }
  for (auto& [k, b] : open) done.push_back(std::move(b));
  buckets_last_ = static_cast<int64_t>(done.size());
  std::vector<torch::Tensor> flats;
  std::vector<c10::intrusive_ptr<c10d::Work>> works;
  run_work("the gradient all-reduce", [&] {
    for (auto& b : done) {
      std::vector<torch::Tensor> parts;
      for (const auto& g : b.grads) parts.push_back(g.reshape({-1}).to(torch::kFloat32));
      auto flat = torch::cat(parts);  // (Σ numel,) fp32
      flats.push_back(flat);
      std::vector<at::Tensor> v{flat};
      works.push_back(impl_->group->allreduce(v));
    }
    for (auto& w : works) w->wait();
  });
  const double inv = 1.0 / world_;
  for (size_t i = 0; i < done.size(); ++i) {
    auto& flat = flats[i];
    flat.mul_(inv);
    int64_t off = 0;
    for (auto& g : done[i].grads) {
      g.copy_(flat.narrow(0, off, g.numel()).view(g.sizes()));
      off += g.numel();
    }
  }
}

void Context::all_reduce_counts(VisitCounts& visits) {
  if (!distributed()) return;
  auto& counts = visits.counts();
  auto check = all_reduce_sum({static_cast<double>(counts.size())});
  if (check[0] != static_cast<double>(counts.size()) * world_)
    throw Error(
        "data parallel: ranks disagree on the hashed tables with visits this step; the ranks run "
        "different "
        "configurations — start them from the same config");
  run_work("the visit-count all-reduce", [&] {
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    std::vector<std::vector<at::Tensor>> keep;
    for (auto& [name, c] : counts) {
      if (impl_->scalar_device != c.device()) c = c.to(impl_->scalar_device);
      keep.push_back({c});
      works.push_back(impl_->group->allreduce(keep.back()));
    }
    for (auto& w : works) w->wait();
  });
}

std::vector<double> Context::all_reduce_sum(const std::vector<double>& values) {
  if (!distributed()) return values;
  auto t = torch::tensor(values, torch::kDouble).to(impl_->scalar_device);
  run_work("a scalar all-reduce", [&] {
    std::vector<at::Tensor> v{t};
    impl_->group->allreduce(v)->wait();
  });
  auto c = t.to(torch::kCPU).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

bool Context::any(bool flag) {
  if (!distributed()) return flag;
  return all_reduce_sum({flag ? 1.0 : 0.0})[0] > 0;
}

void Context::broadcast(const std::vector<torch::Tensor>& tensors, int root) {
  if (!distributed()) return;
  torch::NoGradGuard ng;
  run_work("the weight broadcast", [&] {
    for (const auto& t : tensors) {
      c10d::BroadcastOptions bo;
      bo.rootRank = root;
      auto buf = t.is_contiguous() ? t : t.contiguous();
      std::vector<at::Tensor> v{buf};
      impl_->group->broadcast(v, bo)->wait();
      if (!buf.is_same(t)) const_cast<torch::Tensor&>(t).copy_(buf);
    }
  });
}

void Context::barrier() {
  if (!distributed()) return;
  all_reduce_sum({0.0});
}

void Context::abort(const std::string& message) noexcept {
  if (!distributed() || !impl_->store) return;
  try {
    std::vector<uint8_t> v(message.begin(), message.end());
    // The first failure wins: later ranks that fail because of it keep the original cause.
    impl_->store->compareSet(kAbortKey, {}, v);
  } catch (...) {
  }
}

std::string Context::abort_message() noexcept {
  if (!distributed() || !impl_->store) return "";
  try {
    if (!impl_->store->check({kAbortKey})) return "";
    auto v = impl_->store->get(kAbortKey);
    return std::string(v.begin(), v.end());
  } catch (...) {
    return "";
  }
}

}  // namespace gllm::dist
