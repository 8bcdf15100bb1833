// The ladder presets train what the ladder certifies: each preset's model, built as training builds
// it, holds the arm's grades in mlge.level_grades and the profiles' basis in mlge.proj, and the
// inner product recomputed from those tensors is the published one, in the published order.
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/config/run_config.h"
#include "engine/grading/certify.h"
#include "engine/train/model_grades.h"
#include "tests/support/test_support.h"

using gllm::test::read_json;

using namespace gllm;

namespace {

const std::vector<std::string> kArms{"uniform",   "random", "random-2", "random-3",
                                     "taxonomic", "pos",    "educated", "oracle"};

}  // namespace

class TestTrainLadderPresets : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void gradesReadBackCertifyAsPublished() {
    std::map<std::string, double> recomputed;
    nlohmann::json ladder, profiles;
    for (const auto& arm : kArms) {
      const std::string path = resolve_preset_path("ladder-" + arm);
      const RunConfig c = RunConfig::load(path);
      QCOMPARE(QString::fromStdString(c.grading.ladder_arm), QString::fromStdString(arm));
      QVERIFY(c.grading.mlge);
      QVERIFY(!c.grading.attention);
      // Route 1: every arm, uniform included, starts W_e in the profiles' token reference, with
      // decoupled weight decay on it (the norm-controlled regime).
      QCOMPARE(QString::fromStdString(c.model.wte_init), QString("reference"));
      QVERIFY(c.optim.embedding_weight_decay > 0);
      if (ladder.is_null()) {
        ladder = read_json(c.grading.ladder_file);
        profiles = read_json(c.grading.profiles_file);
      }
      const grading::ModelGrades m = model_grades_from_config(c, "preset ladder-" + arm);
      const int d = c.model.width();
      QCOMPARE(static_cast<int>(m.level_grades.size()), d);
      QCOMPARE(ladder["d"].get<int>(), d);
      // The certificate ⟨q, α̂−τ̂⟩ from the model's own tensor and the profiles file, summed here.
      const auto alpha = profiles["alpha"].get<std::vector<double>>(),
                 tau = profiles["tau"].get<std::vector<double>>();
      double ip = 0;
      for (int j = 0; j < d; ++j)
        ip += m.level_grades[static_cast<size_t>(j)] *
              (alpha[static_cast<size_t>(j)] - tau[static_cast<size_t>(j)]);
      recomputed[arm] = ip;
      double published = NAN;
      for (const auto& a : ladder["arms"])
        if (a["name"] == arm) published = a["certificate"].get<double>();
      qInfo("%-9s published %.6f, read back from mlge.level_grades %.6f", arm.c_str(), published,
            ip);
      // Grades are stored in float32: the read-back inner product agrees to float rounding.
      QVERIFY2(
          std::abs(ip - published) <= 1e-5 * (1 + std::abs(published)),
          qPrintable(
              QString("%1: %2 vs %3").arg(QString::fromStdString(arm)).arg(ip).arg(published)));
      // P is the profiles' graded basis: column j of mlge.proj is row j of the file's basis.
      const auto basis = profiles["basis"].get<std::vector<double>>();
      double dev = 0;
      for (int j = 0; j < d; ++j)
        for (int i = 0; i < d; ++i)
          dev = std::max(dev, std::abs(m.level_basis[static_cast<size_t>(i) * d + j] -
                                       basis[static_cast<size_t>(j) * d + i]));
      QVERIFY2(dev < 1e-6, qPrintable(QString::number(dev)));
      if (arm == "uniform") QCOMPARE(ip, 0.0);
    }
    // The arms' order by the read-back inner products is the ladder's published order.
    std::vector<std::string> order(kArms);
    std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
      return recomputed[a] > recomputed[b];
    });
    QCOMPARE(order, ladder["order"].get<std::vector<std::string>>());
  }

  // The certificate the CLI and GUI show for a preset is the same computation on the same tensors.
  void certifyUsesTheModelsTensors() {
    const RunConfig c = RunConfig::load(resolve_preset_path("ladder-educated"));
    const auto m = model_grades_from_config(c, "preset ladder-educated");
    const auto certs = grading::certify(m, {grading::load_any_profiles(c.grading.profiles_file)});
    QCOMPARE(static_cast<int>(certs.size()), 1);
    QVERIFY(certs[0].certified);
    QCOMPARE(QString::fromStdString(certs[0].component), QString("mlge.level_grades"));
    QVERIFY(certs[0].admissible);
    QVERIFY(certs[0].basis_deviation >= 0 && certs[0].basis_deviation < 1e-6);
    QVERIFY(certs[0].sign_fraction >= 0.9);  // the bootstrap keeps the sign of the educated arm
    QCOMPARE(m.sources["level_grades"]["arm"].get<std::string>(), std::string("educated"));
  }
};

QTEST_APPLESS_MAIN(TestTrainLadderPresets)
#include "test_train_ladder_presets.moc"
