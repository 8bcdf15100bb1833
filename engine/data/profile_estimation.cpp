// Seed 000 §7.1–§7.3 on Brown: PPMI/SVD or wte reference, graded basis, τ̂ and α̂ (ridge probes),
// per-level targets with BC, bootstrap over sentences, held-out profiles, part-of-speech grades.
#include "engine/data/profile_estimation.h"

#include <Eigen/QR>
#include <Eigen/SVD>
#include <Eigen/Sparse>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <thread>

#include "engine/data/level_features.h"
#include "engine/data/token_cache.h"
#include "engine/data/tokenizer.h"
#include "engine/grading/bootstrap.h"
#include "engine/grading/ladder.h"
#include "engine/io/error.h"
#include "engine/io/safetensors.h"

namespace gllm {

namespace {

std::string lower(const std::string& s) {
  std::string l = s;
  std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
  return l;
}

// Lower-cased types of `documents` seen at least min_count times, by count (desc) then spelling.
std::vector<std::string> frequent_types(const Corpus& corpus,
                                        const std::vector<uint32_t>& documents, int min_count,
                                        int max_types) {
  std::unordered_map<std::string, int64_t> counts;
  for (uint32_t d : documents)
    for (const auto& s : corpus.documents[d].sentences)
      for (const auto& w : s.words) ++counts[lower(w.word)];
  std::vector<std::pair<int64_t, std::string>> by;
  for (auto& kv : counts)
    if (kv.second >= min_count) by.push_back({kv.second, kv.first});
  std::sort(by.begin(), by.end(), [](auto& a, auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<std::string> out;
  for (size_t i = 0; i < by.size() && static_cast<int>(i) < max_types; ++i)
    out.push_back(by[i].second);
  return out;
}

Eigen::MatrixXd gaussian(int rows, int cols, uint64_t seed) {
  SplitMix64 rng(seed ^ 0x6A09E667F3BCC909ull);
  Eigen::MatrixXd m(rows, cols);
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) {
      double u1 = (static_cast<double>(rng.next() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
      double u2 = static_cast<double>(rng.next() >> 11) * (1.0 / 9007199254740992.0);
      m(i, j) = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    }
  return m;
}

Eigen::MatrixXd thin_q(const Eigen::MatrixXd& y) {
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(y);
  return qr.householderQ() * Eigen::MatrixXd::Identity(y.rows(), y.cols());
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<double> normalize(const Eigen::VectorXd& v) {
  double s = v.sum();
  std::vector<double> out(v.size());
  for (int i = 0; i < v.size(); ++i) out[i] = s > 0 ? v[i] / s : 1.0 / v.size();
  return out;
}

std::vector<double> tau_of(const Eigen::MatrixXd& Z, const Eigen::VectorXd& w) {
  const double W = w.sum();
  Eigen::RowVectorXd zm = (w.transpose() * Z) / W;
  Eigen::VectorXd var =
      ((Z.rowwise() - zm).array().square().colwise() * w.array()).colwise().sum().transpose() / W;
  return normalize(var);
}

}  // namespace

std::vector<std::vector<double>> probe_alphas(const Eigen::MatrixXd& Z, const Eigen::MatrixXd& Y,
                                              const Eigen::VectorXd& w, double ridge_rel) {
  const double W = w.sum();
  if (!(W > 0)) throw Error("ridge probe: no samples with positive weight");
  Eigen::RowVectorXd zm = (w.transpose() * Z) / W;
  Eigen::RowVectorXd ym = (w.transpose() * Y) / W;
  Eigen::VectorXd sw = w.cwiseSqrt();
  Eigen::MatrixXd Zs = (Z.rowwise() - zm).array().colwise() * sw.array();
  Eigen::MatrixXd Ys = (Y.rowwise() - ym).array().colwise() * sw.array();
  const int d = static_cast<int>(Z.cols());
  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(d, d);
  G.selfadjointView<Eigen::Lower>().rankUpdate(Zs.transpose(), 1.0 / W);
  G = G.selfadjointView<Eigen::Lower>();
  double r = ridge_rel * G.trace() / d;
  G.diagonal().array() += r > 0 ? r : 1e-12;
  Eigen::MatrixXd B = (Zs.transpose() * Ys) / W;
  Eigen::MatrixXd Wt = G.llt().solve(B);  // d × targets
  std::vector<std::vector<double>> out;
  for (int k = 0; k < Wt.cols(); ++k) out.push_back(normalize(Wt.col(k).array().square().matrix()));
  return out;
}

std::vector<std::vector<double>> probe_by_type(const Eigen::MatrixXd& Zt,
                                               const std::vector<int>& type,
                                               const Eigen::MatrixXd& Y, const Eigen::VectorXd& w,
                                               double ridge_rel) {
  const int U = static_cast<int>(Zt.rows()), d = static_cast<int>(Zt.cols()),
            k = static_cast<int>(Y.cols());
  Eigen::VectorXd c = Eigen::VectorXd::Zero(U);
  Eigen::MatrixXd cy = Eigen::MatrixXd::Zero(U, k);
  for (size_t i = 0; i < type.size(); ++i) {
    if (w[i] == 0) continue;
    c[type[i]] += w[i];
    cy.row(type[i]) += w[i] * Y.row(i);
  }
  const double W = c.sum();
  if (!(W > 0)) throw Error("ridge probe: no samples with positive weight");
  Eigen::RowVectorXd zm = (c.transpose() * Zt) / W;
  Eigen::RowVectorXd ym = cy.colwise().sum() / W;
  Eigen::MatrixXd Zs = Zt.array().colwise() * c.cwiseSqrt().array();
  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(d, d);
  G.selfadjointView<Eigen::Lower>().rankUpdate(Zs.transpose(), 1.0 / W);
  G = G.selfadjointView<Eigen::Lower>();
  G -= zm.transpose() * zm;                                             // (d, d) covariance
  Eigen::MatrixXd B = (Zt.transpose() * cy) / W - zm.transpose() * ym;  // (d, k)
  std::vector<std::vector<double>> out;
  Eigen::VectorXd var = G.diagonal().cwiseMax(0);
  double r = ridge_rel * var.sum() / d;
  G.diagonal().array() += r > 0 ? r : 1e-12;
  Eigen::MatrixXd Wt = G.llt().solve(B);
  for (int j = 0; j < k; ++j) out.push_back(normalize(Wt.col(j).array().square().matrix()));
  out.push_back(normalize(var));
  return out;
}

std::vector<int> align_tokens_to_words(const Document& doc, const uint16_t* ids, size_t n,
                                       const std::vector<int32_t>& token_bytes) {
  std::vector<std::pair<uint32_t, uint32_t>> spans;  // (begin, end) of each word, in order
  for (const auto& s : doc.sentences)
    for (const auto& w : s.words) spans.push_back({w.begin, w.end});
  std::vector<int> out(n, -1);
  size_t pos = 0, wi = 0;
  for (size_t k = 0; k < n; ++k) {
    const int id = ids[k];
    const size_t b = id >= 0 && static_cast<size_t>(id) < token_bytes.size()
                         ? static_cast<size_t>(token_bytes[id])
                         : 0;
    size_t q = pos;
    while (q < pos + b && q < doc.text.size() && (doc.text[q] == ' ' || doc.text[q] == '\n')) ++q;
    if (q < pos + b) {
      while (wi < spans.size() && spans[wi].second <= q) ++wi;
      if (wi < spans.size() && spans[wi].first <= q) out[k] = static_cast<int>(wi);
    }
    pos += b;
  }
  return out;
}

int TypeEmbeddings::index(const std::string& w) const {
  auto it = rows.find(w);
  return it == rows.end() ? -1 : it->second;
}

std::vector<double> probe_alpha(const Eigen::MatrixXd& Z, const Eigen::VectorXd& y,
                                const Eigen::VectorXd& weights, double ridge_rel) {
  return probe_alphas(Z, y, weights, ridge_rel)[0];
}

std::vector<double> variance_tau(const Eigen::MatrixXd& Z, const Eigen::VectorXd& weights) {
  return tau_of(Z, weights);
}

TypeEmbeddings ppmi_embeddings(const Corpus& corpus, const std::vector<uint32_t>& documents,
                               const ProfileOptions& opt) {
  TypeEmbeddings te;
  te.types = frequent_types(corpus, documents, opt.min_count, opt.max_types);
  const int K = static_cast<int>(te.types.size());
  const int Kc = std::min(K, opt.contexts);
  if (K < opt.d + 1)
    throw Error("only " + std::to_string(K) + " word types occur ≥ " +
                std::to_string(opt.min_count) + " times, too few for a width-" +
                std::to_string(opt.d) + " PPMI embedding; lower --d or --min-count");
  for (int i = 0; i < K; ++i) te.rows[te.types[i]] = i;
  // Co-occurrence pairs within ± window inside a sentence, counted by sorting.
  std::vector<uint64_t> pairs;
  std::vector<int> idx;
  for (uint32_t d : documents)
    for (const auto& s : corpus.documents[d].sentences) {
      idx.resize(s.words.size());
      for (size_t i = 0; i < s.words.size(); ++i) idx[i] = te.index(lower(s.words[i].word));
      for (size_t i = 0; i < idx.size(); ++i) {
        if (idx[i] < 0) continue;
        size_t lo = i >= size_t(opt.window) ? i - opt.window : 0,
               hi = std::min(idx.size(), i + opt.window + 1);
        for (size_t j = lo; j < hi; ++j)
          if (j != i && idx[j] >= 0 && idx[j] < Kc)
            pairs.push_back(uint64_t(idx[i]) * uint64_t(Kc) + uint64_t(idx[j]));
      }
    }
  std::sort(pairs.begin(), pairs.end());
  std::vector<double> row(K, 0), col(Kc, 0);
  std::vector<std::pair<uint64_t, double>> counts;
  for (size_t i = 0; i < pairs.size();) {
    size_t j = i;
    while (j < pairs.size() && pairs[j] == pairs[i]) ++j;
    counts.push_back({pairs[i], double(j - i)});
    row[pairs[i] / Kc] += double(j - i);
    col[pairs[i] % Kc] += double(j - i);
    i = j;
  }
  double total = 0, colpow = 0;
  for (double r : row) total += r;
  for (double c : col) colpow += std::pow(c, 0.75);
  std::vector<Eigen::Triplet<double>> trip;
  for (auto& [key, n] : counts) {
    int a = static_cast<int>(key / Kc), c = static_cast<int>(key % Kc);
    double pmi = std::log((n / total) / ((row[a] / total) * (std::pow(col[c], 0.75) / colpow)));
    if (pmi > 0) trip.emplace_back(a, c, pmi);
  }
  Eigen::SparseMatrix<double> M(K, Kc);
  M.setFromTriplets(trip.begin(), trip.end());
  // Randomized truncated SVD (range finder with power iterations).
  const int k = std::min(Kc, opt.d + 16);
  Eigen::MatrixXd Q = thin_q(M * gaussian(Kc, k, opt.seed + 17));
  for (int it = 0; it < 3; ++it) {
    Eigen::MatrixXd Qt = thin_q(Eigen::MatrixXd(M.transpose() * Q));
    Q = thin_q(M * Qt);
  }
  Eigen::MatrixXd Bt = M.transpose() * Q;  // Kc × k  (= Bᵀ, B = Qᵀ M)
  Eigen::BDCSVD<Eigen::MatrixXd> svd(Bt.transpose(), Eigen::ComputeThinU);
  Eigen::MatrixXd U = Q * svd.matrixU().leftCols(opt.d);
  Eigen::VectorXd sv = svd.singularValues().head(opt.d);
  te.vectors = U * sv.cwiseSqrt().asDiagonal();  // K × d
  return te;
}

TypeEmbeddings wte_embeddings(const Corpus& corpus, const std::vector<uint32_t>& documents,
                              const Tokenizer& tokenizer, const ProfileOptions& opt) {
  auto file = SafetensorsFile::open(opt.checkpoint);
  std::string name = opt.wte_name;
  if (name.empty()) {
    for (const char* c : {"wte", "wte.weight", "transformer.wte.weight"})
      if (file.has(c)) {
        name = c;
        break;
      }
    if (name.empty())
      throw Error("checkpoint " + opt.checkpoint +
                  " has no tensor named wte, wte.weight or transformer.wte.weight; "
                  "name it with --wte-name");
  }
  const auto& info = file.info(name);
  if (info.shape.size() != 2)
    throw Error("tensor " + name + " in " + opt.checkpoint +
                " is not a matrix; pass the token embedding with --wte-name");
  const int64_t V = info.shape[0], D = info.shape[1];
  if (V < tokenizer.vocab_size())
    throw Error("wte has " + std::to_string(V) + " rows but the tokenizer has " +
                std::to_string(tokenizer.vocab_size()) +
                " tokens; use the checkpoint trained with this corpus and vocab_size");
  auto data = file.to_float(name);
  for (size_t i = 0; i < data.size(); ++i)
    if (!std::isfinite(data[i]))
      throw Error("tensor " + name + " in " + opt.checkpoint +
                  " holds NaN or infinite values (row " +
                  std::to_string(i / std::max<int64_t>(1, D)) +
                  "); the checkpoint is damaged or diverged — use an earlier one");
  TypeEmbeddings te;
  te.types = frequent_types(corpus, documents, opt.min_count, opt.max_types);
  te.vectors.resize(te.types.size(), D);
  for (size_t i = 0; i < te.types.size(); ++i) {
    te.rows[te.types[i]] = static_cast<int>(i);
    auto ids = tokenizer.encode(" " + te.types[i]);
    Eigen::VectorXd v = Eigen::VectorXd::Zero(D);
    for (int32_t id : ids)
      for (int64_t c = 0; c < D; ++c) v[c] += data[size_t(id) * D + c];
    te.vectors.row(i) = (v / std::max<size_t>(1, ids.size())).transpose();
  }
  return te;
}

Eigen::MatrixXd graded_basis(const std::vector<Eigen::MatrixXd>& C, const std::vector<int>& dims) {
  const int d = static_cast<int>(C.at(0).rows());
  Eigen::MatrixXd P(d, 0);
  for (size_t l = 0; l < C.size(); ++l) {
    Eigen::MatrixXd proj = Eigen::MatrixXd::Identity(d, d) - P * P.transpose();
    double scale = std::max(C[l].trace() / d, 1e-300);
    // ε·proj keeps the chosen directions at eigenvalue 0 even where C_l is rank deficient.
    Eigen::MatrixXd A = proj * (C[l] + 1e-9 * scale * Eigen::MatrixXd::Identity(d, d)) * proj;
    A = 0.5 * (A + A.transpose());
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(A);
    Eigen::MatrixXd top =
        es.eigenvectors().rightCols(dims[l]).rowwise().reverse();  // leading first
    // Gram–Schmidt against everything chosen so far (twice, for numerical safety).
    for (int c = 0; c < top.cols(); ++c) {
      Eigen::VectorXd v = top.col(c);
      for (int pass = 0; pass < 2; ++pass) {
        v -= P * (P.transpose() * v);
        v.normalize();
      }
      P.conservativeResize(d, P.cols() + 1);
      P.col(P.cols() - 1) = v;
    }
  }
  return P;
}

namespace {

// Per-token rows of one split: coordinates z = Pᵀ r (tokens × d), targets, sentence ids.
struct SplitRows {
  Eigen::MatrixXd Zt;     // distinct types of the split × d
  std::vector<int> type;  // row → row of Zt
  Eigen::MatrixXd Z;
  Eigen::MatrixXd Y;          // tokens × kBrownLevels
  std::vector<int> sentence;  // row → sentence (0 … sentences−1)
  int sentences = 0;
  size_t skipped = 0;  // tokens whose type has no representation
};

SplitRows split_rows(const Corpus& corpus, const std::vector<uint32_t>& docs,
                     const LevelFeaturizer& fz, const TypeEmbeddings& te,
                     const Eigen::MatrixXd& Pz /* types × d */) {
  SplitRows r;
  std::vector<int> types;
  std::vector<float> tg;
  std::vector<float> feats[kBrownLevels];
  std::vector<std::array<float, kBrownLevels>> ys;
  for (uint32_t d : docs) {
    const auto& doc = corpus.documents[d];
    for (size_t si = 0; si < doc.sentences.size(); ++si) {
      fz.sentence_features(doc, si, feats, tg);
      bool any = false;
      for (size_t i = 0; i < doc.sentences[si].words.size(); ++i) {
        int t = te.index(lower(doc.sentences[si].words[i].word));
        if (t < 0) {
          ++r.skipped;
          continue;
        }
        types.push_back(t);
        ys.push_back({tg[i * 4], tg[i * 4 + 1], tg[i * 4 + 2], tg[i * 4 + 3]});
        r.sentence.push_back(r.sentences);
        any = true;
      }
      if (any) ++r.sentences;
    }
  }
  r.Z.resize(types.size(), Pz.cols());
  r.Y.resize(types.size(), kBrownLevels);
  std::unordered_map<int, int> local;
  std::vector<int> global;
  for (size_t i = 0; i < types.size(); ++i) {
    r.Z.row(i) = Pz.row(types[i]);
    for (int k = 0; k < kBrownLevels; ++k) r.Y(i, k) = ys[i][k];
    auto it = local.find(types[i]);
    if (it == local.end()) {
      it = local.emplace(types[i], static_cast<int>(global.size())).first;
      global.push_back(types[i]);
    }
    r.type.push_back(it->second);
  }
  r.Zt.resize(global.size(), Pz.cols());
  for (size_t u = 0; u < global.size(); ++u) r.Zt.row(u) = Pz.row(global[u]);
  return r;
}

}  // namespace

ProfileResult estimate_profiles(const Corpus& corpus, const Splits& splits,
                                const ProfileOptions& opt, const Tokenizer* tokenizer,
                                const TokenShard* shard,
                                const std::function<void(const std::string&)>& log) {
  auto say = [&](const std::string& s) {
    if (log) log(s);
  };
  auto t_all = std::chrono::steady_clock::now();
  if (corpus.sentences() == 0)
    throw Error("profiles need a tagged corpus (Brown): the " + corpus.kind +
                " corpus has no annotations; use --corpus brown");
  if (opt.levels < 1 || opt.levels > kBrownLevels)
    throw Error("--levels must be 1 … 4 (Brown has feature maps for levels 0–3), got " +
                std::to_string(opt.levels));
  const auto& targets = LevelFeaturizer::target_names();
  int main_target = -1;
  if (opt.target != "mixture") {
    auto it = std::find(targets.begin(), targets.end(), opt.target);
    if (it == targets.end())
      throw Error("unknown probe target '" + opt.target +
                  "'; use noun, verb_distance, negation, document_position or mixture");
    main_target = static_cast<int>(it - targets.begin());
  }
  nlohmann::json report;
  // 1. Reference representation, fitted on the training documents only.
  auto t0 = std::chrono::steady_clock::now();
  TypeEmbeddings te;
  if (opt.reference == "ppmi") {
    te = ppmi_embeddings(corpus, splits.train, opt);
  } else if (opt.reference == "wte") {
    if (!tokenizer) throw Error("--reference wte needs the tokenizer of the checkpoint's corpus");
    if (opt.checkpoint.empty()) throw Error("--reference wte needs --checkpoint FILE.safetensors");
    te = wte_embeddings(corpus, splits.train, *tokenizer, opt);
  } else {
    throw Error("unknown reference '" + opt.reference + "'; use ppmi or wte");
  }
  const int d = static_cast<int>(te.vectors.cols());
  if (d < opt.levels)
    throw Error("d = " + std::to_string(d) + " is smaller than the number of levels");
  report["reference_seconds"] = seconds_since(t0);
  report["types"] = te.types.size();
  say("reference " + opt.reference + ": " + std::to_string(te.types.size()) + " types × " +
      std::to_string(d));

  std::vector<int> dims(opt.levels, d / opt.levels);
  for (int l = 0; l < d % opt.levels; ++l) ++dims[l];

  // 2. Graded basis from per-type aggregates of the features on the training documents.
  t0 = std::chrono::steady_clock::now();
  LevelFeaturizer fz(corpus);
  const int K = static_cast<int>(te.types.size());
  std::vector<double> count(K, 0), open(K, 0);
  std::vector<Eigen::MatrixXd> fsum(opt.levels);
  std::vector<Eigen::VectorXd> f1(opt.levels), f2(opt.levels);
  for (int l = 0; l < opt.levels; ++l) {
    fsum[l] = Eigen::MatrixXd::Zero(K, fz.dims(l));
    f1[l] = Eigen::VectorXd::Zero(fz.dims(l));
    f2[l] = Eigen::VectorXd::Zero(fz.dims(l));
  }
  std::vector<float> feats[kBrownLevels], tg;
  double N = 0;
  for (uint32_t di : splits.train) {
    const auto& doc = corpus.documents[di];
    for (size_t si = 0; si < doc.sentences.size(); ++si) {
      fz.sentence_features(doc, si, feats, tg);
      const auto& words = doc.sentences[si].words;
      for (size_t i = 0; i < words.size(); ++i) {
        int t = te.index(lower(words[i].word));
        if (t < 0) continue;
        count[t] += 1;
        open[t] += brown_open_class(brown_base_tag(words[i].tag)) ? 1 : 0;
        N += 1;
        for (int l = 0; l < opt.levels; ++l) {
          const float* f = feats[l].data() + i * fz.dims(l);
          for (int k = 0; k < fz.dims(l); ++k) {
            if (f[k] == 0) continue;
            fsum[l](t, k) += f[k];
            f1[l][k] += f[k];
            f2[l][k] += double(f[k]) * f[k];
          }
        }
      }
    }
  }
  Eigen::Map<Eigen::VectorXd> cnt(count.data(), K);
  Eigen::RowVectorXd xbar = (cnt.transpose() * te.vectors) / N;
  Eigen::MatrixXd Xc = te.vectors.rowwise() - xbar;  // K × d
  std::vector<Eigen::MatrixXd> C(opt.levels);
  for (int l = 0; l < opt.levels; ++l) {
    Eigen::VectorXd mean = f1[l] / N;
    Eigen::VectorXd sd = (f2[l] / N - mean.cwiseProduct(mean)).cwiseMax(0).cwiseSqrt();
    Eigen::VectorXd inv = sd.unaryExpr([](double s) { return s > 1e-12 ? 1.0 / s : 0.0; });
    // Σ_t (x_t − x̄)(φ_t − φ̄)ᵀ = Σ_types (r − x̄)(Σφ)ᵀ since Σ_t (x_t − x̄) = 0.
    Eigen::MatrixXd S = (Xc.transpose() * fsum[l]) / N;  // d × f
    S = S * inv.asDiagonal();
    C[l] = S * S.transpose();
  }
  Eigen::MatrixXd P = graded_basis(C, dims);  // d × d
  Eigen::MatrixXd Pz = te.vectors * P;        // types × d: coordinates of each type
  report["basis_seconds"] = seconds_since(t0);
  report["basis_orthonormality_error"] =
      (P.transpose() * P - Eigen::MatrixXd::Identity(d, d)).cwiseAbs().maxCoeff();

  // 3. Part-of-speech grades per coordinate: the share of coordinate j's energy carried by
  // open-class tokens (training documents).
  Eigen::RowVectorXd zbar = (cnt.transpose() * Pz) / N;
  Eigen::MatrixXd E = (Pz.rowwise() - zbar).array().square();  // types × d
  Eigen::Map<Eigen::VectorXd> opn(open.data(), K);
  Eigen::VectorXd pos_num = E.transpose() * opn, pos_den = E.transpose() * cnt;
  std::vector<double> pos_grades(d);
  for (int j = 0; j < d; ++j) pos_grades[j] = pos_den[j] > 0 ? pos_num[j] / pos_den[j] : 0.0;

  // 4. Profiles on the validation documents (τ̂, α̂ per target), held-out profiles, bootstrap.
  t0 = std::chrono::steady_clock::now();
  SplitRows val = split_rows(corpus, splits.val, fz, te, Pz);
  SplitRows held = split_rows(corpus, splits.heldout, fz, te, Pz);
  if (val.Z.rows() < d || held.Z.rows() < 2)
    throw Error("the validation / held-out documents have too few tokens for profiles at d = " +
                std::to_string(d) + "; raise data.val_fraction / data.heldout_fraction");
  auto fit = [&](const SplitRows& r, const Eigen::VectorXd& w,
                 std::vector<std::vector<double>>* per_target) {
    auto alphas = probe_by_type(r.Zt, r.type, r.Y, w, opt.ridge);
    std::vector<double> tau = alphas.back();
    alphas.pop_back();
    std::vector<double> a;
    if (main_target >= 0) {
      a = alphas[main_target];
    } else {  // mixture: the mean of the per-level targets' α̂ (the first L levels)
      a.assign(d, 0.0);
      for (int l = 0; l < opt.levels; ++l)
        for (int j = 0; j < d; ++j) a[j] += alphas[l][j] / opt.levels;
    }
    if (per_target) *per_target = alphas;
    grading::Profiles p;
    p.alpha = a;
    p.tau = tau;
    p.level_dims = dims;
    return p;
  };
  std::vector<std::vector<double>> val_targets, held_targets;
  grading::Profiles main = fit(val, Eigen::VectorXd::Ones(val.Z.rows()), &val_targets);
  grading::Profiles heldp = fit(held, Eigen::VectorXd::Ones(held.Z.rows()), &held_targets);
  report["profile_seconds"] = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  std::vector<grading::Profiles> boots(std::max(0, opt.bootstrap));
  std::vector<std::vector<std::vector<double>>> boot_targets(boots.size());
  int threads = opt.threads > 0
                    ? opt.threads
                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::string> errs(threads);
  auto work = [&](int w) {
    try {
      for (size_t b = w; b < boots.size(); b += threads) {
        SplitMix64 rng(opt.seed * 0x9E3779B97F4A7C15ull + b * 0xBF58476D1CE4E5B9ull + 0xB007);
        std::vector<double> times(val.sentences, 0);
        for (int s = 0; s < val.sentences; ++s) times[rng.below(val.sentences)] += 1;
        Eigen::VectorXd wt(val.Z.rows());
        for (int i = 0; i < wt.size(); ++i) wt[i] = times[val.sentence[i]];
        boots[b] = fit(val, wt, &boot_targets[b]);
      }
    } catch (const std::exception& e) {
      errs[w] = e.what();
    }
  };
  std::vector<std::thread> pool;
  for (int w = 1; w < threads; ++w) pool.emplace_back(work, w);
  work(0);
  for (auto& t : pool) t.join();
  for (auto& e : errs)
    if (!e.empty()) throw Error("bootstrap failed: " + e);
  report["bootstrap_seconds"] = seconds_since(t0);

  // 5. Assemble the profiles file.
  ProfileResult out;
  auto& f = out.file;
  f.profiles = main;
  for (int l = 0; l < opt.levels; ++l) {
    grading::ProfilesFile::Target t;
    t.alpha = val_targets[l];
    t.bc = grading::bhattacharyya(t.alpha, main.tau);
    f.targets[targets[l]] = t;
  }
  f.heldout = heldp;
  f.pos_grades = pos_grades;
  f.bootstrap = boots;
  f.basis.resize(size_t(d) * d);
  for (int j = 0; j < d; ++j)
    for (int i = 0; i < d; ++i) f.basis[size_t(j) * d + i] = P(i, j);

  // Per-level BC with bootstrap intervals; sign stability of the taxonomic and POS arms.
  nlohmann::json bc = nlohmann::json::object();
  for (int l = 0; l < opt.levels; ++l) {
    std::vector<double> samples;
    for (size_t b = 0; b < boots.size(); ++b)
      samples.push_back(grading::bhattacharyya(boot_targets[b][l], boots[b].tau));
    nlohmann::json e = {{"level", l},
                        {"bc", f.targets[targets[l]].bc},
                        {"bc_heldout", grading::bhattacharyya(held_targets[l], heldp.tau)}};
    if (!samples.empty()) {
      e["bc_low"] = grading::percentile(samples, 0.025);
      e["bc_high"] = grading::percentile(samples, 0.975);
    }
    bc[targets[l]] = e;
  }
  report["bc_per_target"] = bc;
  double main_bc = grading::bhattacharyya(main.alpha, main.tau);
  report["bc"] = main_bc;
  if (!boots.empty()) {
    auto tax = grading::taxonomic_grades(main, 1.0);
    auto rt = grading::bootstrap_from_resamples(main, boots, tax);
    auto rp = grading::bootstrap_from_resamples(main, boots, pos_grades);
    report["taxonomic"] = {{"certificate", rt.certificate},
                           {"sign", rt.sign},
                           {"sign_fraction", rt.sign_fraction},
                           {"certificate_low", rt.certificate_low},
                           {"certificate_high", rt.certificate_high}};
    report["pos"] = {{"certificate", rp.certificate},
                     {"sign", rp.sign},
                     {"sign_fraction", rp.sign_fraction},
                     {"certificate_low", rp.certificate_low},
                     {"certificate_high", rp.certificate_high}};
    report["bc_low"] = rt.bc_low;
    report["bc_high"] = rt.bc_high;
  }
  report["level_alpha"] = main.level_alpha();
  report["level_tau"] = main.level_tau();
  report["tokens"] = {{"train", N},
                      {"val", val.Z.rows()},
                      {"heldout", held.Z.rows()},
                      {"val_skipped_no_representation", val.skipped},
                      {"heldout_skipped_no_representation", held.skipped}};
  report["sentences"] = {{"val", val.sentences}, {"heldout", held.sentences}};

  nlohmann::json meta = {
      {"corpus", corpus.kind},
      {"corpus_source", corpus.source},
      {"corpus_hash", corpus.hash()},
      {"reference", opt.reference},
      {"target", opt.target},
      {"targets", targets},
      {"seed", opt.seed},
      {"d", d},
      {"levels", opt.levels},
      {"ridge", opt.ridge},
      {"bootstrap_resamples", opt.bootstrap},
      {"estimation",
       "basis and POS statistics on the train split; alpha/tau on the validation split; "
       "heldout on the held-out split; bootstrap over validation sentences"},
      {"feature_names",
       {fz.feature_names(0), fz.feature_names(1), fz.feature_names(2), fz.feature_names(3)}}};
  if (opt.reference == "ppmi")
    meta["ppmi"] = {{"types", K},
                    {"contexts", std::min(K, opt.contexts)},
                    {"window", opt.window},
                    {"min_count", opt.min_count}};
  else
    meta["checkpoint"] = opt.checkpoint;

  // 6. Per-token output grades (BPE vocabulary) from POS statistics on the training documents.
  if (tokenizer && shard) {
    t0 = std::chrono::steady_clock::now();
    std::vector<double> o(tokenizer->vocab_size(), 0), tot(tokenizer->vocab_size(), 0);
    for (uint32_t di : splits.train) {
      const auto& doc = corpus.documents[di];
      std::vector<const TaggedWord*> words;
      for (const auto& s : doc.sentences)
        for (const auto& w : s.words) words.push_back(&w);
      auto v = shard->document(di);
      const auto at = align_tokens_to_words(doc, v.data, v.size, tokenizer->token_bytes());
      for (size_t k = 0; k < v.size; ++k) {
        if (at[k] < 0) continue;
        tot[v.data[k]] += 1;
        o[v.data[k]] +=
            brown_open_class(brown_base_tag(words[static_cast<size_t>(at[k])]->tag)) ? 1 : 0;
      }
    }
    std::vector<double> share(tokenizer->vocab_size(), 0.0);
    for (int id = 0; id < tokenizer->vocab_size(); ++id)
      share[id] = tokenizer->is_special(id) ? 0.0 : (o[id] + 1.0) / (tot[id] + 2.0);
    meta["output_grades"] = {
        {"rule",
         "open_share = (open-class occurrences + 1) / (occurrences + 2) per BPE token on "
         "the train split, specials 0; output_grades \"pos\" uses q_out = q_max_out · open_share"},
        {"tokenizer_hash", tokenizer->hash()},
        {"vocab_size", tokenizer->vocab_size()},
        {"open_share", share}};
    report["output_grades_seconds"] = seconds_since(t0);
  }
  f.meta = meta;
  report["seconds"] = seconds_since(t_all);
  out.report = report;
  return out;
}

}  // namespace gllm
