// Head profiles (head_profiles.h): Brown validation text through a checkpoint's attention, one row
// per token in a word, per-sentence sufficient statistics per head, ridge probes and a bootstrap.
#include "engine/train/head_profiles.h"

#include <torch/torch.h>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>

#include "engine/data/corpus.h"
#include "engine/data/dataset.h"
#include "engine/data/level_features.h"
#include "engine/data/profile_estimation.h"
#include "engine/data/splits.h"
#include "engine/dataset/brown_tags.h"
#include "engine/io/error.h"
#include "engine/model/gpt.h"
#include "engine/train/model_grades.h"
#include "engine/train/run_store.h"

namespace gllm {

namespace {

constexpr int kTargets = kBrownLevels;

// Per-sentence sums of one head's rows: count, Σz, Σzzᵀ, Σy, Σz yᵀ.
struct SentenceStats {
  Eigen::VectorXd n;   // (S)
  Eigen::MatrixXd z;   // (S, Dh)
  Eigen::MatrixXd zz;  // (S, Dh·Dh)
  Eigen::MatrixXd y;   // (S, k)
  Eigen::MatrixXd zy;  // (S, Dh·k)
};

std::vector<double> normalized_energy(const Eigen::VectorXd& e) {
  const double s = e.sum();
  std::vector<double> out(static_cast<size_t>(e.size()));
  for (int i = 0; i < e.size(); ++i)
    out[static_cast<size_t>(i)] = s > 0 ? e[i] / s : 1.0 / e.size();
  return out;
}

// Sums coordinate pairs (c, c + Dh/2) of a distribution over Dh coordinates into Dh/2 planes.
std::vector<double> per_plane(const std::vector<double>& coords) {
  const size_t planes = coords.size() / 2;
  std::vector<double> out(planes);
  for (size_t c = 0; c < planes; ++c) out[c] = coords[c] + coords[c + planes];
  return out;
}

// Weighted fit from sentence statistics (weights per sentence): τ̂ and the targets' α̂ over
// coordinates, the same estimator as `gllm profiles` (centred weighted Gram, ridge relative to the
// mean variance).
grading::Profiles fit(const SentenceStats& s, const Eigen::VectorXd& w, int target,
                      double ridge_rel, int Dh) {
  const double W = w.dot(s.n);
  if (!(W > 0)) throw Error("head profiles: a resample has no tokens; raise --max-tokens");
  Eigen::VectorXd mz = (s.z.transpose() * w) / W;   // (Dh)
  Eigen::VectorXd my = (s.y.transpose() * w) / W;   // (k)
  Eigen::VectorXd zz = (s.zz.transpose() * w) / W;  // (Dh·Dh)
  Eigen::VectorXd zy = (s.zy.transpose() * w) / W;  // (Dh·k)
  Eigen::MatrixXd G =
      Eigen::Map<Eigen::MatrixXd>(zz.data(), Dh, Dh) - mz * mz.transpose();  // (Dh, Dh)
  G = 0.5 * (G + G.transpose());
  Eigen::MatrixXd B =
      Eigen::Map<Eigen::MatrixXd>(zy.data(), Dh, kTargets) - mz * my.transpose();  // (Dh, k)
  Eigen::VectorXd var = G.diagonal().cwiseMax(0.0);
  const double r = ridge_rel * var.sum() / Dh;
  G.diagonal().array() += r > 0 ? r : 1e-12;
  Eigen::MatrixXd Wt = G.llt().solve(B);  // (Dh, k)
  std::vector<double> alpha(static_cast<size_t>(Dh), 0.0);
  if (target >= 0) {
    alpha = normalized_energy(Wt.col(target).array().square().matrix());
  } else {  // mixture: the mean of the targets' α̂
    for (int t = 0; t < kTargets; ++t) {
      auto a = normalized_energy(Wt.col(t).array().square().matrix());
      for (int j = 0; j < Dh; ++j)
        alpha[static_cast<size_t>(j)] += a[static_cast<size_t>(j)] / kTargets;
    }
  }
  grading::Profiles p;
  p.alpha = per_plane(alpha);
  p.tau = per_plane(normalized_energy(var));
  return p;
}

}  // namespace

grading::HeadProfiles estimate_head_profiles(const HeadProfileOptions& opt,
                                             const std::function<void(const std::string&)>& log) {
  auto say = [&](const std::string& s) {
    if (log) log(s);
  };
  if (opt.features != "keys" && opt.features != "queries")
    throw Error("--features must be keys or queries, not '" + opt.features + "'");
  if (opt.bootstrap < 0 || opt.bootstrap > 100000) throw Error("--bootstrap must be 0 … 100000");
  if (opt.max_tokens < 1000) throw Error("--max-tokens must be at least 1000");
  const auto& names = LevelFeaturizer::target_names();
  int target = -1;
  if (opt.target != "mixture") {
    auto it = std::find(names.begin(), names.end(), opt.target);
    if (it == names.end())
      throw Error("unknown probe target '" + opt.target +
                  "'; use noun, verb_distance, negation, document_position or mixture");
    target = static_cast<int>(it - names.begin());
  }
  const std::string weights = resolve_weights_path(opt.checkpoint);
  GPT model = load_model(weights);
  model->eval();
  // Profiles of NaN/Inf weights or of grades outside the clip would be numbers about nothing.
  for (const auto& [name, t] : model->state_tensors())
    if (t.is_floating_point() && !torch::isfinite(t).all().item<bool>())
      throw Error(weights + ": tensor '" + name +
                  "' holds NaN or infinite values; the checkpoint is damaged or diverged — "
                  "estimate profiles of an earlier checkpoint");
  grading::check_grades_within_clip(model_grades_from_checkpoint(weights));
  const RunConfig& cfg = model->config();
  if (!cfg.grading.attention)
    say("note: this checkpoint's attention is not graded; its heads' profiles are still estimated");
  DataConfig data = cfg.data;
  if (!opt.corpus_path.empty()) data.corpus_path = opt.corpus_path;
  if (data.corpus != "brown" && data.corpus != "prepared")
    throw Error(
        "head profiles need the tagged Brown corpus (data.corpus = brown, or a dataset "
        "prepared from it with --format brown); the checkpoint was trained on '" +
        data.corpus + "'");
  TaggedData tagged = open_tagged_data(data, say);
  const Corpus& corpus = tagged.corpus;
  const Dataset& ds = tagged.ds;
  if (ds.tokenizer.vocab_size() != model->vocab_size())
    throw Error("the tokenizer of this data cache has " +
                std::to_string(ds.tokenizer.vocab_size()) +
                " tokens but the checkpoint's model has " + std::to_string(model->vocab_size()) +
                "; use the data settings the checkpoint was trained with");
  LevelFeaturizer fz(corpus);

  const int L = model->n_layer(), H = model->n_head(), Dh = model->head_dim(), planes = Dh / 2;
  const int64_t T = cfg.model.sequence_len;
  // Rows: per layer, (tokens, H·Dh) features of the chosen side; per token its sentence and
  // targets.
  std::vector<std::vector<float>> rows(static_cast<size_t>(L));
  std::vector<int> row_sentence;
  std::vector<std::array<float, kTargets>> row_targets;
  int sentences = 0;
  std::vector<int> keep;  // positions (within the current chunk) of the tokens to record
  model->attention_probe = [&](int layer, const torch::Tensor& q, const torch::Tensor& k) {
    const auto& side = opt.features == "keys" ? k : q;  // (1, t, H, Dh)
    auto flat = side.detach()
                    .to(torch::kCPU, torch::kFloat)
                    .reshape({side.size(1), H * Dh})
                    .contiguous();  // (t, H·Dh)
    const float* p = flat.data_ptr<float>();
    auto& out = rows[static_cast<size_t>(layer)];
    for (int pos : keep)
      out.insert(out.end(), p + static_cast<int64_t>(pos) * H * Dh,
                 p + static_cast<int64_t>(pos + 1) * H * Dh);
  };
  std::vector<float> feats[kBrownLevels], tg;
  int64_t seen = 0;
  torch::NoGradGuard no_grad;
  for (uint32_t di : ds.splits.val) {
    if (seen >= opt.max_tokens) break;
    const auto& doc = corpus.documents[di];
    // Targets and sentence of every word of the document, in order.
    std::vector<std::array<float, kTargets>> word_targets;
    std::vector<int> word_sentence;
    for (size_t si = 0; si < doc.sentences.size(); ++si) {
      fz.sentence_features(doc, si, feats, tg);
      for (size_t i = 0; i < doc.sentences[si].words.size(); ++i) {
        std::array<float, kTargets> t{};
        for (int k = 0; k < kTargets; ++k)
          t[static_cast<size_t>(k)] = tg[i * kTargets + static_cast<size_t>(k)];
        word_targets.push_back(t);
        word_sentence.push_back(sentences + static_cast<int>(si));
      }
    }
    sentences += static_cast<int>(doc.sentences.size());
    auto v = ds.shard->document(di);
    const auto word_of = align_tokens_to_words(doc, v.data, v.size, ds.tokenizer.token_bytes());
    // Chunks of T tokens, each starting with BOS as the loader's rows do.
    for (size_t start = 0; start < v.size && seen < opt.max_tokens;
         start += static_cast<size_t>(T - 1)) {
      const size_t n = std::min(v.size - start, static_cast<size_t>(T - 1));
      std::vector<int64_t> ids{ds.tokenizer.bos_id()};
      keep.clear();
      for (size_t k = 0; k < n; ++k) {
        ids.push_back(v.data[start + k]);
        const int w = word_of[start + k];
        if (w < 0) continue;
        keep.push_back(static_cast<int>(k + 1));
        row_sentence.push_back(word_sentence[static_cast<size_t>(w)]);
        row_targets.push_back(word_targets[static_cast<size_t>(w)]);
      }
      if (keep.empty()) continue;
      auto x = torch::from_blob(ids.data(), {1, static_cast<int64_t>(ids.size())}, torch::kLong)
                   .clone();  // (1, t)
      model->forward(x);
      seen += static_cast<int64_t>(keep.size());
    }
  }
  model->attention_probe = nullptr;
  const int64_t N = static_cast<int64_t>(row_sentence.size());
  if (N < 10 * Dh)
    throw Error("only " + std::to_string(N) +
                " validation tokens inside words; raise data.val_fraction");
  say("head profiles: " + std::to_string(N) + " validation tokens of " + std::to_string(sentences) +
      " sentences, " + std::to_string(L) + " layers × " + std::to_string(H) + " heads, " +
      opt.features);

  grading::HeadProfiles out;
  out.layers = L;
  out.heads = H;
  out.planes = planes;
  out.features = opt.features;
  out.per_head.resize(static_cast<size_t>(L) * H);
  // Bootstrap weights per sentence, shared by every head so resample b is the same draw everywhere.
  std::vector<Eigen::VectorXd> boot_w(static_cast<size_t>(opt.bootstrap),
                                      Eigen::VectorXd::Zero(sentences));
  for (int b = 0; b < opt.bootstrap; ++b) {
    SplitMix64 rng(opt.seed * 0x9E3779B97F4A7C15ull +
                   static_cast<uint64_t>(b) * 0xBF58476D1CE4E5B9ull + 0x4EAD);
    for (int s = 0; s < sentences; ++s)
      boot_w[static_cast<size_t>(b)]
            [static_cast<int>(rng.below(static_cast<uint64_t>(sentences)))] += 1;
  }
  const Eigen::VectorXd ones = Eigen::VectorXd::Ones(sentences);
  for (int l = 0; l < L; ++l) {
    const float* base = rows[static_cast<size_t>(l)].data();
    for (int h = 0; h < H; ++h) {
      SentenceStats st;
      st.n = Eigen::VectorXd::Zero(sentences);
      st.z = Eigen::MatrixXd::Zero(sentences, Dh);
      st.zz = Eigen::MatrixXd::Zero(sentences, static_cast<int64_t>(Dh) * Dh);
      st.y = Eigen::MatrixXd::Zero(sentences, kTargets);
      st.zy = Eigen::MatrixXd::Zero(sentences, static_cast<int64_t>(Dh) * kTargets);
      Eigen::VectorXd z(Dh), y(kTargets);
      for (int64_t i = 0; i < N; ++i) {
        const int s = row_sentence[static_cast<size_t>(i)];
        const float* r = base + (i * H + h) * Dh;
        for (int j = 0; j < Dh; ++j) z[j] = r[j];
        for (int k = 0; k < kTargets; ++k)
          y[k] = row_targets[static_cast<size_t>(i)][static_cast<size_t>(k)];
        st.n[s] += 1;
        st.z.row(s) += z.transpose();
        Eigen::MatrixXd zzT = z * z.transpose();  // (Dh, Dh), column-major like the Map in fit()
        Eigen::MatrixXd zyT = z * y.transpose();  // (Dh, k)
        st.zz.row(s) += Eigen::Map<Eigen::RowVectorXd>(zzT.data(), zzT.size());
        st.y.row(s) += y.transpose();
        st.zy.row(s) += Eigen::Map<Eigen::RowVectorXd>(zyT.data(), zyT.size());
      }
      grading::ProfilesFile& f = out.per_head[static_cast<size_t>(l) * H + h];
      f.profiles = fit(st, ones, target, opt.ridge, Dh);
      for (int b = 0; b < opt.bootstrap; ++b)
        f.bootstrap.push_back(fit(st, boot_w[static_cast<size_t>(b)], target, opt.ridge, Dh));
    }
    say("layer " + std::to_string(l) + ": " + std::to_string(H) + " heads fitted");
  }
  out.meta = {{"checkpoint", weights},
              {"corpus", corpus.kind},
              {"corpus_hash", corpus.hash()},
              {"target", opt.target},
              {"targets", names},
              {"seed", opt.seed},
              {"ridge", opt.ridge},
              {"bootstrap_resamples", opt.bootstrap},
              {"tokens", N},
              {"sentences", sentences},
              {"estimation",
               "validation tokens inside words; rows are the head's " + opt.features +
                   " after RoPE and QK-norm (before the grades); alpha and tau summed over each "
                   "RoPE plane's two coordinates; bootstrap over validation sentences"}};
  return out;
}

}  // namespace gllm
