// Hostile presets and sweeps: nesting 100,000 deep, 10 MB values, wrong types and odd key paths
// end in a ConfigError or gllm::Error naming the file and key; nothing recurses without bound.
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>

#include "engine/config/run_config.h"
#include "engine/config/sweep.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "tests/support/test_support.h"

using gllm::test::error_of;

using nlohmann::json;

namespace {

// {"name": "deep", "model": [[[ … ]]]} built without recursion (nlohmann destroys iteratively).
json deep_value(int depth) {
  json v = json::array();
  json* at = &v;
  for (int i = 1; i < depth; ++i) {
    at->push_back(json::array());
    at = &(*at)[0];
  }
  return v;
}

}  // namespace

class TestConfigBounded : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string path(const char* name) { return tmp_.filePath(name).toStdString(); }

 private Q_SLOTS:
  void deepPresetFileIsRefused() {
    const std::string p = path("deep.json");
    gllm::write_file_atomic(p, "{\"name\": \"deep\", \"model\": " + std::string(100000, '[') +
                                   std::string(100000, ']') + "}");
    const std::string e = error_of([&] { gllm::RunConfig::load(p); });
    QVERIFY2(e.find("deep.json") != std::string::npos, e.c_str());
    QVERIFY2(e.find("nested deeper") != std::string::npos, e.c_str());
  }

  void deepValueInMemoryIsRefused() {
    // The GUI and the sweep hand RunConfig::from_json values that never were a file.
    json j = {{"name", "deep"}};
    j["model"] = deep_value(100000);
    std::string e = error_of([&] { gllm::RunConfig::from_json(j); });
    QVERIFY2(e.find("nested deeper") != std::string::npos, e.c_str());
    j = {{"name", "deep"}, {"unknown_key", json()}};
    j["unknown_key"] = deep_value(100000);
    e = error_of([&] { gllm::RunConfig::from_json(j); });
    QVERIFY2(!e.empty(), "a deep unknown key was accepted");
    gllm::RunConfig c;
    e = error_of([&] { gllm::set_config_value(c, "model.n_embd", deep_value(100000)); });
    QVERIFY2(!e.empty(), "a deep value was set");
  }

  void hugeValuesAreNotEchoed() {
    // A 2 MB string where a number belongs, and a 10 MB number in a file.
    json j = {{"optim", {{"matrix_lr", std::string(2 << 20, '9')}}}};
    std::string e = error_of([&] { gllm::RunConfig::from_json(j); });
    QVERIFY2(e.find("optim.matrix_lr") != std::string::npos, e.substr(0, 300).c_str());
    QVERIFY2(e.size() < 600, ("error of " + std::to_string(e.size()) + " bytes").c_str());
    const std::string p = path("big.json");
    gllm::write_file_atomic(
        p, "{\"optim\": {\"matrix_lr\": 1" + std::string(10 << 20, '0') + "e400}}");
    e = error_of([&] { gllm::RunConfig::load(p); });
    QVERIFY2(!e.empty() && e.size() < 600,
             ("error of " + std::to_string(e.size()) + " bytes").c_str());
    // A long unknown key is cut in the message too.
    j = {{std::string(1 << 20, 'k'), 1}};
    e = error_of([&] { gllm::RunConfig::from_json(j); });
    QVERIFY2(!e.empty() && e.size() < 2000,
             ("error of " + std::to_string(e.size()) + " bytes").c_str());
  }

  void oddKeyPathsAreConfigErrors() {
    gllm::RunConfig c;
    for (const char* key :
         {"", "~", "model/n_embd", "model..n_embd", ".model", "model.", "a~1b", "model.0"}) {
      const std::string e = error_of([&] { gllm::set_config_value(c, key, 64); });
      QVERIFY2(!e.empty(), key);
    }
    gllm::set_config_value(c, "model.n_embd", 96);
    QCOMPARE(gllm::get_config_value(c, "model.n_embd").get<int>(), 96);
  }

  void longBaseChainsAndMissingBases() {
    // b0 → b1 → … → b19: bounded; a missing base names the file looked for.
    for (int i = 0; i < 20; ++i)
      gllm::write_file_atomic(path(("b" + std::to_string(i) + ".json").c_str()),
                              "{\"base\": \"b" + std::to_string(i + 1) + "\"}");
    gllm::write_file_atomic(path("b20.json"), "{}");
    std::string e = error_of([&] { gllm::RunConfig::load(path("b0.json")); });
    QVERIFY2(e.find("bases in a chain") != std::string::npos, e.c_str());
    gllm::write_file_atomic(path("m.json"), "{\"base\": \"does-not-exist\"}");
    e = error_of([&] { gllm::RunConfig::load(path("m.json")); });
    QVERIFY2(e.find("not found") != std::string::npos, e.c_str());
  }

  void vocabularyBelowTheTokenizersMinimumIsRefused() {
    // 4 specials + 256 bytes need 261 ids; 260 used to pass the schema and fail in training.
    const std::string e = error_of([&] {
      gllm::RunConfig::from_json({{"data", {{"vocab_size", 260}}}});
    });
    QVERIFY2(e.find("data.vocab_size") != std::string::npos, e.c_str());
    gllm::RunConfig::from_json({{"data", {{"vocab_size", 261}}}});
    // A prepared dataset's vocabulary is its model's, made elsewhere perhaps: smaller is fine.
    gllm::RunConfig::from_json(
        {{"data", {{"corpus", "prepared"}, {"corpus_path", "/d"}, {"vocab_size", 225}}}});
  }

  void sweepWrongTypesNameTheKey() {
    struct Case {
      const char* text;
      const char* want;
    };
    const Case cases[] = {
        {R"({"arms": ["tiny-cpu"], "seeds": ["forty-two"]})", "seed \"forty-two\""},
        {R"({"arms": ["tiny-cpu"], "seeds": [1, 1]})", "listed twice"},
        {R"({"arms": [5], "seeds": [1]})", "arms[0]"},
        {R"({"arms": [{"preset": 5}], "seeds": [1]})", "arms[0].preset"},
        {R"({"arms": [{"preset": "p", "set": [1]}], "seeds": [1]})", "arms[0].set"},
        {R"({"arms": [{"preset": "p", "sett": {}}], "seeds": [1]})", "sett"},
        {R"({"arms": ["p"], "seeds": [1], "steps": "many"})", "\"steps\""},
        {R"({"arms": ["p"], "seeds": [1], "steps": 18446744073709551615})", "\"steps\""},
        {R"({"arms": ["p"], "seeds": [-1]})", "seed -1"},
        {R"({"arms": ["p"], "seeds": [1], "name": 3})", "\"name\""},
        {R"({"arms": ["p"], "seeds": [1], "outt": "x"})", "outt"},
        {R"([1, 2])", "a sweep is a JSON object"},
    };
    for (const auto& c : cases) {
      const std::string e = error_of([&] { gllm::sweep_from_json(json::parse(c.text), "s.json"); });
      QVERIFY2(e.find(c.want) != std::string::npos, (std::string(c.text) + " → " + e).c_str());
      QVERIFY2(e.find("s.json") != std::string::npos, e.c_str());
    }
    auto s = gllm::sweep_from_json(
        json::parse(
            R"({"name": "n", "arms": ["a", {"preset": "b", "name": "c", "set": {"train.steps": 3}}],
                        "seeds": [41, 42], "steps": 7, "description": "d"})"),
        "ok");
    QCOMPARE(s.arms.size(), size_t(2));
    QCOMPARE(s.arms[1].name, std::string("c"));
    QCOMPARE(s.seeds.size(), size_t(2));
    QCOMPARE(s.steps, int64_t(7));
    // Every shipped sweep reads.
    for (const char* f : {"ladder-tiny.json", "seed001-tiny-factorial.json"})
      gllm::read_sweep_file(gllm::presets_dir() + "/sweeps/" + f);
  }
};

QTEST_APPLESS_MAIN(TestConfigBounded)
#include "test_config_bounded.moc"
