// The Brown corpus as a prepared dataset: its POS tags kept in brown_tags.jsonl and read back
// aligned with the shards' documents — equal, word for word, to the corpus read_brown_corpus reads
// — and the refusals (no tags kept, the tags file changed, a corpus without tags).
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <map>
#include <set>

#include "engine/config/data_config.h"
#include "engine/data/corpus.h"
#include "engine/data/probe_task.h"
#include "engine/dataset/brown_tags.h"
#include "engine/dataset/dataset_manifest.h"
#include "engine/dataset/prepare.h"
#include "engine/dataset/prepared_data.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "tests/support/test_support.h"

namespace fs = std::filesystem;

class TestDatasetBrownTags : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string src_, ds_;

  gllm::DataConfig prepared(const std::string& dir) const {
    gllm::DataConfig c;
    c.corpus = "prepared";
    c.corpus_path = dir;
    c.vocab_size = 320;
    return c;
  }

  gllm::PrepareOptions options(const std::string& out) const {
    gllm::PrepareOptions o;
    o.inputs = {src_};
    o.out_dir = out;
    o.format = "brown";
    o.vocab = 320;
    o.val_tokens = 50;       // the fixture's eight documents are 20-120 tokens long: one validation
    o.heldout_tokens = 100;  // document and two held-out (the probe's train and test halves)
    o.tokenizer_sample = 200000;
    o.shard_tokens = 4096;
    o.threads = 2;
    return o;
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    ::setenv("GLLM_DATA", (tmp_.path().toStdString() + "/cache").c_str(), 1);
    src_ = tmp_.path().toStdString() + "/brown";
    fs::copy(gllm::test::fixture("brown_mini"), src_);  // its own copy
    ds_ = tmp_.path().toStdString() + "/brown-ds";
    const auto r = gllm::prepare_dataset(options(ds_));
    QVERIFY(r.manifest.contains("annotations"));
  }

  void tagsAreTheCorpusWordForWord() {
    const nlohmann::json m = gllm::read_manifest(ds_);
    const auto& a = m["annotations"]["brown_pos_tags"];
    const gllm::Corpus brown = gllm::read_brown_corpus(src_);
    QCOMPARE(a["documents"].get<size_t>(), brown.documents.size());
    QCOMPARE(a["words"].get<size_t>(), brown.words());
    QCOMPARE(a["sentences"].get<size_t>(), brown.sentences());
    gllm::TaggedData t = gllm::open_tagged_data(prepared(ds_));
    QCOMPARE(t.corpus.kind, std::string("brown"));
    QCOMPARE(t.corpus.documents.size(), t.ds.shard->num_documents());
    QCOMPARE(t.corpus.documents.size(), brown.documents.size());
    std::map<std::string, const gllm::Document*> by_name;
    for (const auto& d : brown.documents) by_name[d.name] = &d;
    std::set<std::string> seen;
    for (size_t i = 0; i < t.corpus.documents.size(); ++i) {
      const gllm::Document& got = t.corpus.documents[i];
      QVERIFY2(by_name.count(got.name), got.name.c_str());
      QVERIFY2(seen.insert(got.name).second, got.name.c_str());
      const gllm::Document& want = *by_name[got.name];
      QCOMPARE(got.text, want.text);
      QCOMPARE(got.genre, want.genre);
      QCOMPARE(got.paragraphs, want.paragraphs);
      QCOMPARE(got.sentences.size(), want.sentences.size());
      for (size_t s = 0; s < want.sentences.size(); ++s) {
        const auto &gs = got.sentences[s], &ws = want.sentences[s];
        QCOMPARE(gs.paragraph, ws.paragraph);
        QCOMPARE(gs.line, ws.line);
        QCOMPARE(gs.words.size(), ws.words.size());
        for (size_t w = 0; w < ws.words.size(); ++w) {
          QCOMPARE(gs.words[w].word, ws.words[w].word);
          QCOMPARE(gs.words[w].tag, ws.words[w].tag);
          QCOMPARE(gs.words[w].begin, ws.words[w].begin);
          QCOMPARE(gs.words[w].end, ws.words[w].end);
        }
      }
    }
    // The splits are the dataset's (by content hash), disjoint, and cover every document.
    std::set<uint32_t> all;
    for (const auto* s : {&t.ds.splits.train, &t.ds.splits.val, &t.ds.splits.heldout})
      for (uint32_t i : *s) QVERIFY(all.insert(i).second);
    QCOMPARE(all.size(), brown.documents.size());
    QVERIFY(!t.ds.splits.heldout.empty() && !t.ds.splits.val.empty());
    // The probe's POS task from the kept tags equals the task built from the Brown folder with the
    // same documents in each split.
    std::map<std::string, uint32_t> index;
    for (uint32_t i = 0; i < brown.documents.size(); ++i) index[brown.documents[i].name] = i;
    gllm::Splits same;
    for (uint32_t i : t.ds.splits.train) same.train.push_back(index[t.corpus.documents[i].name]);
    for (uint32_t i : t.ds.splits.val) same.val.push_back(index[t.corpus.documents[i].name]);
    for (uint32_t i : t.ds.splits.heldout)
      same.heldout.push_back(index[t.corpus.documents[i].name]);
    const gllm::ProbeTask got = gllm::brown_pos_task(t.corpus, t.ds.splits);
    const gllm::ProbeTask want = gllm::brown_pos_task(brown, same);
    QCOMPARE(got.passages.size(), want.passages.size());
    QVERIFY(got.train_words() > 0 && got.test_words() > 0);
    for (size_t p = 0; p < want.passages.size(); ++p) {
      QCOMPARE(got.passages[p].text.text, want.passages[p].text.text);
      QVERIFY(got.passages[p].labels == want.passages[p].labels);
      QCOMPARE(got.passages[p].test, want.passages[p].test);
    }
  }

  void refusals() {
    // A dataset prepared from plain text keeps no tags: the error says which datasets do.
    const std::string text_ds = tmp_.path().toStdString() + "/text-ds";
    {
      gllm::PrepareOptions o = options(text_ds);
      o.inputs = {gllm::test::fixture("runs_corpus.txt")};
      o.format = "text";
      o.val_tokens = o.heldout_tokens = 500;
      o.tokenizer_sample = 8000;
      o.vocab = 300;
      const auto r = gllm::prepare_dataset(o);
      QVERIFY(!r.manifest.contains("annotations"));
      QVERIFY(!fs::exists(text_ds + "/" + gllm::kBrownTagsFile));
    }
    gllm::DataConfig c = prepared(text_ds);
    c.vocab_size = 300;
    std::string err = gllm::test::error_of([&] { gllm::open_tagged_data(c); });
    QVERIFY2(err.find("keeps no POS tags") != std::string::npos &&
                 err.find("--format brown") != std::string::npos,
             err.c_str());
    // A corpus that is not Brown at all.
    gllm::DataConfig text;
    text.corpus = "text";
    text.corpus_path = gllm::test::fixture("runs_corpus.txt");
    err = gllm::test::error_of([&] { gllm::open_tagged_data(text); });
    QVERIFY2(err.find("need the tagged Brown corpus") != std::string::npos, err.c_str());
    // The tags file changed after the manifest: its hash says so, naming the file.
    const std::string copy = tmp_.path().toStdString() + "/brown-ds-copy";
    fs::copy(ds_, copy);
    const std::string tags = copy + "/" + gllm::kBrownTagsFile;
    std::string body = gllm::read_file(tags);
    body[body.find("\"nn\"") + 1] = 'v';  // one noun becomes a verb
    gllm::write_file_atomic(tags, body);
    err = gllm::test::error_of([&] { gllm::open_tagged_data(prepared(copy)); });
    QVERIFY2(err.find(tags) != std::string::npos && err.find("SHA-512") != std::string::npos,
             err.c_str());
    // `gllm data info --verify` asks the same question of the file.
    QCOMPARE(gllm::brown_tags_problem(copy, gllm::read_manifest(copy)), err);
    QCOMPARE(gllm::brown_tags_problem(ds_, gllm::read_manifest(ds_)), std::string());
    QCOMPARE(gllm::brown_tags_problem(text_ds, gllm::read_manifest(text_ds)), std::string());
    fs::remove(tags);
    err = gllm::test::error_of([&] { gllm::open_tagged_data(prepared(copy)); });
    QVERIFY2(err.find("is missing") != std::string::npos, err.c_str());
  }
};

QTEST_APPLESS_MAIN(TestDatasetBrownTags)
#include "test_dataset_brown_tags.moc"
