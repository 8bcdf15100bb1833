// `gllm bench train`: the engine's training step and the PyTorch eager script timed in alternating
// rounds in one invocation, a GEMM peak from torch::mm, per-phase timers and an op-level profile.
#include "engine/bench/train_bench.h"

#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "engine/bench/bench_report.h"
#include "engine/io/error.h"
#include "engine/io/subprocess.h"
#include "engine/model/checkpoint_tensors.h"
#include "engine/model/cost.h"
#include "engine/model/gpt.h"
#include "engine/ops/attention.h"
#include "engine/ops/kernel_choice.h"
#include "engine/ops/panel_gemm.h"
#include "engine/ops/pointwise.h"
#include "engine/ops/window_attention.h"
#include "engine/optim/muon_adamw.h"
#include "engine/runtime/runtime.h"
#include "engine/train/step.h"

namespace gllm::bench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A scratch folder removed when the benchmark ends.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gllm-bench-XXXXXX").string();
    if (!mkdtemp(tmpl.data()))
      throw Error("cannot create a scratch folder in " +
                  std::filesystem::temp_directory_path().string() +
                  "; set TMPDIR to a writable folder");
    path = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// Self time per op name (children subtracted) from the legacy profiler's push/pop events.
std::vector<nlohmann::json> aggregate_profile(
    const torch::autograd::profiler::thread_event_lists& lists, int steps) {
  using torch::autograd::profiler::EventKind;
  using torch::autograd::profiler::LegacyEvent;
  struct Acc {
    double self_us = 0;
    int64_t calls = 0;
  };
  std::map<std::string, Acc> acc;
  for (const auto& list : lists) {
    struct Open {
      const LegacyEvent* ev;
      double child_us;
    };
    std::vector<Open> stack;
    for (const auto& ev : list) {
      if (ev.kind() == EventKind::PushRange) {
        stack.push_back({&ev, 0.0});
      } else if (ev.kind() == EventKind::PopRange && !stack.empty()) {
        Open o = stack.back();
        stack.pop_back();
        const double total = o.ev->cpuElapsedUs(ev);
        auto& a = acc[o.ev->name()];
        a.self_us += total - o.child_us;
        a.calls += 1;
        if (!stack.empty()) stack.back().child_us += total;
      }
    }
  }
  std::vector<std::pair<std::string, Acc>> rows(acc.begin(), acc.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.self_us > b.second.self_us; });
  std::vector<nlohmann::json> out;
  for (size_t i = 0; i < rows.size() && i < 25; ++i)
    out.push_back({{"op", rows[i].first},
                   {"self_ms", rows[i].second.self_us / 1000.0 / steps},
                   {"calls", static_cast<double>(rows[i].second.calls) / steps}});
  return out;
}

// One matrix product of the step: op name and operand shapes as the profiler saw them.
struct GemmShape {
  std::string op;  // aten::mm | aten::bmm | aten::addmm | aten::baddbmm | gllm::…
  std::vector<std::vector<int64_t>> dims;  // the two multiplied operands
  bool operator<(const GemmShape& o) const { return std::tie(op, dims) < std::tie(o.op, o.dims); }
};

// The outermost matrix products (a product inside another one is not counted twice) of the
// recorded step, with how often each shape occurs.
std::map<GemmShape, int> collect_gemms(const torch::autograd::profiler::thread_event_lists& lists) {
  using torch::autograd::profiler::EventKind;
  // The engine's own panel products are recorded with their operands' shapes: gllm::panel_mm
  // (linear layers) and gllm::tiled_logits (the output layer, whose row pass the bound leaves out).
  static const std::set<std::string> kGemm{"aten::mm",      "aten::bmm",      "aten::addmm",
                                           "aten::baddbmm", "gllm::panel_mm", "gllm::tiled_logits"};
  std::map<GemmShape, int> out;
  for (const auto& list : lists) {
    int inside = 0;
    std::vector<bool> opened;
    for (const auto& ev : list) {
      if (ev.kind() == EventKind::PushRange) {
        const bool gemm = kGemm.count(ev.name()) > 0;
        if (gemm && inside == 0) {
          auto shapes = ev.shapes();  // mm/bmm: (a, b); addmm/baddbmm: (input, a, b, ...)
          const size_t first =
              (std::string(ev.name()) == "aten::addmm" || std::string(ev.name()) == "aten::baddbmm")
                  ? 1
                  : 0;
          if (shapes.size() >= first + 2 && !shapes[first].empty() && !shapes[first + 1].empty())
            ++out[{ev.name(), {shapes[first], shapes[first + 1]}}];
        }
        opened.push_back(gemm);
        inside += gemm;
      } else if (ev.kind() == EventKind::PopRange && !opened.empty()) {
        inside -= opened.back();
        opened.pop_back();
      }
    }
  }
  return out;
}

// Median seconds and FLOPs of one product (a)·(b), 2-D or batched 3-D, on fresh contiguous
// operands. panel: as the engine's panel kernels run it (packing b included), not through BLAS.
std::pair<double, double> time_gemm(const std::vector<int64_t>& a_dims,
                                    const std::vector<int64_t>& b_dims, bool panel = false,
                                    int repeats = 5) {
  torch::NoGradGuard ng;
  auto a = torch::randn(a_dims), b = torch::randn(b_dims);
  const bool batched = a.dim() == 3;
  const int64_t batch = batched ? a.size(0) : 1, M = a.size(-2), K = a.size(-1), N = b.size(-1);
  auto c = batched ? torch::empty({batch, M, N}) : torch::empty({M, N});
  auto panels = torch::empty({panel ? ops::panel::packed_floats(K, N) : 0});
  auto run = [&] {
    if (panel) {
      ops::panel::pack(b.data_ptr<float>(), N, K, N, panels.data_ptr<float>());
      ops::panel::multiply(a.data_ptr<float>(), K, M, K, panels.data_ptr<float>(), N,
                           c.data_ptr<float>(), N);
    } else {
      batched ? torch::bmm_out(c, a, b) : torch::mm_out(c, a, b);
    }
  };
  run();  // warm-up
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i) {
    auto t0 = Clock::now();
    run();
    t.push_back(seconds_since(t0));
  }
  return {median(t), 2.0 * batch * M * N * K};
}

nlohmann::json parse_python_output(const ProcessResult& r, const std::string& what) {
  if (r.exit_code != 0)
    throw Error("the PyTorch reference (" + what + ") failed with exit code " +
                std::to_string(r.exit_code) + ":\n" + r.output +
                "\nCheck that the interpreter has torch (--python) or run without --vs-python");
  std::istringstream in(r.output);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty() && line[0] == '{') last = line;
  try {
    return nlohmann::json::parse(last);
  } catch (const nlohmann::json::exception&) {
    throw Error("the PyTorch reference (" + what + ") printed no JSON result:\n" + r.output);
  }
}

}  // namespace

TrainSummary summarize_rounds(const std::vector<TrainRound>& rounds, double flops_per_token,
                              double peak) {
  std::vector<double> e, p, u;
  for (const auto& r : rounds) {
    e.push_back(r.engine_tokens_per_s);
    if (r.python_tokens_per_s > 0) p.push_back(r.python_tokens_per_s);
    if (r.unfused_tokens_per_s > 0) u.push_back(r.unfused_tokens_per_s);
  }
  TrainSummary s;
  s.engine_tokens_per_s = e.empty() ? 0 : median(e);
  s.python_tokens_per_s = p.empty() ? 0 : median(p);
  s.ratio = s.python_tokens_per_s > 0 ? s.engine_tokens_per_s / s.python_tokens_per_s : 0;
  s.unfused_tokens_per_s = u.empty() ? 0 : median(u);
  s.fusion_speedup =
      s.unfused_tokens_per_s > 0 ? s.engine_tokens_per_s / s.unfused_tokens_per_s : 0;
  s.engine_gflops = s.engine_tokens_per_s * flops_per_token / 1e9;
  s.python_gflops = s.python_tokens_per_s * flops_per_token / 1e9;
  s.peak_fraction = peak > 0 ? s.engine_gflops / peak : 0;
  s.python_peak_fraction = peak > 0 ? s.python_gflops / peak : 0;
  return s;
}

double measure_gemm_gflops(int n, int repeats) {
  const auto [sec, flops] = time_gemm({n, n}, {n, n}, /*panel=*/false, repeats);
  return flops / sec / 1e9;
}

nlohmann::json run_train_bench(const TrainBenchOptions& o,
                               const std::function<void(const std::string&)>& log_fn) {
  auto log = [&](const std::string& s) {
    if (log_fn) log_fn(s);
  };
  if (o.steps < 1) throw Error("--steps must be at least 1");
  if (o.rounds < 1) throw Error("--rounds must be at least 1");
  if (o.warmup < 0) throw Error("--warmup must be ≥ 0");
  const int threads = configure_threads(o.threads);
  RunConfig c = o.config;
  c.train.device = "cpu";
  int64_t vocab = o.vocab_size > 0
                      ? o.vocab_size
                      : (c.model.vocab_size > 0 ? c.model.vocab_size : c.data.vocab_size);
  if (vocab <= 0) throw Error("the config has no vocabulary size (data.vocab_size); pass --vocab");
  const int64_t B = c.train.device_batch, T = c.model.sequence_len;
  const int64_t tokens_per_step = B * T;
  const CostEstimate cost = estimate_cost(c, vocab);

  torch::manual_seed(c.train.seed);
  GPT model = build_model(c, vocab, c.train.seed);
  model->train();
  auto gen = at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(c.train.seed) + 1);
  auto x = torch::randint(vocab, {B, T}, gen, torch::kLong);  // (B, T)
  auto y = torch::randint(vocab, {B, T}, gen, torch::kLong);  // (B, T)

  ScratchDir scratch;
  const std::string model_path = scratch.path + "/model.safetensors";
  const std::string batch_path = scratch.path + "/batch.safetensors";
  save_model(model, model_path);
  write_tensor_file(batch_path, {{"idx", x}, {"targets", y}});
  const std::string python = o.python.empty() ? default_python() : o.python;
  const std::string script =
      o.vs_python ? (o.script.empty() ? reference_script("bench_train_reference.py") : o.script)
                  : "";

  // The trainer's own step (engine/train/step.h): the timed rounds run its forward, loss and
  // backward and drop the gradients; the full step below adds its update.
  optim::MuonAdamWOptions oo;
  oo.grade_lr = c.grading.grade_lr;
  const int full_steps = std::max(3, o.steps);
  optim::MuonAdamW opt(c.optim, model->width(), full_steps + 1 + o.warmup, optimizer_params(model),
                       oo);
  TrainStep train_step(model, opt, torch::Device(torch::kCPU), c.train.dtype);
  auto engine_step = [&] {
    train_step.micro_step(x, y, 1.0);
    train_step.discard();
  };
  auto time_engine = [&](int steps, int warmup) {
    for (int i = 0; i < warmup; ++i) engine_step();
    std::vector<double> t;
    for (int i = 0; i < steps; ++i) {
      auto t0 = Clock::now();
      engine_step();
      t.push_back(seconds_since(t0));
    }
    return static_cast<double>(tokens_per_step) / median(t);
  };
  // Engine steps recorded by the legacy profiler (with operand shapes when asked).
  auto record_steps = [&](int steps, bool shapes) {
    torch::profiler::impl::ProfilerConfig cfg(torch::profiler::impl::ProfilerState::CPU, shapes);
    torch::autograd::profiler::enableProfilerLegacy(cfg);
    for (int i = 0; i < steps; ++i) engine_step();
    return torch::autograd::profiler::disableProfilerLegacy();
  };
  // The script runs under this process's allocator settings (allocator_tunables): without them the
  // Python process re-faults its activations every step and the comparison would time the heap.
  const std::string tunables = allocator_tunables();
  auto run_python = [&](int steps, int warmup, bool profile) {
    std::vector<std::string> argv{python,      script,
                                  model_path,  batch_path,
                                  "--steps",   std::to_string(steps),
                                  "--warmup",  std::to_string(warmup),
                                  "--threads", std::to_string(threads)};
    if (profile) argv.push_back("--profile");
    if (!tunables.empty()) {
      const char* inherited = std::getenv("GLIBC_TUNABLES");
      const std::string value =
          inherited && *inherited ? std::string(inherited) + ":" + tunables : tunables;
      argv.insert(argv.begin(), {"env", "GLIBC_TUNABLES=" + value});
    }
    return parse_python_output(run_process(argv), python + " " + script);
  };

  // The engine's loss on the exported weights (before any timing) for the equivalence check.
  double loss_engine = 0;
  {
    torch::NoGradGuard ng;
    loss_engine = model->loss(x, y).total.item<double>();
  }

  std::vector<TrainRound> rounds;
  std::vector<double> peaks;
  nlohmann::json py_last, rounds_json = nlohmann::json::array();
  for (int r = 0; r < o.rounds; ++r) {
    TrainRound tr;
    if (o.gemm_n > 0) peaks.push_back(measure_gemm_gflops(o.gemm_n));
    tr.engine_tokens_per_s = time_engine(o.steps, o.warmup);
    if (o.vs_unfused) {
      const bool was = ops::set_fused_ops_enabled(false);
      tr.unfused_tokens_per_s = time_engine(o.steps, o.warmup);
      ops::set_fused_ops_enabled(was);
    }
    if (o.vs_python) {
      py_last = run_python(o.steps, o.warmup, false);
      tr.python_tokens_per_s = py_last.at("tokens_per_s").get<double>();
    }
    rounds.push_back(tr);
    nlohmann::json rj = {{"engine_tokens_per_s", tr.engine_tokens_per_s}};
    if (o.vs_unfused) rj["unfused_tokens_per_s"] = tr.unfused_tokens_per_s;
    if (o.vs_python) {
      rj["python_tokens_per_s"] = tr.python_tokens_per_s;
      rj["ratio"] = tr.engine_tokens_per_s / tr.python_tokens_per_s;
    }
    if (!peaks.empty()) rj["gemm_gflops"] = peaks.back();
    rounds_json.push_back(rj);
    std::ostringstream line;
    line << "round " << (r + 1) << "/" << o.rounds << ": engine "
         << std::lround(tr.engine_tokens_per_s) << " tok/s";
    if (o.vs_unfused)
      line << ", fused ops off " << std::lround(tr.unfused_tokens_per_s) << " tok/s";
    if (o.vs_python) line << ", PyTorch " << std::lround(tr.python_tokens_per_s) << " tok/s";
    if (!peaks.empty()) line << ", GEMM " << std::lround(peaks.back()) << " GFLOP/s";
    log(line.str());
  }
  // The peak is the best round's GEMM: on a shared machine a median sinks with the load and would
  // flatter the fraction; the best is what the machine can do.
  const double peak = peaks.empty() ? 0 : *std::max_element(peaks.begin(), peaks.end());
  const TrainSummary s = summarize_rounds(rounds, cost.flops_per_token, peak);

  // Where the engine's step goes: forward (incl. loss), backward, gradient reset.
  std::vector<double> f_ms, b_ms, z_ms;
  for (int i = 0; i < std::max(3, o.steps); ++i) {
    auto t0 = Clock::now();
    LossParts parts = model->loss(x, y);
    auto t1 = Clock::now();
    parts.total.backward();
    auto t2 = Clock::now();
    train_step.discard();
    auto t3 = Clock::now();
    f_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    b_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    z_ms.push_back(std::chrono::duration<double, std::milli>(t3 - t2).count());
  }
  nlohmann::json phases = {
      {"forward", median(f_ms)}, {"backward", median(b_ms)}, {"zero_grad", median(z_ms)}};

  // The step's own matrix products, each shape timed alone on contiguous operands and by the code
  // the step runs it with (BLAS or the engine's panel kernels): the time the step would take if
  // everything but its GEMMs were free (the bound this engine can approach).
  nlohmann::json gemm_bound = nullptr;
  if (o.gemm_bound) {
    const auto lists = record_steps(1, /*shapes=*/true);
    double bound_s = 0, flops = 0;
    int products = 0;
    nlohmann::json shapes = nlohmann::json::array();
    for (const auto& [g, count] : collect_gemms(lists)) {
      // The engine's own products (gllm::…) are timed as its panel kernels run them.
      const bool own =
          g.op.rfind("gllm::", 0) == 0 && ops::panel::available() && g.dims[0].size() == 2;
      auto [sec, f] = time_gemm(g.dims[0], g.dims[1], own);
      bound_s += count * sec;
      flops += count * f;
      products += count;
      shapes.push_back({{"op", g.op},
                        {"a", g.dims[0]},
                        {"b", g.dims[1]},
                        {"count", count},
                        {"ms", 1000.0 * sec},
                        {"gflops", f / sec / 1e9}});
    }
    // The blocked CPU attention runs its products through BLAS directly (the profiler does not see
    // them): per layer its six (score and value forward, two each backward), timed alone in its
    // own blocks and threads without the softmax.
    {
      auto probe =
          torch::empty({B, T, model->n_head(), model->head_dim()});  // q, k, v as the step has them
      if (model->attention_kernel_for(probe, probe, probe) == GPTImpl::AttentionKernel::Blocked) {
        for (int l = 0; l < model->n_layer(); ++l) {
          // Where the timing chose the matmul path, the profiler saw its products already.
          if (ops::kernels::chosen(ops::attention_choice_op(model->window(l), T),
                                   B * model->n_head(), T,
                                   model->head_dim()) == ops::kernels::Side::Library)
            continue;
          auto [sec, f] = ops::window_attention_gemm_time(B * model->n_head(), T, model->head_dim(),
                                                          model->window(l));
          bound_s += sec;
          flops += f;
          products += 6;
          shapes.push_back({{"op", "window_attention"},
                            {"layer", l},
                            {"window", model->window(l)},
                            {"a", {B * model->n_head(), T, model->head_dim()}},
                            {"count", 6},
                            {"ms", 1000.0 * sec / 6},
                            {"gflops", f / sec / 1e9}});
        }
      }
    }
    const double step_ms = 1000.0 * tokens_per_step / s.engine_tokens_per_s,
                 gemm_ms = 1000.0 * bound_s;
    const double gemm_gflops = bound_s > 0 ? flops / bound_s / 1e9 : 0.0,
                 fraction = step_ms > 0 ? gemm_ms / step_ms : 0.0;
    // A step is no shorter than its products: the peak fraction it could reach if all else were
    // free.
    const double step_flops = cost.flops_per_token * static_cast<double>(tokens_per_step);
    const double ceiling = bound_s > 0 && peak > 0 ? step_flops / bound_s / 1e9 / peak : 0.0;
    gemm_bound = {{"products_per_step", products},   {"shapes", shapes},   {"gemm_ms", gemm_ms},
                  {"gemm_gflops", gemm_gflops},      {"step_ms", step_ms}, {"fraction", fraction},
                  {"peak_fraction_ceiling", ceiling}};
    std::ostringstream line;
    line.precision(3);
    line << "the step's " << products << " matrix products alone take " << gemm_ms << " ms ("
         << gemm_gflops << " GFLOP/s); the step takes " << step_ms << " ms: " << 100.0 * fraction
         << " % of it is GEMM-bound time"
         << "; with nothing else, the step would reach " << 100.0 * ceiling << " % of the peak";
    log(line.str());
  }

  nlohmann::json full = nullptr;
  if (o.full_step) {
    std::vector<double> step_s, opt_ms;
    for (int i = 0; i < full_steps + o.warmup; ++i) {
      auto t0 = Clock::now();
      train_step.micro_step(x, y, 1.0);
      auto t1 = Clock::now();
      train_step.update(i);
      if (i >= o.warmup) {
        step_s.push_back(seconds_since(t0));
        opt_ms.push_back(1000.0 * seconds_since(t1));
      }
    }
    full = {{"tokens_per_s", tokens_per_step / median(step_s)}, {"optimizer_ms", median(opt_ms)}};
    phases["optimizer"] = median(opt_ms);
  }

  nlohmann::json profile = nullptr;
  if (o.profile) {
    // The full-step timing above changed the weights; op costs depend only on the shapes.
    const int n = 3;
    engine_step();
    profile = {{"engine", aggregate_profile(record_steps(n, /*shapes=*/false), n)}};
    if (o.vs_python) {
      auto pj = run_python(n, 1, true);
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& row : pj.at("profile"))
        rows.push_back({{"op", row[0]}, {"self_ms", row[1]}, {"calls", row[2]}});
      profile["python"] = rows;
    }
  }

  nlohmann::json j;
  j["kind"] = "train";
  j["preset"] = o.preset;
  j["config"] = {{"name", c.name},
                 {"n_layer", c.model.layers()},
                 {"n_embd", c.model.width()},
                 {"n_head", c.model.heads()},
                 {"sequence_len", T},
                 {"device_batch", B},
                 {"vocab_size", vocab},
                 {"graded_attention", c.grading.attention}};
  j["step"] = "forward + loss + backward + zero_grad";
  j["steps"] = o.steps;
  j["warmup"] = o.warmup;
  j["rounds"] = o.rounds;
  j["threads"] = threads;
  j["tokens_per_step"] = tokens_per_step;
  j["rounds_detail"] = rounds_json;
  j["engine_tokens_per_s"] = s.engine_tokens_per_s;
  j["flops_per_token"] = cost.flops_per_token;
  j["engine_gflops"] = s.engine_gflops;
  j["gemm_n"] = o.gemm_n;
  j["gemm_peak_gflops"] = peak;
  j["gemm_median_gflops"] = peaks.empty() ? 0.0 : median(peaks);
  j["peak_fraction"] = s.peak_fraction;
  j["loss_engine"] = loss_engine;
  if (o.vs_unfused) {
    j["unfused_tokens_per_s"] = s.unfused_tokens_per_s;
    j["fusion_speedup"] = s.fusion_speedup;
  }
  if (o.vs_python) {
    j["python_tokens_per_s"] = s.python_tokens_per_s;
    j["ratio"] = s.ratio;
    j["python_gflops"] = s.python_gflops;
    j["python_peak_fraction"] = s.python_peak_fraction;
    j["loss_python"] = py_last.value("loss", NAN);
    j["loss_reference"] = py_last.value("reference_loss", NAN);
    j["loss_abs_diff"] = std::abs(loss_engine - py_last.value("loss", NAN));
    j["python_implementation"] = py_last.value("implementation", "");
    j["python_torch_version"] = py_last.value("torch_version", "");
    j["python_threads"] = py_last.value("threads", 0);
    j["python_blas"] = py_last.value("blas", "");
    j["python_allocator"] = py_last.value("allocator", "");
  }
  j["gemm_bound"] = gemm_bound;
  j["full_step"] = full;
  j["phases_ms"] = phases;
  j["profile"] = profile;
  j["kernels"] = ops::kernels::report(/*with_cache=*/false);
  j["machine"] = machine_info();
  return j;
}

}  // namespace gllm::bench
