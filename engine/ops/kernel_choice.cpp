// The kernels' ISA (CPU feature bits, narrowed by GLLM_KERNEL_ISA) and the per-shape choice between
// the engine's kernel and the library's: timed once, kept in memory and in a cache file per
// machine.
#include "engine/ops/kernel_choice.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/file.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"
#include "engine/io/sha512.h"
#include "engine/ops/simd_math.h"
#include "engine/runtime/runtime.h"

namespace gllm::ops::kernels {

// Bump when a kernel's code changes what it costs: cached choices of older builds are not reused.
constexpr int kKernelRevision = 2;
constexpr int kTimedRuns = 3;  // per side, after one untimed run each

namespace {

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Avx512:
      return "avx512";
    case Isa::Avx2:
      return "avx2";
    default:
      return "portable";
  }
}

Isa parse_isa(const std::string& name, const std::string& source) {
  for (Isa isa : {Isa::Portable, Isa::Avx2, Isa::Avx512})
    if (name == isa_name(isa)) return isa;
  throw Error(source + " \"" + brief_text(name, 40) +
              "\" is not a kernel ISA; use portable, avx2 or avx512 (or leave it unset for the "
              "widest this CPU runs)");
}

Isa cpu_isa() {
  if (simd::cpu_has_avx512()) return Isa::Avx512;
  if (simd::cpu_has_avx2_fma()) return Isa::Avx2;
  return Isa::Portable;
}

namespace detail {
std::atomic<int> active_isa{-1};

int init_active_isa() {
  const std::string env = env_or_empty("GLLM_KERNEL_ISA");
  Isa isa = cpu_isa();
  if (!env.empty()) {
    const Isa asked = parse_isa(env, "GLLM_KERNEL_ISA");
    if (static_cast<int>(asked) > static_cast<int>(isa))
      throw Error(std::string("GLLM_KERNEL_ISA=") + env + " but this CPU runs at most " +
                  isa_name(isa) + "; unset it or choose " + isa_name(isa) + " or narrower");
    isa = asked;
  }
  int expected = -1;
  active_isa.compare_exchange_strong(expected, static_cast<int>(isa));
  return active_isa.load();
}
}  // namespace detail

Isa set_isa(Isa isa) {
  if (static_cast<int>(isa) > static_cast<int>(cpu_isa()))
    throw Error(std::string("kernel ISA ") + isa_name(isa) +
                " asked for, but this CPU runs at most " + isa_name(cpu_isa()));
  const Isa previous = active_isa();
  detail::active_isa.store(static_cast<int>(isa));
  return previous;
}

const char* mode_name(Mode mode) {
  switch (mode) {
    case Mode::Own:
      return "own";
    case Mode::Library:
      return "library";
    default:
      return "measure";
  }
}

Mode parse_mode(const std::string& name, const std::string& source) {
  for (Mode m : {Mode::Measure, Mode::Own, Mode::Library})
    if (name == mode_name(m)) return m;
  throw Error(source + " \"" + brief_text(name, 40) +
              "\" is not a kernel choice; use measure (time both per shape, the default), own "
              "(the engine's kernels) or library (ATen and the BLAS)");
}

const char* side_name(Side side) {
  return side == Side::Own ? "own" : "library";
}

namespace {

std::atomic<int>& mode_slot() {
  static std::atomic<int> slot{-1};
  return slot;
}

struct Store {
  std::mutex mutex;
  std::map<std::string, Choice> by_key;  // this process's choices
  std::vector<std::string> order;        // first-use order of by_key
  bool file_read = false;
  std::map<std::string, Choice> from_file;
};

Store& store() {
  static Store s;
  return s;
}

std::string key_of(const std::string& op, int64_t m, int64_t k, int64_t n, int threads,
                   const std::string& isa) {
  return op + " " + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n) + " t" +
         std::to_string(threads) + " " + isa;
}

nlohmann::json to_json(const Choice& c) {
  return {{"op", c.op},
          {"m", c.m},
          {"k", c.k},
          {"n", c.n},
          {"threads", c.threads},
          {"isa", c.isa},
          {"side", side_name(c.side)},
          {"own_ms", c.own_ms},
          {"library_ms", c.library_ms}};
}

Choice from_json(const nlohmann::json& j, const std::string& where) {
  Choice c;
  c.op = json_string_at(j, "op", where);
  c.m = json_int_at(j, "m", where);
  c.k = json_int_at(j, "k", where);
  c.n = json_int_at(j, "n", where);
  c.threads = static_cast<int>(json_int_at(j, "threads", where));
  c.isa = isa_name(parse_isa(json_string_at(j, "isa", where), where + " isa"));
  const std::string side = json_string_at(j, "side", where);
  if (side != "own" && side != "library")
    throw Error(where + ": side \"" + brief_text(side, 20) + "\" is neither own nor library");
  c.side = side == "own" ? Side::Own : Side::Library;
  c.own_ms = json_number_or(j, "own_ms", 0);
  c.library_ms = json_number_or(j, "library_ms", 0);
  c.from_cache = true;
  return c;
}

// The cache file's choices; a missing file is empty, a damaged one is empty with a warning.
std::map<std::string, Choice> read_cache(bool warn) {
  std::map<std::string, Choice> out;
  const std::string path = cache_file();
  if (!file_exists(path)) return out;
  try {
    const auto j = read_json_file(path, "delete it; the kernel choices are timed again",
                                  JsonLimits{4u << 20, 8});
    if (!j.is_object() || !j.contains("choices") || !j["choices"].is_array())
      throw Error(path + ": not a kernel choice file (no \"choices\" list); delete it");
    for (const auto& e : j["choices"]) {
      Choice c = from_json(e, path);
      out[key_of(c.op, c.m, c.k, c.n, c.threads, c.isa)] = c;
    }
  } catch (const std::exception& e) {
    if (warn) std::cerr << "warning: kernel choices not read: " << e.what() << "\n";
    out.clear();
  }
  return out;
}

// Merges `c` into the cache file under an exclusive lock (<file>.lock, flock), so that processes
// timing the same shape at once agree: the first choice written stands, and a later process takes
// it instead of its own (runs and their resumes then run the same kernels). Returns the choice to
// use.
Choice save_choice(const std::string& key, const Choice& c) {
  if (!cache_enabled()) return c;
  int lock_fd = -1;
  try {
    const std::string path = cache_file();
    make_directories(path.substr(0, path.rfind('/')));
    lock_fd = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (lock_fd < 0 || ::flock(lock_fd, LOCK_EX) != 0)
      throw Error("cannot lock " + path + ".lock (check the data cache's permissions)");
    auto merged = read_cache(/*warn=*/false);
    if (auto it = merged.find(key); it != merged.end()) {
      ::close(lock_fd);
      return it->second;  // another process chose first
    }
    merged[key] = c;
    nlohmann::json list = nlohmann::json::array();
    for (const auto& [k, v] : merged) list.push_back(to_json(v));
    write_file_atomic(path,
                      nlohmann::json{{"machine", machine_key()}, {"choices", list}}.dump(1) + "\n");
  } catch (const std::exception& e) {
    static std::once_flag once;
    std::call_once(once, [&] {
      std::cerr << "warning: kernel choices kept in memory only: " << e.what() << "\n";
    });
  }
  if (lock_fd >= 0) ::close(lock_fd);
  return c;
}

double time_ms(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Mode mode() {
  int v = mode_slot().load();
  if (v < 0) {
    const std::string env = env_or_empty("GLLM_KERNELS");
    const Mode m = env.empty() ? Mode::Measure : parse_mode(env, "GLLM_KERNELS");
    int expected = -1;
    mode_slot().compare_exchange_strong(expected, static_cast<int>(m));
    v = mode_slot().load();
  }
  return static_cast<Mode>(v);
}

Mode set_mode(Mode m) {
  const Mode previous = mode();
  mode_slot().store(static_cast<int>(m));
  return previous;
}

bool cache_enabled() {
  return env_or_empty("GLLM_KERNEL_CACHE") != "0";
}

Side choose(const std::string& op, int64_t m, int64_t k, int64_t n,
            const std::function<void()>& own, const std::function<void()>& library) {
  const Mode md = mode();
  if (md == Mode::Own) return Side::Own;
  if (md == Mode::Library) return Side::Library;
  const int threads = at::get_num_threads();
  const Isa isa = active_isa();
  const std::string key = key_of(op, m, k, n, threads, isa_name(isa));
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (auto it = s.by_key.find(key); it != s.by_key.end()) return it->second.side;
  if (!s.file_read) {
    s.from_file = cache_enabled() ? read_cache(/*warn=*/true) : std::map<std::string, Choice>{};
    s.file_read = true;
  }
  if (auto it = s.from_file.find(key); it != s.from_file.end()) {
    s.by_key[key] = it->second;
    s.order.push_back(key);
    return it->second.side;
  }
  Choice c;
  c.op = op;
  c.m = m;
  c.k = k;
  c.n = n;
  c.threads = threads;
  c.isa = isa_name(isa);
  {
    torch::NoGradGuard no_grad;
    own();  // untimed: first-touch of buffers, packing caches
    library();
    double best_own = 1e300, best_library = 1e300;
    for (int r = 0; r < kTimedRuns; ++r) {
      best_own = std::min(best_own, time_ms(own));
      best_library = std::min(best_library, time_ms(library));
    }
    c.own_ms = best_own;
    c.library_ms = best_library;
  }
  c.side = c.own_ms <= c.library_ms ? Side::Own : Side::Library;
  c = save_choice(key, c);
  s.by_key[key] = c;
  s.order.push_back(key);
  return c.side;
}

std::optional<Side> chosen(const std::string& op, int64_t m, int64_t k, int64_t n) {
  const Mode md = mode();
  if (md == Mode::Own) return Side::Own;
  if (md == Mode::Library) return Side::Library;
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.mutex);
  const auto it = s.by_key.find(key_of(op, m, k, n, at::get_num_threads(), isa_name(active_isa())));
  if (it == s.by_key.end()) return std::nullopt;
  return it->second.side;
}

std::vector<Choice> choices() {
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::vector<Choice> out;
  for (const auto& key : s.order) out.push_back(s.by_key.at(key));
  return out;
}

std::vector<Choice> cached_choices() {
  std::vector<Choice> out;
  if (!cache_enabled()) return out;
  for (const auto& [key, c] : read_cache(/*warn=*/true)) out.push_back(c);
  return out;
}

void clear_choices() {
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.by_key.clear();
  s.order.clear();
  s.from_file.clear();
  s.file_read = false;
}

std::string blas_core_type() {
  using CoreFn = char* (*)();
  static const auto fn = reinterpret_cast<CoreFn>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (!fn) return "";
  const char* name = fn();
  return name ? std::string(name) : std::string();
}

std::string openblas_coretype() {
  return env_or_empty("OPENBLAS_CORETYPE");
}

std::string machine_key() {
  static const std::string key = [] {
    const RuntimeInfo info = runtime_info();
    return "cpu=" + cpu_model() + "; isa=" + isa_name(cpu_isa()) + "; blas=" + info.blas_library +
           "; blas_core=" + blas_core_type() + "; OPENBLAS_CORETYPE=" + openblas_coretype() +
           "; build=gllm " + GLLM_VERSION + " kernels r" + std::to_string(kKernelRevision) + " " +
           __VERSION__;
  }();
  return key;
}

nlohmann::json report(bool with_cache) {
  const auto list = [](const std::vector<Choice>& cs) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& c : cs) a.push_back(to_json(c));
    return a;
  };
  nlohmann::json j = {{"cpu_isa", isa_name(cpu_isa())},
                      {"isa", isa_name(active_isa())},
                      {"mode", mode_name(mode())},
                      {"blas_core_type", blas_core_type()},
                      {"openblas_coretype", nullptr},
                      {"cache_file", cache_enabled() ? cache_file() : std::string()},
                      {"choices", list(choices())}};
  if (!openblas_coretype().empty()) j["openblas_coretype"] = openblas_coretype();
  if (with_cache) j["cached"] = list(cached_choices());
  return j;
}

std::string report_headline(const nlohmann::json& r) {
  const std::string core = r["blas_core_type"].get<std::string>();
  return r["isa"].get<std::string>() + " (CPU runs " + r["cpu_isa"].get<std::string>() +
         "), choice by " + r["mode"].get<std::string>() + "; BLAS core " +
         (core.empty() ? "not reported" : core) + ", OPENBLAS_CORETYPE " +
         (r["openblas_coretype"].is_string() ? r["openblas_coretype"].get<std::string>()
                                             : std::string("unset"));
}

std::string choice_row(const nlohmann::json& c) {
  const int64_t n = c["n"].get<int64_t>();
  const std::string shape = std::to_string(c["m"].get<int64_t>()) + "×" +
                            std::to_string(c["k"].get<int64_t>()) +
                            (n > 0 ? "×" + std::to_string(n) : "");
  char row[256];
  std::snprintf(row, sizeof row, "%-22s %16s  %s t%d  %-8s own %.3f ms, library %.3f ms",
                c["op"].get<std::string>().c_str(), shape.c_str(),
                c["isa"].get<std::string>().c_str(), c["threads"].get<int>(),
                c["side"].get<std::string>().c_str(), c["own_ms"].get<double>(),
                c["library_ms"].get<double>());
  return row;
}

std::string cache_file() {
  const auto digest = sha512(machine_key());
  return join_path(join_path(data_cache_dir(), "kernels"),
                   "choices-" + to_hex(digest.data(), 8) + ".json");
}

}  // namespace gllm::ops::kernels
