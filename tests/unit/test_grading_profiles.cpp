// Profiles: validation messages, Def. 2 deletion with levels, Cor. 3 geometric profiles, and the
// profiles JSON file (round trip, consistency checks, unknown keys refused).
#include <QtTest>
#include <cmath>

#include "engine/grading/profiles.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "tests/support/test_support.h"

using namespace gllm::grading;
using gllm::test::error_of;

namespace {

nlohmann::json small_file() {
  return {{"d", 4},
          {"levels", 2},
          {"level_dims", {1, 3}},
          {"alpha", {0.1, 0.2, 0.3, 0.4}},
          {"tau", {0.4, 0.3, 0.2, 0.1}}};
}

}  // namespace

class TestGradingProfiles : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void validation() {
    QVERIFY(error_of([] { validate_distribution({}, "alpha"); }).find("empty") !=
            std::string::npos);
    QVERIFY(error_of([] {
              validate_distribution({0.5, -0.1, 0.6}, "alpha");
            }).find("alpha[1]") != std::string::npos);
    QVERIFY(error_of([] {
              validate_distribution({0.5, std::nan(""), 0.5}, "tau");
            }).find("not finite") != std::string::npos);
    QVERIFY(error_of([] {
              validate_distribution({0.5, 0.6}, "tau");
            }).find("normalise") != std::string::npos);
    QVERIFY(error_of([] {
              validate_distribution({0.5, 0.5}, "tau", 3);
            }).find("3 are expected") != std::string::npos);
    QVERIFY(error_of([] { validate_distribution({0.5, 0.5}, "tau"); }).empty());
    Profiles p;
    p.alpha = {0.5, 0.5};
    p.tau = {0.5, 0.5};
    p.level_dims = {1, 2};
    QVERIFY(error_of([&] { validate(p); }).find("Σ d_l = d") != std::string::npos);
    p.level_dims = {2, 0};
    QVERIFY(!error_of([&] { validate(p); }).empty());
  }

  void levelAggregates() {
    auto f = profiles_from_json(small_file());
    auto a = f.profiles.level_alpha(), s = f.profiles.level_tau();
    QCOMPARE(a.size(), size_t(2));
    QVERIFY(std::abs(a[0] - 0.1) < 1e-15 && std::abs(a[1] - 0.9) < 1e-15);
    QVERIFY(std::abs(s[0] - 0.4) < 1e-15 && std::abs(s[1] - 0.6) < 1e-15);
    QCOMPARE(f.profiles.level_of_coordinate(), (std::vector<int>{0, 1, 1, 1}));
  }

  void geometric() {
    auto a = geometric_level_alpha(0.5, 4);
    auto s = geometric_level_tau(0.2, 4);
    // a ∝ (0.125, 0.25, 0.5, 1), s ∝ (1, 0.2, 0.04, 0.008).
    QVERIFY(std::abs(a[3] - 1 / 1.875) < 1e-15);
    QVERIFY(std::abs(a[0] - 0.125 / 1.875) < 1e-15);
    QVERIFY(std::abs(s[0] - 1 / 1.248) < 1e-15);
    QVERIFY(std::abs(s[2] - 0.04 / 1.248) < 1e-15);
    auto p = geometric_profiles(0.5, 0.2, 4, {2, 2, 3, 1});
    QCOMPARE(p.d(), 8);
    QVERIFY(std::abs(p.alpha[4] - a[2] / 3) < 1e-15);
    // BC(α, τ) = BC(a, s) (Cor. 3): the d_l cancel.
    QVERIFY(std::abs(bhattacharyya(p.alpha, p.tau) - bhattacharyya(a, s)) < 1e-15);
    QVERIFY(!error_of([] { geometric_profiles(0, 0.2, 4); }).empty());
    QVERIFY(!error_of([] { geometric_profiles(0.5, std::nan(""), 4); }).empty());
    QVERIFY(!error_of([] { geometric_profiles(0.5, 0.2, 0); }).empty());
  }

  void deletionWithLevels() {
    Profiles p;
    p.alpha = {0.0, 0.5, 0.25, 0.25, 0.0};
    p.tau = {0.2, 0.2, 0.0, 0.3, 0.3};
    p.level_dims = {1, 2, 2};
    auto del = delete_degenerate(p);
    QCOMPARE(del.deleted, (std::vector<int>{0, 2, 4}));
    QCOMPARE(del.dropped_levels, (std::vector<int>{0}));
    QCOMPARE(del.kept_profiles.level_dims, (std::vector<int>{1, 1}));
    QVERIFY(std::abs(del.kept_profiles.alpha[0] - 2.0 / 3) < 1e-15);
    QVERIFY(std::abs(del.kept_profiles.tau[1] - 0.6) < 1e-15);
    QVERIFY(del.summary().find("levels left empty") != std::string::npos);
    Profiles none;
    none.alpha = {1, 0};
    none.tau = {0, 1};
    QVERIFY(error_of([&] { delete_degenerate(none); }).find("nothing is left") !=
            std::string::npos);
  }

  void roundTrip() {
    ProfilesFile f = profiles_from_json(small_file());
    f.targets["syntax"].alpha = {0.25, 0.25, 0.25, 0.25};
    f.heldout.alpha = {0.15, 0.15, 0.3, 0.4};
    f.heldout.tau = {0.4, 0.3, 0.2, 0.1};
    f.pos_grades = {0, 1, 2, 3};
    Profiles b = f.profiles;
    f.bootstrap = {b, b};
    f.basis.assign(16, 0.0);
    for (int i = 0; i < 4; ++i) f.basis[i * 5] = 1;
    f.meta = {{"corpus", "fixture"}};
    QTemporaryDir dir;
    std::string path = dir.filePath("p.json").toStdString();
    save_profiles_file(path, f);
    auto g = load_profiles_file(path);
    QCOMPARE(g.profiles.alpha, f.profiles.alpha);
    QCOMPARE(g.profiles.level_dims, f.profiles.level_dims);
    QCOMPARE(g.targets.size(), size_t(1));
    QVERIFY(std::abs(g.targets["syntax"].bc -
                     bhattacharyya(f.targets["syntax"].alpha, f.profiles.tau)) < 1e-15);
    QCOMPARE(g.heldout.alpha, f.heldout.alpha);
    QCOMPARE(g.pos_grades, f.pos_grades);
    QCOMPARE(g.bootstrap.size(), size_t(2));
    QCOMPARE(g.basis, f.basis);
    QCOMPARE(g.meta["corpus"].get<std::string>(), std::string("fixture"));
    auto j = nlohmann::json::parse(gllm::read_file(path));
    QVERIFY(std::abs(j["bc"].get<double>() - bhattacharyya(f.profiles.alpha, f.profiles.tau)) <
            1e-15);
    QCOMPARE(j["level_alpha"].size(), size_t(2));
  }

  void fileErrors() {
    auto j = small_file();
    j["colour"] = "blue";
    QVERIFY(error_of([&] { profiles_from_json(j); }).find("unknown key \"colour\"") !=
            std::string::npos);
    // The message lists the keys it knows, never a source file the user does not have.
    QVERIFY(error_of([&] { profiles_from_json(j); }).find("known keys: alpha") !=
            std::string::npos);
    QVERIFY(error_of([&] { profiles_from_json(j); }).find(".h") == std::string::npos);
    // Another JSON file opened by mistake (a run's config.json) is named for what it is not.
    const std::string notProfiles = error_of([&] {
      profiles_from_json(nlohmann::json{{"name", "tiny-cpu"}, {"model", {{"depth", 2}}}});
    });
    QVERIFY2(notProfiles.find("not a profiles file") != std::string::npos, notProfiles.c_str());
    QVERIFY2(notProfiles.find("gllm profiles --out") != std::string::npos, notProfiles.c_str());
    QVERIFY(notProfiles.find("profiles.h") == std::string::npos);
    j = small_file();
    j["bc"] = 0.1;
    QVERIFY(error_of([&] { profiles_from_json(j); }).find("disagrees") != std::string::npos);
    j = small_file();
    j["level_alpha"] = {0.5, 0.5};
    QVERIFY(error_of([&] { profiles_from_json(j); }).find("level_alpha") != std::string::npos);
    j = small_file();
    j["tau"] = {0.5, 0.5};
    QVERIFY(error_of([&] { profiles_from_json(j); }).find("entries") != std::string::npos);
    j = small_file();
    j["alpha"] = {0.1, "x", 0.3, 0.4};
    QVERIFY(error_of([&] { profiles_from_json(j); }).find("not a number") != std::string::npos);
    j = small_file();
    j["d"] = 5;
    QVERIFY(!error_of([&] { profiles_from_json(j); }).empty());
    j = small_file();
    j["pos_grades"] = {0, 1};
    QVERIFY(!error_of([&] { profiles_from_json(j); }).empty());
    j = small_file();
    j["heldout"] = {{"alpha", {0.25, 0.25, 0.25, 0.25}}};
    QVERIFY(error_of([&] { profiles_from_json(j); }).find("needs both") != std::string::npos);
    j = small_file();
    j["alpha"] = nlohmann::json::array();
    j.erase("d");
    j.erase("levels");
    j.erase("level_dims");
    QVERIFY(error_of([&] { profiles_from_json(j); }).find("empty") != std::string::npos);
    QVERIFY(error_of([] {
              load_profiles_file("/nonexistent/profiles.json");
            }).find("/nonexistent") != std::string::npos);
  }
};

QTEST_APPLESS_MAIN(TestGradingProfiles)
#include "test_grading_profiles.moc"
