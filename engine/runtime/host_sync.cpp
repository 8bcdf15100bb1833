// Host syncs (host_sync.h): host_read, marked for the profiler, and the RecordFunction counter of
// the operators that make the host wait for a CUDA stream.
#include "engine/runtime/host_sync.h"

#include <ATen/record_function.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "engine/io/error.h"

namespace gllm {

namespace {

// The operators that need their (device) result on the host: a stream wait on CUDA.
constexpr const char* kSyncOps[] = {
    "gllm::host_read",
    "aten::_local_scalar_dense",
    "aten::nonzero",
    "aten::_unique",
    "aten::_unique2",
    "aten::unique_dim",
    "aten::unique_consecutive",
    "aten::masked_select",
    "aten::bincount",
};

std::mutex g_mutex;
std::map<std::string, int64_t> g_counts;
std::atomic<bool> g_active{false};

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  const char* name = fn.name();
  for (const char* op : kSyncOps)
    if (std::strcmp(name, op) == 0) {
      std::lock_guard<std::mutex> lk(g_mutex);
      ++g_counts[op];
      break;
    }
  return nullptr;
}

}  // namespace

torch::Tensor host_read(const torch::Tensor& t) {
  RECORD_FUNCTION("gllm::host_read", std::vector<c10::IValue>());
  return t.to(torch::kCPU).contiguous();
}

HostSyncCounter::HostSyncCounter() {
  if (g_active.exchange(true))
    throw Error("internal: a HostSyncCounter is already counting; use one at a time");
  reset();
  handle_ = at::addGlobalCallback(at::RecordFunctionCallback(on_enter).scopes(
      {at::RecordScope::FUNCTION, at::RecordScope::USER_SCOPE}));
}

HostSyncCounter::~HostSyncCounter() {
  at::removeCallback(handle_);
  g_active = false;
}

int64_t HostSyncCounter::count() const {
  std::lock_guard<std::mutex> lk(g_mutex);
  int64_t n = 0;
  for (const auto& [op, k] : g_counts) n += k;
  return n;
}

std::map<std::string, int64_t> HostSyncCounter::by_op() const {
  std::lock_guard<std::mutex> lk(g_mutex);
  return g_counts;
}

void HostSyncCounter::reset() {
  std::lock_guard<std::mutex> lk(g_mutex);
  g_counts.clear();
}

}  // namespace gllm
