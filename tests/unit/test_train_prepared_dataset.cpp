// Training from a prepared dataset (data.corpus = prepared): the mapped shards cut back into the
// manifest's documents (across shard boundaries too), BPB bytes as the manifest's, a short run.
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "engine/dataset/prepare.h"
#include "engine/dataset/prepared_data.h"
#include "engine/dataset/shard_file.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/train/head_profiles.h"
#include "engine/train/probe.h"
#include "engine/train/trainer.h"
#include "tests/support/test_configs.h"
#include "tests/support/test_support.h"

namespace {

struct Recorder : gllm::RunObserver {
  std::mutex mu;
  gllm::FinishedRecord finished;
  std::vector<gllm::EvalRecord> evals;
  std::string error;
  void on_step(const gllm::StepRecord&) override {}
  void on_eval(const gllm::EvalRecord& e) override {
    std::lock_guard<std::mutex> lk(mu);
    evals.push_back(e);
  }
  void on_checkpoint(const gllm::CheckpointRecord&) override {}
  void on_finished(const gllm::FinishedRecord& f) override {
    std::lock_guard<std::mutex> lk(mu);
    finished = f;
  }
  void on_error(const std::string& m) override {
    std::lock_guard<std::mutex> lk(mu);
    error = m;
  }
};

}  // namespace

class TestTrainPreparedDataset : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string ds_;
  nlohmann::json manifest_;

  gllm::RunConfig run(int steps) const {
    gllm::RunConfig c = gllm::test::tiny_text_run(steps);
    c.data.corpus = "prepared";
    c.data.corpus_path = ds_;
    return gllm::RunConfig::from_json(c.to_json());
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    ::setenv("GLLM_DATA", (tmp_.path().toStdString() + "/cache").c_str(), 1);
    ds_ = tmp_.path().toStdString() + "/ds";
    gllm::PrepareOptions o;
    o.inputs = {gllm::test::fixture("runs_corpus.txt")};
    o.out_dir = ds_;
    o.vocab = 300;
    o.tokenizer_sample = 8000;
    o.val_tokens = 1000;
    o.heldout_tokens = 1000;
    o.shard_tokens = 1024;  // the smallest: documents cross shard boundaries
    o.threads = 1;
    manifest_ = gllm::prepare_dataset(o).manifest;
    QVERIFY(manifest_["splits"]["train"]["shards"].size() >= 3);
  }

  void documentsAreTheManifests() {
    gllm::DataConfig cfg = run(1).data;
    gllm::Dataset ds = gllm::open_prepared_dataset(cfg);
    const char* names[] = {"train", "val", "heldout"};
    for (const char* name : names) {
      const auto& sp = manifest_["splits"][name];
      QCOMPARE(uint64_t(ds.splits.get(name).size()), sp["documents"].get<uint64_t>());
      // BOS + each document, in order, is exactly the split's shard stream.
      std::vector<uint16_t> stream, rebuilt;
      for (const auto& sh : sp["shards"]) {
        gllm::MappedShard m(ds_ + "/" + sh["file"].get<std::string>());
        stream.insert(stream.end(), m.tokens(), m.tokens() + m.size());
      }
      for (uint32_t d : ds.splits.get(name)) {
        auto v = ds.shard->document(d);
        rebuilt.push_back(uint16_t(ds.tokenizer.bos_id()));
        rebuilt.insert(rebuilt.end(), v.data, v.data + v.size);
      }
      QVERIFY2(rebuilt == stream, name);
      // The BPB denominator the trainer uses is the manifest's bytes (bytes per token × tokens).
      QCOMPARE(uint64_t(ds.split_bytes(name)), sp["bytes"].get<uint64_t>());
    }
    // data.vocab_size must be the dataset's.
    cfg.vocab_size = 512;
    const std::string e = gllm::test::error_of([&] { gllm::open_prepared_dataset(cfg); });
    QVERIFY2(e.find("data.vocab_size") != std::string::npos && e.find("300") != std::string::npos,
             e.c_str());
  }

  void trainsAFewSteps() {
    Recorder rec;
    gllm::Trainer t;
    t.start(run(6), tmp_.path().toStdString() + "/run", &rec);
    t.wait();
    QVERIFY2(rec.error.empty(), rec.error.c_str());
    QCOMPARE(rec.finished.status, std::string("completed"));
    QCOMPARE(rec.finished.step, int64_t(6));
    QVERIFY(std::isfinite(rec.finished.final_loss) && rec.finished.final_loss > 0);
    QVERIFY(rec.finished.val_bpb > 0 && std::isfinite(rec.finished.val_bpb));
    QVERIFY(!rec.evals.empty());
    auto cfg = gllm::test::read_json(tmp_.path().toStdString() + "/run/config.json");
    QCOMPARE(cfg["data"]["corpus"].get<std::string>(), std::string("prepared"));
  }

  // Issue 40, point 2: the Brown corpus prepared as any corpus is (--format brown) trains like any
  // dataset, and its kept POS tags feed the probe and the head profiles of the run's checkpoints.
  void brownDatasetFeedsTheProbeAndHeadProfiles() {
    // 32 Brown files: the fixture's eight four times over, each copy with a sentence of its own
    // (enough text for a validation split the head profiles can read and two held-out documents).
    const std::string src = tmp_.path().toStdString() + "/brown-src";
    std::filesystem::create_directories(src);
    int copy = 0;
    for (int round = 0; round < 4; ++round)
      for (const auto& e : std::filesystem::directory_iterator(gllm::test::fixture("brown_mini"))) {
        ++copy;
        const std::string name = std::string("c") + char('a' + (copy - 1) / 9) + '0' +
                                 char('1' + (copy - 1) % 9);  // ca01 … ca09, cb01 …
        gllm::test::write_text(src + "/" + name, gllm::read_file(e.path().string()) +
                                                     "\n\n\tCopy/nn " + std::to_string(copy) +
                                                     "/cd of/in " + e.path().filename().string() +
                                                     "/np ./.\n");
      }
    const std::string brown = tmp_.path().toStdString() + "/brown-ds";
    gllm::PrepareOptions o;
    o.inputs = {src};
    o.out_dir = brown;
    o.format = "brown";
    o.vocab = 320;
    o.tokenizer_sample = 8000;
    o.val_tokens = 600;
    o.heldout_tokens = 200;
    o.shard_tokens = 1024;
    o.threads = 1;
    gllm::prepare_dataset(o);
    gllm::RunConfig c = run(4);
    c.data.corpus_path = brown;
    c.data.vocab_size = 320;
    c.train.checkpoint_every = 2;
    c = gllm::RunConfig::from_json(c.to_json());
    const std::string dir = tmp_.path().toStdString() + "/brown-run";
    Recorder rec;
    gllm::Trainer t;
    t.start(c, dir, &rec);
    t.wait();
    QVERIFY2(rec.error.empty(), rec.error.c_str());
    QCOMPARE(rec.finished.status, std::string("completed"));
    const auto scores = gllm::probe_run(dir, gllm::ProbeOptions{});
    QCOMPARE(scores.size(), size_t(2));  // the checkpoints at steps 2 and 4
    for (const auto& s : scores) {
      QCOMPARE(s.task, std::string("brown-pos"));
      QVERIFY(s.test_words > 0 && s.task_error >= 0 && s.task_error <= 1);
    }
    gllm::HeadProfileOptions h;
    h.checkpoint = dir;
    h.bootstrap = 4;
    const auto hp = gllm::estimate_head_profiles(h);
    QCOMPARE(hp.layers, c.model.n_layer);
    QCOMPARE(hp.heads, c.model.n_head);
  }

  void changedShardStopsTrainingBeforeItStarts() {
    {
      std::fstream f(ds_ + "/train_000001.bin", std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(1100);
      f.put('\x05');
      f.put('\x01');
    }
    Recorder rec;
    gllm::Trainer t;
    std::string thrown;
    try {
      t.start(run(2), tmp_.path().toStdString() + "/run2", &rec);
      t.wait();
    } catch (const gllm::Error& e) {
      thrown = e.what();
    }
    const std::string msg = thrown.empty() ? rec.error : thrown;
    QVERIFY2(msg.find("train_000001.bin changed after the manifest") != std::string::npos,
             msg.c_str());
    QVERIFY(rec.finished.status != "completed");
  }
};

QTEST_APPLESS_MAIN(TestTrainPreparedDataset)
#include "test_train_prepared_dataset.moc"
