// data.corpus = brown as a prepared dataset in the data cache: made once (llm.c shards, manifest,
// POS tags), reused after, made again when the Brown files change; fractions of its tokens sized
// the evaluation splits; processes that ask at once wait for one; refusals name the fix.
#include <QTemporaryDir>
#include <QtTest>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "engine/config/data_config.h"
#include "engine/data/corpus.h"
#include "engine/dataset/brown_dataset.h"
#include "engine/dataset/brown_tags.h"
#include "engine/dataset/dataset_manifest.h"
#include "engine/dataset/prepared_data.h"
#include "engine/io/error.h"
#include "tests/support/test_support.h"

namespace fs = std::filesystem;
using gllm::test::error_of;

class TestDatasetBrownCache : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string src_;

  gllm::DataConfig brown(double val = 0.15, double heldout = 0.15) const {
    gllm::DataConfig c;
    c.corpus = "brown";
    c.corpus_path = src_;
    c.vocab_size = 320;
    c.val_fraction = val;
    c.heldout_fraction = heldout;
    return c;
  }

  static uint64_t split_tokens(const nlohmann::json& m, const char* s) {
    return m["splits"][s]["tokens"].get<uint64_t>();
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    ::setenv("GLLM_DATA", (tmp_.path().toStdString() + "/cache").c_str(), 1);
    src_ = tmp_.path().toStdString() + "/brown";
    fs::copy(gllm::test::fixture("brown_mini"), src_);  // writable: a test edits a file
  }

  void preparedOnceThenReused() {
    std::vector<std::string> log;
    auto say = [&](const std::string& l) { log.push_back(l); };
    const gllm::Dataset ds = gllm::open_configured_dataset(brown(), say);
    const std::string dir = gllm::brown_dataset_dir(brown());
    QCOMPARE(ds.cache_dir, dir);
    QVERIFY2(dir.find(tmp_.path().toStdString() + "/cache/datasets/brown-") == 0, dir.c_str());
    const nlohmann::json m = gllm::read_manifest(dir);
    QCOMPARE(m["options"]["format"].get<std::string>(), std::string("brown"));
    QCOMPARE(m["options"]["val_fraction"].get<double>(), 0.15);
    QVERIFY(m["annotations"].contains("brown_pos_tags"));
    // The eight documents, each in one split.
    std::set<uint32_t> all;
    for (auto* s : {&ds.splits.train, &ds.splits.val, &ds.splits.heldout}) {
      QVERIFY(!s->empty());
      all.insert(s->begin(), s->end());
    }
    QCOMPARE(all.size(), size_t(8));
    QCOMPARE(ds.splits.train.size() + ds.splits.val.size() + ds.splits.heldout.size(), size_t(8));
    // The fractions are of every token (BOS included): the split asks for that many and takes
    // whole documents until it has them.
    const uint64_t total =
        split_tokens(m, "train") + split_tokens(m, "val") + split_tokens(m, "heldout");
    QCOMPARE(m["splits"]["val"]["tokens_requested"].get<uint64_t>(),
             uint64_t(std::llround(0.15 * double(total))));
    QVERIFY(split_tokens(m, "val") >= m["splits"]["val"]["tokens_requested"].get<uint64_t>());
    bool prepared_now = false;
    for (const auto& l : log) prepared_now |= l.find("prepared the Brown corpus") == 0;
    QVERIFY(prepared_now);

    // Opened again: the same folder, nothing written.
    const auto mtime = fs::last_write_time(dir + "/manifest.json");
    log.clear();
    const gllm::Dataset again = gllm::open_configured_dataset(brown(), say);
    QCOMPARE(again.splits.val, ds.splits.val);
    QCOMPARE(fs::last_write_time(dir + "/manifest.json"), mtime);
    for (const auto& l : log) QVERIFY2(l.find("prepared the Brown corpus") != 0, l.c_str());
  }

  void taggedDataFromTheCache() {
    const gllm::TaggedData t = gllm::open_tagged_data(brown());
    const gllm::Corpus read = gllm::read_brown_corpus(src_);
    QCOMPARE(t.corpus.kind, std::string("brown"));
    QCOMPARE(t.corpus.documents.size(), read.documents.size());
    QCOMPARE(t.corpus.words(), read.words());
    QCOMPARE(t.ds.cache_dir, gllm::brown_dataset_dir(brown()));
  }

  void changedFilesPrepareAgain() {
    const gllm::DataConfig c = brown(0.2, 0.2);
    const size_t words_before = gllm::open_tagged_data(c).corpus.words();
    {
      std::ofstream f(src_ + "/ca01", std::ios::app);
      f << "\n\n\tThe/at jury/nn adjourned/vbd ./.\n";
    }
    std::vector<std::string> log;
    const gllm::TaggedData t =
        gllm::open_tagged_data(c, [&](const std::string& l) { log.push_back(l); });
    QCOMPARE(t.corpus.words(), words_before + 4);
    bool stale = false;
    for (const auto& l : log) stale |= l.find("is stale (input") != std::string::npos;
    QVERIFY(stale);
  }

  void askersAtOnceWaitForOne() {
    const gllm::DataConfig c = brown(0.1, 0.25);
    std::atomic<int> prepared{0}, failed{0};
    std::string dirs[2];
    auto ask = [&](int i) {
      try {
        dirs[i] = gllm::prepared_brown_config(c, [&](const std::string& l) {
                    if (l.find("prepared the Brown corpus") == 0) ++prepared;
                  }).corpus_path;
      } catch (const std::exception&) {
        ++failed;
      }
    };
    std::thread a(ask, 0), b(ask, 1);
    a.join();
    b.join();
    QCOMPARE(failed.load(), 0);
    QCOMPARE(prepared.load(), 1);
    QCOMPARE(dirs[0], dirs[1]);
    QCOMPARE(dirs[0], gllm::brown_dataset_dir(c));
  }

  void refusalsNameTheFix() {
    std::string e = error_of([&] { gllm::prepared_brown_config(brown(0.3, 0.3)); });
    QVERIFY2(e.find("val_fraction + heldout_fraction must be at most 0.5") != std::string::npos,
             e.c_str());
    e = error_of([&] { gllm::prepared_brown_config(brown(0.1, 0)); });
    QVERIFY2(e.find("held-out split") != std::string::npos, e.c_str());
    gllm::DataConfig cache = brown();
    cache.corpus_path.clear();  // the data cache holds no fetched copy here
    e = error_of([&] { gllm::open_configured_dataset(cache); });
    QVERIFY2(e.find("gllm data fetch") != std::string::npos, e.c_str());
  }
};

QTEST_GUILESS_MAIN(TestDatasetBrownCache)
#include "test_dataset_brown_cache.moc"
