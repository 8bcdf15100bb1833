// Token-level reference representations (token_reference.h): PPMI/SVD over the training split's
// BPE tokens, the shared PPMI + randomized SVD, and the reference file with its digest.
#include "engine/data/token_reference.h"

#include <Eigen/QR>
#include <Eigen/SVD>
#include <Eigen/Sparse>
#include <algorithm>
#include <cmath>

#include "engine/data/token_cache.h"
#include "engine/data/tokenizer.h"
#include "engine/io/error.h"

namespace gllm {

namespace {

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

}  // namespace

Eigen::MatrixXd ppmi_svd(const std::vector<std::vector<int>>& sequences, int rows, int contexts,
                         int window, int d, uint64_t seed) {
  const int K = rows, Kc = std::min(rows, contexts);
  if (K < d + 1 || Kc < 1)
    throw Error("only " + std::to_string(K) + " units have a row, too few for a width-" +
                std::to_string(d) + " PPMI reference; lower --d or --min-count");
  std::vector<uint64_t> pairs;  // co-occurrences, counted by sorting
  for (const auto& idx : sequences)
    for (size_t i = 0; i < idx.size(); ++i) {
      if (idx[i] < 0) continue;
      size_t lo = i >= size_t(window) ? i - window : 0, hi = std::min(idx.size(), i + window + 1);
      for (size_t j = lo; j < hi; ++j)
        if (j != i && idx[j] >= 0 && idx[j] < Kc)
          pairs.push_back(uint64_t(idx[i]) * uint64_t(Kc) + uint64_t(idx[j]));
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
  if (!(total > 0)) throw Error("no co-occurrences to build a PPMI reference from; use more text");
  std::vector<Eigen::Triplet<double>> trip;
  for (auto& [key, n] : counts) {
    int a = static_cast<int>(key / Kc), c = static_cast<int>(key % Kc);
    double pmi = std::log((n / total) / ((row[a] / total) * (std::pow(col[c], 0.75) / colpow)));
    if (pmi > 0) trip.emplace_back(a, c, pmi);
  }
  Eigen::SparseMatrix<double> M(K, Kc);
  M.setFromTriplets(trip.begin(), trip.end());
  const int k = std::min(Kc, d + 16);
  if (k < d)
    throw Error("the PPMI context vocabulary (" + std::to_string(Kc) +
                ") is smaller than the width " + std::to_string(d) + "; raise --contexts");
  Eigen::MatrixXd Q = thin_q(M * gaussian(Kc, k, seed + 17));
  for (int it = 0; it < 3; ++it) {
    Eigen::MatrixXd Qt = thin_q(Eigen::MatrixXd(M.transpose() * Q));
    Q = thin_q(M * Qt);
  }
  Eigen::MatrixXd Bt = M.transpose() * Q;  // (Kc, k) = Bᵀ, B = Qᵀ M
  Eigen::BDCSVD<Eigen::MatrixXd> svd(Bt.transpose(), Eigen::ComputeThinU);
  Eigen::MatrixXd U = Q * svd.matrixU().leftCols(d);
  Eigen::VectorXd sv = svd.singularValues().head(d);
  return U * sv.cwiseSqrt().asDiagonal();  // (K, d)
}

TokenReference token_ppmi_reference(const std::vector<uint32_t>& train_documents,
                                    const TokenShard& shard, const Tokenizer& tokenizer,
                                    const TokenPpmiOptions& opt) {
  const int V = tokenizer.vocab_size();
  std::vector<int64_t> count(V, 0);
  for (uint32_t d : train_documents) {
    auto v = shard.document(d);
    for (size_t k = 0; k < v.size; ++k)
      if (v.data[k] < V) ++count[v.data[k]];
  }
  // Rows: tokens seen min_count times (specials excluded), by count (desc) then id; the first
  // `contexts` of them are the context vocabulary.
  std::vector<int> order;
  for (int id = 0; id < V; ++id)
    if (!tokenizer.is_special(id) && count[id] >= opt.min_count) order.push_back(id);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return count[a] > count[b]; });
  std::vector<int> row_of(V, -1);
  for (size_t r = 0; r < order.size(); ++r) row_of[order[r]] = static_cast<int>(r);
  std::vector<std::vector<int>> sequences;
  sequences.reserve(train_documents.size());
  for (uint32_t d : train_documents) {
    auto v = shard.document(d);
    std::vector<int> s(v.size);
    for (size_t k = 0; k < v.size; ++k) s[k] = v.data[k] < V ? row_of[v.data[k]] : -1;
    sequences.push_back(std::move(s));
  }
  const Eigen::MatrixXd rows = ppmi_svd(sequences, static_cast<int>(order.size()), opt.contexts,
                                        opt.window, opt.d, opt.seed);  // (K, d)
  TokenReference r;
  r.kind = "token_ppmi";
  r.vectors = Eigen::MatrixXd::Zero(V, opt.d);  // (V, d)
  for (size_t k = 0; k < order.size(); ++k) r.vectors.row(order[k]) = rows.row(k);
  const double ms = r.vectors.squaredNorm() / static_cast<double>(r.vectors.size());
  r.scale = ms > 0 ? 1.0 / std::sqrt(ms) : 1.0;
  r.vectors *= r.scale;
  r.vectors = r.vectors.cast<float>().cast<double>();  // exactly what a float32 W_e holds
  r.kept_tokens = static_cast<int64_t>(order.size());
  r.tokenizer_hash = tokenizer.hash();
  r.meta = {{"window", opt.window},
            {"contexts", std::min<int>(opt.contexts, static_cast<int>(order.size()))},
            {"min_count", opt.min_count},
            {"seed", opt.seed},
            {"rule",
             "PPMI of BPE-token co-occurrence within ± window tokens of each training document, "
             "randomized SVD rows U·S^½, one scalar to RMS 1, float32"}};
  return r;
}

}  // namespace gllm
