// Run identity (issue 28, point 1): a run's name says what differs from its preset, the diff is
// readable, and the effective-config hash separates configs whatever their names, not seeds.
#include <QtTest>
#include <algorithm>
#include <set>

#include "engine/config/run_config.h"
#include "engine/config/run_identity.h"

using nlohmann::json;

class TestRunIdentity : public QObject {
  Q_OBJECT

  static json preset() {
    gllm::RunConfig c = gllm::RunConfig::load(gllm::resolve_preset_path("tiny-cpu"));
    return c.to_json();
  }

 private Q_SLOTS:
  void presetItselfKeepsItsName() {
    const json p = preset();
    QCOMPARE(gllm::run_label(p, p), p["name"].get<std::string>());
    QVERIFY(gllm::config_changes(p, p).empty());
    // A seed is not a different run.
    json s = p;
    s["train"]["seed"] = 7;
    QCOMPARE(gllm::run_label(s, p), std::string("tiny-cpu"));
    QCOMPARE(gllm::effective_config_hash(s), gllm::effective_config_hash(p));
  }

  void ladderArmAndStepsAreNamed() {
    const json p = preset();
    // What the grade editor's ladder arm sets (the issue's `mlge: true, ladder_arm: "pos"`).
    json c = p;
    c["grading"]["mlge"] = true;
    c["grading"]["level_grades_source"] = "ladder";
    c["grading"]["ladder_arm"] = "pos";
    c["grading"]["ladder_file"] = "/somewhere/presets/ladders/brown-ladder.json";
    c["grading"]["profiles_file"] = "/somewhere/presets/ladders/brown-d128-profiles.json";
    c["grading"]["basis_trainable"] = false;
    QCOMPARE(gllm::run_label(c, p), std::string("tiny-cpu+mlge.pos"));
    c["train"]["steps"] = 150;
    QCOMPARE(gllm::run_label(c, p), std::string("tiny-cpu+mlge.pos+steps=150"));
    // The full diff names every key, paths included.
    const std::string d = gllm::describe_changes(gllm::config_changes(c, p));
    QVERIFY2(d.find("grading.mlge: false → true") != std::string::npos, d.c_str());
    QVERIFY2(d.find("grading.ladder_arm: none → pos") != std::string::npos, d.c_str());
    QVERIFY2(d.find("train.steps: ") != std::string::npos, d.c_str());
    // Three runs of one preset with 150, 40 and 100 steps: three names, three hashes.
    std::set<std::string> names, hashes;
    for (int steps : {150, 40, 100}) {
      json r = p;
      r["train"]["steps"] = steps;
      names.insert(gllm::run_label(r, p));
      hashes.insert(gllm::effective_config_hash(r));
    }
    QCOMPARE(names.size(), size_t(3));
    QCOMPARE(hashes.size(), size_t(3));
    QVERIFY(names.count("tiny-cpu+steps=40"));
  }

  void labelsAreShortAndFolderSafe() {
    const json p = preset();
    json c = p;
    c["model"]["qk_norm"] = !p["model"].value("qk_norm", true);
    c["optim"]["matrix_lr"] = 0.0123456;
    c["train"]["steps"] = 9;
    c["train"]["eval_every"] = 3;
    c["train"]["eval_tokens"] = 1024;
    c["data"]["corpus_path"] = "/a b/c/text corpus.txt";
    const std::string label = gllm::run_label(c, p, 4);
    QVERIFY2(label.find('/') == std::string::npos && label.find(' ') == std::string::npos,
             label.c_str());
    QVERIFY2(label.find("more") != std::string::npos, label.c_str());
    QVERIFY2(label.find("matrix_lr=0.01235") != std::string::npos, label.c_str());
    QVERIFY2(label.find("qk_norm") != std::string::npos, label.c_str());
  }

  void hashIgnoresOnlyNonResultKeys() {
    const json p = preset();
    json renamed = p;
    renamed["name"] = "something-else";
    renamed["train"]["checkpoint_every"] = 5;
    renamed["train"]["threads"] = 1;
    QCOMPARE(gllm::effective_config_hash(renamed), gllm::effective_config_hash(p));
    // Same name, different config: never one group.
    json changed = p;
    changed["model"]["storage"] = "bf16";
    QVERIFY(gllm::effective_config_hash(changed) != gllm::effective_config_hash(p));
    QCOMPARE(gllm::effective_config_hash(p).size(), size_t(12));
  }
  // Issue 42, point 1: a setting the run cannot use names no change and does not split groups.
  void inertSettingsNameNothing() {
    const json p = preset();
    QVERIFY(!p["grading"].value("mlge", false));  // tiny-cpu: MLGE off
    json c = p;
    c["grading"]["level_grades"] = {0, 1, 2, 3};
    QCOMPARE(gllm::run_label(c, p), std::string("tiny-cpu"));
    QCOMPARE(gllm::effective_config_hash(c), gllm::effective_config_hash(p));
    const auto inert = gllm::inert_settings(c);
    QVERIFY(std::find(inert.begin(), inert.end(), "grading.level_grades") != inert.end());
    // With MLGE on the same grades are a change: named, and a different hash.
    json on = c;
    on["grading"]["mlge"] = true;
    json onDefault = p;
    onDefault["grading"]["mlge"] = true;
    const std::string label = gllm::run_label(on, p);
    QVERIFY2(label.find("level_grades=") != std::string::npos, label.c_str());
    QVERIFY(gllm::effective_config_hash(on) != gllm::effective_config_hash(onDefault));
    // Head grades without graded attention are inert too.
    json noAttn = p;
    noAttn["grading"]["attention"] = false;
    json noAttnRandom = noAttn;
    noAttnRandom["grading"]["head_grades"] = "random";
    QCOMPARE(gllm::run_label(noAttnRandom, p), gllm::run_label(noAttn, p));
  }

  // Issue 42, point 5: runs that differ only in folded parts never share a name.
  void foldedPartsKeepADigest() {
    const json p = preset();
    json a = p;
    a["model"]["qk_norm"] = !p["model"].value("qk_norm", true);
    a["optim"]["matrix_lr"] = 0.0123456;
    a["train"]["eval_every"] = 3;
    a["train"]["eval_tokens"] = 1024;
    a["optim"]["warmdown_ratio"] = 0.3;
    a["train"]["steps"] = 40;
    json b = a;
    b["train"]["steps"] = 150;
    const std::string la = gllm::run_label(a, p, 4), lb = gllm::run_label(b, p, 4);
    QVERIFY2(la.find("more-") != std::string::npos, la.c_str());
    QVERIFY2(la != lb, (la + " vs " + lb).c_str());
    QCOMPARE(gllm::run_label(a, p, 4), la);  // deterministic
    // Long arrays keep a digest of their values as well.
    json g1 = p, g2 = p;
    g1["grading"]["attn_grades"] = std::vector<double>(8, 1.0);
    g2["grading"]["attn_grades"] = std::vector<double>(8, 2.0);
    g1["grading"]["head_grades"] = g2["grading"]["head_grades"] = "explicit";
    QVERIFY(gllm::run_label(g1, p) != gllm::run_label(g2, p));
  }
};

QTEST_MAIN(TestRunIdentity)
#include "test_config_run_identity.moc"
