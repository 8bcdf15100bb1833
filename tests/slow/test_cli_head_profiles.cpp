// `gllm profiles --checkpoint RUN` estimates every head's profiles in its own coordinates, and
// `gllm certify RUN --profiles FILE` certifies the head grades the checkpoint holds against them.
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/grading/certify.h"
#include "engine/io/safetensors.h"
#include "engine/train/run_store.h"
#include "tests/support/test_support.h"

using gllm::test::read_json;

using namespace gllm;

class TestCliHeadProfiles : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void headProfilesAndTheirCertificates() {
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    // A tiny graded model on the Brown corpus of the data cache (its tags give the probe targets),
    // random grades, two steps.
    const nlohmann::json cfg = {
        {"name", "heads"},
        {"model",
         {{"n_layer", 2},
          {"n_embd", 32},
          {"n_head", 2},
          {"sequence_len", 64},
          {"window_pattern", "L"}}},
        {"grading", {{"attention", true}, {"head_grades", "random"}, {"random_seed", 3}}},
        {"data", {{"corpus", "brown"}, {"vocab_size", 8192}}},
        {"train",
         {{"steps", 2},
          {"device_batch", 2},
          {"eval_every", 0},
          {"eval_tokens", 256},
          {"heldout_tokens", 256},
          {"device", "cpu"},
          {"threads", 1}}}};
    std::ofstream(dir + "/cfg.json") << cfg.dump();
    const std::string run = dir + "/run", out = dir + "/heads.json";
    auto t = test::run_cli({"train", dir + "/cfg.json", "--out", run});
    QVERIFY2(t.exit_code == 0, (t.out + t.err).c_str());

    // --checkpoint alone means head profiles.
    auto p = test::run_cli(
        {"profiles", "--checkpoint", run, "--bootstrap", "20", "--out", out, "--json"});
    QVERIFY2(p.exit_code == 0, (p.out + p.err).c_str());
    const auto j = read_json(out);
    QCOMPARE(j["format"].get<std::string>(), std::string("gllm-head-profiles/1"));
    QCOMPARE(j["layers"].get<int>(), 2);
    QCOMPARE(j["heads"].get<int>(), 2);
    QCOMPARE(j["planes"].get<int>(), 8);  // head dim 16: one grade per RoPE plane
    const auto hp = grading::head_profiles_from_json(j);
    for (const auto& f : hp.per_head) {
      double sa = 0, st = 0;
      for (double a : f.profiles.alpha) sa += a;
      for (double x : f.profiles.tau) st += x;
      QVERIFY(std::abs(sa - 1) < 1e-9 && std::abs(st - 1) < 1e-9);
      QCOMPARE(static_cast<int>(f.bootstrap.size()), 20);
    }
    QVERIFY(j["meta"]["tokens"].get<int>() >= 1000);

    // Certify the checkpoint's head grades against them: one certified component per head, each
    // inner product recomputed here from the stored grades and the file's profiles.
    auto c = test::run_cli({"certify", run, "--profiles", out, "--json"});
    QVERIFY2(c.exit_code == 0, (c.out + c.err).c_str());
    const auto cj = nlohmann::json::parse(c.out);
    QCOMPARE(cj["components"].size(), size_t(4));
    QVERIFY(cj["grades_source"].get<std::string>().find("checkpoint") != std::string::npos);
    const auto ckpt = SafetensorsFile::open(resolve_weights_path(run));
    const auto q = ckpt.to_float("attn_grades");  // (L, H, planes)
    QCOMPARE(q.size(), size_t(2 * 2 * 8));
    int i = 0;
    for (const auto& comp : cj["components"]) {
      QVERIFY2(comp["certified"].get<bool>(), comp.dump().c_str());
      QVERIFY(comp["bootstrap_sign_fraction"].is_number());
      const auto& f = hp.per_head[static_cast<size_t>(i)];
      double ip = 0;
      for (int c = 0; c < 8; ++c)
        ip += q[static_cast<size_t>(i * 8 + c)] * (f.profiles.alpha[c] - f.profiles.tau[c]);
      QVERIFY2(std::abs(ip - comp["inner_product"].get<double>()) < 1e-9, comp.dump().c_str());
      ++i;
    }
    // Without head profiles the heads are listed as not certified, with the command that makes
    // them.
    auto none = test::run_cli({"certify", run, "--json"});
    QVERIFY2(none.exit_code == 0, (none.out + none.err).c_str());
    for (const auto& comp : nlohmann::json::parse(none.out)["components"]) {
      QVERIFY(!comp["certified"].get<bool>());
      QVERIFY(comp["reason"].get<std::string>().find("--checkpoint") != std::string::npos);
    }
  }
};

QTEST_APPLESS_MAIN(TestCliHeadProfiles)
#include "test_cli_head_profiles.moc"
