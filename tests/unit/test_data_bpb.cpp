// BPB: a hand-computed case, and random batches against an independent Python stdlib computation
// (tests/python/data_bpb_reference.py); specials and <pad> targets carry no bytes and no nats.
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "engine/data/bpb.h"
#include "engine/io/error.h"
#include "tests/support/test_support.h"

class TestDataBpb : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void handComputed() {
    // Vocabulary: 0–3 specials (0 bytes), 4 → 1 byte, 5 → 3 bytes, 6 → 2 bytes.
    gllm::BpbAccumulator acc({0, 0, 0, 0, 1, 3, 2});
    const float nats[] = {1.0f, 2.0f, 0.5f, 9.0f, 4.0f};
    const int32_t targets[] = {4, 5, 6, 1, 3};  // the last two are specials: skipped
    acc.add(nats, targets, 5);
    // (1 + 2 + 0.5) / (ln 2 · (1 + 3 + 2)) = 3.5 / (6 ln 2)
    QCOMPARE(acc.bytes(), 6.0);
    QCOMPARE(acc.targets(), int64_t(3));
    QVERIFY(std::fabs(acc.bpb() - 3.5 / (6 * std::log(2.0))) < 1e-12);
    QVERIFY(std::fabs(acc.mean_nats() - 3.5 / 3) < 1e-12);
    gllm::BpbAccumulator other({0, 0, 0, 0, 1, 3, 2});
    const double n2[] = {2.0};
    const int64_t t2[] = {5};
    other.add(n2, t2, 1);
    acc.merge(other);
    QVERIFY(std::fabs(acc.bpb() - 5.5 / (9 * std::log(2.0))) < 1e-12);
    acc.reset();
    QVERIFY(std::isnan(acc.bpb()));
    const int32_t out_of_range[] = {7};
    QVERIFY_THROWS_EXCEPTION(gllm::Error, acc.add(nats, out_of_range, 1));
  }

  void matchesPythonReference() {
    std::string py = gllm::test::plain_python();
    if (py.empty()) QSKIP("no python3 for the reference computation");
    std::mt19937_64 rng(5);
    const int V = 300;
    std::vector<int32_t> tb(V);
    for (int i = 0; i < V; ++i) tb[i] = i < 4 ? 0 : (i < 260 ? 1 : int(rng() % 9) + 1);
    std::vector<double> nats(5000);
    std::vector<int64_t> targets(5000);
    for (size_t i = 0; i < nats.size(); ++i) {
      nats[i] = std::uniform_real_distribution<double>(0, 12)(rng);
      targets[i] = int64_t(rng() % V);
    }
    gllm::BpbAccumulator acc(tb);
    acc.add(nats.data(), targets.data(), nats.size());
    nlohmann::json in = {{"token_bytes", tb}, {"nats", nats}, {"targets", targets}};
    QTemporaryDir dir;
    std::string f = dir.filePath("in.json").toStdString();
    std::ofstream(f) << in.dump();
    auto r = gllm::test::run_program(
        "/bin/sh",
        {"-c", py + " " + gllm::test::python_script("data_bpb_reference.py") + " < " + f});
    QVERIFY2(r.exit_code == 0, r.err.c_str());
    auto out = nlohmann::json::parse(r.out);
    QCOMPARE(acc.bytes(), out["bytes"].get<double>());
    QVERIFY2(std::fabs(acc.bpb() - out["bpb"].get<double>()) < 1e-12 * out["bpb"].get<double>(),
             qPrintable(QString("%1 vs %2")
                            .arg(acc.bpb(), 0, 'g', 17)
                            .arg(out["bpb"].get<double>(), 0, 'g', 17)));
  }
};

QTEST_APPLESS_MAIN(TestDataBpb)
#include "test_data_bpb.moc"
