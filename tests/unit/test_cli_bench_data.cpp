// `gllm bench data` at a small size, as a user runs it: the generated corpus prepared and encoded
// by spm_encode on the same files and model (ids identical), splits that add up, the loader's
// share.
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>

#include "engine/bench/zipf_corpus.h"
#include "engine/io/atomic_file.h"
#include "tests/support/test_support.h"

namespace fs = std::filesystem;

class TestCliBenchData : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // The generator is deterministic and does not depend on the writers' threads.
  void corpusIsTheSameForAnyThreads() {
    QTemporaryDir tmp;
    gllm::bench::ZipfCorpusSpec spec;
    spec.bytes = 3 << 20;
    spec.files = 3;
    const auto one = gllm::bench::write_zipf_corpus(tmp.filePath("a").toStdString(), spec, 1);
    const auto three = gllm::bench::write_zipf_corpus(tmp.filePath("b").toStdString(), spec, 3);
    QCOMPARE(one.documents, three.documents);
    QVERIFY(one.documents > 100);
    uint64_t bytes = 0;
    for (size_t i = 0; i < one.files.size(); ++i) {
      QCOMPARE(gllm::read_file(one.files[i]), gllm::read_file(three.files[i]));
      bytes += fs::file_size(one.files[i]);
    }
    QCOMPARE(bytes, uint64_t(spec.bytes));
    spec.seed = 2;  // another seed, other text
    const auto other = gllm::bench::write_zipf_corpus(tmp.filePath("c").toStdString(), spec, 2);
    QVERIFY(gllm::read_file(other.files[0]) != gllm::read_file(one.files[0]));
  }

  void smallRunReportsBothSides() {
    QTemporaryDir tmp;
    const std::string d = tmp.path().toStdString();
    auto r = gllm::test::run_cli({"bench", "data", "--size-gib", "0.004", "--train-steps", "3",
                                  "--tokenizer-sample", "200k", "--vocab", "1024", "--threads", "2",
                                  "--dir", d + "/bench", "--out-dir", d + "/results", "--json"});
    QVERIFY2(r.exit_code == 0, (r.out + r.err).c_str());
    const auto j = nlohmann::json::parse(r.out);
    QCOMPARE(j["kind"].get<std::string>(), std::string("data"));
    QVERIFY(fs::exists(j["saved"].get<std::string>()));
    QVERIFY(j["prepare"]["encode_mb_per_s"].get<double>() > 0);
    QVERIFY(j["spm_encode"]["mb_per_s"].get<double>() > 0);
    QCOMPARE(j["spm_encode"]["processes"].get<int>(), 2);
    QVERIFY(j["prepare"]["peak_rss_mib"].get<double>() > 1);
    QVERIFY2(j["same_tokens"]["identical"].get<bool>(), j["same_tokens"].dump().c_str());
    QVERIFY(j["same_tokens"]["documents"].get<int>() > 10);
    QVERIFY(j["disjoint"].get<bool>());
    uint64_t docs = 0;
    for (const char* s : {"train", "val", "heldout"})
      docs += j["splits"][s]["documents"].get<uint64_t>();
    QCOMPARE(docs, j["corpus"]["documents"].get<uint64_t>());
    QCOMPARE(j["loader"]["steps"].get<int>(), 3);
    const double share = j["loader"]["share"].get<double>();
    QVERIFY2(share > 0 && share < 1, j["loader"].dump().c_str());
    for (const char* stage : {"scan", "tokenizer", "encode"})
      QVERIFY2(j["prepare"]["stage_s"].contains(stage), j["prepare"].dump().c_str());
    // The table a person reads names both sides.
    r = gllm::test::run_cli({"bench", "data", "--size-gib", "0.004", "--train-steps", "0",
                             "--tokenizer-sample", "200k", "--vocab", "1024", "--dir", d + "/bench",
                             "--no-save"});
    QVERIFY2(r.exit_code == 0, (r.out + r.err).c_str());
    QVERIFY2(r.out.find("spm_encode") != std::string::npos &&
                 r.out.find("encode MB/s") != std::string::npos &&
                 r.out.find("identical") != std::string::npos,
             r.out.c_str());
  }
};

QTEST_APPLESS_MAIN(TestCliBenchData)
#include "test_cli_bench_data.moc"
