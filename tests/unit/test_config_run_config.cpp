// RunConfig JSON: round trip, unknown keys and out-of-range values name the key path and the
// allowed range, "base" presets merge, files a preset names resolve beside it, every shipped preset
// parses.
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>

#include "engine/config/run_config.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "tests/support/test_support.h"

using nlohmann::json;

class TestRunConfig : public QObject {
  Q_OBJECT

  static std::string message_of(const json& j) {
    try {
      gllm::RunConfig::from_json(j);
    } catch (const gllm::ConfigError& e) {
      return e.what();
    }
    return "";
  }

 private Q_SLOTS:
  void roundTrip() {
    gllm::RunConfig c;
    c.model.n_embd = 96;
    c.model.n_head = 3;
    c.grading.attention = true;
    c.optim.bieq = true;
    auto back = gllm::RunConfig::from_json(c.to_json());
    QCOMPARE(back.to_json().dump(), c.to_json().dump());
  }
  void unknownKeyNamesPath() {
    auto msg = message_of({{"model", {{"n_embdd", 64}}}});
    QVERIFY2(msg.find("model.n_embdd") != std::string::npos, msg.c_str());
    QVERIFY2(msg.find("n_embd") != std::string::npos, msg.c_str());  // lists known keys
    msg = message_of({{"modle", json::object()}});
    QVERIFY2(msg.find("modle") != std::string::npos, msg.c_str());
  }
  void outOfRangeNamesRange() {
    auto msg = message_of({{"train", {{"steps", 0}}}});
    QVERIFY2(msg.find("train.steps") != std::string::npos && msg.find("[1,") != std::string::npos,
             msg.c_str());
    msg = message_of({{"grading", {{"clip", 0.5}}}});
    QVERIFY2(msg.find("grading.clip") != std::string::npos, msg.c_str());
    msg = message_of({{"grading", {{"lambda", 0.9}}}});
    QVERIFY2(msg.find("grading.lambda") != std::string::npos, msg.c_str());
    msg = message_of({{"model", {{"n_embd", 100}, {"n_head", 3}}}});
    QVERIFY2(msg.find("model.n_embd") != std::string::npos, msg.c_str());
    msg = message_of({{"train", {{"device", "tpu"}}}});
    QVERIFY2(msg.find("auto, cpu, cuda") != std::string::npos, msg.c_str());
    msg = message_of({{"optim", {{"bieq", 1}}}});
    QVERIFY2(msg.find("true or false") != std::string::npos, msg.c_str());
  }
  void derivedShapeFromDepth() {
    gllm::ModelConfig m;
    m.depth = 6;
    QCOMPARE(m.width(), 384);
    QCOMPARE(m.heads(), 3);
    QCOMPARE(m.head_dim(), 128);
    m.depth = 8;
    QCOMPARE(m.width(), 512);
    QCOMPARE(m.heads(), 4);
  }
  void baseInheritance() {
    QTemporaryDir dir;
    json base = {{"name", "base"}, {"model", {{"n_embd", 64}, {"n_head", 2}}}};
    gllm::RunConfig::from_json(base).save(dir.filePath("b.json").toStdString());
    json arm = {{"base", "b"}, {"name", "arm"}, {"optim", {{"bieq", true}}}};
    auto c = gllm::RunConfig::from_json(arm, dir.path().toStdString());
    QCOMPARE(c.model.n_embd, 64);
    QCOMPARE(c.name, std::string("arm"));
    QVERIFY(c.optim.bieq);
  }
  void presetFilesResolveBesideThePreset() {
    // A preset naming "ladders/x.json" finds it in its own folder whatever the current folder is;
    // the loaded config holds the absolute path (a run's config.json resumes from anywhere).
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkpath("ladders"));
    const std::string ladder = dir.filePath("ladders/x.json").toStdString();
    gllm::write_file_atomic(ladder, "{\"arms\": []}\n");
    json arm = {{"name", "arm"},
                {"grading",
                 {{"mlge", true},
                  {"level_grades_source", "ladder"},
                  {"ladder_file", "ladders/x.json"},
                  {"ladder_arm", "pos"},
                  {"profiles_file", "ladders/x.json"}}}};
    gllm::write_file_atomic(dir.filePath("arm.json").toStdString(), arm.dump());
    const QString cwd = QDir::currentPath();
    QTemporaryDir elsewhere;
    QVERIFY(QDir::setCurrent(elsewhere.path()));
    auto c = gllm::RunConfig::load(dir.filePath("arm.json").toStdString());
    QVERIFY(QDir::setCurrent(cwd));
    QCOMPARE(QFileInfo(QString::fromStdString(c.grading.ladder_file)).canonicalFilePath(),
             QFileInfo(QString::fromStdString(ladder)).canonicalFilePath());
    QVERIFY(std::filesystem::path(c.grading.ladder_file).is_absolute());
    // A name found nowhere is left as written, for the clear error where the file is read.
    arm["grading"]["ladder_file"] = "missing/x.json";
    gllm::write_file_atomic(dir.filePath("arm2.json").toStdString(), arm.dump());
    QCOMPARE(gllm::RunConfig::load(dir.filePath("arm2.json").toStdString()).grading.ladder_file,
             std::string("missing/x.json"));
  }
  void setByPathValidates() {
    gllm::RunConfig c;
    gllm::set_config_value(c, "model.n_layer", 6);
    QCOMPARE(c.model.n_layer, 6);
    QVERIFY_THROWS_EXCEPTION(gllm::ConfigError, gllm::set_config_value(c, "model.n_layer", -1));
    QCOMPARE(c.model.n_layer, 6);  // unchanged after a refused edit
    auto fields = gllm::run_config_fields();
    bool found = false;
    for (auto& f : fields) found |= f.path == "optim.neumann_tau";
    QVERIFY(found);
  }
  void shippedPresetsParse() {
    for (const auto& name : gllm::list_presets()) {
      try {
        gllm::RunConfig::load(gllm::resolve_preset_path(name));
      } catch (const gllm::Error& e) {
        QFAIL((name + ": " + e.what()).c_str());
      }
    }
  }
  // gllm bench train's second shape (bench/shapes): seed 001's depth-6 baseline at a CPU batch,
  // its base resolved beside the file.
  void benchShapeIsTheDepthSixModelOnTheCpu() {
    const gllm::RunConfig c =
        gllm::RunConfig::load(gllm::test::source_file("bench/shapes/seed001-d6-cpu.json"));
    QCOMPARE(c.model.layers(), 6);
    QCOMPARE(c.model.width(), 384);
    QCOMPARE(c.model.sequence_len, 512);
    QCOMPARE(c.model.window_pattern, std::string("SSSL"));
    QCOMPARE(c.train.device, std::string("cpu"));
    QCOMPARE(c.train.dtype, std::string("fp32"));
    QCOMPARE(c.train.device_batch, 4);
    QCOMPARE(c.train.grad_accum, 1);
  }
};

QTEST_APPLESS_MAIN(TestRunConfig)
#include "test_config_run_config.moc"
