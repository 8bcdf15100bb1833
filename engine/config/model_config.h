// ModelConfig: the GPT's shape and its optional seed-001 parts (hashed n-gram tables, query scale).
// Part of RunConfig; torch-free so the GUI's preset form can read it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/io/config_schema.h"

namespace gllm {

struct ModelConfig {
  int depth = 0;       // > 0: width from depth (aspect 64, head dim 128) as the baseline
  int n_layer = 4;     // used when depth == 0
  int n_embd = 128;    // used when depth == 0
  int n_head = 4;      // used when depth == 0
  int vocab_size = 0;  // 0 = take it from the tokenizer
  int sequence_len = 256;
  std::string window_pattern = "SSSL";  // tiled over layers; the last layer is always L
  int short_window = 0;                 // 0 = sequence_len / 2
  bool value_embeds = true;
  double softcap = 15.0;  // 0 = no softcap
  double rope_base = 10000.0;
  bool qk_norm = true;
  std::string positional = "rope";  // rope | graded_sinusoidal | absolute
  std::string mlp = "relu2";        // relu2 | geglu_levels
  int mlp_ratio = 4;
  int64_t oe_m = 0;                            // hashed n-gram table modulus; 0 = no tables
  bool query_scale = false;                    // post-QK-norm RoPE-plane exp(q_tau)
  std::vector<int> query_scale_frozen_layers;  // layers whose scale is held at 1.0
  int query_scale_frozen_planes = 0;           // planes [0, n) held at 1.0 in every layer
  // Storage dtype of the lookup tables (wte, value_embeds, oe_tables): "fp32", or "bf16" as seed
  // 001 stores them (its optimizer then keeps bf16 moments, or an fp32 master with fp32 moments
  // when optim.embedding_state is "fp32").
  std::string storage = "fp32";
  // Initial token embedding W_e: "normal" N(0, 1), or "reference": the token reference table of
  // grading.profiles_file (route 1 of the certificate: at step 0 the profiles' coordinates are
  // the model's own), checked against the run's tokenizer and the profiles' digest.
  std::string wte_init = "normal";

  // Derived shape: from depth (baseline) or from the explicit n_layer / n_embd / n_head.
  int layers() const;
  int width() const;
  int heads() const;
  int head_dim() const;

  static const Schema<ModelConfig>& schema();
};

}  // namespace gllm
