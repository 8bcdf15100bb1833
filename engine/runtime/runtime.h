// Process-wide LibTorch runtime: thread count, the BLAS actually loaded, CUDA availability.
// Torch-free header: widgets and the CLI read RuntimeInfo without seeing torch.
#pragma once
#include <string>

namespace gllm {

struct RuntimeInfo {
  std::string project_version;
  std::string torch_version;
  std::string blas;          // "OpenBLAS", "reference BLAS", "MKL", or "unknown"
  std::string blas_detail;   // openblas_get_config() text or the loaded library path
  std::string blas_library;  // resolved path of the BLAS shared object in this process
  int threads = 0;           // intra-op threads LibTorch uses now
  int kernel_threads = 0;    // threads the engine's own parallel loops run on (measured)
  int cores = 0;             // cores this process may run on
  bool cuda_available = false;
  int cuda_devices = 0;
};

// Sets LibTorch's intra-op threads: `requested` if > 0, else $GLLM_THREADS, else every core the
// process may use. Returns the count in effect. Call once at start-up (CLI, GUI, tests). Throws
// gllm::Error for more than 1024 threads or a GLLM_THREADS that is not such a count.
int configure_threads(int requested = 0);

// Keeps freed tensor memory in the process heap instead of handing it back to the kernel after
// every step: one glibc arena for every thread, no separate mappings for large blocks (glibc maps
// blocks of 32 MiB and more on their own and unmaps them on free) and no heap trimming, so the
// process keeps its peak heap until it exits. A training step frees and re-allocates the same
// activations, up to hundreds of megabytes at long sequences; returned pages come back
// zero-filled through page faults, which cost more than the arithmetic here. Process-wide and
// idempotent; call it first thing in main() (arenas already taken by running threads stay as
// they are); configure_threads calls it too. GLLM_KEEP_HEAP=0 turns it off.
void configure_allocator();

// The same allocator settings as a glibc tunables string for a child process (GLIBC_TUNABLES is
// read at the child's start-up), so a program this process times runs on the same heap policy;
// empty when GLLM_KEEP_HEAP=0 or off glibc.
std::string allocator_tunables();

// Threads an at::parallel_for in the engine's own code runs on now, counted by running one: ATen's
// loop forks only where the calling code was compiled with OpenMP, so this equals `threads` in a
// correct build and 1 in one that lost its OpenMP flags.
int kernel_threads();

// Cores the process may run on (sched_getaffinity), at least 1.
int available_cores();

RuntimeInfo runtime_info();

// The CPU's model name (/proc/cpuinfo), or "unknown".
std::string cpu_model();

}  // namespace gllm
