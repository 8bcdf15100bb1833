// Audit quantities against closed forms: stable rank and mean-row energy on constructed matrices,
// σ₁ against Eigen's Jacobi SVD, the band/layer profile on a known array, Table 5a's excess ratios.
#include <Eigen/Dense>
#include <QtTest>
#include <cmath>
#include <fstream>
#include <random>

#include "engine/audit/checkpoint_audit.h"
#include "engine/io/error.h"
#include "engine/io/safetensors.h"

using gllm::audit::matrix_stats;

class TestAuditMatrices : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void diagonal() {
    std::vector<float> w = {3, 0, 0, 0, 2, 0, 0, 0, 1};
    auto s = matrix_stats("d", w.data(), 3, 3);
    QVERIFY(std::fabs(s.frobenius_sq - 14) < 1e-9);
    QVERIFY(std::fabs(s.spectral_sq - 9) < 1e-9);
    QVERIFY(std::fabs(s.stable_rank - 14.0 / 9.0) < 1e-9);
    // mean row (1, 2/3, 1/3): M‖w̄‖² = 3·14/9, share = 1/3.
    QVERIFY(std::fabs(s.mean_row_share - 1.0 / 3.0) < 1e-9);
  }

  void rank_one_and_orthogonal() {
    // u vᵀ: stable rank 1; share = M·mean(u)²/‖u‖² (‖v‖ cancels).
    std::vector<double> u = {1, 2, -0.5, 4}, v = {0.3, -1, 2};
    std::vector<float> w;
    for (double a : u)
      for (double b : v) w.push_back(static_cast<float>(a * b));
    auto s = matrix_stats("uv", w.data(), 4, 3);
    QVERIFY(std::fabs(s.stable_rank - 1.0) < 1e-6);
    double mu = (1 + 2 - 0.5 + 4) / 4.0, uu = 1 + 4 + 0.25 + 16;
    QVERIFY(std::fabs(s.mean_row_share - 4 * mu * mu / uu) < 1e-6);
    // A rotation of R^n has n equal singular values: stable rank n.
    const int n = 6;
    Eigen::MatrixXd g = Eigen::MatrixXd::Random(n, n);
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(g);
    Eigen::MatrixXd q = qr.householderQ();
    std::vector<float> qf;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) qf.push_back(static_cast<float>(q(i, j)));
    QVERIFY(std::fabs(matrix_stats("q", qf.data(), n, n).stable_rank - n) < 1e-4);
  }

  void common_mode_plus_zero_mean() {
    // W = 1cᵀ + E with E's columns summing to zero: share = M‖c‖² / (M‖c‖² + ‖E‖_F²).
    std::vector<double> c = {1.5, -0.5, 2.0}, a = {0.2, 0.7, -0.1}, b = {-1.0, 0.4, 0.3};
    std::vector<std::vector<double>> e = {a, {-a[0], -a[1], -a[2]}, b, {-b[0], -b[1], -b[2]}};
    std::vector<float> w;
    double cc = 0, ee = 0;
    for (double x : c) cc += x * x;
    for (const auto& row : e)
      for (int j = 0; j < 3; ++j) {
        w.push_back(static_cast<float>(c[j] + row[j]));
        ee += row[j] * row[j];
      }
    auto s = matrix_stats("cm", w.data(), 4, 3);
    QVERIFY(std::fabs(s.mean_row_share - 4 * cc / (4 * cc + ee)) < 1e-6);
    // Rows that cancel exactly: no common mode.
    std::vector<float> z = {1, 2, -1, -2};
    QVERIFY(std::fabs(matrix_stats("z", z.data(), 2, 2).mean_row_share) < 1e-12);
    // A zero matrix reports zeros rather than NaN.
    std::vector<float> zero(6, 0.0f);
    auto s0 = matrix_stats("0", zero.data(), 2, 3);
    QCOMPARE(s0.stable_rank, 0.0);
    QCOMPARE(s0.mean_row_share, 0.0);
  }

  void random_against_jacobi_svd() {
    std::mt19937 rng(7);
    std::normal_distribution<float> nd;
    for (auto [r, cdim] : {std::pair<int, int>{40, 12}, {9, 30}}) {
      std::vector<float> w(r * cdim);
      for (auto& x : w) x = nd(rng);
      auto s = matrix_stats("g", w.data(), r, cdim);
      Eigen::MatrixXd m(r, cdim);
      for (int i = 0; i < r; ++i)
        for (int j = 0; j < cdim; ++j) m(i, j) = w[i * cdim + j];
      Eigen::JacobiSVD<Eigen::MatrixXd> svd(m);
      auto sv = svd.singularValues();
      double sum = sv.squaredNorm(), top = sv(0) * sv(0);
      QVERIFY(std::fabs(s.stable_rank - sum / top) < 1e-8 * (sum / top));
      // Transposing does not change the stable rank.
      std::vector<float> wt(w.size());
      for (int i = 0; i < r; ++i)
        for (int j = 0; j < cdim; ++j) wt[j * r + i] = w[i * cdim + j];
      QVERIFY(std::fabs(matrix_stats("gt", wt.data(), cdim, r).stable_rank - s.stable_rank) <
              1e-8 * s.stable_rank);
    }
  }

  void band_profile_closed_form() {
    // value(l, h, c) = 1 + 0.1·l + 0.01·c: band means are 1 + 0.1·mean(l) + 0.01·mean(c over band).
    const int L = 6, H = 3, P = 64;
    std::vector<float> v;
    for (int l = 0; l < L; ++l)
      for (int h = 0; h < H; ++h)
        for (int c = 0; c < P; ++c) v.push_back(1.0f + 0.1f * l + 0.01f * c);
    auto p = gllm::audit::band_profile(v, L, H, P);
    QCOMPARE(p.band_edges[1], 16);
    QCOMPARE(p.band_edges[2], 48);
    QVERIFY(std::fabs(p.band_mean[0] - (1 + 0.25 + 0.01 * 7.5)) < 1e-5);
    QVERIFY(std::fabs(p.band_mean[1] - (1 + 0.25 + 0.01 * 31.5)) < 1e-5);
    QVERIFY(std::fabs(p.band_mean[2] - (1 + 0.25 + 0.01 * 55.5)) < 1e-5);
    QVERIFY(std::fabs(p.layer0_mean - (1 + 0.315)) < 1e-5);
    QVERIFY(std::fabs(p.final_mean - (1 + 0.5 + 0.315)) < 1e-5);
    // Middle layers L2–L4 at L = 6, as in Table 5a.
    QCOMPARE(p.middle_layers.size(), size_t(3));
    QVERIFY(std::fabs(p.middle_mean - (1 + 0.3 + 0.315)) < 1e-5);
    QVERIFY(std::fabs(p.mean - (1 + 0.25 + 0.315)) < 1e-5);
    // Proportional bands for 16 planes (Dh = 32): 0–3 / 4–11 / 12–15.
    auto q = gllm::audit::band_profile(std::vector<float>(2 * 16, 1.0f), 1, 2, 16);
    QCOMPARE(q.band_edges[1], 4);
    QCOMPARE(q.band_edges[2], 12);
    QVERIFY(q.middle_layers.empty());
    QVERIFY_THROWS_EXCEPTION(gllm::Error,
                             gllm::audit::band_profile(std::vector<float>(5, 1.0f), 1, 2, 3));
  }

  void table5a_excess() {
    // Seed 001 Table 5a: 12_oe_joint against 02_dense_joint.
    QVERIFY(std::fabs(gllm::audit::excess_change(1.1084, 1.2920) + 0.629) < 0.0006);
    QVERIFY(std::fabs(gllm::audit::excess_change(1.1135, 1.4721) + 0.760) < 0.0006);
    QVERIFY(std::fabs(gllm::audit::excess_change(1.0199, 1.3057) + 0.935) < 0.0006);
    QVERIFY(std::fabs(gllm::audit::excess_change(1.2174, 1.4601) + 0.527) < 0.0006);
  }

  void checkpoint_file_groups() {
    // A small fake checkpoint with known matrices: groups follow Table 4, q_tau gives the bands.
    QTemporaryDir tmp;
    const int d = 8, V = 16, L = 3, H = 2, P = 4;
    std::vector<float> wte(V * d, 0.0f), lm(V * d), cq(d * d, 0.0f), fc(4 * d * d, 0.0f),
        qtau(L * H * P);
    for (int i = 0; i < V; ++i) wte[i * d + (i % d)] = 1.0f;  // two copies of I: srank d, share 1/d
    for (int i = 0; i < V * d; ++i) lm[i] = 0.5f;             // constant: srank 1, share 1
    for (int i = 0; i < d; ++i) cq[i * d + i] = i < 2 ? 2.0f : 0.0f;  // rank 2 equal: srank 2
    for (int i = 0; i < d; ++i) fc[i * d + i] = 1.0f;  // (4d, d) with I on top: srank d
    for (int l = 0; l < L; ++l)
      for (int h = 0; h < H; ++h)
        for (int c = 0; c < P; ++c)
          qtau[(l * H + h) * P + c] = std::log(1.0f + 0.1f * l + 0.01f * c);
    std::vector<gllm::StTensorIn> ts = {
        {"transformer.wte.weight", gllm::StDtype::F32, {V, d}, wte.data(), wte.size() * 4},
        {"lm_head.weight", gllm::StDtype::F32, {V, d}, lm.data(), lm.size() * 4},
        {"transformer.h.0.attn.c_q.weight", gllm::StDtype::F32, {d, d}, cq.data(), cq.size() * 4},
        {"transformer.h.0.mlp.c_fc.weight",
         gllm::StDtype::F32,
         {4 * d, d},
         fc.data(),
         fc.size() * 4},
        {"q_tau", gllm::StDtype::F32, {L, H, P}, qtau.data(), qtau.size() * 4}};
    std::string path = tmp.path().toStdString() + "/ck.safetensors";
    gllm::write_safetensors(path, ts, {{"format", "gllm-model-1"}});
    auto a = gllm::audit::audit_checkpoint(path);
    QCOMPARE(a.width, d);
    QVERIFY(std::fabs(a.groups.wte["mean_stable_rank"].get<double>() - d) < 1e-6);
    QVERIFY(std::fabs(a.groups.wte["mean_row_energy_share"].get<double>() - 1.0 / d) < 1e-6);
    QVERIFY(std::fabs(a.groups.wte["stable_rank_fraction"].get<double>() - 1.0) < 1e-6);
    QVERIFY(std::fabs(a.groups.lm_head["mean_stable_rank"].get<double>() - 1.0) < 1e-6);
    QVERIFY(std::fabs(a.groups.lm_head["mean_row_energy_share"].get<double>() - 1.0) < 1e-6);
    QVERIFY(std::fabs(a.groups.attention["mean_stable_rank"].get<double>() - 2.0) < 1e-6);
    QVERIFY(std::fabs(a.groups.mlp["mean_stable_rank"].get<double>() - d) < 1e-6);
    QVERIFY(a.groups.oe_tables.is_null());
    QVERIFY(a.has_query_scale);
    // exp(q_tau) = 1 + 0.1 l + 0.01 c: bands of P = 4 are planes {0}, {1, 2}, {3}.
    QVERIFY(std::fabs(a.query_scale.band_mean[0] - (1 + 0.1 + 0.0)) < 1e-5);
    QVERIFY(std::fabs(a.query_scale.band_mean[1] - (1 + 0.1 + 0.015)) < 1e-5);
    QVERIFY(std::fabs(a.query_scale.band_mean[2] - (1 + 0.1 + 0.03)) < 1e-5);
    QVERIFY(std::fabs(a.query_scale.final_mean - (1 + 0.2 + 0.015)) < 1e-5);
    auto j = gllm::audit::to_json(a);
    QCOMPARE(j["matrices"].size(), size_t(4));
    // A damaged file gives an error naming it.
    std::string bad = tmp.path().toStdString() + "/bad.safetensors";
    {
      std::ofstream f(bad, std::ios::binary);
      f << "not a safetensors file";
    }
    try {
      gllm::audit::audit_checkpoint(bad);
      QFAIL("a damaged file was accepted");
    } catch (const gllm::Error& e) {
      QVERIFY2(std::string(e.what()).find("bad.safetensors") != std::string::npos, e.what());
    }
  }
};

QTEST_APPLESS_MAIN(TestAuditMatrices)
#include "test_audit_matrices.moc"
