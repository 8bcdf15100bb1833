// Which CPU path the engine's hand-written kernels take on this machine: the vector width they run
// at (AVX-512, AVX2 or portable C++) and, per shape, the engine's kernel or the library's, timed
// once.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gllm::ops::kernels {

// The instruction sets the kernels have forms for, narrowest first.
enum class Isa { Portable = 0, Avx2 = 1, Avx512 = 2 };
const char* isa_name(Isa isa);  // "portable", "avx2", "avx512"
// Parses a name of isa_name(); anything else throws gllm::Error naming `source` and the choices.
Isa parse_isa(const std::string& name, const std::string& source);

// The widest form this CPU (and the OS's saved register state) runs: AVX-512 needs F, VL, BW, DQ;
// AVX2 needs FMA too.
Isa cpu_isa();

namespace detail {
extern std::atomic<int> active_isa;  // −1 until first read
int init_active_isa();               // reads GLLM_KERNEL_ISA; throws on a bad value
}  // namespace detail

// What the kernels run at now: cpu_isa(), narrowed by GLLM_KERNEL_ISA=portable|avx2|avx512 or by
// set_isa(). Cheap enough for a row loop.
inline Isa active_isa() {
  const int v = detail::active_isa.load(std::memory_order_relaxed);
  return static_cast<Isa>(v >= 0 ? v : detail::init_active_isa());
}
// Sets the kernels' ISA for this process (tests force each path; a debugging aid); one wider than
// cpu_isa() throws gllm::Error. Returns the previous one. Choices already made are kept per ISA.
Isa set_isa(Isa isa);

// Who decides between the engine's kernel and the library's for a shape.
enum class Mode {
  Measure,  // time both once per shape on this machine (default)
  Own,      // always the engine's kernels (where they apply)
  Library,  // always the library path (ATen / the BLAS)
};
const char* mode_name(Mode mode);  // "measure", "own", "library"
Mode parse_mode(const std::string& name, const std::string& source);
// The mode: GLLM_KERNELS=measure|own|library at first use, or set_mode(). Returns the previous one.
Mode mode();
Mode set_mode(Mode mode);

enum class Side { Own, Library };
const char* side_name(Side side);  // "own", "library"

// One shape's decision. A product is (m, k)·(k, n); a row kernel is m rows of k (n = 0).
struct Choice {
  std::string op;  // "linear.forward", "linear.input_grad", "logits", "rms_norm", …
  int64_t m = 0, k = 0, n = 0;
  int threads = 0;  // intra-op threads the timing ran on
  std::string isa;  // the ISA the engine's kernel ran at
  Side side = Side::Own;
  double own_ms = 0, library_ms = 0;  // best of the timed runs
  bool from_cache = false;            // read from the cache file rather than timed in this process
};

// The side op takes at this shape. Forced by mode() (neither function runs), else the choice
// already made (in this process or in the cache file for this machine and build), else `own` and
// `library` are each run 1 + reps times, alternating, without autograd, and the faster (best time)
// is kept — in memory and in the cache file. The functions compute the op on the caller's real
// operands and must leave nothing behind that the caller relies on: the caller computes its result
// afterwards with the side returned.
Side choose(const std::string& op, int64_t m, int64_t k, int64_t n,
            const std::function<void()>& own, const std::function<void()>& library);

// The side op took at this shape on the current threads and ISA: the forced side in the own and
// library modes, else the choice made so far (nullopt before the shape's first use).
std::optional<Side> chosen(const std::string& op, int64_t m, int64_t k, int64_t n);

// This process's choices (timed or read from the cache), in first-use order.
std::vector<Choice> choices();
// What the cache file for this machine and build holds (empty when there is none; a damaged file
// reads as empty, with one warning on stderr).
std::vector<Choice> cached_choices();
// Forgets this process's choices (the cache file stays); tests.
void clear_choices();

// What the choices depend on besides shape and threads: CPU model, the widest ISA, the BLAS
// library and its core type, OPENBLAS_CORETYPE as set (never changed here) and the engine's build.
std::string machine_key();
// <data cache>/kernels/choices-<first 16 hex of SHA-512(machine_key())>.json
std::string cache_file();
// Whether choose() writes the cache file (default yes; GLLM_KERNEL_CACHE=0 keeps choices in
// memory).
bool cache_enabled();

// The BLAS's own name for the kernels it runs (OpenBLAS's openblas_get_corename(); "" elsewhere).
std::string blas_core_type();
// OPENBLAS_CORETYPE as this process's environment has it ("" when unset).
std::string openblas_coretype();

// What `gllm version` and the benchmarks report: {cpu_isa, isa, mode, blas_core_type,
// openblas_coretype (null when unset), cache_file, choices: [this process's], and with
// `with_cache` cached: [the cache file's]}; each choice {op, m, k, n, threads, isa, side, own_ms,
// library_ms}.
nlohmann::json report(bool with_cache);
// One line of such a report for people: "avx512 (CPU runs avx512), choice by measure; BLAS core
// Cooperlake, OPENBLAS_CORETYPE unset".
std::string report_headline(const nlohmann::json& report);
// One choice of a report as a table row: op, shape (m×k×n), ISA and threads, side, both times.
std::string choice_row(const nlohmann::json& choice);

}  // namespace gllm::ops::kernels
