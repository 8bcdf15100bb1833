// `gllm data prepare` and `gllm data info DATASET` as a user runs them: a gzip JSON Lines corpus
// with a chosen field, the bad-line flag, the JSON report, --verify failing on a changed shard, and
// a disk that fills mid-prepare.
#include <zlib.h>

#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <map>

#include "tests/support/test_support.h"

namespace fs = std::filesystem;

namespace {

void write_gzip(const std::string& path, const std::string& s) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, s.data(), unsigned(s.size()));
  gzclose(f);
}

std::string jsonl_corpus() {
  std::string s;
  uint64_t x = 7;
  for (int i = 0; i < 600; ++i) {
    std::string doc;
    for (int w = 0; w < 30; ++w) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      doc += (w ? " " : "") + std::string("word") + std::to_string((x >> 40) % 300);
    }
    s += "{\"id\":" + std::to_string(i) + ",\"content\":\"" + doc + "\"}\n";
    if (i == 300) s += "not json at all\n";
  }
  return s;
}

}  // namespace

class TestCliDatasetPrepare : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void prepareInfoVerify() {
    QTemporaryDir tmp;
    const std::string d = tmp.path().toStdString();
    write_gzip(d + "/c.jsonl.gz", jsonl_corpus());
    const std::vector<std::string> base = {"data",
                                           "prepare",
                                           d + "/c.jsonl.gz",
                                           "--out",
                                           d + "/ds",
                                           "--vocab",
                                           "300",
                                           "--val-tokens",
                                           "2k",
                                           "--heldout-tokens",
                                           "2k",
                                           "--shard-tokens",
                                           "4096",
                                           "--tokenizer-sample",
                                           "20k",
                                           "--text-field",
                                           "content",
                                           "--threads",
                                           "2"};
    // The bad line is refused with file and line, and nothing is usable.
    auto r = gllm::test::run_cli(base);
    QVERIFY2(r.exit_code == 2, (r.out + r.err).c_str());
    QVERIFY2(r.err.find("c.jsonl.gz:302:") != std::string::npos, r.err.c_str());
    QVERIFY(!fs::exists(d + "/ds/manifest.json"));
    auto args = base;
    args.push_back("--skip-bad-lines");
    args.push_back("--json");
    r = gllm::test::run_cli(args);
    QVERIFY2(r.exit_code == 0, (r.out + r.err).c_str());
    auto j = nlohmann::json::parse(r.out);
    QCOMPARE(j["manifest"]["reading"]["bad_lines_skipped"].get<int>(), 1);
    QCOMPARE(j["manifest"]["reading"]["documents"].get<int>(), 600);
    QCOMPARE(j["manifest"]["inputs"][0]["format"].get<std::string>(), std::string("jsonl"));
    // Not on a terminal (a batch job's log): progress as lines, one per stage and tenth.
    {
      auto plain = base;
      plain.push_back("--skip-bad-lines");
      for (auto& a : plain)
        if (a == d + "/ds") a = d + "/ds-log";
      auto p = gllm::test::run_cli(plain);
      QVERIFY2(p.exit_code == 0, (p.out + p.err).c_str());
      QVERIFY2(p.err.find("progress: encode 100%") != std::string::npos, p.err.c_str());
      QVERIFY2(p.err.find("progress: scan") != std::string::npos, p.err.c_str());
      QVERIFY2(p.err.find('\r') == std::string::npos, "a redrawn line in a log");
      size_t lines = 0;
      for (size_t at = p.err.find("progress: "); at != std::string::npos;
           at = p.err.find("progress: ", at + 1))
        ++lines;
      QVERIFY2(lines >= 4 && lines <= 60, p.err.c_str());
    }
    // info --json shows the manifest; --verify passes on the fresh dataset.
    r = gllm::test::run_cli({"data", "info", d + "/ds", "--json", "--verify"});
    QVERIFY2(r.exit_code == 0, (r.out + r.err).c_str());
    auto info = nlohmann::json::parse(r.out);
    QCOMPARE(info["splits"], j["manifest"]["splits"]);
    QVERIFY(info["verified"]["whole"].get<bool>());
    r = gllm::test::run_cli({"data", "info", d + "/ds"});
    QVERIFY2(r.exit_code == 0 && r.out.find("heldout") != std::string::npos, r.out.c_str());
    // A changed shard: --verify names it and fails.
    {
      std::fstream f(d + "/ds/train_000000.bin", std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(1500);
      f.put('\x7f');
    }
    r = gllm::test::run_cli({"data", "info", d + "/ds", "--verify"});
    QCOMPARE(r.exit_code, 2);
    QVERIFY2(r.out.find("train_000000.bin changed after the manifest") != std::string::npos,
             r.out.c_str());
    // The same command again: already prepared, nothing written.
    args.pop_back();
    r = gllm::test::run_cli(args);
    QVERIFY2(r.exit_code == 0 && r.out.find("already prepared") != std::string::npos,
             (r.out + r.err).c_str());
  }
  // A full disk (a file-size limit makes a shard's write fail, as ENOSPC does): a clear error that
  // says so, no shard that is not whole on disk or in the journal, no manifest; then, with room
  // again, the same command finishes and every shard verifies.
  void fullDiskLeavesNoPartialShard() {
    QTemporaryDir tmp;
    const std::string d = tmp.path().toStdString();
    std::string text;
    for (int i = 0; i < 400; ++i) {
      for (int w = 0; w < 120; ++w)
        text += (w ? " word" : "word") + std::to_string((i * 31 + w * 7) % 500);
      text += "\n\n";
    }
    gllm::test::write_text(d + "/c.txt", text);
    const std::vector<std::string> args = {"data",       "prepare",
                                           d + "/c.txt", "--out",
                                           d + "/ds",    "--vocab",
                                           "300",        "--val-tokens",
                                           "2k",         "--heldout-tokens",
                                           "2k",         "--shard-tokens",
                                           "30000",      "--tokenizer-sample",
                                           "20k",        "--threads",
                                           "2"};
    // 40 KiB per file: the validation and held-out shards (4 KiB) fit, a 30,000-token train
    // shard (60 KiB) does not. SIGXFSZ ignored, so the write fails with an error, not a signal.
    std::vector<std::string> limited = {"-c", "trap '' XFSZ; ulimit -f 40; exec \"$0\" \"$@\"",
                                        gllm::test::cli_path()};
    limited.insert(limited.end(), args.begin(), args.end());
    auto r = gllm::test::run_program("bash", limited);
    QVERIFY2(r.exit_code == 2, (r.out + r.err).c_str());
    QVERIFY2(r.err.find("cannot write") != std::string::npos &&
                 r.err.find("train_000000.bin") != std::string::npos &&
                 r.err.find("free disk space") != std::string::npos,
             r.err.c_str());
    QVERIFY(!fs::exists(d + "/ds/manifest.json"));
    // Every train shard on disk is one the journal lists, of the size it records; nothing else.
    std::map<std::string, uint64_t> listed;
    if (fs::exists(d + "/ds/progress.json"))
      for (const auto& sh : gllm::test::read_json(d + "/ds/progress.json")["train_shards"])
        listed[sh["file"].get<std::string>()] = sh["bytes"].get<uint64_t>();
    for (const auto& e : fs::directory_iterator(d + "/ds")) {
      const std::string name = e.path().filename().string();
      QVERIFY2(name.find(".tmp") == std::string::npos, name.c_str());
      if (name.rfind("train_", 0) != 0) continue;
      QVERIFY2(listed.count(name), name.c_str());
      QCOMPARE(uint64_t(fs::file_size(e.path())), listed[name]);
    }
    r = gllm::test::run_cli(args);
    QVERIFY2(r.exit_code == 0, (r.out + r.err).c_str());
    r = gllm::test::run_cli({"data", "info", d + "/ds", "--json", "--verify"});
    QVERIFY2(r.exit_code == 0, (r.out + r.err).c_str());
    const auto info = nlohmann::json::parse(r.out);
    QVERIFY(info["verified"]["whole"].get<bool>());
    QVERIFY(info["splits"]["train"]["tokens"].get<uint64_t>() > 30000);
  }
};

QTEST_APPLESS_MAIN(TestCliDatasetPrepare)
#include "test_cli_dataset_prepare.moc"
