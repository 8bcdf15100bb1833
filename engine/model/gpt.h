// The GPT of the workbench: the seed-001 baseline (reference/baseline.md §1) plus every graded part
// of seed 000 (EG-MHSA, MLGE, graded sinusoidal PE, level GeGLU, graded loss) and seed 001's
// extras.
#pragma once
// LibTorch header: include only from engine .cpp files, model/optim/train code and tests — never
// from widgets/ (see docs/design.md). Torch-free counting lives in engine/model/param_count.h.
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/config/run_config.h"
#include "engine/grading/grade_sources.h"
#include "engine/ops/attention.h"
#include "engine/ops/softcapped_nll.h"

namespace gllm {

// ---------------------------------------------------------------------------------------------
// Parameter names (checkpoints map onto the reference implementation by name):
//   transformer.wte.weight                (V, d)      token embedding
//   transformer.h.{i}.attn.c_q|c_k|c_v|c_proj.weight  (d, d)   nn.Linear (out, in)
//   transformer.h.{i}.attn.ve_gate.weight (H, min(32,d))      layers with a value embedding
//   transformer.h.{i}.mlp.c_fc.weight     (r·d, d)    ReLU² MLP
//   transformer.h.{i}.mlp.c_proj.weight   (d, r·d)
//   transformer.h.{i}.mlp.c_fc.{l}.weight (2·r·d_l, d_l)  level GeGLU (gate rows first, then up)
//   transformer.h.{i}.mlp.c_proj.{l}.weight (d_l, r·d_l)
//   value_embeds.{i}.weight               (V, d)      i % 2 == (n_layer-1) % 2
//   lm_head.weight                        (V, d)      untied
//   resid_lambdas, x0_lambdas             (n_layer)
//   oe_tables.{j}.weight                  (m+2j, d/4) j = 0..3, hashed n-gram tables
//   q_tau                                 (n_layer, H, Dh/2)   post-QK-norm query log-scale
//   attn_grades                           (n_layer, H, Dh/2)   EG-MHSA grades, one per RoPE plane
//   mlge.proj                             (d, d)      columns [off_l, off_l+d_l) are P_l
//   mlge.level_grades                     (d)         grade of each column of P (level-constant)
//   wpe                                   (T, d)      absolute position table (compiled models)
// Buffers saved alongside: output_grades (V) when the graded loss is on; logit_bias (V) in
// compiled models of a graded-loss run (the matched tilt folded into the output).
//
// RoPE plane c of a head (c in [0, Dh/2)) is the coordinate pair (c, c + Dh/2) (half-split
// layout); one grade and one query scale per plane, shared by both coordinates.
//
// Model-weights file (until the run store defines more): a safetensors file holding the tensors
// above (fp32 unless saved otherwise) and __metadata__ = {"format": "gllm-model-1",
// "config": <resolved RunConfig JSON as a string, model.vocab_size written as 0>,
// "vocab_size": "<V>", "compiled": "0"|"1"}. load_model also accepts a file without the config in
// its metadata when FILE.json (a sidecar with a "config" object) or ../config.json (a run folder)
// holds it; the vocabulary then comes from transformer.wte.weight.
// ---------------------------------------------------------------------------------------------

// Options a config cannot hold. The grade arrays come from grading::resolve_grade_sources (the
// files the config names, read and checked before the model is built, so initialisation reads no
// file); a config naming a file whose array is missing here is refused.
struct GPTOptions : grading::ResolvedGrades {
  int64_t vocab_size = 0;        // overrides ModelConfig.vocab_size when > 0
  int64_t seed = 42;             // initialisation seed
  bool compiled = false;         // a compile_to_standard result (has logit_bias)
  bool from_checkpoint = false;  // weights follow: grade files are not needed
};

// One parameter with the optimizer group it belongs to (the one mapping from model parameters to
// MuonAdamW's groups, engine/optim/muon_adamw.h). group ∈ matrix | embedding | unembedding |
// value_embeds | resid_lambdas | x0_lambdas |
//         oe_table | grades | query_scale | level_proj | position
struct TaggedParameter {
  std::string name;
  torch::Tensor param;
  std::string group;
  bool trainable = true;  // false: frozen (grades with grades_trainable = false)
};

struct LossParts {
  torch::Tensor total;  // data + reg (what backward() is called on)
  torch::Tensor data;   // graded loss (plain mean CE when the graded loss is off)
  torch::Tensor reg;  // Eq. 20 regularisers: orth·Ω_orth + diversity·Σexp(−‖q_h−q_h'‖²) + mag·‖q‖²
};

// Plain float copy of a (layers, heads, planes) tensor for audits and heat maps.
struct GradeArray {
  int layers = 0, heads = 0, planes = 0;
  std::vector<float> values;  // row-major [layer][head][plane]
  float at(int l, int h, int c) const {
    return values[(static_cast<size_t>(l) * heads + h) * planes + c];
  }
};

class GPTImpl : public torch::nn::Module {
 public:
  explicit GPTImpl(const RunConfig& config, const GPTOptions& options = {});

  // idx (B, T) int64 → logits (B, T, V) fp32 after the softcap (+ logit_bias when compiled).
  torch::Tensor forward(const torch::Tensor& idx);
  // Training objective: graded loss (or plain CE) and the regularisers, targets (B, T) int64;
  // targets < 0 are ignored.
  LossParts loss(const torch::Tensor& idx, const torch::Tensor& targets);
  // Matched-tilt evaluation logits: forward − log w(y) (equal to forward when no output grades).
  torch::Tensor eval_logits(const torch::Tensor& idx);
  // Per-target nats −log P(y_t | y_<t) under the matched tilt, (B, T) fp32; 0 where target < 0.
  torch::Tensor per_target_nats(const torch::Tensor& idx, const torch::Tensor& targets);
  // The residual stream after `layer` blocks, RMS-normed: (B, T, d); layer 0 is the embedding
  // x0, layer n_layer the input of lm_head (probes read frozen features from it).
  torch::Tensor hidden_states(const torch::Tensor& idx, int layer);

  // Every parameter with its optimizer group tag, in registration order.
  std::vector<TaggedParameter> tagged_parameters() const;
  // Hashed n-gram row indices, one (B, T) int64 tensor per table (empty when oe_m == 0).
  std::vector<torch::Tensor> oe_rows(const torch::Tensor& idx) const;
  // Clips every grade into [0, q_max] and re-zeroes frozen query-scale entries; call after
  // each optimizer step.
  void project_grades();

  // Audit access.
  GradeArray attn_grade_array() const;       // empty when EG-MHSA is off
  GradeArray query_scale_array() const;      // exp(q_τ ⊙ mask); empty when off
  torch::Tensor level_grade_values() const;  // (d) or undefined

  // The graded sinusoidal table PE' in model coordinates, (T, d) (needs level projections).
  torch::Tensor positional_table(int64_t T) const;
  // Ω_orth(P) (0 when MLGE is off).
  torch::Tensor orth_penalty() const;

  const RunConfig& config() const { return config_; }
  int64_t vocab_size() const { return vocab_; }
  int n_layer() const { return n_layer_; }
  int n_head() const { return n_head_; }
  int head_dim() const { return head_dim_; }
  int width() const { return d_; }
  double grade_base() const { return lambda_; }  // λ
  double q_max() const { return q_max_; }
  int window(int layer) const { return windows_[layer]; }  // keys looked back (sees window+1)
  bool has_value_embed(int layer) const;
  bool compiled() const { return compiled_; }

  // Which kernel ops::attention uses (ops/attention.h): Auto, or one forced for tests and benches.
  using AttentionKernel = ops::AttentionKernel;
  void set_attention_kernel(AttentionKernel kernel) { attention_kernel_ = kernel; }
  AttentionKernel attention_kernel() const { return attention_kernel_; }
  // The kernel attention runs for these q, k, v (B, T, H, Dh): the one set, or what Auto picks.
  AttentionKernel attention_kernel_for(const torch::Tensor& q, const torch::Tensor& k,
                                       const torch::Tensor& v) const;

  // Called by every attention layer with its queries and keys (B, T, H, Dh) in the coordinates
  // where the head grades act: after RoPE and QK-norm, before the grades (head profiles read them).
  std::function<void(int layer, const torch::Tensor& q, const torch::Tensor& k)> attention_probe;

  // Named tensors (parameters and saved buffers) for checkpoints.
  std::map<std::string, torch::Tensor> state_tensors() const;
  // Copies tensors by name; every model tensor must be present with the same shape.
  void load_state_tensors(const std::map<std::string, torch::Tensor>& tensors);

  // The transformer blocks (for hooks in tests and audits).
  struct Parts;
  Parts& parts() { return *parts_; }

 private:
  friend class GPTCompiler;
  RunConfig config_;
  int64_t vocab_ = 0;
  int n_layer_ = 0, n_head_ = 0, head_dim_ = 0, d_ = 0;
  double lambda_ = 0, q_max_ = 0, out_lambda_ = 0;
  bool compiled_ = false;
  AttentionKernel attention_kernel_ = AttentionKernel::Auto;
  std::vector<int> windows_;
  std::vector<int64_t> level_dims_;
  std::shared_ptr<Parts> parts_;
  std::shared_ptr<ops::LogitWorkspace>
      logit_workspace_;  // the fused loss's (B·T, V) buffer, reused across steps

  torch::Tensor embed(const torch::Tensor& idx);         // x0 before the first block, (B, T, d)
  torch::Tensor final_hidden(const torch::Tensor& idx);  // normed input of lm_head, (B, T, d)
  torch::Tensor output_logits(
      const torch::Tensor& hidden);  // lm_head, before the cap: (B, T, V) fp32
  // −log P(y) per position, (B, T), 0 where target < 0; tilted: under the matched tilt
  // (ops::softcapped_nll).
  torch::Tensor target_nats(const torch::Tensor& idx, const torch::Tensor& targets, bool tilted);
  torch::Tensor attention(int layer, const torch::Tensor& x, const torch::Tensor& idx);
  torch::Tensor mlp(int layer, const torch::Tensor& x);
  torch::Tensor grading_matrix() const;  // G = Σ_l P_l M_{q_l} P_lᵀ, (d, d)
  // RoPE cos and sin tables (T, Dh/2) fp32 by sequence length, built once per length and device.
  const std::pair<torch::Tensor, torch::Tensor>& rope_tables(int64_t T, const torch::Device& dev);
  std::map<int64_t, std::pair<torch::Tensor, torch::Tensor>> rope_cache_;
  void init_weights(const GPTOptions& options);
};
TORCH_MODULE(GPT);

// Handles to the registered submodules and tensors.
struct GPTImpl::Parts {
  struct Block {
    torch::nn::Linear c_q{nullptr}, c_k{nullptr}, c_v{nullptr}, c_proj{nullptr}, ve_gate{nullptr};
    torch::nn::Linear c_fc{nullptr}, mlp_proj{nullptr};     // ReLU²
    std::vector<torch::nn::Linear> fc_levels, proj_levels;  // level GeGLU
  };
  torch::nn::Embedding wte{nullptr};
  std::vector<Block> blocks;
  std::map<int, torch::nn::Embedding> value_embeds;
  torch::nn::Linear lm_head{nullptr};
  torch::Tensor resid_lambdas, x0_lambdas;
  std::vector<torch::nn::Embedding> oe_tables;
  torch::Tensor q_tau, q_tau_mask;         // (L, H, Dh/2)
  torch::Tensor attn_grades;               // (L, H, Dh/2)
  torch::Tensor level_proj, level_grades;  // (d, d), (d)
  torch::Tensor wpe;                       // (T, d)
  torch::Tensor output_grades;             // (V)
  torch::Tensor logit_bias;                // (V)
};

// A fresh model for `config`: the grade files it names are resolved first
// (grading::resolve_grade_sources, checked against `vocab` and `tokenizer_hash`), then the weights
// are initialised from `seed`.
GPT build_model(const RunConfig& config, int64_t vocab, int64_t seed,
                const std::string& tokenizer_hash = "");

// Model-weights safetensors file (format above).
void save_model(const GPT& model, const std::string& path);
GPT load_model(const std::string& path, const GPTOptions& options = {});

// Compile-to-standard (seed 000 Cor. 1, docs/design.md): folds attention grades into c_q/c_k/c_v
// (QK-norm off) or into q_tau and c_v/value_embeds (QK-norm on), G into wte, graded PE into wpe,
// the matched tilt into logit_bias. The result has no grade tensors and computes the same
// eval_logits.
GPT compile_to_standard(GPT& graded);

}  // namespace gllm
