// MuonAdamW: AdamW (baseline adamw_step_fused), Muon (Nesterov, Polar Express, NorMuon, cautious
// WD) and the seed-001 additions: BiEq, momentum cooldown, Neumann-Gram, FP32 master state,
// moment-free tables.
#include "engine/optim/muon_adamw.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

#include "engine/io/error.h"

namespace gllm::optim {

const std::vector<std::array<double, 3>>& polar_express_coefficients() {
  static const std::vector<std::array<double, 3>> c = {
      {8.156554524902461, -22.48329292557795, 15.878769915207462},
      {4.042929935166739, -2.808917465908714, 0.5000178451051316},
      {3.8916678022926607, -2.772484153217685, 0.5060648178503393},
      {3.285753657755655, -2.3681294933425376, 0.46449024233003106},
      {2.3465413258596377, -1.7097828382687081, 0.42323551169305323},
  };
  return c;
}

torch::Tensor polar_express(const torch::Tensor& g, int steps, double norm,
                            torch::ScalarType dtype) {
  if (g.dim() < 2)
    throw Error("polar_express needs a matrix or a stack of matrices; got " +
                std::to_string(g.dim()) + " dims");
  const auto& coeffs = polar_express_coefficients();
  steps = std::clamp<int>(steps, 0, static_cast<int>(coeffs.size()));
  torch::Tensor x = g.to(dtype);
  x = x / (x.norm(2, {-2, -1}, /*keepdim=*/true) * norm + 1e-6);  // (..., m, n)
  const bool tall = g.size(-2) > g.size(-1);
  for (int i = 0; i < steps; ++i) {
    const auto& [a, b, c] = coeffs[static_cast<size_t>(i)];
    if (tall) {
      torch::Tensor A = x.transpose(-2, -1).matmul(x);  // (..., n, n)
      torch::Tensor B = b * A + c * A.matmul(A);
      x = a * x + x.matmul(B);
    } else {
      torch::Tensor A = x.matmul(x.transpose(-2, -1));  // (..., m, m)
      torch::Tensor B = b * A + c * A.matmul(A);
      x = a * x + B.matmul(x);
    }
  }
  return x;
}

torch::Tensor bieq(const torch::Tensor& m, int passes, double alpha) {
  torch::Tensor x = m.to(torch::kFloat32, /*non_blocking=*/false, /*copy=*/true);
  if (alpha == 0.0) return x;
  for (int k = 0; k < passes; ++k) {
    torch::Tensor r = x.square().mean(-1, /*keepdim=*/true).sqrt().clamp_min(1e-30);  // (..., m, 1)
    x = x * r.pow(-alpha);
    torch::Tensor c = x.square().mean(-2, /*keepdim=*/true).sqrt().clamp_min(1e-30);  // (..., 1, n)
    x = x * c.pow(-alpha);
  }
  return x;
}

torch::Tensor neumann_gram(const torch::Tensor& g, double alpha) {
  if (g.dim() != 2)
    throw Error("Neumann-Gram whitening needs a 2-D table gradient; got " +
                std::to_string(g.dim()) + " dims");
  torch::Tensor gf = g.to(torch::kFloat32, false, /*copy=*/true);
  if (alpha == 0.0) return gf;
  torch::Tensor mu = gf.mean(0, /*keepdim=*/true);  // (1, d)
  torch::Tensor u = gf - mu;                        // (V, d)
  torch::Tensor gram = u.t().mm(u);                 // (d, d)
  torch::Tensor scale = (0.5 * alpha) / (gram.norm() + 1e-30);
  return mu + (u - u.mm(gram) * scale);
}

torch::Tensor normuon(const torch::Tensor& g, torch::Tensor& buf, double beta2) {
  const int64_t red_dim = g.size(-2) >= g.size(-1) ? -1 : -2;
  torch::Tensor gf = g.to(torch::kFloat32);
  torch::Tensor v_mean = gf.square().mean(red_dim, /*keepdim=*/true);  // (K, m, 1) or (K, 1, n)
  const double n = static_cast<double>(g.size(red_dim));
  torch::Tensor v_norm = (v_mean.sum({-2, -1}, true) * n).sqrt();  // (K, 1, 1)
  buf.lerp_(v_mean.to(buf.scalar_type()), 1.0 - beta2);
  torch::Tensor step = buf.clamp_min(1e-10).rsqrt().to(torch::kFloat32);
  torch::Tensor v_norm_new = ((v_mean * n) * step.square()).sum({-2, -1}, true).sqrt();
  torch::Tensor final_scale = step * (v_norm / v_norm_new.clamp_min(1e-10));
  return g * final_scale.to(g.scalar_type());
}

// ------------------------------------------------------------------------------------------------

// The update rule of a parameter group. Outside the anonymous namespace: MuonAdamW::Impl, which
// has external linkage, holds one per parameter.
enum class MuonAdamWRule { AdamW, Muon, MomentFree };
using Rule = MuonAdamWRule;

namespace {

const char* rule_name(Rule r) {
  switch (r) {
    case Rule::AdamW:
      return "adamw";
    case Rule::Muon:
      return "muon";
    case Rule::MomentFree:
      return "moment_free";
  }
  return "?";
}

const std::set<std::string>& known_groups() {
  static const std::set<std::string> g = {
      "matrix",   "embedding",   "value_embeds", "unembedding", "resid_lambdas", "x0_lambdas",
      "oe_table", "query_scale", "grades",       "scalar",      "level_proj",    "position"};
  return g;
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

}  // namespace

struct MuonAdamW::Impl {
  struct Param {
    std::string name, group;
    torch::Tensor p;
    Rule rule = Rule::AdamW;
    double base_lr = 0, beta1 = 0.8, beta2 = 0.95, eps = 1e-10;
    double weight_decay = 0;  // decoupled (AdamW): w ← w − lr·wd·w before the update
    bool neumann = false;
    torch::Tensor exp_avg, exp_avg_sq, master, counts;
    int64_t t = 0;
    int muon_group = -1;
    int64_t muon_index = -1;
  };
  struct MuonGroup {
    std::vector<int64_t> shape;
    std::vector<size_t> members;
    torch::Tensor momentum;  // (K, m, n) fp32
    torch::Tensor second;    // (K, m, 1) or (K, 1, n) fp32
  };

  OptimConfig cfg;
  int d_model = 768;
  Schedule sched;
  MuonAdamWOptions opts;
  std::vector<Param> params;
  std::vector<MuonGroup> groups;
  std::unordered_map<std::string, size_t> by_name;

  torch::ScalarType polar_dtype(const torch::Tensor& like) const {
    if (cfg.polar_dtype == "bf16") return torch::kBFloat16;
    if (cfg.polar_dtype == "fp32") return torch::kFloat32;
    return like.is_cuda() ? torch::kBFloat16 : torch::kFloat32;
  }

  void adamw_step(Param& q, double lrm) {
    if (!q.p.grad().defined()) return;
    torch::NoGradGuard ng;
    q.t += 1;
    const double lr = q.base_lr * lrm;
    const double bias1 = 1.0 - std::pow(q.beta1, static_cast<double>(q.t));
    const double bias2 = 1.0 - std::pow(q.beta2, static_cast<double>(q.t));
    torch::Tensor grad = q.p.grad();
    if (q.neumann) grad = neumann_gram(grad, ramp(q.t, cfg.neumann_tau));  // fp32 on the fly
    // Work tensor: the fp32 master when one exists, else the parameter itself (in its dtype).
    torch::Tensor w = q.master.defined() ? q.master : q.p;
    if (q.weight_decay > 0) w.mul_(1.0 - lr * q.weight_decay);  // decoupled, before the step
    // The update runs over slices of 2^18 elements (1 MiB in fp32) with the same operations in
    // the same order as exp_avg / (sqrt(exp_avg_sq / bias2) + eps) on the whole tensor: a step's
    // temporaries (the gradient widened to the moments' dtype, its square, the update) stay at a
    // few MiB whatever the table's size, so a run's peak memory is its state's (Table 1b).
    const at::ScalarType moment_dtype = q.exp_avg.scalar_type();
    const torch::Tensor grad_flat = grad.reshape({-1});  // (n,) views of contiguous tensors
    torch::Tensor m_flat = q.exp_avg.view({-1}), v_flat = q.exp_avg_sq.view({-1});
    torch::Tensor w_flat = w.view({-1});
    const int64_t n = w_flat.numel();
    constexpr int64_t kSlice = int64_t(1) << 18;
    for (int64_t a = 0; a < n; a += kSlice) {
      const int64_t b = std::min(n, a + kSlice);
      const torch::Tensor g = grad_flat.slice(0, a, b).to(moment_dtype);  // (b − a,)
      torch::Tensor m = m_flat.slice(0, a, b), v = v_flat.slice(0, a, b);
      m.lerp_(g, 1.0 - q.beta1);
      v.lerp_(g.square(), 1.0 - q.beta2);
      torch::Tensor upd = v.div(bias2);
      upd.sqrt_().add_(q.eps);
      torch::div_out(upd, m, upd);
      w_flat.slice(0, a, b).add_(
          upd.scalar_type() == w.scalar_type() ? upd : upd.to(w.scalar_type()), -lr / bias1);
    }
    if (q.master.defined()) q.p.copy_(q.master);
  }

  void moment_free_step(Param& q, double lrm) {
    torch::NoGradGuard ng;
    torch::Tensor grad = q.p.grad();
    torch::Tensor idx = (q.counts > 0).nonzero().squeeze(1);  // (|visited|,)
    if (idx.numel() == 0) {
      if (grad.defined() && grad.abs().max().item<double>() > 0)
        throw Error("hashed table '" + q.name +
                    "' has a gradient but no recorded visits; the trainer must call "
                    "accumulate_visits(table, rows) once per micro-step before step()");
      q.counts.zero_();
      return;
    }
    if (!grad.defined()) {
      q.counts.zero_();
      return;
    }
    q.t += 1;
    const double lr = q.base_lr * lrm;
    torch::Tensor n = q.counts.index_select(0, idx).unsqueeze(1);          // (|V|, 1)
    torch::Tensor gb = grad.index_select(0, idx).to(torch::kFloat32) / n;  // (|V|, d/4)
    if (cfg.table_neumann) gb = neumann_gram(gb, ramp(q.t, cfg.neumann_tau));
    // lr / rms on the device, in double as a host scalar would be (no sync; the same bits): the
    // step's one host read per table is the nonzero above, which sizes the visited rows.
    const torch::Tensor rms = gb.square().mean().sqrt().to(torch::kDouble).clamp_min(1e-30);  // ()
    const torch::Tensor scale =
        torch::div(torch::scalar_tensor(lr, rms.options()), rms).to(torch::kFloat32);  // ()
    torch::Tensor rows = q.p.index_select(0, idx).to(torch::kFloat32) - gb * scale;
    q.p.index_copy_(0, idx, rows.to(q.p.scalar_type()));
    q.counts.zero_();
  }

  void muon_step(MuonGroup& gr, double lrm, double mu, double wd) {
    torch::NoGradGuard ng;
    std::vector<torch::Tensor> gs, ps;
    for (size_t i : gr.members) {
      Param& q = params[i];
      q.t += 1;
      torch::Tensor g = q.p.grad();
      gs.push_back(g.defined() ? g.to(torch::kFloat32)
                               : torch::zeros(gr.shape, q.p.options().dtype(torch::kFloat32)));
      ps.push_back(q.p.to(torch::kFloat32));
    }
    const int64_t t = params[gr.members.front()].t;
    torch::Tensor g = torch::stack(gs);  // (K, m, n)
    torch::Tensor P = torch::stack(ps);  // (K, m, n)
    gr.momentum.lerp_(g, 1.0 - mu);
    g = g.lerp(gr.momentum, mu);  // Nesterov
    if (cfg.bieq) g = bieq(g, cfg.bieq_passes, ramp(t, cfg.bieq_tau));
    torch::Tensor x = polar_express(g, cfg.ns_steps, cfg.polar_norm, polar_dtype(P));
    if (cfg.normuon) x = normuon(x, gr.second, cfg.muon_beta2);
    const double rows = static_cast<double>(gr.shape[0]), cols = static_cast<double>(gr.shape[1]);
    const double lr = cfg.matrix_lr * lrm * std::sqrt(std::max(1.0, rows / cols));
    torch::Tensor xf = x.to(torch::kFloat32);
    torch::Tensor decay = P * wd;
    if (cfg.cautious_wd) decay = decay * ((xf * P) >= 0).to(torch::kFloat32);
    P.sub_(xf * lr + decay * lr);
    for (size_t k = 0; k < gr.members.size(); ++k)
      params[gr.members[k]].p.copy_(P[static_cast<int64_t>(k)]);
  }
};

MuonAdamW::MuonAdamW(const OptimConfig& cfg, int d_model, int64_t total_steps,
                     std::vector<TaggedParam> list, MuonAdamWOptions opts)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  if (d_model <= 0)
    throw Error("MuonAdamW needs the model width d > 0 (got " + std::to_string(d_model) + ")");
  m.cfg = cfg;
  m.d_model = d_model;
  m.sched = Schedule::from_config(cfg, total_steps);
  m.opts = opts;
  const double s = std::pow(d_model / 768.0, -0.5);
  const bool fp32_state = cfg.embedding_state == "fp32";
  std::map<std::vector<int64_t>, std::vector<size_t>> shapes;  // sorted by shape, as the baseline
  torch::NoGradGuard ng;
  for (auto& tp : list) {
    if (!known_groups().count(tp.group)) {
      std::string all;
      for (const auto& g : known_groups()) all += (all.empty() ? "" : ", ") + g;
      throw Error("parameter '" + tp.name + "' has unknown optimizer group '" + tp.group +
                  "'; use one of: " + all);
    }
    if (!tp.tensor.defined())
      throw Error("parameter '" + tp.name + "' is an undefined tensor; pass the model's tensors");
    if (m.by_name.count(tp.name))
      throw Error("parameter name '" + tp.name + "' appears twice; names must be unique");
    Impl::Param q;
    q.name = tp.name;
    q.group = tp.group;
    q.p = tp.tensor;
    q.beta1 = cfg.adam_beta1;
    q.beta2 = cfg.adam_beta2;
    q.eps = cfg.adam_eps;
    bool embedding_like = false;
    const auto& g = tp.group;
    if (g == "matrix") {
      if (q.p.dim() != 2)
        throw Error("matrix parameter '" + q.name + "' has " + std::to_string(q.p.dim()) +
                    " dims; Muon updates 2-D weights only: tag it 'scalar' or reshape it");
      q.rule = Rule::Muon;
      q.base_lr = cfg.matrix_lr;
      shapes[q.p.sizes().vec()].push_back(m.params.size());
    } else if (g == "embedding" || g == "value_embeds") {
      q.base_lr = cfg.embedding_lr * s;
      q.neumann = cfg.neumann;
      embedding_like = true;
      if (g == "embedding") q.weight_decay = cfg.embedding_weight_decay;
    } else if (g == "unembedding") {
      q.base_lr = cfg.unembedding_lr * s;
      q.neumann = cfg.neumann;
    } else if (g == "resid_lambdas") {
      q.base_lr = cfg.scalar_lr * 0.01;
    } else if (g == "x0_lambdas") {
      q.base_lr = cfg.scalar_lr;
      q.beta1 = 0.96;  // the baseline's x0 group uses betas (0.96, 0.95)
    } else if (g == "oe_table") {
      if (q.p.dim() != 2) throw Error("hashed table '" + q.name + "' must be 2-D (rows, d/4)");
      if (cfg.oe_update == "moment_free") {
        q.rule = Rule::MomentFree;
        q.base_lr = cfg.oe_lr * s;
        q.counts = torch::zeros({q.p.size(0)}, q.p.options().dtype(torch::kFloat32));
      } else {
        q.base_lr = cfg.embedding_lr * s;
        embedding_like = true;
      }
    } else if (g == "query_scale") {
      q.base_lr = cfg.query_scale_lr;
    } else if (g == "grades") {
      q.base_lr = opts.grade_lr;
    } else if (g == "level_proj") {
      q.base_lr = opts.level_proj_lr;
    } else if (g == "position") {
      q.base_lr = cfg.embedding_lr * s;
    } else {  // scalar
      q.base_lr = cfg.scalar_lr;
    }
    if (q.neumann && q.p.dim() != 2)
      throw Error("Neumann-Gram needs 2-D tables but '" + q.name + "' has " +
                  std::to_string(q.p.dim()) + " dims");
    if (q.rule == Rule::AdamW) {
      const bool widen = embedding_like && fp32_state;
      const auto sdt = widen ? torch::kFloat32 : q.p.scalar_type();
      q.exp_avg = torch::zeros_like(q.p, q.p.options().dtype(sdt));
      q.exp_avg_sq = torch::zeros_like(q.p, q.p.options().dtype(sdt));
      if (widen && q.p.scalar_type() != torch::kFloat32)
        q.master = q.p.detach().to(torch::kFloat32);  // a new fp32 tensor (the dtype differs)
    }
    m.by_name[q.name] = m.params.size();
    m.params.push_back(std::move(q));
  }
  for (auto& [shape, members] : shapes) {
    Impl::MuonGroup gr;
    gr.shape = shape;
    gr.members = members;
    const auto opt = m.params[members.front()].p.options().dtype(torch::kFloat32);
    const int64_t k = static_cast<int64_t>(members.size());
    gr.momentum = torch::zeros({k, shape[0], shape[1]}, opt);
    gr.second = shape[0] >= shape[1] ? torch::zeros({k, shape[0], 1}, opt)
                                     : torch::zeros({k, 1, shape[1]}, opt);
    for (size_t i = 0; i < members.size(); ++i) {
      m.params[members[i]].muon_group = static_cast<int>(m.groups.size());
      m.params[members[i]].muon_index = static_cast<int64_t>(i);
    }
    m.groups.push_back(std::move(gr));
  }
}

MuonAdamW::~MuonAdamW() = default;

void MuonAdamW::accumulate_visits(const std::string& table_name, const torch::Tensor& rows) {
  auto it = impl_->by_name.find(table_name);
  if (it == impl_->by_name.end())
    throw Error("accumulate_visits: no parameter named '" + table_name +
                "'; pass the hashed table's parameter name");
  auto& q = impl_->params[it->second];
  if (q.group != "oe_table")
    throw Error("accumulate_visits: '" + table_name + "' is not a hashed table (group " + q.group +
                ")");
  if (q.rule != Rule::MomentFree) return;  // AdamW tables need no counts
  torch::NoGradGuard ng;
  torch::Tensor r = rows.reshape({-1}).to(q.counts.device(), torch::kLong);  // (B·T,)
  if (r.numel() == 0) return;
  // No min/max read of the rows (a host sync per micro-step on CUDA): index_add_ checks the bounds
  // itself (an error on the CPU, a device-side assert on CUDA; the model's rows are in range by
  // construction, taken modulo the table's size).
  try {
    q.counts.index_add_(0, r, torch::ones({r.numel()}, q.counts.options()));
  } catch (const c10::Error&) {
    throw Error("accumulate_visits: a row index is outside [0, " +
                std::to_string(q.counts.size(0)) + ") for table '" + table_name +
                "'; pass the rows the model's oe_rows gives for this table");
  }
}

StepInfo MuonAdamW::step(int64_t step_index) {
  Impl& m = *impl_;
  StepInfo info;
  info.step = step_index;
  info.progress = m.sched.progress(step_index);
  info.lr_multiplier = m.sched.lr_multiplier(step_index);
  info.muon_momentum = m.sched.muon_momentum(step_index);
  info.muon_weight_decay = m.sched.muon_weight_decay(step_index);
  for (auto& q : m.params) {
    if (q.rule == Rule::AdamW)
      m.adamw_step(q, info.lr_multiplier);
    else if (q.rule == Rule::MomentFree)
      m.moment_free_step(q, info.lr_multiplier);
  }
  for (auto& gr : m.groups)
    m.muon_step(gr, info.lr_multiplier, info.muon_momentum, info.muon_weight_decay);
  if (!m.groups.empty()) {
    const int64_t t = m.params[m.groups.front().members.front()].t;
    info.bieq_alpha = m.cfg.bieq ? ramp(t, m.cfg.bieq_tau) : 0.0;
  }
  for (auto& q : m.params)
    if (q.neumann) {
      info.neumann_alpha = ramp(q.t, m.cfg.neumann_tau);
      break;
    }
  return info;
}

void MuonAdamW::zero_grad() {
  for (auto& q : impl_->params)
    if (q.p.grad().defined()) q.p.mutable_grad() = torch::Tensor();
}

std::vector<std::pair<std::string, torch::Tensor>> MuonAdamW::state_tensors() const {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& q : impl_->params) {
    if (q.exp_avg.defined()) out.emplace_back(q.name + ".exp_avg", q.exp_avg.detach().clone());
    if (q.exp_avg_sq.defined())
      out.emplace_back(q.name + ".exp_avg_sq", q.exp_avg_sq.detach().clone());
    if (q.master.defined()) out.emplace_back(q.name + ".master", q.master.detach().clone());
    if (q.rule == Rule::Muon) {
      const auto& gr = impl_->groups[static_cast<size_t>(q.muon_group)];
      out.emplace_back(q.name + ".momentum_buffer", gr.momentum[q.muon_index].clone());
      out.emplace_back(q.name + ".second_momentum_buffer", gr.second[q.muon_index].clone());
    }
  }
  return out;
}

void MuonAdamW::load_state_tensors(
    const std::vector<std::pair<std::string, torch::Tensor>>& tensors) {
  std::unordered_map<std::string, torch::Tensor> byname;
  for (const auto& [n, t] : tensors) byname[n] = t;
  torch::NoGradGuard ng;
  auto take = [&](const std::string& key, torch::Tensor dst, bool required) {
    auto it = byname.find(key);
    if (it == byname.end()) {
      if (required)
        throw Error("optimizer state '" + key +
                    "' is missing from the checkpoint; resume from a checkpoint written "
                    "with the same model and optimizer settings, or start the optimizer fresh");
      return false;
    }
    if (it->second.sizes() != dst.sizes())
      throw Error("optimizer state '" + key + "' has shape " + shape_str(it->second.sizes().vec()) +
                  " but " + shape_str(dst.sizes().vec()) +
                  " is expected; the checkpoint belongs to a different model shape");
    dst.copy_(it->second);
    byname.erase(it);
    return true;
  };
  for (auto& q : impl_->params) {
    if (q.exp_avg.defined()) take(q.name + ".exp_avg", q.exp_avg, true);
    if (q.exp_avg_sq.defined()) take(q.name + ".exp_avg_sq", q.exp_avg_sq, true);
    if (q.master.defined() && !take(q.name + ".master", q.master, false))
      q.master.copy_(q.p.detach());
    if (q.rule == Rule::Muon) {
      auto& gr = impl_->groups[static_cast<size_t>(q.muon_group)];
      take(q.name + ".momentum_buffer", gr.momentum[q.muon_index], true);
      take(q.name + ".second_momentum_buffer", gr.second[q.muon_index], true);
    }
  }
  if (!byname.empty())
    throw Error("optimizer state '" + byname.begin()->first +
                "' matches no parameter of this model (" + std::to_string(byname.size()) +
                " unmatched); the checkpoint was written for a different model or optimizer");
}

nlohmann::json MuonAdamW::scalar_state() const {
  nlohmann::json steps = nlohmann::json::object();
  for (const auto& q : impl_->params) steps[q.name] = q.t;
  return {{"format", "gllm.muon_adamw.v1"}, {"steps", steps}};
}

void MuonAdamW::load_scalar_state(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("steps") || !j["steps"].is_object())
    throw Error(
        "optimizer scalar state must be an object with 'steps'; the checkpoint sidecar is damaged "
        "or from another tool");
  for (auto& q : impl_->params) {
    if (!j["steps"].contains(q.name))
      throw Error("optimizer scalar state has no step count for '" + q.name +
                  "'; resume with the same model settings");
    const auto& v = j["steps"][q.name];
    // A count the trainer could have written: a non-negative integer (the trainer also bounds it
    // by the checkpoint's step before loading).
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > (1ull << 53)) ||
        v.get<int64_t>() < 0 || v.get<int64_t>() > (int64_t(1) << 53))
      throw Error("optimizer scalar state: the step count of '" + q.name + "' is " +
                  v.dump().substr(0, 40) +
                  ", not a count of updates; the checkpoint is damaged — resume from an earlier "
                  "one");
    q.t = v.get<int64_t>();
  }
}

const Schedule& MuonAdamW::schedule() const {
  return impl_->sched;
}

std::vector<ParamPlan> MuonAdamW::plan() const {
  std::vector<ParamPlan> out;
  for (const auto& q : impl_->params)
    out.push_back({q.name, q.group, rule_name(q.rule), q.base_lr, q.p.sizes().vec()});
  return out;
}

void MuonAdamW::refresh_masters_from_params() {
  torch::NoGradGuard ng;
  for (auto& q : impl_->params)
    if (q.master.defined()) q.master.copy_(q.p.detach());
}

}  // namespace gllm::optim
