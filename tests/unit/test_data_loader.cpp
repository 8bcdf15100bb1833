// Token cache (mmap round trip, rebuilt only when inputs change), document splits (disjoint,
// covering, deterministic) and the best-fit packing loader (BOS-aligned rows, resumable state,
// finite evaluation that scores every token once), checked against an independent packer.
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "engine/config/data_config.h"
#include "engine/data/corpus.h"
#include "engine/data/dataset.h"
#include "engine/data/packing_loader.h"
#include "engine/data/splits.h"
#include "engine/data/token_cache.h"
#include "engine/data/tokenizer.h"
#include "engine/io/error.h"
#include "tests/support/test_support.h"

namespace fs = std::filesystem;

class TestDataLoader : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  gllm::Corpus corpus_;
  gllm::Tokenizer tok_;
  std::shared_ptr<gllm::TokenShard> shard_;

 private Q_SLOTS:
  void initTestCase() {
    corpus_ = gllm::read_brown_corpus(gllm::test::fixture("brown_mini"));
    tok_ = gllm::Tokenizer::train(corpus_, 320, dir_.filePath("t.model").toStdString(), 1);
    auto j = gllm::write_token_cache(corpus_, tok_, dir_.filePath("tokens.bin").toStdString(),
                                     dir_.filePath("tokens.json").toStdString(), 2);
    shard_ = gllm::TokenShard::open(dir_.filePath("tokens.bin").toStdString());
    QCOMPARE(j["documents"].get<size_t>(), corpus_.documents.size());
  }

  void cacheMatchesEncode() {
    QCOMPARE(shard_->num_documents(), corpus_.documents.size());
    size_t total = 0;
    for (size_t i = 0; i < corpus_.documents.size(); ++i) {
      auto ids = tok_.encode(corpus_.documents[i].text);
      auto v = shard_->document(i);
      QCOMPARE(v.size, ids.size());
      for (size_t k = 0; k < v.size; ++k) QCOMPARE(int32_t(v.data[k]), ids[k]);
      total += v.size;
    }
    QCOMPARE(shard_->num_tokens(), total);
    QVERIFY(gllm::token_cache_current(dir_.filePath("tokens.json").toStdString(), corpus_.hash(),
                                      tok_.hash()));
    QVERIFY(!gllm::token_cache_current(dir_.filePath("tokens.json").toStdString(), corpus_.hash(),
                                       "other"));
    // A truncated shard is refused.
    std::string bad = dir_.filePath("bad.bin").toStdString();
    fs::copy_file(dir_.filePath("tokens.bin").toStdString(), bad);
    fs::resize_file(bad, fs::file_size(bad) - 2);
    QVERIFY_THROWS_EXCEPTION(gllm::Error, gllm::TokenShard::open(bad));
  }

  void splitsDisjointDeterministic() {
    auto s = gllm::split_documents(100, 0.1, 0.05, 7);
    QCOMPARE(s.val.size(), size_t(10));
    QCOMPARE(s.heldout.size(), size_t(5));
    QCOMPARE(s.train.size(), size_t(85));
    std::set<uint32_t> all;
    for (auto* v : {&s.train, &s.val, &s.heldout})
      for (uint32_t d : *v) QVERIFY(all.insert(d).second);
    QCOMPARE(all.size(), size_t(100));
    auto s2 = gllm::split_documents(100, 0.1, 0.05, 7);
    QCOMPARE(s2.val, s.val);
    QCOMPARE(s2.heldout, s.heldout);
    auto s3 = gllm::split_documents(100, 0.1, 0.05, 8);
    QVERIFY(s3.val != s.val);
    // Small corpora still get one document per non-zero fraction; impossible splits are refused.
    auto s4 = gllm::split_documents(8, 0.05, 0.05, 1);
    QCOMPARE(s4.val.size(), size_t(1));
    QCOMPARE(s4.heldout.size(), size_t(1));
    QVERIFY_THROWS_EXCEPTION(gllm::Error, gllm::split_documents(2, 0.05, 0.05, 1));
    // SplitMix64 reference values (Vigna's splitmix64.c, seed 1234567).
    gllm::SplitMix64 r(1234567);
    QCOMPARE(r.next(), uint64_t(6457827717110365317ull));
    QCOMPARE(r.next(), uint64_t(3203168211198807973ull));
  }

  // Independent best-fit packer over the same units: a std::multimap keyed by length.
  void bestFitMatchesIndependentPacker() {
    const int64_t T = 40, B = 3;
    std::vector<uint32_t> docs(corpus_.documents.size());
    for (size_t i = 0; i < docs.size(); ++i) docs[i] = uint32_t(i);
    gllm::PackingLoader L(shard_, docs, B, T, gllm::PackingLoader::Mode::Eval);
    // Units in document order: BOS + ≤ T tokens.
    std::vector<std::vector<int32_t>> units;
    for (uint32_t d : docs) {
      auto v = shard_->document(d);
      for (size_t b = 0; b < v.size; b += T) {
        std::vector<int32_t> u{1};
        for (size_t k = b; k < std::min(v.size, b + size_t(T)); ++k) u.push_back(v.data[k]);
        units.push_back(u);
      }
    }
    QCOMPARE(L.num_units(), units.size());
    // Reference: buffer = all units (fewer than 1000); pick longest fitting, earliest on ties; pad.
    std::vector<std::vector<int32_t>> ref_rows;
    std::vector<size_t> pending(units.size());
    for (size_t i = 0; i < units.size(); ++i) pending[i] = i;
    while (!pending.empty()) {
      std::vector<int32_t> row;
      while (true) {
        size_t room = T + 1 - row.size();
        auto best = pending.end();
        for (auto it = pending.begin(); it != pending.end(); ++it)
          if (units[*it].size() <= room &&
              (best == pending.end() || units[*it].size() > units[*best].size()))
            best = it;
        if (best == pending.end()) break;
        row.insert(row.end(), units[*best].begin(), units[*best].end());
        pending.erase(best);
      }
      row.resize(T + 1, 3);
      ref_rows.push_back(row);
    }
    std::vector<std::vector<int32_t>> rows;
    gllm::Batch b;
    int64_t batches = 0;
    while (L.next(b)) {
      ++batches;
      QVERIFY(b.rows >= 1 && b.rows <= B);
      for (int64_t r = 0; r < b.rows; ++r)
        rows.emplace_back(b.tokens.begin() + r * (T + 1), b.tokens.begin() + (r + 1) * (T + 1));
    }
    QCOMPARE(rows.size(), ref_rows.size());
    QVERIFY(rows == ref_rows);
    QCOMPARE(batches, int64_t((ref_rows.size() + B - 1) / B));
    // Every text token appears exactly once in the pass.
    size_t text_tokens = 0;
    for (auto& r : rows)
      for (int32_t t : r) text_tokens += (t >= 4);
    QCOMPARE(text_tokens, shard_->num_tokens());
    // Second pass after reset is identical.
    L.reset();
    std::vector<std::vector<int32_t>> again;
    while (L.next(b))
      for (int64_t r = 0; r < b.rows; ++r)
        again.emplace_back(b.tokens.begin() + r * (T + 1), b.tokens.begin() + (r + 1) * (T + 1));
    QVERIFY(again == rows);
  }

  void trainRowsAndResume() {
    const int64_t T = 24, B = 4;
    std::vector<uint32_t> docs = {0, 1, 2, 3, 4, 5};
    gllm::PackingLoader a(shard_, docs, B, T, gllm::PackingLoader::Mode::Train, 99, 1, 3, 7);
    gllm::Batch b;
    nlohmann::json saved;
    std::vector<std::vector<int32_t>> after;
    for (int step = 0; step < 40; ++step) {
      QVERIFY(a.next(b));
      QCOMPARE(b.rows, B);
      QCOMPARE(b.tokens.size(), size_t(B * (T + 1)));
      for (int64_t r = 0; r < B; ++r) QCOMPARE(b.tokens[r * (T + 1)], 1);  // BOS-aligned rows
      for (int32_t t : b.tokens) QVERIFY(t != 3);                          // no padding in training
      if (step == 17)
        saved = nlohmann::json::parse(a.state().dump());  // via text, as a checkpoint would
      if (step > 17) after.push_back(b.tokens);
    }
    QVERIFY(a.epoch() >= 1);  // 40 batches cover several epochs of this small split
    gllm::PackingLoader c(shard_, docs, B, T, gllm::PackingLoader::Mode::Train, 99, 1, 3, 7);
    c.restore(saved);
    for (const auto& want : after) {
      QVERIFY(c.next(b));
      QVERIFY(b.tokens == want);
    }
    // Same seed from scratch: same first batch; another seed: a different one.
    gllm::PackingLoader d(shard_, docs, B, T, gllm::PackingLoader::Mode::Train, 99, 1, 3, 7);
    gllm::PackingLoader e(shard_, docs, B, T, gllm::PackingLoader::Mode::Train, 100, 1, 3, 7);
    gllm::Batch bd, be, ba;
    gllm::PackingLoader a2(shard_, docs, B, T, gllm::PackingLoader::Mode::Train, 99, 1, 3, 7);
    a2.next(ba);
    d.next(bd);
    e.next(be);
    QVERIFY(bd.tokens == ba.tokens);
    QVERIFY(be.tokens != ba.tokens);
    // inputs/targets are the row shifted by one.
    auto in = bd.inputs_int64(), tg = bd.targets_int64();
    QCOMPARE(in.size(), size_t(B * T));
    QCOMPARE(in[1], tg[0]);
    QCOMPARE(tg[T - 1], int64_t(bd.tokens[T]));
    // A state from a different configuration is refused.
    gllm::PackingLoader f(shard_, docs, B, T + 1, gllm::PackingLoader::Mode::Train, 99, 1, 3, 7);
    QVERIFY_THROWS_EXCEPTION(gllm::Error, f.restore(saved));
    // A tampered state the loader was never in is refused: an emptied buffer (resuming from it
    // would not reproduce the run) and a negative batch count.
    nlohmann::json emptied = saved;
    emptied["buffer"] = nlohmann::json::array();
    gllm::PackingLoader g(shard_, docs, B, T, gllm::PackingLoader::Mode::Train, 99, 1, 3, 7);
    QVERIFY_THROWS_EXCEPTION(gllm::Error, g.restore(emptied));
    nlohmann::json negative = saved;
    negative["batches"] = -5;
    QVERIFY_THROWS_EXCEPTION(gllm::Error, g.restore(negative));
    g.restore(saved);  // the state as written still restores
  }

  // Contiguous windows against an independent reading: the windows of one epoch, joined with
  // their one-token overlaps removed, are BOS + tokens of every document exactly once, in some
  // order; windows cross documents; a saved state resumes exactly; a state of the packed loader
  // is refused, and evaluation refuses the mode.
  void contiguousWindowsCoverTheStream() {
    using W = gllm::PackingLoader::Windows;
    using M = gllm::PackingLoader::Mode;
    const int64_t T = 16, B = 3;
    std::vector<uint32_t> docs = {0, 1, 2, 3, 4, 5};
    size_t stream_tokens = 0;
    std::multiset<std::vector<int32_t>> want;  // each document as BOS + its tokens
    for (uint32_t d : docs) {
      const auto v = shard_->document(d);
      std::vector<int32_t> doc = {1};
      doc.insert(doc.end(), v.data, v.data + v.size);
      stream_tokens += doc.size();
      want.insert(doc);
    }
    gllm::PackingLoader a(shard_, docs, B, T, M::Train, 7, 1, 3, 1000, W::Contiguous);
    gllm::Batch b;
    std::vector<int32_t> stream;
    nlohmann::json saved;
    std::vector<std::vector<int32_t>> after;
    int crossing = 0;
    for (int step = 0; stream.size() < 3 * stream_tokens; ++step) {
      QVERIFY(a.next(b));
      QCOMPARE(b.rows, B);
      for (int64_t r = 0; r < B; ++r) {
        const int32_t* row = b.tokens.data() + r * (T + 1);
        if (!stream.empty()) QCOMPARE(row[0], stream.back());  // starts with the last target
        stream.insert(stream.end(), row + (stream.empty() ? 0 : 1), row + T + 1);
        crossing += std::count(row + 1, row + T + 1, 1) > 0;
        for (int64_t t = 0; t <= T; ++t) QVERIFY(row[t] != 3);  // no padding
      }
      if (step == 5) saved = nlohmann::json::parse(a.state().dump());
      if (step > 5 && after.size() < 20) after.push_back(b.tokens);
    }
    QVERIFY(crossing > 0);
    // The first epoch: the stream's first stream_tokens tokens, cut at each BOS.
    std::vector<std::vector<int32_t>> pieces;
    for (size_t i = 0; i < stream_tokens; ++i) {
      if (stream[i] == 1) pieces.emplace_back();
      pieces.back().push_back(stream[i]);
    }
    QVERIFY(std::multiset<std::vector<int32_t>>(pieces.begin(), pieces.end()) == want);
    QVERIFY(a.epoch() >= 2);
    gllm::PackingLoader c(shard_, docs, B, T, M::Train, 7, 1, 3, 1000, W::Contiguous);
    c.restore(saved);
    for (const auto& w : after) {
      QVERIFY(c.next(b));
      QVERIFY(b.tokens == w);
    }
    // A state whose position lies past its document is refused, and the loader reads on from
    // where it was (the refused epoch's order is not left behind).
    gllm::PackingLoader d(shard_, docs, B, T, M::Train, 7, 1, 3, 1000, W::Contiguous);
    gllm::PackingLoader e(shard_, docs, B, T, M::Train, 7, 1, 3, 1000, W::Contiguous);
    for (int i = 0; i < 2; ++i) QVERIFY(d.next(b) && e.next(b));
    nlohmann::json past = saved;
    past["offset"] = 100000;
    QVERIFY_THROWS_EXCEPTION(gllm::Error, d.restore(past));
    gllm::Batch bd, be;
    for (int i = 0; i < 4; ++i) {
      QVERIFY(d.next(bd) && e.next(be));
      QVERIFY(bd.tokens == be.tokens);
    }
    QCOMPARE(d.epoch(), e.epoch());
    gllm::PackingLoader packed(shard_, docs, B, T, M::Train, 7, 1, 3, 1000);
    QVERIFY_THROWS_EXCEPTION(gllm::Error, packed.restore(saved));
    QVERIFY_THROWS_EXCEPTION(gllm::Error, gllm::PackingLoader(shard_, docs, B, T, M::Eval, 0, 1, 3,
                                                              1000, W::Contiguous));
  }

  void datasetCachesAndRebuilds() {
    QTemporaryDir cache;
    qputenv("GLLM_DATA", cache.path().toUtf8());
    std::string root = dir_.filePath("textcorpus").toStdString();
    fs::create_directories(root);
    for (int i = 0; i < 12; ++i)
      std::ofstream(root + "/doc" + std::to_string(10 + i) + ".txt")
          << "Document number " << i << " talks about the jury and the election. "
          << std::string(i, 'x') << "\n";
    gllm::DataConfig cfg;
    cfg.corpus = "text";
    cfg.corpus_path = root;
    cfg.vocab_size = 300;
    cfg.val_fraction = 0.1;
    cfg.heldout_fraction = 0.1;
    auto d1 = gllm::open_dataset(cfg);
    QVERIFY(d1.rebuilt);
    QCOMPARE(d1.info["documents"].get<int>(), 12);
    QCOMPARE(d1.splits.train.size() + d1.splits.val.size() + d1.splits.heldout.size(), size_t(12));
    auto stamp = fs::last_write_time(d1.cache_dir + "/tokens.bin");
    auto d2 = gllm::open_dataset(cfg);
    QVERIFY(!d2.rebuilt);
    QCOMPARE(fs::last_write_time(d2.cache_dir + "/tokens.bin"), stamp);
    QVERIFY(d2.splits.val == d1.splits.val);
    // Σ split bytes = corpus bytes.
    QCOMPARE(d2.split_bytes("train") + d2.split_bytes("val") + d2.split_bytes("heldout"),
             d2.info["bytes"].get<int64_t>());
    std::ofstream(root + "/doc10.txt", std::ios::app) << "changed\n";
    auto d3 = gllm::open_dataset(cfg);
    QVERIFY(d3.rebuilt);
    QVERIFY(d3.cache_dir != d1.cache_dir);  // keyed by corpus hash
    qunsetenv("GLLM_DATA");
  }
};

QTEST_APPLESS_MAIN(TestDataLoader)
#include "test_data_loader.moc"
