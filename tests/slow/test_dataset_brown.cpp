// The real Brown corpus (fetched into the data cache; skipped when absent): its size, exact
// decode(encode(text)) on every document of its prepared dataset with the 8192 tokenizer,
// byte-length sums, and `gllm data info --json` / `gllm profiles` end to end.
#include <QTemporaryDir>
#include <QtTest>
#include <nlohmann/json.hpp>

#include "engine/config/data_config.h"
#include "engine/data/brown_fetch.h"
#include "engine/data/corpus.h"
#include "engine/data/dataset.h"
#include "engine/dataset/brown_tags.h"
#include "engine/grading/profiles.h"
#include "tests/support/test_support.h"

class TestDatasetBrown : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    if (!gllm::brown_corpus_present()) QSKIP("Brown corpus not fetched; run `gllm data fetch`");
  }

  void corpusSize() {
    auto c = gllm::read_brown_corpus(gllm::brown_corpus_dir());
    // The published figures of Brown Form C: 500 texts, 57,340 sentences, 1,161,192 tagged tokens.
    QCOMPARE(c.documents.size(), size_t(500));
    QCOMPARE(c.sentences(), size_t(57340));
    QCOMPARE(c.words(), size_t(1161192));
    size_t paragraphs = 0;
    for (auto& d : c.documents) paragraphs += d.paragraphs;
    QCOMPARE(paragraphs, size_t(15667));
  }

  void roundTripWholeCorpus() {
    gllm::DataConfig cfg;  // data.corpus = brown: the data cache's prepared Brown dataset
    auto t = gllm::open_tagged_data(cfg);
    const auto& c = t.corpus;
    const auto& ds = t.ds;
    QCOMPARE(c.documents.size(), size_t(500));
    QCOMPARE(c.words(), size_t(1161192));
    QCOMPARE(ds.tokenizer.vocab_size(), 8192);
    for (size_t i = 0; i < c.documents.size(); ++i) {
      auto v = ds.shard->document(i);
      std::vector<int32_t> ids(v.data, v.data + v.size);
      QCOMPARE(ds.tokenizer.decode(ids), c.documents[i].text);
      int64_t bytes = 0;
      for (int32_t id : ids) bytes += ds.tokenizer.token_bytes()[id];
      QCOMPARE(bytes, int64_t(c.documents[i].text.size()));
    }
  }

  void cliInfoAndProfiles() {
    auto r = gllm::test::run_cli({"data", "info", "--json"});
    QVERIFY2(r.exit_code == 0, r.err.c_str());
    auto j = nlohmann::json::parse(r.out);  // the manifest of the data cache's Brown dataset
    QCOMPARE(j["reading"]["documents"].get<int>(), 500);
    QCOMPARE(j["annotations"]["brown_pos_tags"]["words"].get<int>(), 1161192);
    QCOMPARE(j["options"]["format"].get<std::string>(), std::string("brown"));
    int64_t documents = 0;
    for (const char* s : {"train", "val", "heldout"}) {
      const auto& sp = j["splits"][s];
      documents += sp["documents"].get<int64_t>();
      QVERIFY(sp["tokens"].get<int64_t>() > 0);
      QVERIFY(std::fabs(sp["bytes_per_token"].get<double>() -
                        sp["bytes"].get<double>() / sp["tokens"].get<double>()) < 1e-12);
    }
    QCOMPARE(documents, int64_t(500));
    QVERIFY(j["dataset"].get<std::string>().find("/datasets/brown-") != std::string::npos);

    QTemporaryDir dir;
    std::string out = dir.filePath("profiles.json").toStdString();
    r = gllm::test::run_cli({"profiles", "--corpus", "brown", "--reference", "ppmi", "--d", "128",
                             "--levels", "4", "--bootstrap", "20", "--out", out, "--json"});
    QVERIFY2(r.exit_code == 0, r.err.c_str());
    auto f = gllm::grading::load_profiles_file(out);
    QCOMPARE(f.profiles.d(), 128);
    QCOMPARE(f.profiles.levels(), 4);
    QCOMPARE(f.targets.size(), size_t(4));
    QCOMPARE(f.pos_grades.size(), size_t(128));
    QVERIFY(f.has_heldout());
    QCOMPARE(f.bootstrap.size(), size_t(20));
    auto rep = nlohmann::json::parse(r.out);
    QVERIFY(rep["bc"].get<double>() > 0 && rep["bc"].get<double>() < 1);
    // Per-token open-class shares (output grades "pos" scale them by q_max_out): one per token,
    // in (0, 1) by the +1/+2 smoothing (specials 0), and both classes present: closed-class
    // tokens (" the", " of") near 0, open-class ones near 1.
    const auto& share = f.meta["output_grades"]["open_share"];
    QCOMPARE(share.size(), size_t(8192));
    QCOMPARE(f.meta["output_grades"]["vocab_size"].get<int>(), 8192);
    int low = 0, high = 0, zero = 0;
    for (const auto& v : share) {
      const double x = v.get<double>();
      QVERIFY(x >= 0 && x < 1);
      zero += x == 0;
      low += x > 0 && x < 0.1;
      high += x > 0.9;
    }
    QVERIFY2(zero >= 1 && zero < 16, std::to_string(zero).c_str());  // the special tokens only
    QVERIFY2(low > 50 && high > 1000, (std::to_string(low) + " " + std::to_string(high)).c_str());
  }
};

QTEST_APPLESS_MAIN(TestDatasetBrown)
#include "test_dataset_brown.moc"
