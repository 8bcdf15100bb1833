// prepare_dataset end to end on a small generated corpus: the content-hash split (deterministic,
// disjoint, duplicates together), resume after a stop, no rewrite, shard checks, a Python reader.
#include <sys/stat.h>
#include <unistd.h>

#include <QTemporaryDir>
#include <QtTest>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "engine/data/corpus.h"
#include "engine/data/tokenizer.h"
#include "engine/dataset/dataset_manifest.h"
#include "engine/dataset/prepare.h"
#include "engine/dataset/shard_file.h"
#include "engine/io/error.h"
#include "tests/support/test_support.h"

using gllm::test::error_of;
namespace fs = std::filesystem;

namespace {

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Documents of Zipf-like words from a fixed LCG; every 50th document repeats an earlier one, so
// the corpus holds exact duplicates far apart.
std::vector<std::string> make_documents(int n) {
  uint64_t state = 0x1234567u;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(state >> 33);
  };
  std::vector<std::string> docs;
  for (int i = 0; i < n; ++i) {
    if (i >= 100 && i % 50 == 0) {
      docs.push_back(docs[size_t(next() % 100)]);
      continue;
    }
    std::string d;
    const int words = 10 + int(next() % 70);
    for (int w = 0; w < words; ++w) {
      // Zipf-like rank: the product of two uniforms favours small ranks.
      const uint32_t r = (next() % 600) * (next() % 600) / 600;
      d += (w ? " " : "") + std::string("w") + std::to_string(r);
    }
    docs.push_back(d);
  }
  return docs;
}

struct Corpus {
  std::string path;
  std::vector<std::string> docs;
};

Corpus write_corpus(const std::string& dir, int n = 1500) {
  Corpus c;
  c.docs = make_documents(n);
  c.path = dir + "/corpus.txt";
  std::ofstream f(c.path, std::ios::binary);
  for (const auto& d : c.docs) f << d << "\n\n";
  return c;
}

gllm::PrepareOptions small_options(const Corpus& c, const std::string& out) {
  gllm::PrepareOptions o;
  o.inputs = {c.path};
  o.out_dir = out;
  o.vocab = 320;
  o.tokenizer_sample = 40000;
  o.val_tokens = 4000;
  o.heldout_tokens = 4000;
  o.shard_tokens = 4096;
  o.threads = 2;
  return o;
}

// Every document of a split, decoded from its shards (split at BOS).
std::vector<std::string> split_documents(const std::string& dir, const nlohmann::json& m,
                                         const std::string& split, size_t* bos_count = nullptr) {
  auto tok = gllm::Tokenizer::load(dir + "/tokenizer.model");
  std::vector<int32_t> all;
  for (const auto& p : gllm::dataset_shard_paths(dir, m, split)) {
    gllm::MappedShard s(p);
    all.insert(all.end(), s.tokens(), s.tokens() + s.size());
  }
  std::vector<std::string> docs;
  std::vector<int32_t> cur;
  size_t bos = 0;
  for (size_t i = 0; i <= all.size(); ++i) {
    if (i == all.size() || all[i] == tok.bos_id()) {
      if (i > 0) docs.push_back(tok.decode(cur));
      cur.clear();
      if (i < all.size()) ++bos;
    } else {
      cur.push_back(all[i]);
    }
  }
  if (bos_count) *bos_count = bos;
  return docs;
}

std::map<std::string, std::string> folder_bytes(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    out[e.path().filename().string()] = read_all(e.path().string());
  return out;
}

std::map<std::string, int64_t> folder_times(const std::string& dir) {
  std::map<std::string, int64_t> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    struct stat st {};
    ::stat(e.path().c_str(), &st);
    out[e.path().filename().string()] =
        int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  }
  return out;
}

}  // namespace

class TestDatasetPrepare : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  Corpus corpus_;
  std::string full_;  // the uninterrupted reference dataset
  nlohmann::json manifest_;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    corpus_ = write_corpus(tmp_.path().toStdString());
    full_ = tmp_.path().toStdString() + "/full";
    auto r = gllm::prepare_dataset(small_options(corpus_, full_));
    QVERIFY(!r.already_complete && !r.resumed);
    manifest_ = r.manifest;
    QCOMPARE(gllm::read_manifest(full_), manifest_);
  }

  void splitByContentHashIsDisjointAndComplete() {
    const auto& s = manifest_["splits"];
    std::map<std::string, std::vector<std::string>> docs;
    for (const char* name : {"train", "val", "heldout"}) {
      size_t bos = 0;
      docs[name] = split_documents(full_, manifest_, name, &bos);
      // One BOS per document, and the manifest counts what the shards hold.
      QCOMPARE(uint64_t(bos), s[name]["documents"].get<uint64_t>());
      QCOMPARE(uint64_t(docs[name].size()), s[name]["documents"].get<uint64_t>());
      uint64_t tokens = 0, bytes = 0;
      for (const auto& sh : s[name]["shards"]) tokens += sh["tokens"].get<uint64_t>();
      for (const auto& d : docs[name]) bytes += d.size();
      QCOMPARE(tokens, s[name]["tokens"].get<uint64_t>());
      QCOMPARE(bytes, s[name]["bytes"].get<uint64_t>());
      QVERIFY(std::abs(s[name]["bytes_per_token"].get<double>() - double(bytes) / double(tokens)) <
              1e-9);
    }
    // The evaluation splits hold at least the tokens asked for (whole documents).
    QVERIFY(s["val"]["tokens"].get<uint64_t>() >= 4000);
    QVERIFY(s["heldout"]["tokens"].get<uint64_t>() >= 4000);
    QVERIFY(s["train"]["documents"].get<uint64_t>() > 1000);
    // Every input document is in exactly one split, decoded exactly (multisets equal).
    std::multiset<std::string> want(corpus_.docs.begin(), corpus_.docs.end()), got;
    for (auto& [name, d] : docs) got.insert(d.begin(), d.end());
    QCOMPARE(got.size(), want.size());
    QVERIFY(got == want);
    // Disjoint as texts: a duplicated document never appears in two splits.
    std::map<std::string, std::set<std::string>> sets;
    for (auto& [name, d] : docs) sets[name] = std::set<std::string>(d.begin(), d.end());
    for (const auto& t : sets["val"]) {
      QVERIFY(!sets["train"].count(t));
      QVERIFY(!sets["heldout"].count(t));
    }
    for (const auto& t : sets["heldout"]) QVERIFY(!sets["train"].count(t));
    // The corpus does hold duplicates, and some of them are in the evaluation splits' region.
    QVERIFY(std::set<std::string>(corpus_.docs.begin(), corpus_.docs.end()).size() <
            corpus_.docs.size());
  }

  void splitIsDeterministic() {
    // The same inputs into another folder, with another thread count: the same shards, byte for
    // byte (documents leave the parallel encoder in input order).
    const std::string again = tmp_.path().toStdString() + "/again";
    auto o = small_options(corpus_, again);
    o.threads = 1;
    auto r = gllm::prepare_dataset(o);
    QCOMPARE(r.manifest["splits"], manifest_["splits"]);
    // The tokenizer is the same vocabulary and merges; its file differs in one byte only, the
    // trainer's thread count that sentencepiece records in the model.
    auto t1 = gllm::Tokenizer::load(full_ + "/tokenizer.model");
    auto t2 = gllm::Tokenizer::load(again + "/tokenizer.model");
    QCOMPARE(t2.vocab_size(), t1.vocab_size());
    for (int i = 0; i < t1.vocab_size(); ++i) QCOMPARE(t2.piece(i), t1.piece(i));
    for (const char* split : {"train", "val", "heldout"})
      for (const auto& sh : manifest_["splits"][split]["shards"]) {
        const std::string f = sh["file"].get<std::string>();
        QVERIFY2(read_all(again + "/" + f) == read_all(full_ + "/" + f), f.c_str());
      }
  }

  void resumeAfterStopsGivesTheSameBytes() {
    const std::string dir = tmp_.path().toStdString() + "/resumed";
    const size_t n_train = manifest_["splits"]["train"]["shards"].size();
    QVERIFY2(n_train >= 6, "the corpus should make several train shards");
    std::atomic<bool> stop{false};
    gllm::PrepareHooks hooks;
    hooks.stop = &stop;
    // 1: stopped (the resumable stop flag) after the second train shard's journal entry.
    hooks.after_shard = [&](size_t shards) {
      if (shards == 2) stop = true;
    };
    std::string e = error_of([&] { gllm::prepare_dataset(small_options(corpus_, dir), hooks); });
    QVERIFY2(e.find("run the same command again") != std::string::npos, e.c_str());
    QVERIFY(!fs::exists(dir + "/manifest.json"));
    QCOMPARE(gllm::test::read_json(dir + "/progress.json")["phase"].get<std::string>(),
             std::string("main"));
    QVERIFY(!error_of([&] { gllm::read_manifest(dir); }).empty());  // not usable yet
    // 2: killed (an exception out of the hook, as a crash would) one shard before the last, in
    // the phase that places the evaluation region's train documents.
    stop = false;
    hooks.after_shard = [&](size_t shards) {
      if (shards == n_train - 1) throw std::runtime_error("killed");
    };
    bool killed = false;
    try {
      gllm::prepare_dataset(small_options(corpus_, dir), hooks);
    } catch (const std::runtime_error& k) {
      killed = std::string(k.what()) == "killed";
    }
    QVERIFY(killed);
    QVERIFY(!fs::exists(dir + "/manifest.json"));
    QCOMPARE(gllm::test::read_json(dir + "/progress.json")["phase"].get<std::string>(),
             std::string("region"));
    // 3: runs to the end, continuing.
    hooks.after_shard = nullptr;
    auto r = gllm::prepare_dataset(small_options(corpus_, dir), hooks);
    QVERIFY(r.resumed);
    QVERIFY(!r.already_complete);
    // The folders are equal file for file, byte for byte (manifest, tokenizer, every shard),
    // and no journal or temporary file is left.
    const auto a = folder_bytes(full_), b = folder_bytes(dir);
    std::vector<std::string> names_a, names_b;
    for (auto& kv : a) names_a.push_back(kv.first);
    for (auto& kv : b) names_b.push_back(kv.first);
    QCOMPARE(names_b, names_a);
    for (auto& [name, bytes] : a) QVERIFY2(b.at(name) == bytes, name.c_str());
  }

  void finishedDatasetIsNotRewritten() {
    const std::string dir = tmp_.path().toStdString() + "/again";  // made by splitIsDeterministic
    const auto before = folder_times(dir);
    const auto bytes_before = folder_bytes(dir);
    auto o = small_options(corpus_, dir);
    o.threads = 1;
    auto r = gllm::prepare_dataset(o);
    QVERIFY(r.already_complete);
    QCOMPARE(folder_times(dir), before);
    // Other options or other inputs: refused, the folder untouched.
    o.vocab = 400;
    std::string e = error_of([&] { gllm::prepare_dataset(o); });
    QVERIFY2(e.find("never rewritten") != std::string::npos, e.c_str());
    o = small_options(corpus_, dir);
    std::ofstream(tmp_.path().toStdString() + "/other.txt") << "another corpus\n";
    o.inputs.push_back(tmp_.path().toStdString() + "/other.txt");
    e = error_of([&] { gllm::prepare_dataset(o); });
    QVERIFY2(e.find("never rewritten") != std::string::npos, e.c_str());
    QCOMPARE(folder_times(dir), before);
    QVERIFY(folder_bytes(dir) == bytes_before);
  }

  void changedShardIsDetected() {
    const std::string dir = tmp_.path().toStdString() + "/again";
    QVERIFY(gllm::verify_dataset_shards(dir, manifest_).empty());
    // One token changed in place (same size, same header): only the hash can tell.
    {
      std::fstream f(dir + "/train_000001.bin", std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(2000);
      char c = 0;
      f.seekg(2000);
      f.get(c);
      f.seekp(2000);
      f.put(char(c ^ 1));
    }
    auto problems = gllm::verify_dataset_shards(dir, manifest_);
    QCOMPARE(problems.size(), size_t(1));
    QVERIFY2(problems[0].find("train_000001.bin changed after the manifest") != std::string::npos,
             problems[0].c_str());
    // A shard cut short and one removed: named with what differs.
    fs::resize_file(dir + "/val_000000.bin", fs::file_size(dir + "/val_000000.bin") - 2);
    fs::remove(dir + "/heldout_000000.bin");
    problems = gllm::verify_dataset_shards(dir, manifest_);
    QCOMPARE(problems.size(), size_t(3));
    const std::string e = error_of([&] { gllm::require_dataset_shards_whole(dir, manifest_); });
    QVERIFY2(e.find("train_000001.bin") != std::string::npos, e.c_str());
    QVERIFY2(e.find("val_000000.bin is ") != std::string::npos, e.c_str());
    QVERIFY2(e.find("heldout_000000.bin is missing") != std::string::npos, e.c_str());
    // Only the splits asked for are checked (train: the one change).
    QCOMPARE(gllm::verify_dataset_shards(dir, manifest_, {"train"}).size(), size_t(1));
    // A file that is not a shard: its header is named.
    gllm::test::write_text(dir + "/train_000002.bin", std::string(2048, 'x'));
    const std::string h = error_of([&] { gllm::MappedShard s(dir + "/train_000002.bin"); });
    QVERIFY2(h.find("magic") != std::string::npos, h.c_str());
  }

  void vocabularyAboveUint16IsRefused() {
    const std::string dir = tmp_.path().toStdString() + "/big_vocab";
    auto o = small_options(corpus_, dir);
    o.vocab = 65536;
    const std::string e = error_of([&] { gllm::prepare_dataset(o); });
    QVERIFY2(e.find("65535") != std::string::npos && e.find("uint16") != std::string::npos,
             e.c_str());
    QVERIFY(!fs::exists(dir));  // nothing made
    o.vocab = 320;
    o.shard_tokens = uint64_t(1) << 31;  // llm.c's header holds an int32 count
    QVERIFY(error_of([&] { gllm::prepare_dataset(o); }).find("int32") != std::string::npos);
  }

  // The Brown corpus as one prepared dataset like any other: --format brown reads a Brown
  // folder's ca01 … files (its README left out) as the detokenized texts the "brown" corpus gives.
  void brownFolderIsADataset() {
    const std::string src = tmp_.path().toStdString() + "/brown";
    fs::create_directories(src);
    for (const auto& e : fs::directory_iterator(gllm::test::fixture("brown_mini")))
      fs::copy_file(e.path(), src + "/" + e.path().filename().string());
    gllm::test::write_text(src + "/README", "not a Brown file\n");
    gllm::PrepareOptions o;
    o.inputs = {src};
    o.out_dir = tmp_.path().toStdString() + "/brown-ds";
    o.format = "brown";
    o.vocab = 320;
    o.val_tokens = 500;
    o.heldout_tokens = 500;
    o.tokenizer_sample = 200000;
    o.shard_tokens = 4096;
    o.threads = 2;
    const auto r = gllm::prepare_dataset(o);
    const auto brown = gllm::read_brown_corpus(src);
    std::multiset<std::string> want, got;
    for (const auto& d : brown.documents) want.insert(d.text);
    for (const char* name : {"train", "val", "heldout"}) {
      const auto docs = split_documents(o.out_dir, r.manifest, name);
      got.insert(docs.begin(), docs.end());
    }
    QCOMPARE(got.size(), want.size());
    QVERIFY(got == want);
    QCOMPARE(r.manifest["inputs"].size(), brown.documents.size());
    for (const auto& f : r.manifest["inputs"])
      QCOMPARE(f["format"].get<std::string>(), std::string("brown"));
    // A file that is not Brown Form C, named as brown, is refused with its file and line.
    gllm::test::write_text(src + "/ca01", "The jury said\n");
    o.inputs = {src + "/ca01"};
    o.out_dir = tmp_.path().toStdString() + "/brown-bad";
    const std::string err = gllm::test::error_of([&] { gllm::prepare_dataset(o); });
    QVERIFY2(err.find("ca01:1: token 'The' is not word/TAG") != std::string::npos, err.c_str());
  }

  void pythonReadsTheShards() {
    // Debian's python3 reads the shards with an independent reader of llm.c's format; a missing
    // interpreter fails the test (it is part of the platform scripts/setup.sh installs).
    const std::string py = "/usr/bin/python3";
    QVERIFY2(fs::exists(py), "/usr/bin/python3 is missing; install python3 (scripts/setup.sh)");
    for (const char* split : {"train", "val"}) {
      const auto paths = gllm::dataset_shard_paths(full_, manifest_, split);
      QVERIFY(!paths.empty());
      const std::string path = paths.front();
      auto r = gllm::test::run_program(
          py, {gllm::test::python_script("llmc_shard_reader.py"), path, "1"}, {}, 60000);
      QVERIFY2(r.exit_code == 0, (r.out + r.err).c_str());
      auto j = nlohmann::json::parse(r.out);
      gllm::MappedShard s(path);
      QCOMPARE(j["magic"].get<int>(), 20240520);
      QCOMPARE(j["version"].get<int>(), 1);
      QCOMPARE(j["tokens"].get<uint64_t>(), s.size());
      QVERIFY(j["header_rest_zero"].get<bool>());
      uint64_t sum = 0, bos = 0;
      int mx = -1;
      for (uint64_t i = 0; i < s.size(); ++i) {
        sum += s.tokens()[i];
        bos += s.tokens()[i] == 1;
        mx = std::max(mx, int(s.tokens()[i]));
      }
      QCOMPARE(j["sum"].get<uint64_t>(), sum);
      QCOMPARE(j["bos_count"].get<uint64_t>(), bos);
      QCOMPARE(j["max"].get<int>(), mx);
      QVERIFY(mx < manifest_["tokenizer"]["vocab_size"].get<int>());
      QCOMPARE(j["first"][0].get<int>(), 1);  // a shard of val starts with a document's BOS
      std::vector<int> first;
      for (uint64_t i = 0; i < 16 && i < s.size(); ++i) first.push_back(s.tokens()[i]);
      QCOMPARE(j["first"].get<std::vector<int>>(), first);
    }
  }
};

QTEST_APPLESS_MAIN(TestDatasetPrepare)
#include "test_dataset_prepare.moc"
