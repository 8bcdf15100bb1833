// Graded vs standard attention timings (forward + backward) over a grid of lengths and widths, and
// the compiled model's forward cost against the ungraded model's, for `gllm bench attention`.
#include "engine/bench/attention_bench.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>

#include "engine/bench/bench_report.h"
#include "engine/io/error.h"
#include "engine/model/gpt.h"
#include "engine/ops/attention.h"
#include "engine/ops/pointwise.h"
#include "engine/runtime/runtime.h"

namespace gllm::bench {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double iqr_over_median(std::vector<double> v) {
  if (v.size() < 2) return 0;
  std::sort(v.begin(), v.end());
  const double q1 = v[(v.size() - 1) / 4], q3 = v[(3 * (v.size() - 1) + 3) / 4];
  const double m = median(v);
  return m > 0 ? (q3 - q1) / m : 0;
}

// One attention block's weights and inputs at width d, length n.
struct Block {
  torch::Tensor x, wq, wk, wv, wo, grades_coords, cos, sin;  // cos, sin (T, Dh/2)
  int64_t B = 1, T = 0, H = 0, Dh = 0;
};

Block make_block(int B, int n, int d, int Dh, at::Generator& gen) {
  Block b;
  b.B = B;
  b.T = n;
  b.Dh = Dh;
  b.H = d / Dh;
  const double s = std::sqrt(3.0 / d);
  b.x = torch::randn({B, n, d}, gen).requires_grad_(true);  // (B, T, d)
  auto lin = [&] { return torch::empty({d, d}).uniform_(-s, s, gen).requires_grad_(true); };
  b.wq = lin();
  b.wk = lin();
  b.wv = lin();
  b.wo = lin();
  const double lambda = std::exp(1.0 / Dh), q_max = std::log(2.0) / std::log(lambda);
  auto planes = torch::empty({b.H, Dh / 2}).uniform_(0.0, q_max, gen);  // (H, Dh/2) grades
  auto w = torch::pow(lambda, planes);
  b.grades_coords = torch::cat({w, w}, -1);  // (H, Dh): λ^q per RoPE plane, half-split layout
  auto inv =
      1.0 / torch::pow(10000.0, torch::arange(0, Dh, 2, torch::kFloat) / static_cast<double>(Dh));
  auto fr = torch::outer(torch::arange(n, torch::kFloat), inv);  // (T, Dh/2)
  b.cos = fr.cos().contiguous();
  b.sin = fr.sin().contiguous();
  return b;
}

// Forward + backward of the block as the model computes it (GPTImpl::attention): grades m on the
// RoPE planes enter as (q ⊙ m²)·k for the keys and as W_o diag(m) for the values, so the graded
// block differs from the standard one by its (H, Dh) coefficient and a (d, d) product; the
// attention itself is ops::attention (blocked on the CPU, the masked matmul path otherwise).
// Returns milliseconds.
double run_block(Block& b, bool graded) {
  auto t0 = Clock::now();
  const int64_t B = b.B, T = b.T, H = b.H, Dh = b.Dh;
  auto q = torch::matmul(b.x, b.wq.t()).view({B, T, H, Dh});  // (B, T, H, Dh)
  auto k = torch::matmul(b.x, b.wk.t()).view({B, T, H, Dh});
  auto v = torch::matmul(b.x, b.wv.t()).view({B, T, H, Dh});
  q = ops::rms_norm(ops::rope(q, b.cos, b.sin));
  k = ops::rms_norm(ops::rope(k, b.cos, b.sin));
  auto wo = b.wo;
  torch::Tensor q_coef;  // (H, Dh)
  if (graded) {
    q_coef = b.grades_coords * b.grades_coords;
    wo = b.wo * b.grades_coords.reshape({H * Dh}).unsqueeze(0);
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(Dh));
  auto y = ops::attention(q, k, v, T, scale, q_coef).reshape({B, T, H * Dh});  // (B, T, d)
  auto out = torch::matmul(y, wo.t());
  out.sum().backward();
  for (auto* t : {&b.x, &b.wq, &b.wk, &b.wv, &b.wo}) t->mutable_grad() = torch::Tensor();
  return ms_since(t0);
}

nlohmann::json compiled_check(const AttentionBenchOptions& o,
                              const std::function<void(const std::string&)>& log) {
  RunConfig gc = o.compiled_config;
  gc.train.device = "cpu";
  gc.grading.attention = true;
  if (gc.grading.head_grades == "uniform")
    gc.grading.head_grades = "random";  // nonzero grades to fold
  RunConfig sc = gc;
  sc.grading.attention = false;
  const int64_t vocab = o.compiled_vocab > 0 ? o.compiled_vocab
                                             : (gc.data.vocab_size > 0 ? gc.data.vocab_size : 8192);
  GPTOptions mo;
  mo.vocab_size = vocab;
  mo.seed = gc.train.seed;
  GPT graded(gc, mo);
  GPT standard(sc, mo);
  {
    // A fresh model has zero output projections (c_proj, mlp c_proj): the blocks would add nothing
    // and the logit check would hold trivially. Give every all-zero matrix small random values.
    torch::NoGradGuard ng;
    auto wg = at::make_generator<at::CPUGeneratorImpl>(11);
    for (auto& p : graded->parameters())
      if (p.dim() == 2 && p.abs().max().item<double>() == 0) p.uniform_(-0.05, 0.05, wg);
  }
  GPT compiled = compile_to_standard(graded);
  graded->eval();
  standard->eval();
  compiled->eval();
  torch::NoGradGuard ng;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(7);
  const int64_t T = gc.model.sequence_len;
  auto idx = torch::randint(vocab, {o.compiled_batch, T}, gen, torch::kLong);  // (B, T)
  const double diff =
      (compiled->eval_logits(idx) - graded->eval_logits(idx)).abs().max().item<double>();
  std::vector<double> ts, tc, tg;
  // Whole forwards of a small model differ by a few per cent run to run: at least 15 paired runs.
  const int repeats = std::max(o.repeats, 15);
  for (int r = 0; r < repeats + 1; ++r) {
    auto t0 = Clock::now();
    (void)standard->eval_logits(idx);
    double a = ms_since(t0);
    t0 = Clock::now();
    (void)compiled->eval_logits(idx);
    double b = ms_since(t0);
    t0 = Clock::now();
    (void)graded->eval_logits(idx);
    double c = ms_since(t0);
    if (r == 0) continue;  // warm-up
    ts.push_back(a);
    tc.push_back(b);
    tg.push_back(c);
  }
  nlohmann::json j = {{"preset", o.preset},
                      {"batch", o.compiled_batch},
                      {"repeats", repeats},
                      {"sequence_len", T},
                      {"n_layer", gc.model.layers()},
                      {"n_embd", gc.model.width()},
                      {"vocab_size", vocab},
                      {"standard_ms", median(ts)},
                      {"compiled_ms", median(tc)},
                      {"graded_ms", median(tg)},
                      {"ratio", 1.0 + paired_overhead(tc, ts)},
                      {"graded_ratio", 1.0 + paired_overhead(tg, ts)},
                      {"max_abs_logit_diff", diff}};
  std::ostringstream line;
  line << "compiled model: " << median(tc) << " ms vs standard " << median(ts) << " ms (ratio "
       << j["ratio"].get<double>() << "), graded " << median(tg) << " ms";
  if (log) log(line.str());
  return j;
}

}  // namespace

double paired_overhead(const std::vector<double>& graded, const std::vector<double>& standard) {
  if (graded.size() != standard.size() || graded.empty())
    throw Error("internal: paired timings need equal, non-empty series");
  std::vector<double> r;
  for (size_t i = 0; i < graded.size(); ++i) r.push_back(graded[i] / standard[i]);
  return median(r) - 1.0;
}

nlohmann::json run_attention_bench(const AttentionBenchOptions& o,
                                   const std::function<void(const std::string&)>& log) {
  if (o.lengths.empty() || o.widths.empty()) throw Error("give at least one length and one width");
  if (o.head_dim < 2 || o.head_dim % 2)
    throw Error("--head-dim must be even and ≥ 2 (RoPE planes)");
  if (o.repeats < 1) throw Error("--repeats must be ≥ 1");
  if (o.batch < 1) throw Error("--batch must be ≥ 1");
  for (int d : o.widths)
    if (d < o.head_dim || d % o.head_dim)
      throw Error("width " + std::to_string(d) + " is not a multiple of the head dimension " +
                  std::to_string(o.head_dim) + "; choose widths that are");
  for (int n : o.lengths)
    if (n < 1) throw Error("sequence lengths must be ≥ 1");
  const int threads = configure_threads(o.threads);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(1234);
  nlohmann::json overhead = nlohmann::json::array(), std_ms = nlohmann::json::array(),
                 gr_ms = nlohmann::json::array(), noise = nlohmann::json::array();
  nlohmann::json at_target = nlohmann::json::object();
  bool meets = true, have_target = false;
  for (int d : o.widths) {
    nlohmann::json ro = nlohmann::json::array(), rs = nlohmann::json::array(),
                   rg = nlohmann::json::array(), rn = nlohmann::json::array();
    for (int n : o.lengths) {
      Block b = make_block(o.batch, n, d, o.head_dim, gen);
      run_block(b, true);  // warm-up of both paths
      run_block(b, false);
      std::vector<double> tg, ts;
      for (int r = 0; r < o.repeats; ++r) {
        // Alternate the order so neither variant always runs on a warmer cache.
        if (r % 2 == 0) {
          tg.push_back(run_block(b, true));
          ts.push_back(run_block(b, false));
        } else {
          ts.push_back(run_block(b, false));
          tg.push_back(run_block(b, true));
        }
      }
      const double ov = paired_overhead(tg, ts);
      ro.push_back(ov);
      rs.push_back(median(ts));
      rg.push_back(median(tg));
      rn.push_back(iqr_over_median(ts));
      if (n == 2048) {
        have_target = true;
        at_target[std::to_string(d)] = ov;
        if (ov > 0.03) meets = false;
      }
      std::ostringstream line;
      line.setf(std::ios::fixed);
      line.precision(2);
      line << "d = " << d << ", n = " << n << ": standard " << median(ts) << " ms, graded "
           << median(tg) << " ms, overhead " << 100 * ov << " %";
      if (log) log(line.str());
    }
    overhead.push_back(ro);
    std_ms.push_back(rs);
    gr_ms.push_back(rg);
    noise.push_back(rn);
  }
  nlohmann::json j;
  j["kind"] = "attention";
  j["schema"] = "gllm-bench-attention-1";
  j["head_dim"] = o.head_dim;
  j["batch"] = o.batch;
  j["repeats"] = o.repeats;
  j["threads"] = threads;
  j["lengths"] = o.lengths;
  j["widths"] = o.widths;
  j["overhead"] = overhead;
  j["standard_ms"] = std_ms;
  j["graded_ms"] = gr_ms;
  j["noise"] = noise;
  j["target"] = {{"length", 2048}, {"max_overhead", 0.03}};
  j["overhead_at_target"] = at_target;
  j["meets_target"] = have_target ? nlohmann::json(meets) : nlohmann::json(nullptr);
  j["compiled"] = o.compiled ? compiled_check(o, log) : nlohmann::json(nullptr);
  j["machine"] = machine_info();
  return j;
}

}  // namespace gllm::bench
