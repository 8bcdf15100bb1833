// The GPT forward pass, initialisation, graded parts and losses; shapes and names follow
// reference/baseline.md §1, graded parts seed 000 and docs/design.md (state, files: gpt_state.cpp).
#include "engine/model/gpt.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/io/error.h"
#include "engine/model/cost.h"
#include "engine/model/initial_grades.h"
#include "engine/model/param_count.h"
#include "engine/ops/attention.h"
#include "engine/ops/linear.h"
#include "engine/ops/pointwise.h"
#include "engine/ops/softcapped_nll.h"

namespace gllm {

namespace F = torch::nn::functional;

namespace {

// A lookup from a bf16-stored table (model.storage = "bf16") widened to fp32 for the residual
// stream; fp32 and fp64 lookups pass through.
torch::Tensor widen_lookup(const torch::Tensor& rows) {
  const auto t = rows.scalar_type();
  return t == torch::kBFloat16 || t == torch::kHalf ? rows.to(torch::kFloat) : rows;
}

// Per-plane values (…, Dh/2) → per-coordinate (…, Dh) in the half-split layout.
torch::Tensor planes_to_coords(const torch::Tensor& p) {
  return torch::cat({p, p}, -1);
}

at::Generator make_gen(int64_t seed) {
  return at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(seed));
}

}  // namespace

bool GPTImpl::has_value_embed(int layer) const {
  return config_.model.value_embeds && layer % 2 == (n_layer_ - 1) % 2;
}

GPTImpl::GPTImpl(const RunConfig& config, const GPTOptions& options)
    : config_(config),
      parts_(std::make_shared<Parts>()),
      logit_workspace_(std::make_shared<ops::LogitWorkspace>()) {
  const auto& m = config_.model;
  const auto& g = config_.grading;
  vocab_ = options.vocab_size > 0 ? options.vocab_size : m.vocab_size;
  if (vocab_ <= 0)
    throw ConfigError("model.vocab_size",
                      "is 0 (take it from the tokenizer); pass the tokenizer's size");
  n_layer_ = m.layers();
  d_ = m.width();
  n_head_ = m.heads();
  head_dim_ = m.head_dim();
  compiled_ = options.compiled;
  lambda_ = g.base_for(head_dim_);
  q_max_ = g.q_max(head_dim_);
  out_lambda_ = g.output_lambda > 0 ? g.output_lambda : lambda_;
  if (m.oe_m > 0 && d_ % 4 != 0)
    throw ConfigError("model.oe_m", "hashed n-gram tables need a width divisible by 4");
  for (int64_t w : layer_windows(m)) windows_.push_back(static_cast<int>(w));  // cost.h
  if (uses_levels(config_)) level_dims_ = resolve_level_dims(config_);

  auto& P = *parts_;
  const int64_t d = d_, V = vocab_, L = n_layer_, H = n_head_, Dh = head_dim_;
  auto transformer = register_module("transformer", std::make_shared<torch::nn::Module>());
  P.wte = transformer->register_module("wte", torch::nn::Embedding(V, d));
  auto h = transformer->register_module("h", torch::nn::ModuleList());
  const int64_t gate_ch = std::min<int64_t>(32, d);  // tiny widths read all d < 32 channels
  for (int i = 0; i < n_layer_; ++i) {
    auto block = std::make_shared<torch::nn::Module>();
    auto attn = block->register_module("attn", std::make_shared<torch::nn::Module>());
    auto mlp = block->register_module("mlp", std::make_shared<torch::nn::Module>());
    Parts::Block b;
    auto lin = [](int64_t in, int64_t out) {
      return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false));
    };
    b.c_q = attn->register_module("c_q", lin(d, d));
    b.c_k = attn->register_module("c_k", lin(d, d));
    b.c_v = attn->register_module("c_v", lin(d, d));
    b.c_proj = attn->register_module("c_proj", lin(d, d));
    if (has_value_embed(i)) b.ve_gate = attn->register_module("ve_gate", lin(gate_ch, H));
    if (m.mlp == "geglu_levels") {
      auto fc = mlp->register_module("c_fc", torch::nn::ModuleList());
      auto pr = mlp->register_module("c_proj", torch::nn::ModuleList());
      for (int64_t dl : level_dims_) {
        const int64_t hl = m.mlp_ratio * dl;
        b.fc_levels.push_back(lin(dl, 2 * hl));
        b.proj_levels.push_back(lin(hl, dl));
        fc->push_back(b.fc_levels.back());
        pr->push_back(b.proj_levels.back());
      }
    } else {
      b.c_fc = mlp->register_module("c_fc", lin(d, m.mlp_ratio * d));
      b.mlp_proj = mlp->register_module("c_proj", lin(m.mlp_ratio * d, d));
    }
    h->push_back(block);
    P.blocks.push_back(b);
  }
  P.lm_head =
      register_module("lm_head", torch::nn::Linear(torch::nn::LinearOptions(d, V).bias(false)));
  P.resid_lambdas = register_parameter("resid_lambdas", torch::ones({L}));
  P.x0_lambdas = register_parameter("x0_lambdas", torch::full({L}, 0.1));
  if (m.value_embeds) {
    auto ve = register_module("value_embeds", std::make_shared<torch::nn::Module>());
    for (int i = 0; i < n_layer_; ++i)
      if (has_value_embed(i))
        P.value_embeds.emplace(i,
                               ve->register_module(std::to_string(i), torch::nn::Embedding(V, d)));
  }
  if (m.oe_m > 0) {
    auto oe = register_module("oe_tables", torch::nn::ModuleList());
    for (int j = 0; j < 4; ++j) {
      P.oe_tables.push_back(torch::nn::Embedding(m.oe_m + 2 * j, d / 4));
      oe->push_back(P.oe_tables.back());
    }
  }
  if (m.query_scale) {
    P.q_tau = register_parameter("q_tau", torch::zeros({L, H, Dh / 2}));
    auto mask = torch::ones({L, H, Dh / 2});
    for (int l : m.query_scale_frozen_layers) mask[l].zero_();
    if (m.query_scale_frozen_planes > 0) mask.narrow(2, 0, m.query_scale_frozen_planes).zero_();
    P.q_tau_mask = register_buffer("q_tau_mask", mask);
  }
  if (g.attention)
    P.attn_grades =
        register_parameter("attn_grades", torch::zeros({L, H, Dh / 2}), g.grades_trainable);
  if (uses_levels(config_)) {
    auto mlge = register_module("mlge", std::make_shared<torch::nn::Module>());
    P.level_proj = mlge->register_parameter("proj", torch::eye(d), g.basis_trainable);
    if (g.mlge || m.positional == "graded_sinusoidal")
      P.level_grades =
          mlge->register_parameter("level_grades", torch::zeros({d}), g.grades_trainable);
  }
  if (m.positional == "absolute")
    P.wpe = register_parameter("wpe", torch::zeros({(int64_t)m.sequence_len, d}));
  if (g.graded_loss) P.output_grades = register_buffer("output_grades", torch::zeros({V}));
  if (compiled_) P.logit_bias = register_buffer("logit_bias", torch::zeros({V}));
  init_weights(options);
  if (m.storage == "bf16") {
    // Seed 001's storage precision: the lookup tables live in bf16 (initialised in fp32 above and
    // rounded once, so the draw does not depend on the storage); lookups are widened to fp32.
    P.wte->to(torch::kBFloat16);
    for (auto& [i, e] : P.value_embeds) e->to(torch::kBFloat16);
    for (auto& t : P.oe_tables) t->to(torch::kBFloat16);
  }
}

void GPTImpl::init_weights(const GPTOptions& options) {
  torch::NoGradGuard no_grad;
  auto& P = *parts_;
  const auto& g = config_.grading;
  auto gen = make_gen(options.seed);
  const double s = std::sqrt(3.0) / std::sqrt(static_cast<double>(d_));
  P.wte->weight.normal_(0.0, 1.0, gen);
  P.lm_head->weight.normal_(0.0, 0.001, gen);
  for (auto& b : P.blocks) {
    b.c_q->weight.uniform_(-s, s, gen);
    b.c_k->weight.uniform_(-s, s, gen);
    b.c_v->weight.uniform_(-s, s, gen);
    b.c_proj->weight.zero_();
    if (b.ve_gate) b.ve_gate->weight.zero_();
    if (b.c_fc) {
      b.c_fc->weight.uniform_(-s, s, gen);
      b.mlp_proj->weight.zero_();
    }
    for (size_t l = 0; l < b.fc_levels.size(); ++l) {
      const double sl = std::sqrt(3.0 / static_cast<double>(level_dims_[l]));
      b.fc_levels[l]->weight.uniform_(-sl, sl, gen);
      b.proj_levels[l]->weight.zero_();
    }
  }
  for (auto& [i, e] : P.value_embeds) e->weight.uniform_(-s, s, gen);
  for (auto& t : P.oe_tables) t->weight.zero_();
  // Route 1 of the certificate: W_e starts as the token reference the profiles were estimated in
  // (drawn above all the same, so every other weight keeps its draw).
  if (!options.wte_reference.empty()) {
    if (static_cast<int64_t>(options.wte_reference.size()) != vocab_ * d_)
      throw ConfigError("model.wte_init", "the token reference has " +
                                              std::to_string(options.wte_reference.size()) +
                                              " values; wte needs " + std::to_string(vocab_) +
                                              " × " + std::to_string(d_));
    P.wte->weight.copy_(torch::from_blob(const_cast<float*>(options.wte_reference.data()),
                                         {vocab_, static_cast<int64_t>(d_)},
                                         torch::kFloat));  // (V, d)
  } else if (config_.model.wte_init == "reference" && !options.from_checkpoint) {
    throw ConfigError("model.wte_init",
                      "the token reference was not read: resolve the config's grade sources "
                      "(grading::resolve_grade_sources) before building the model");
  }

  const int64_t L = n_layer_, H = n_head_, planes = head_dim_ / 2;
  // Grade files are read by grading::resolve_grade_sources before the model is built; a model
  // whose config names one but whose options lack its array was built without resolving.
  auto unresolved = [](const std::string& key, const std::string& file) {
    return ConfigError(key, "'" + file +
                                "' was not read: resolve the config's grade sources "
                                "(grading::resolve_grade_sources) before building the model");
  };
  if (P.attn_grades.defined()) {
    torch::Tensor q;
    if (options.from_checkpoint) {
      // The checkpoint's grades replace these; given ones are taken as they are.
      q = options.attn_grades.empty() ? torch::zeros({L, H, planes})  // (L, H, Dh/2)
                                      : torch::tensor(options.attn_grades, torch::kDouble)
                                            .to(torch::kFloat)
                                            .view({L, H, planes});  // (L, H, Dh/2)
    } else {
      if (options.attn_grades.empty() && g.head_grades == "file")
        throw unresolved("grading.grades_file", g.grades_file);
      if (options.attn_grades.empty() && g.head_grades == "explicit")
        throw ConfigError("grading.attn_grades",
                          "was not read: resolve the config's grade sources "
                          "(grading::resolve_grade_sources) before building the model");
      // The grade editor shows these same grades (initial_head_grades).
      const std::vector<float> v = initial_head_grades(config_, options.attn_grades);
      q = torch::tensor(v, torch::kFloat).view({L, H, planes});  // (L, H, Dh/2)
    }
    P.attn_grades.copy_(q.clamp(0.0, q_max_));
  }
  if (P.level_proj.defined()) {
    torch::Tensor basis;
    if (!options.level_basis.empty()) {
      if (static_cast<int64_t>(options.level_basis.size()) != static_cast<int64_t>(d_) * d_)
        throw ConfigError("grading.profiles_file",
                          "the graded basis has " + std::to_string(options.level_basis.size()) +
                              " entries; the model width needs d·d = " +
                              std::to_string(static_cast<int64_t>(d_) * d_));
      // Row j of the file is coordinate j's unit vector: P's column j.
      basis = torch::tensor(options.level_basis, torch::kDouble)
                  .to(torch::kFloat)
                  .view({d_, d_})
                  .t()
                  .contiguous();  // (d, d)
    } else if (!g.profiles_file.empty() && !options.from_checkpoint) {
      throw unresolved("grading.profiles_file", g.profiles_file);
    } else {  // seeded orthonormal basis: Q of a Gaussian matrix
      auto bg = make_gen(options.seed + 7919);
      auto a = torch::empty({d_, d_}).normal_(0.0, 1.0, bg);
      auto qr = torch::linalg_qr(a);
      auto Q = std::get<0>(qr);
      auto sign = torch::sign(torch::diagonal(std::get<1>(qr)));
      basis = Q * sign.where(sign != 0, torch::ones_like(sign)).unsqueeze(0);
    }
    P.level_proj.copy_(basis);
  }
  if (P.level_grades.defined()) {
    auto v = torch::zeros({d_});
    if (!options.level_grades.empty()) {
      if (static_cast<int64_t>(options.level_grades.size()) != d_)
        throw ConfigError("grading.ladder_file",
                          "the ladder arm has " + std::to_string(options.level_grades.size()) +
                              " grades but the model width is " + std::to_string(d_));
      v = torch::tensor(options.level_grades, torch::kDouble).to(torch::kFloat);  // (d)
    } else if (g.mlge && g.level_grades_source == "ladder" && !options.from_checkpoint) {
      throw unresolved("grading.ladder_file", g.ladder_file);
    } else if (!g.level_grades.empty()) {
      int64_t off = 0;
      for (size_t l = 0; l < level_dims_.size(); ++l) {
        v.narrow(0, off, level_dims_[l]).fill_(g.level_grades[l]);
        off += level_dims_[l];
      }
    }
    P.level_grades.copy_(v.clamp(0.0, q_max_));
  }
  if (P.output_grades.defined() && !options.from_checkpoint) {
    const std::vector<double>& q = options.output_grades;
    if (q.empty() && g.output_grades != "uniform")
      throw unresolved("grading.output_grades",
                       g.output_grades == "file" ? g.output_grades_file : g.profiles_file);
    if (!q.empty()) {
      if (static_cast<int64_t>(q.size()) != vocab_)
        throw ConfigError("grading.output_grades",
                          std::to_string(q.size()) + " output grades for a vocabulary of " +
                              std::to_string(vocab_) + "; give one per token type");
      // The clip holds for the loss weights too: λ_out^{q_out} ≤ C.
      const double q_out_max = std::log(g.clip) / std::log(out_lambda_);
      P.output_grades.copy_(
          torch::tensor(q, torch::kDouble).clamp(0.0, q_out_max).to(torch::kFloat));
    }
  }
}

torch::Tensor GPTImpl::grading_matrix() const {
  const auto& P = *parts_;
  // G = P diag(λ^g) Pᵀ = Σ_l P_l M_{q_l} P_lᵀ, (d, d)
  auto w = torch::pow(lambda_, P.level_grades);  // (d)
  return torch::matmul(P.level_proj * w.unsqueeze(0), P.level_proj.t());
}

torch::Tensor GPTImpl::positional_table(int64_t T) const {
  const auto& P = *parts_;
  auto opts = P.level_proj.options();
  std::vector<torch::Tensor> cols;
  auto t = torch::arange(T, opts).unsqueeze(1);  // (T, 1)
  for (int64_t dl : level_dims_) {
    auto i = torch::arange(dl, opts);
    auto pair = torch::floor(i / 2) * 2;
    auto freq = torch::pow(10000.0, -pair / static_cast<double>(dl));  // (d_l)
    auto ang = t * freq.unsqueeze(0);                                  // (T, d_l)
    auto even = (torch::remainder(i, 2) == 0).unsqueeze(0);
    cols.push_back(torch::where(even, torch::sin(ang), torch::cos(ang)));
  }
  auto pe = torch::cat(cols, 1);  // (T, d) in level coordinates
  if (P.level_grades.defined()) pe = pe * torch::pow(lambda_, P.level_grades).unsqueeze(0);
  return torch::matmul(pe, P.level_proj.t());  // (T, d) in model coordinates
}

std::vector<torch::Tensor> GPTImpl::oe_rows(const torch::Tensor& idx) const {
  std::vector<torch::Tensor> rows;
  const int64_t m = config_.model.oe_m;
  if (m <= 0) return rows;
  const int64_t T = idx.size(1);
  auto x = idx.to(torch::kLong);
  // prev shifted by r with sentinel V at the left boundary: F.pad(idx, (r, 0), value=V)[:, :T]
  auto shifted = [&](int64_t r) {
    return F::pad(x, F::PadFuncOptions({r, 0}).value(static_cast<double>(vocab_)))
        .narrow(1, 0, T);  // (B, T)
  };
  const int64_t base = vocab_ + 1;
  auto id2 = x + base * shifted(1);           // (B, T)
  auto id3 = id2 + base * base * shifted(2);  // (B, T)
  for (int j = 0; j < 4; ++j) rows.push_back(torch::remainder(j < 2 ? id2 : id3, m + 2 * j));
  return rows;
}

torch::Tensor GPTImpl::embed(const torch::Tensor& idx) {
  auto& P = *parts_;
  const auto& m = config_.model;
  auto x = widen_lookup(P.wte(idx));                                 // (B, T, d)
  if (config_.grading.mlge) x = torch::matmul(x, grading_matrix());  // E' = W_e G (G symmetric)
  if (!P.oe_tables.empty()) {
    auto rows = oe_rows(idx);
    std::vector<torch::Tensor> parts;
    for (int j = 0; j < 4; ++j)
      parts.push_back(P.oe_tables[j](rows[j]).to(x.scalar_type()));  // (B, T, d/4)
    x = x + torch::cat(parts, -1);                                   // (B, T, d)
  }
  const int64_t T = idx.size(1);
  if (m.positional == "graded_sinusoidal") x = x + positional_table(T).unsqueeze(0);
  if (m.positional == "absolute") {
    if (T > P.wpe.size(0))
      throw Error("sequence of " + std::to_string(T) +
                  " tokens is longer than the position table (" + std::to_string(P.wpe.size(0)) +
                  "); evaluate with sequences of at most sequence_len");
    x = x + P.wpe.narrow(0, 0, T).unsqueeze(0);
  }
  return ops::rms_norm(x);
}

const std::pair<torch::Tensor, torch::Tensor>& GPTImpl::rope_tables(int64_t T,
                                                                    const torch::Device& dev) {
  auto it = rope_cache_.find(T);
  if (it != rope_cache_.end() && it->second.first.device() == dev) return it->second;
  const int64_t Dh = head_dim_;
  auto opts = torch::TensorOptions().dtype(torch::kFloat).device(dev);
  auto inv_freq = 1.0 / torch::pow(config_.model.rope_base,
                                   torch::arange(0, Dh, 2, opts) / static_cast<double>(Dh));
  auto freqs = torch::outer(torch::arange(T, opts), inv_freq);  // (T, Dh/2)
  return rope_cache_[T] = {freqs.cos().contiguous(), freqs.sin().contiguous()};
}

GPTImpl::AttentionKernel GPTImpl::attention_kernel_for(const torch::Tensor& q,
                                                       const torch::Tensor& k,
                                                       const torch::Tensor& v) const {
  return ops::attention_kernel_for(q, k, v, attention_kernel_);
}

torch::Tensor GPTImpl::attention(int layer, const torch::Tensor& x, const torch::Tensor& idx) {
  auto& P = *parts_;
  auto& b = P.blocks[layer];
  const auto& m = config_.model;
  const int64_t B = x.size(0), T = x.size(1), H = n_head_, Dh = head_dim_;
  auto q = ops::linear(x, b.c_q->weight).view({B, T, H, Dh});  // (B, T, H, Dh)
  auto k = ops::linear(x, b.c_k->weight).view({B, T, H, Dh});
  auto v = ops::linear(x, b.c_v->weight).view({B, T, H, Dh});
  if (b.ve_gate) {
    auto gate =
        2.0 * torch::sigmoid(b.ve_gate(x.narrow(-1, 0, b.ve_gate->weight.size(1))));  // (B, T, H)
    auto ve =
        P.value_embeds.at(layer)(idx).to(v.scalar_type()).view({B, T, H, Dh});  // (B, T, H, Dh)
    v = v + gate.unsqueeze(-1) * ve;
  }
  if (m.positional == "rope") {
    const auto& [cos, sin] = rope_tables(T, x.device());  // (T, Dh/2) each
    q = ops::rope(q, cos, sin);
    k = ops::rope(k, cos, sin);
  }
  if (m.qk_norm) {
    q = ops::rms_norm(q);
    k = ops::rms_norm(k);
  }
  if (attention_probe) attention_probe(layer, q, k);
  // Grades: every per-coordinate factor on q (query scale exp(q_τ), grades λ^{q_h}) in one (H, Dh)
  // vector that ops::attention applies with the 1/√Dh scale in one pass. The key grades join them
  // ((q ⊙ m)·(k ⊙ m) = (q ⊙ m²)·k), and the value grades go into the output projection's columns
  // (P (v ⊙ m) W_oᵀ = (P v)(W_o diag m)ᵀ): a (d, d) product in place of two (B, T, d) passes.
  torch::Tensor q_coef;       // (H, Dh)
  torch::Tensor value_grade;  // (H·Dh), undefined without graded attention
  auto fold = [&](const torch::Tensor& f) { q_coef = q_coef.defined() ? q_coef * f : f; };
  if (P.q_tau.defined())
    fold(planes_to_coords(torch::exp(P.q_tau[layer] * P.q_tau_mask[layer])).to(q.scalar_type()));
  if (P.attn_grades.defined()) {
    auto mgr =
        planes_to_coords(torch::pow(lambda_, P.attn_grades[layer])).to(q.scalar_type());  // (H, Dh)
    fold(mgr * mgr);
    value_grade = mgr.reshape({H * Dh});
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(Dh));
  auto y =
      ops::attention(q, k, v, windows_[layer], scale, q_coef, attention_kernel_);  // (B, T, H, Dh)
  // Projection: c_proj with the value grades folded into its input columns.
  const auto& W_o =
      value_grade.defined() ? b.c_proj->weight * value_grade.unsqueeze(0) : b.c_proj->weight;
  return ops::linear(y.reshape({B, T, H * Dh}), W_o);  // (B, T, d)
}

torch::Tensor GPTImpl::mlp(int layer, const torch::Tensor& x) {
  auto& b = parts_->blocks[layer];
  if (b.c_fc) {
    auto u = ops::linear(x, b.c_fc->weight);  // (B, T, 4d)
    return ops::linear(ops::relu_square(u), b.mlp_proj->weight);
  }
  // FFN(X) = Σ_l GeGLU_l(X P_l) P_lᵀ (seed 000 §4.5)
  const auto& Pm = parts_->level_proj;
  auto xp = torch::matmul(x, Pm.to(x.scalar_type()));  // (B, T, d) level coordinates
  std::vector<torch::Tensor> outs;
  int64_t off = 0;
  for (size_t l = 0; l < level_dims_.size(); ++l) {
    auto hl = b.fc_levels[l](xp.narrow(-1, off, level_dims_[l]));  // (B, T, 2 h_l)
    const int64_t half = hl.size(-1) / 2;
    auto y = torch::gelu(hl.narrow(-1, 0, half)) * hl.narrow(-1, half, half);  // (B, T, h_l)
    outs.push_back(b.proj_levels[l](y));                                       // (B, T, d_l)
    off += level_dims_[l];
  }
  return torch::matmul(torch::cat(outs, -1), Pm.t().to(x.scalar_type()));  // (B, T, d)
}

torch::Tensor GPTImpl::final_hidden(const torch::Tensor& idx) {
  return hidden_states(idx, n_layer_);
}

torch::Tensor GPTImpl::hidden_states(const torch::Tensor& idx, int layer) {
  TORCH_CHECK(idx.dim() == 2, "GPT expects token ids of shape (B, T)");
  TORCH_CHECK(layer >= 0 && layer <= n_layer_, "hidden_states: layer ", layer, " is not in 0..",
              n_layer_);
  auto& P = *parts_;
  auto x = embed(idx);       // (B, T, d)
  if (layer == 0) return x;  // embed() ends with the RMS norm
  auto x0 = x;
  for (int i = 0; i < layer; ++i) {
    x = P.resid_lambdas[i] * x + P.x0_lambdas[i] * x0;
    x = x + attention(i, ops::rms_norm(x), idx);
    x = x + mlp(i, ops::rms_norm(x));
  }
  return ops::rms_norm(x);  // (B, T, d)
}

torch::Tensor GPTImpl::output_logits(const torch::Tensor& hidden) {
  auto logits = parts_->lm_head(hidden);  // (B, T, V)
  if (logits.scalar_type() != torch::kDouble) logits = logits.to(torch::kFloat);
  return logits;
}

torch::Tensor GPTImpl::forward(const torch::Tensor& idx) {
  return ops::softcap(output_logits(final_hidden(idx)), config_.model.softcap, parts_->logit_bias);
}

torch::Tensor GPTImpl::target_nats(const torch::Tensor& idx, const torch::Tensor& targets,
                                   bool tilted) {
  auto& P = *parts_;
  // The constant added after the cap: the compiled logit bias, minus the matched tilt q_out·log
  // λ_out.
  torch::Tensor bias;  // (V) or undefined
  if (P.logit_bias.defined()) bias = P.logit_bias.to(torch::kFloat);
  if (tilted && P.output_grades.defined()) {
    auto tilt = (P.output_grades * std::log(out_lambda_)).to(torch::kFloat);  // (V)
    bias = bias.defined() ? bias - tilt : -tilt;
  }
  auto hidden = final_hidden(idx);                    // (B, T, d)
  auto flat = hidden.reshape({-1, hidden.size(-1)});  // (B·T, d)
  auto nats = ops::softcapped_nll(flat, P.lm_head->weight, targets.reshape({-1}),
                                  config_.model.softcap, bias,
                                  *logit_workspace_);  // (B·T)
  return nats.view(targets.sizes());                   // (B, T)
}

torch::Tensor GPTImpl::orth_penalty() const {
  const auto& P = *parts_;
  if (!P.level_proj.defined()) return torch::zeros({});
  // Σ_{l,l'} ‖P_lᵀP_l' − δ I‖_F² = ‖PᵀP − I‖_F² (the blocks partition PᵀP)
  auto gram = torch::matmul(P.level_proj.t(), P.level_proj);
  return (gram - torch::eye(d_, gram.options())).pow(2).sum();
}

LossParts GPTImpl::loss(const torch::Tensor& idx, const torch::Tensor& targets) {
  auto& P = *parts_;
  const auto& g = config_.grading;
  auto nll = target_nats(idx, targets, /*tilted=*/false);  // (B, T), 0 where target < 0
  auto valid = targets >= 0;
  auto tgt = targets.clamp_min(0).to(torch::kLong);
  auto vmask = valid.to(nll.scalar_type());
  LossParts out;
  if (P.output_grades.defined()) {
    auto w = torch::pow(out_lambda_, P.output_grades)
                 .to(nll.scalar_type())
                 .index_select(0, tgt.flatten())
                 .view_as(nll) *
             vmask;
    out.data = (w * nll).sum() / w.sum().clamp_min(1e-30);
  } else {
    out.data = (nll * vmask).sum() / vmask.sum().clamp_min(1.0);
  }
  auto reg = torch::zeros({}, nll.options());
  if (g.orth_weight > 0 && P.level_proj.defined())
    reg = reg + g.orth_weight * orth_penalty().to(reg.scalar_type());
  if (g.diversity_weight > 0 && P.attn_grades.defined() && n_head_ > 1) {
    auto q = P.attn_grades;                       // (L, H, Dh/2)
    auto diff = q.unsqueeze(2) - q.unsqueeze(1);  // (L, H, H, Dh/2)
    auto k = torch::exp(-diff.pow(2).sum(-1));    // (L, H, H)
    auto upper = torch::triu(torch::ones({n_head_, n_head_}, k.options()), 1);
    reg = reg + g.diversity_weight * (k * upper).sum().to(reg.scalar_type());
  }
  if (g.magnitude_weight > 0) {
    auto mag = torch::zeros({}, nll.options());
    if (P.attn_grades.defined()) mag = mag + P.attn_grades.pow(2).sum().to(mag.scalar_type());
    if (P.level_grades.defined()) mag = mag + P.level_grades.pow(2).sum().to(mag.scalar_type());
    reg = reg + g.magnitude_weight * mag;
  }
  out.reg = reg;
  out.total = out.data + out.reg;
  return out;
}

torch::Tensor GPTImpl::eval_logits(const torch::Tensor& idx) {
  auto logits = forward(idx);
  const auto& P = *parts_;
  if (P.output_grades.defined())  // matched tilt: logits − log w(y) = logits − q_out[y]·log λ_out
    logits = logits - (P.output_grades * std::log(out_lambda_)).to(logits.scalar_type());
  return logits;
}

torch::Tensor GPTImpl::per_target_nats(const torch::Tensor& idx, const torch::Tensor& targets) {
  return target_nats(idx, targets, /*tilted=*/true);
}

}  // namespace gllm
