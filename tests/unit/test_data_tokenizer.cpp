// BPE tokenizer: fixed special ids, exact round trips (whitespace, newlines, non-ASCII, bytes never
// seen in training), byte-length table summing to the text's UTF-8 bytes, and save/load identity.
#include <QTemporaryDir>
#include <QtTest>

#include "engine/data/corpus.h"
#include "engine/data/tokenizer.h"
#include "engine/io/error.h"
#include "tests/support/test_support.h"

class TestDataTokenizer : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  gllm::Corpus corpus_;
  gllm::Tokenizer tok_;
  std::string model_path_;

  int64_t byte_sum(const std::vector<int32_t>& ids) {
    int64_t n = 0;
    for (int32_t id : ids) n += tok_.token_bytes()[id];
    return n;
  }

 private Q_SLOTS:
  void initTestCase() {
    corpus_ = gllm::read_brown_corpus(gllm::test::fixture("brown_mini"));
    model_path_ = dir_.filePath("tok.model").toStdString();
    tok_ = gllm::Tokenizer::train(corpus_, 400, model_path_, 1);
  }

  void layout() {
    QVERIFY(tok_.vocab_size() > 260);
    QVERIFY(tok_.vocab_size() <= 400);
    QCOMPARE(tok_.piece(0), std::string("<unk>"));
    QCOMPARE(tok_.piece(1), std::string("<bos>"));
    QCOMPARE(tok_.piece(2), std::string("<eos>"));
    QCOMPARE(tok_.piece(3), std::string("<pad>"));
    QCOMPARE(tok_.bos_id(), 1);
    for (int id = 0; id < 4; ++id) QCOMPARE(tok_.token_bytes()[id], 0);
    QCOMPARE(tok_.piece(4), std::string("<0x00>"));
    QCOMPARE(tok_.piece(4 + 0x0A), std::string("<0x0A>"));
    QCOMPARE(tok_.piece(259), std::string("<0xFF>"));
    for (int id = 4; id < 260; ++id) QCOMPARE(tok_.token_bytes()[id], 1);
    // A piece's byte length is its UTF-8 length with the whitespace marker counted as one space.
    for (int id = 260; id < tok_.vocab_size(); ++id) {
      std::string p = tok_.piece(id);
      std::string decoded = tok_.decode({id});
      QCOMPARE(int64_t(tok_.token_bytes()[id]), int64_t(decoded.size()));
      QVERIFY(tok_.token_bytes()[id] >= 1);
    }
  }

  void roundTripCorpus() {
    for (const auto& d : corpus_.documents) {
      auto ids = tok_.encode(d.text);
      QCOMPARE(tok_.decode(ids), d.text);
      QCOMPARE(byte_sum(ids), int64_t(d.text.size()));
      for (int32_t id : ids) QVERIFY(id >= 4);  // no <unk>, no specials inside text
    }
  }

  void roundTripHardStrings() {
    const std::vector<std::string> cases = {
        "",
        " ",
        "  leading and trailing  ",
        "tabs\tand\t\ttabs",
        "line\nbreaks\n\n\nand\r\nCRLF\n",
        "unicode: é ü ß 日本語 🙂 \u2581 literal marker",
        "NFKC would change these: ｆｕｌｌ ﬁ ① ™ Å",
        "bytes never seen in training: \x01\x02\x7f ~`|{}",
        "The jury said.",
    };
    for (const auto& s : cases) {
      auto ids = tok_.encode(s);
      QCOMPARE(tok_.decode(ids), s);
      QCOMPARE(byte_sum(ids), int64_t(s.size()));
    }
    // Specials decode to nothing.
    auto ids = tok_.encode("ab");
    ids.insert(ids.begin(), gllm::Tokenizer::kBos);
    ids.push_back(gllm::Tokenizer::kPad);
    QCOMPARE(tok_.decode(ids), std::string("ab"));
    QVERIFY_THROWS_EXCEPTION(gllm::Error, tok_.decode({tok_.vocab_size()}));
  }

  // The word cache gives the tokenizer's own ids: every Brown document, the hard strings, runs of
  // spaces in every position, words longer than the cache keeps, and a cache small enough to be
  // cleared many times over.
  void cachedEncodingIsTheEncoding() {
    std::vector<std::string> texts = {
        "",
        " ",
        "  ",
        "a",
        " a",
        "a ",
        "a  b",
        "  a   b  ",
        "tabs\tand\t\ttabs here",
        "line\nbreaks\n\n and  more",
        "unicode: é ü ß 日本語 🙂 \u2581 literal \u2581\u2581marker",
        "digits 12345 6789 and 3.14159",
        std::string(200, 'x') + " y",
        "The jury said.  `` Only '' ."};
    for (const auto& d : corpus_.documents) texts.push_back(d.text);
    gllm::EncodeCache big, small;
    small.max_entries = 8;
    small.max_word_bytes = 6;
    std::vector<int32_t> ids;
    for (int pass = 0; pass < 2; ++pass)  // the second pass reads the filled caches
      for (const auto& t : texts) {
        const auto want = tok_.encode(t);
        tok_.encode_cached(t, big, ids);
        QVERIFY2(ids == want, t.substr(0, 80).c_str());
        tok_.encode_cached(t, small, ids);
        QVERIFY2(ids == want, t.substr(0, 80).c_str());
      }
    QVERIFY(big.words.size() > 100);
    QVERIFY(small.words.size() <= 8);
  }

  void saveLoadIdentity() {
    auto t2 = gllm::Tokenizer::load(model_path_);
    QCOMPARE(t2.hash(), tok_.hash());
    QCOMPARE(t2.hash().size(), size_t(128));
    QCOMPARE(t2.token_bytes(), tok_.token_bytes());
    QCOMPARE(t2.encode(corpus_.documents[0].text), tok_.encode(corpus_.documents[0].text));
    // Retraining on the same corpus is deterministic.
    auto t3 = gllm::Tokenizer::train(corpus_, 400, dir_.filePath("tok2.model").toStdString(), 1);
    QCOMPARE(t3.hash(), tok_.hash());
  }

  void compresses() {
    // BPE merges must actually shorten frequent text relative to bytes.
    auto ids = tok_.encode(corpus_.documents[0].text);
    QVERIFY2(ids.size() < corpus_.documents[0].text.size() * 6 / 10,
             qPrintable(QString("%1 tokens for %2 bytes")
                            .arg(ids.size())
                            .arg(corpus_.documents[0].text.size())));
  }

  void refusals() {
    QVERIFY_THROWS_EXCEPTION(gllm::Error,
                             gllm::Tokenizer::load(dir_.filePath("missing.model").toStdString()));
    QVERIFY_THROWS_EXCEPTION(
        gllm::Error, gllm::Tokenizer::train(corpus_, 100, dir_.filePath("x").toStdString(), 1));
    QVERIFY_THROWS_EXCEPTION(
        gllm::Error, gllm::Tokenizer::train(corpus_, 70000, dir_.filePath("x").toStdString(), 1));
  }
};

QTEST_APPLESS_MAIN(TestDataTokenizer)
#include "test_data_tokenizer.moc"
