// Schema and derived shape of ModelConfig (baseline.md §1.1: d = ceil(64·DEPTH/128)·128, Dh = 128).
// Cross-field checks give messages that say which value to change.
#include "engine/config/model_config.h"

namespace gllm {

int ModelConfig::layers() const {
  return depth > 0 ? depth : n_layer;
}
int ModelConfig::width() const {
  return depth > 0 ? ((depth * 64 + 127) / 128) * 128 : n_embd;
}
int ModelConfig::heads() const {
  return depth > 0 ? width() / 128 : n_head;
}
int ModelConfig::head_dim() const {
  return width() / heads();
}

const Schema<ModelConfig>& ModelConfig::schema() {
  static const Schema<ModelConfig> s = [] {
    Schema<ModelConfig> s;
    s.integer("depth", &ModelConfig::depth, 0, 64,
              "Baseline DEPTH: width = ceil(64·depth/128)·128, head dim 128; 0 = explicit shape")
        .integer("n_layer", &ModelConfig::n_layer, 1, 64, "Layers (when depth is 0)")
        .integer("n_embd", &ModelConfig::n_embd, 8, 8192, "Model width d (when depth is 0)")
        .integer("n_head", &ModelConfig::n_head, 1, 128, "Attention heads (when depth is 0)")
        .integer("vocab_size", &ModelConfig::vocab_size, 0, 65535,
                 "Vocabulary size; 0 = the tokenizer's")
        .integer("sequence_len", &ModelConfig::sequence_len, 2, 65536, "Context length T")
        .text("window_pattern", &ModelConfig::window_pattern,
              "Sliding-window pattern of S (short) and L (long) tiled over layers; last layer L")
        .integer("short_window", &ModelConfig::short_window, 0, 65536,
                 "Keys an S layer looks back (a query sees window+1 keys); 0 = sequence_len/2")
        .flag("value_embeds", &ModelConfig::value_embeds,
              "Value embeddings with gates on alternating layers (always the last)")
        .real("softcap", &ModelConfig::softcap, 0, 1e6, "Logit softcap c·tanh(z/c); 0 = off")
        .real("rope_base", &ModelConfig::rope_base, 1, 1e9, "RoPE base")
        .flag("qk_norm", &ModelConfig::qk_norm, "RMS-normalise q and k after RoPE")
        .choice("positional", &ModelConfig::positional, {"rope", "graded_sinusoidal", "absolute"},
                "Positional scheme: RoPE, the graded sinusoidal encoding (seed 000 §4.4), or an "
                "absolute position table (what `gllm compile` turns the graded encoding into)")
        .choice("mlp", &ModelConfig::mlp, {"relu2", "geglu_levels"},
                "Feed-forward: ReLU², or the level-decomposed GeGLU (seed 000 §4.5)")
        .integer("mlp_ratio", &ModelConfig::mlp_ratio, 1, 16, "Hidden width of the MLP / d")
        .integer("oe_m", &ModelConfig::oe_m, 0, 100000000,
                 "Hashed n-gram table modulus m (seed 001 §2.1); 0 = no tables")
        .flag("query_scale", &ModelConfig::query_scale,
              "Post-QK-norm RoPE-plane query scale exp(q_tau), zero-initialised")
        .integers("query_scale_frozen_layers", &ModelConfig::query_scale_frozen_layers, 0, 63,
                  "Layers whose query scale is held at 1.0")
        .integer("query_scale_frozen_planes", &ModelConfig::query_scale_frozen_planes, 0, 4096,
                 "Planes [0, n) whose query scale is held at 1.0 in every layer")
        .choice("storage", &ModelConfig::storage, {"fp32", "bf16"},
                "Storage dtype of wte, value_embeds and the hashed tables (seed 001 stores them in "
                "bf16; optim.embedding_state then decides whether an fp32 master is kept)")
        .choice("wte_init", &ModelConfig::wte_init, {"normal", "reference"},
                "Initial token embedding: N(0, 1), or the token reference of "
                "grading.profiles_file (the certificate's coordinates are then the model's own at "
                "step 0)");
    s.check([](const ModelConfig& m, const std::string& path) {
      auto key = [&](const char* k) { return path.empty() ? std::string(k) : path + "." + k; };
      if (m.depth == 0 && m.n_embd % m.n_head != 0)
        throw ConfigError(key("n_embd"), std::to_string(m.n_embd) +
                                             " is not divisible by n_head = " +
                                             std::to_string(m.n_head) + "; pick a multiple");
      if (m.head_dim() % 2 != 0)
        throw ConfigError(key("n_head"), "head dim " + std::to_string(m.head_dim()) +
                                             " is odd; RoPE planes need an even head dim");
      if (m.window_pattern.empty() || m.window_pattern.find_first_not_of("SL") != std::string::npos)
        throw ConfigError(key("window_pattern"),
                          "'" + m.window_pattern + "' must be a non-empty string of S and L");
      if (m.short_window > m.sequence_len)
        throw ConfigError(key("short_window"), "larger than sequence_len; use at most " +
                                                   std::to_string(m.sequence_len));
      if (m.query_scale_frozen_planes > m.head_dim() / 2)
        throw ConfigError(
            key("query_scale_frozen_planes"),
            "more planes than the head has (" + std::to_string(m.head_dim() / 2) + ")");
      if (m.oe_m > 0 && m.width() % 4 != 0)
        throw ConfigError(key("oe_m"),
                          "hashed n-gram tables need a width divisible by 4 (d/4 per "
                          "table); the width is " +
                              std::to_string(m.width()));
      for (int l : m.query_scale_frozen_layers)
        if (l >= m.layers())
          throw ConfigError(key("query_scale_frozen_layers"),
                            "layer " + std::to_string(l) + " does not exist (the model has " +
                                std::to_string(m.layers()) + " layers)");
    });
    return s;
  }();
  return s;
}

}  // namespace gllm
