// `gllm data import`: llm.c shards made elsewhere (sentencepiece's spm_train and spm_encode, then
// an independent Python writer of the format) become a dataset that verifies and trains; refusals.
#include <sys/stat.h>

#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "engine/io/atomic_file.h"
#include "tests/support/test_support.h"

namespace fs = std::filesystem;

class TestCliDataImport : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string d_;
  std::string spm_train_, spm_encode_;
  nlohmann::json train_, val_;  // the writer's report of what it wrote

  // Documents of words drawn with a fixed seed (ASCII: every character has a piece).
  static std::string documents(int n, uint32_t seed) {
    static const char* words[] = {"the",   "graded", "cone",  "of",     "a",      "model",
                                  "head",  "level",  "token", "scale",  "query",  "admissible",
                                  "bound", "clip",   "and",   "runs",   "across", "seeds",
                                  "shard", "train",  "with",  "tokens", "paired", "tables"};
    std::mt19937 rng(seed);
    std::string out;
    for (int i = 0; i < n; ++i) {
      const int len = 20 + int(rng() % 120);
      for (int w = 0; w < len; ++w) {
        out += words[rng() % (sizeof words / sizeof *words)];
        out += w + 1 < len ? (rng() % 9 == 0 ? ", " : " ") : ".\n";
      }
    }
    return out;
  }

  // spm_encode's ids and pieces of a text file, then the writer's shards; its JSON report.
  nlohmann::json encode_and_write(const std::string& text, const std::string& prefix,
                                  int shard_tokens) {
    const std::string txt = d_ + "/" + fs::path(prefix).filename().string() + ".txt";
    gllm::test::write_text(txt, text);
    for (const char* format : {"id", "piece"}) {
      auto r = gllm::test::run_program(
          spm_encode_, {"--model=" + d_ + "/m.model", std::string("--output_format=") + format,
                        "--output=" + txt + "." + format, txt});
      if (r.exit_code != 0) qFatal("spm_encode failed: %s", r.err.c_str());
    }
    auto w = gllm::test::run_program(
        gllm::test::plain_python(), {gllm::test::python_script("llmc_shard_writer.py"), txt + ".id",
                                     txt + ".piece", prefix, std::to_string(shard_tokens), "1"});
    if (w.exit_code != 0) qFatal("the shard writer failed: %s", w.err.c_str());
    return nlohmann::json::parse(w.out);
  }

  std::vector<std::string> import_args(const std::string& shards, const std::string& out) const {
    return {"data", "import",           shards, "--tokenizer", d_ + "/m.model", "--out",
            out,    "--heldout-tokens", "1500", "--json"};
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    d_ = tmp_.path().toStdString();
    spm_train_ = QStandardPaths::findExecutable("spm_train").toStdString();
    spm_encode_ = QStandardPaths::findExecutable("spm_encode").toStdString();
    GLLM_REQUIRE_REFERENCE(!spm_train_.empty() && !spm_encode_.empty(),
                           "sentencepiece's spm_train and spm_encode (install sentencepiece)");
    GLLM_REQUIRE_REFERENCE(!gllm::test::plain_python().empty(), "python3");
    // A model as sentencepiece makes it by default (unk 0, <s> 1, </s> 2, no pad, a dummy
    // prefix, NFKC): not the workbench's layout.
    gllm::test::write_text(d_ + "/sample.txt", documents(300, 7));
    auto t = gllm::test::run_program(
        spm_train_,
        {"--input=" + d_ + "/sample.txt", "--model_prefix=" + d_ + "/m", "--vocab_size=300",
         "--model_type=bpe", "--hard_vocab_limit=false", "--minloglevel=2"});
    QVERIFY2(t.exit_code == 0, t.err.c_str());
    fs::create_directories(d_ + "/shards");
    train_ = encode_and_write(documents(360, 11), d_ + "/shards/corpus_train", 4000);
    val_ = encode_and_write(documents(40, 13), d_ + "/shards/corpus_val", 100000);
    QVERIFY(train_["shards"].get<int>() >= 3);  // documents cross shard ends
  }

  void importsWhatTheWriterWrote() {
    auto r = gllm::test::run_cli(import_args(d_ + "/shards", d_ + "/ds"));
    QVERIFY2(r.exit_code == 0, r.err.c_str());
    const auto m = nlohmann::json::parse(r.out)["manifest"];
    const auto& s = m["splits"];
    // Validation is the val shard, whole.
    QCOMPARE(s["val"]["documents"].get<int64_t>(), val_["documents"].get<int64_t>());
    QCOMPARE(s["val"]["tokens"].get<int64_t>(), val_["tokens"].get<int64_t>());
    QCOMPARE(s["val"]["bytes"].get<int64_t>(), val_["bytes"].get<int64_t>());
    // Held-out: the fewest last train documents that hold 1500 tokens; train the rest.
    const auto& dt = train_["doc_tokens"];
    const auto& db = train_["doc_bytes"];
    int64_t held_tokens = 0, held_bytes = 0, held_docs = 0;
    for (size_t i = dt.size(); i-- > 0 && held_tokens < 1500; ++held_docs) {
      held_tokens += dt[i].get<int64_t>();
      held_bytes += db[i].get<int64_t>();
    }
    QCOMPARE(s["heldout"]["documents"].get<int64_t>(), held_docs);
    QCOMPARE(s["heldout"]["tokens"].get<int64_t>(), held_tokens);
    QCOMPARE(s["heldout"]["bytes"].get<int64_t>(), held_bytes);
    QCOMPARE(s["train"]["documents"].get<int64_t>(),
             train_["documents"].get<int64_t>() - held_docs);
    QCOMPARE(s["train"]["tokens"].get<int64_t>(), train_["tokens"].get<int64_t>() - held_tokens);
    QCOMPARE(s["train"]["bytes"].get<int64_t>(), train_["bytes"].get<int64_t>() - held_bytes);
    QCOMPARE(m["tokenizer"]["layout"].get<std::string>(), std::string("sentencepiece"));
    // A train shard the cut does not touch is the writer's file itself (a hard link).
    struct stat a {
    }, b{};
    QCOMPARE(::stat((d_ + "/shards/corpus_train_000000.bin").c_str(), &a), 0);
    QCOMPARE(::stat((d_ + "/ds/train_000000.bin").c_str(), &b), 0);
    QCOMPARE(a.st_ino, b.st_ino);
    // The shards verify, and the held-out shard reads in the independent reader.
    r = gllm::test::run_cli({"data", "info", d_ + "/ds", "--verify"});
    QVERIFY2(r.exit_code == 0, (r.out + r.err).c_str());
    auto p = gllm::test::run_program(
        gllm::test::plain_python(),
        {gllm::test::python_script("llmc_shard_reader.py"), d_ + "/ds/heldout_000000.bin", "1"});
    QVERIFY2(p.exit_code == 0, p.err.c_str());
    QCOMPARE(nlohmann::json::parse(p.out)["bos_count"].get<int64_t>(), held_docs);
    // The same command again: already there, nothing rewritten.
    r = gllm::test::run_cli(import_args(d_ + "/shards", d_ + "/ds"));
    QVERIFY2(r.exit_code == 0, r.err.c_str());
    QVERIFY(nlohmann::json::parse(r.out)["already_complete"].get<bool>());
  }

  void trainsFromTheImport() {
    auto preset = gllm::test::read_json(gllm::test::source_file("presets/tiny-cpu.json"));
    const auto m = gllm::test::read_json(d_ + "/ds/manifest.json");
    preset["data"]["corpus"] = "prepared";
    preset["data"]["corpus_path"] = d_ + "/ds";
    preset["data"]["vocab_size"] = m["tokenizer"]["vocab_size"];
    preset["train"]["eval_tokens"] = 2048;
    preset["train"]["heldout_tokens"] = 1024;
    gllm::write_file_atomic(d_ + "/imported.json", preset.dump(2));
    auto r = gllm::test::run_cli(
        {"train", d_ + "/imported.json", "--steps", "2", "--out", d_ + "/run", "--quiet"});
    QVERIFY2(r.exit_code == 0, r.err.c_str());
    const auto summary = gllm::test::read_json(d_ + "/run/summary.json");
    QVERIFY2(std::isfinite(summary.value("val_bpb", NAN)) && summary["val_bpb"] > 0,
             summary.dump().c_str());
  }

  void refusesWhatItCannotRead() {
    auto error_of = [&](const std::vector<std::string>& args) {
      auto r = gllm::test::run_cli(args);
      return r.exit_code == 0 ? std::string("(exit 0)") : r.err;
    };
    // No validation shard.
    std::string e = error_of(import_args(d_ + "/shards/corpus_train_000000.bin", d_ + "/x1"));
    QVERIFY2(e.find("no validation shard") != std::string::npos, e.c_str());
    // An id outside the model's vocabulary, named with its shard.
    fs::create_directories(d_ + "/bad");
    fs::copy_file(d_ + "/shards/corpus_val_000000.bin", d_ + "/bad/corpus_val_000000.bin");
    fs::copy_file(d_ + "/shards/corpus_train_000000.bin", d_ + "/bad/corpus_train_000000.bin");
    {
      std::fstream f(d_ + "/bad/corpus_train_000000.bin",
                     std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(1024 + 2 * 10);
      const char big[2] = {char(0xFF), char(0x7F)};  // 32767
      f.write(big, 2);
    }
    e = error_of(import_args(d_ + "/bad", d_ + "/x2"));
    QVERIFY2(e.find("corpus_train_000000.bin holds token id 32767") != std::string::npos,
             e.c_str());
    QVERIFY(!fs::exists(d_ + "/x2/manifest.json"));
    // A shard that does not start with BOS (made with another model, or without BOS).
    {
      std::fstream f(d_ + "/bad/corpus_train_000000.bin",
                     std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(1024 + 2 * 10);
      const char ok[2] = {5, 0};
      f.write(ok, 2);
      f.seekp(1024);
      f.write(ok, 2);
    }
    e = error_of(import_args(d_ + "/bad", d_ + "/x3"));
    QVERIFY2(e.find("not the model's BOS (id 1)") != std::string::npos, e.c_str());
    // llm.c's uint32 shards (version 7) are named for what they are.
    {
      std::fstream f(d_ + "/bad/corpus_train_000000.bin",
                     std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(4);
      const char seven[4] = {7, 0, 0, 0};
      f.write(seven, 4);
    }
    e = error_of(import_args(d_ + "/bad", d_ + "/x4"));
    QVERIFY2(e.find("version 7") != std::string::npos, e.c_str());
    // Held-out larger than the train shards.
    auto args = import_args(d_ + "/shards", d_ + "/x5");
    args[8] = "100M";
    e = error_of(args);
    QVERIFY2(e.find("smaller --heldout-tokens") != std::string::npos, e.c_str());
    // A finished dataset of other inputs is never rewritten.
    e = error_of(import_args(d_ + "/shards/corpus_val_000000.bin", d_ + "/ds"));
    QVERIFY2(e.find("never rewritten") != std::string::npos, e.c_str());
  }
};

QTEST_APPLESS_MAIN(TestCliDataImport)
#include "test_cli_data_import.moc"
