// Grade sources resolved before the model is built: part-of-speech output grades spread over the
// clip box and checked against the tokenizer and vocabulary, ladder arms checked against their
// profiles, λ and C, and grades files checked for shape and range — each refusal names the key.
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "engine/config/run_config.h"
#include "engine/grading/grade_sources.h"
#include "engine/grading/ladder.h"
#include "engine/grading/profiles.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"

using namespace gllm;

namespace {

// Four coordinates in two levels; α favours level 1, τ level 0.
grading::ProfilesFile small_profiles() {
  grading::ProfilesFile f;
  f.profiles.alpha = {0.1, 0.1, 0.4, 0.4};
  f.profiles.tau = {0.4, 0.3, 0.2, 0.1};
  f.profiles.level_dims = {2, 2};
  f.pos_grades = {0.2, 0.3, 0.9, 0.6};
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 4; ++i) f.basis.push_back(i == j ? 1.0 : 0.0);
  f.meta = {{"output_grades",
             {{"tokenizer_hash", "abc"},
              {"vocab_size", 5},
              {"open_share", {0.0, 0.25, 0.5, 1.0, 0.75}}}}};
  return f;
}

// A model of width 4 with MLGE, two levels, head dim 4 (λ = e^{1/4}).
RunConfig mlge_config() {
  RunConfig c;
  c.model.n_layer = 1;
  c.model.n_embd = 4;
  c.model.n_head = 1;
  c.grading.mlge = true;
  c.grading.levels = 2;
  return c;
}

bool refused(const std::function<void()>& f, const QString& needle) {
  try {
    f();
  } catch (const ConfigError& e) {
    if (QString(e.what()).contains(needle)) return true;
    qWarning("refused, but the message lacks '%s': %s", qPrintable(needle), e.what());
    return false;
  }
  return false;
}

}  // namespace

class TestGradingSources : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void posOutputGradesSpreadOverTheClipBox() {
    QTemporaryDir tmp;
    const std::string prof = tmp.filePath("p.json").toStdString();
    grading::save_profiles_file(prof, small_profiles());
    RunConfig c = mlge_config();
    c.grading.mlge = false;
    c.grading.graded_loss = true;
    c.grading.output_grades = "pos";
    c.grading.profiles_file = prof;
    c.grading.output_lambda = 1.5;
    c.grading.clip = 3.0;
    const auto r = grading::resolve_grade_sources(c, 5, "abc");
    const double q_max_out = std::log(3.0) / std::log(1.5);
    QCOMPARE(static_cast<int>(r.output_grades.size()), 5);
    const double share[5] = {0.0, 0.25, 0.5, 1.0, 0.75};
    for (int y = 0; y < 5; ++y) QCOMPARE(r.output_grades[y], q_max_out * share[y]);
    // The largest weight λ_out^{q} is the clip C: always-open-class tokens weigh 3.
    QVERIFY(std::abs(std::pow(1.5, r.output_grades[3]) - 3.0) < 1e-12);
    QCOMPARE(r.sources["output_grades"]["kind"].get<std::string>(), std::string("pos"));
    QVERIFY(refused([&] { grading::resolve_grade_sources(c, 5, "another"); }, "tokenizer"));
    QVERIFY(refused([&] { grading::resolve_grade_sources(c, 6, "abc"); }, "vocabulary"));
    c.grading.profiles_file.clear();
    QVERIFY(refused([&] { grading::resolve_grade_sources(c, 5, "abc"); }, "profiles_file"));
  }

  void outputGradesFileOutsideTheBoxIsRefused() {
    QTemporaryDir tmp;
    const std::string file = tmp.filePath("q.json").toStdString();
    write_file_atomic(file, R"({"output_grades": [0, 1, 2, 50, 0]})");
    RunConfig c = mlge_config();
    c.grading.mlge = false;
    c.grading.graded_loss = true;
    c.grading.output_grades = "file";
    c.grading.output_grades_file = file;
    QVERIFY(refused([&] { grading::resolve_grade_sources(c, 5); }, "clip box"));
    write_file_atomic(file, R"({"output_grades": [0, 1, 2, 0.5, 0]})");
    QCOMPARE(grading::resolve_grade_sources(c, 5).output_grades[3], 0.5);
  }

  void ladderArmsActInTheirProfilesBasis() {
    QTemporaryDir tmp;
    const std::string prof = tmp.filePath("p.json").toStdString(),
                      lad = tmp.filePath("l.json").toStdString();
    auto f = small_profiles();
    grading::save_profiles_file(prof, f);
    grading::LadderOptions o;
    o.lambda = std::exp(1.0 / 4.0);
    o.clip = 2.0;
    grading::Ladder ladder = grading::build_ladder(f, o);
    grading::save_ladder_file(lad, ladder);
    RunConfig c = mlge_config();
    c.grading.level_grades_source = "ladder";
    c.grading.ladder_file = lad;
    c.grading.ladder_arm = "taxonomic";
    c.grading.profiles_file = prof;
    const auto r = grading::resolve_grade_sources(c, 10);
    QCOMPARE(r.level_grades, ladder.arm("taxonomic").grades);
    QCOMPARE(r.level_basis, f.basis);
    // Another profiles file (same width, other α) is not the one the ladder was certified against.
    auto g = f;
    g.profiles.alpha = {0.25, 0.25, 0.25, 0.25};
    const std::string other = tmp.filePath("o.json").toStdString();
    grading::save_profiles_file(other, g);
    c.grading.profiles_file = other;
    QVERIFY(refused([&] { grading::resolve_grade_sources(c, 10); }, "certified against"));
    c.grading.profiles_file = prof;
    c.grading.clip = 4.0;  // the ladder was built for C = 2
    QVERIFY(refused([&] { grading::resolve_grade_sources(c, 10); }, "C = "));
    c.grading.clip = 2.0;
    c.model.n_embd = 8;  // the ladder has d = 4
    QVERIFY(refused([&] { grading::resolve_grade_sources(c, 10); }, "width"));
  }

  // The POS arm is the shares spread affinely over [0, q_max]: the most open-class coordinate gets
  // q_max, the least 0, the order kept.
  void posArmSpansTheBox() {
    const auto q = grading::pos_arm_grades({0.2, 0.3, 0.9, 0.6}, 10.0);
    QCOMPARE(q[0], 0.0);
    QCOMPARE(q[2], 10.0);
    QVERIFY(std::abs(q[1] - 10.0 * 0.1 / 0.7) < 1e-12);
    QVERIFY(std::abs(q[3] - 10.0 * 0.4 / 0.7) < 1e-12);
    for (double x : grading::pos_arm_grades({0.5, 0.5}, 3.0)) QCOMPARE(x, 0.0);
  }

  void headGradesFileShape() {
    QTemporaryDir tmp;
    const std::string file = tmp.filePath("h.json").toStdString();
    RunConfig c;
    c.model.n_layer = 1;
    c.model.n_embd = 8;
    c.model.n_head = 2;  // head dim 4: two planes
    c.grading.attention = true;
    c.grading.head_grades = "file";
    c.grading.grades_file = file;
    write_file_atomic(file, R"({"attn_grades": [[[0.5, 1.0], [0.0, 2.0]]]})");
    const auto r = grading::resolve_grade_sources(c, 10);
    QCOMPARE(r.attn_grades, (std::vector<double>{0.5, 1.0, 0.0, 2.0}));
    write_file_atomic(file, R"({"attn_grades": [[[0.5, 1.0, 3.0], [0.0, 2.0]]]})");
    QVERIFY(refused([&] { grading::resolve_grade_sources(c, 10); }, "[1][2][2]"));
    write_file_atomic(file, R"({"attn_grades": [[[0.5, 1.0], [0.0, 99.0]]]})");
    QVERIFY(refused([&] { grading::resolve_grade_sources(c, 10); }, "clip box"));
  }

  void headGradesLadderIsRefusedWithTheFix() {
    RunConfig c;
    c.grading.attention = true;
    c.grading.head_grades = "ladder";
    QVERIFY(refused([&] { RunConfig::from_json(c.to_json()); }, "level_grades_source"));
  }
};

QTEST_APPLESS_MAIN(TestGradingSources)
#include "test_grading_sources.moc"
