// Every command in README.md's CLI table runs as written: the table is parsed, its placeholders
// (PRESET, N, DIR, RUN, CKPT, …) are filled in, optional [groups] are run with and without, a|b|c
// alternatives each; long runs get short variants (fewer steps, a small vocabulary, short benches).
// A placeholder or command the test does not know fails it, so the README cannot drift.
#include <QDir>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "engine/io/atomic_file.h"
#include "tests/support/test_support.h"

namespace fs = std::filesystem;

namespace {

// The `gllm …` code spans of the table under "## CLI", in order.
std::vector<std::string> readme_commands(const std::string& readme) {
  std::istringstream in(readme);
  std::vector<std::string> out;
  bool in_cli = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) in_cli = line == "## CLI";
    if (!in_cli || line.rfind("| `gllm", 0) != 0) continue;
    const std::string cell = line.substr(1, line.find(" | ", 1) - 1);  // the command column
    for (size_t a = cell.find('`'); a != std::string::npos; a = cell.find('`', a)) {
      size_t b = cell.find('`', a + 1);
      if (b == std::string::npos) break;
      std::string span = cell.substr(a + 1, b - a - 1);
      // A table cell writes a|b as a\|b (GitHub's markdown): the command has the plain bar.
      for (size_t e = span.find("\\|"); e != std::string::npos; e = span.find("\\|", e))
        span.erase(e, 1);
      if (span.rfind("gllm ", 0) == 0) out.push_back(span);
      a = b + 1;
    }
  }
  return out;
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

// Variants of a command: every [optional group] left out, and every one put in; a word "a|b|c"
// gives one variant per alternative; "..." (more options) is dropped.
std::vector<std::vector<std::string>> variants(const std::string& command) {
  std::vector<std::string> without, with;
  std::string text = command;
  for (bool keep : {false, true}) {
    std::string t;
    int depth = 0;
    for (char ch : text) {
      if (ch == '[')
        ++depth;
      else if (ch == ']')
        --depth;
      else if (depth == 0 || keep)
        t += ch;
    }
    (keep ? with : without) = words(t);
  }
  std::vector<std::vector<std::string>> out;
  for (const auto& base : {without, with}) {
    std::vector<std::vector<std::string>> expanded{{}};
    for (const auto& w : base) {
      if (w == "...") continue;
      std::vector<std::string> alts;
      if (w.find('|') != std::string::npos) {
        std::stringstream ss(w);
        for (std::string x; std::getline(ss, x, '|');) alts.push_back(x);
      } else {
        alts.push_back(w);
      }
      std::vector<std::vector<std::string>> next;
      for (const auto& e : expanded)
        for (const auto& a : alts) {
          auto n = e;
          n.push_back(a);
          next.push_back(n);
        }
      expanded = next;
    }
    for (auto& e : expanded)
      if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  }
  return out;
}

std::string joined(const std::vector<std::string>& w) {
  std::string s;
  for (const auto& x : w) s += (s.empty() ? "" : " ") + x;
  return s;
}

}  // namespace

class TestCliReadme : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string work_;
  std::vector<std::string> env_;
  std::string train_dir_;
  std::string brown_dir_;         // the Brown corpus of the user's data cache
  std::vector<std::string> ran_;  // the commands run so far, as run

  std::string at(const std::string& rel) const { return work_ + "/" + rel; }

  // The newest weights file of the trained run.
  std::string checkpoint() const {
    std::string best;
    for (const auto& e : fs::directory_iterator(train_dir_ + "/checkpoints")) {
      const std::string n = e.path().filename().string();
      if (n.rfind("step_", 0) == 0 && n.find(".optim.") == std::string::npos &&
          e.path().extension() == ".safetensors" && e.path().string() > best)
        best = e.path().string();
    }
    return best;
  }

  // Fills in the placeholders of one variant; "" plus a failure for a word it does not know.
  std::vector<std::string> fill(const std::vector<std::string>& cmd, std::string* unknown) {
    const std::string sub = cmd.size() > 1 ? cmd[1] : "";
    const std::string sub2 = cmd.size() > 2 ? cmd[2] : "";
    // `data prepare --format F`: the input of that format and a dataset of its own.
    std::string format = "default";
    for (size_t i = 1; i + 1 < cmd.size(); ++i)
      if (cmd[i] == "--format") format = cmd[i + 1];
    std::vector<std::string> out;
    for (size_t i = 1; i < cmd.size(); ++i) {  // cmd[0] is "gllm"
      const std::string& w = cmd[i];
      if (w == "PRESET")
        out.push_back("tiny-cpu");
      else if (w == "INPUT…")
        out.push_back(format == "jsonl"                       ? at("brown.jsonl")
                      : format == "text" || format == "brown" ? brown_dir_
                                                              : at("mixed"));  // auto: by name
      else if (w == "DATASET" && sub2 == "import")  // one dataset a variant: options differ
        out.push_back(at(std::find(cmd.begin(), cmd.end(), "--heldout-tokens") == cmd.end()
                             ? "datasets/imported"
                             : "datasets/imported-20k"));
      else if (w == "DATASET")
        out.push_back(at("datasets/" + (sub2 == "prepare" ? format : std::string("default"))));
      else if (w == "SHARD…")  // the shards and model of the dataset the prepare row wrote
        out.push_back(at("datasets/default"));
      else if (w == "MODEL")
        out.push_back(at("datasets/default/tokenizer.model"));
      else if (w == "N" && (cmd[i - 1] == "--val-tokens" || cmd[i - 1] == "--heldout-tokens"))
        out.push_back("20k");  // a few documents of the Brown corpus each
      else if (w == "N" && sub == "resume")
        out.push_back("3");  // one step past the README's train row: resume extends a run
      else if (w == "N")
        out.push_back("2");  // steps, evaluation and checkpoint period, processes
      else if (w == "S")
        out.push_back("7");
      else if (w == "DIR" && sub == "train")
        out.push_back(train_dir_);
      else if (w == "DIR" && sub == "resume")
        out.push_back(train_dir_);
      else if (w == "DIR" && sub == "runs")
        out.push_back(at("runs"));
      else if (w == "RUN..." || w == "RUNS")
        out.push_back(at("runs/ladder-tiny"));
      else if (w == "LADDER")
        out.push_back(at("ladder.json"));
      else if (w == "L")
        out.push_back("1");  // a probe's layer
      else if (w == "RUN")
        out.push_back(at("runs/ladder-tiny/ladder-uniform-s41"));
      else if (w == "CKPT")
        out.push_back(checkpoint());
      else if (w == "FILE")
        out.push_back(at("compiled.safetensors"));
      else if (w == "BPB")
        out.push_back("99");
      else if (w == "x1,x2,x3")
        out.push_back("1.90,1.85,1.88");
      else if (w == "y1,y2,y3")
        out.push_back("1.87,1.84,1.86");
      else if (std::regex_match(w, std::regex("[A-Z][A-Z_]*(\\.\\.\\.|…)?|[a-z][0-9],.*"))) {
        *unknown = w;
        return {};
      } else {
        out.push_back(w);
      }
    }
    return out;
  }

  // Extra arguments that keep a long command short, and the environment it runs in.
  std::vector<std::string> short_variant(const std::vector<std::string>& args,
                                         std::vector<std::string>* env) {
    const std::string sub = args.empty() ? "" : args[0];
    const std::string sub2 = args.size() > 1 ? args[1] : "";
    auto has = [&](const std::string& flag) {
      return std::find(args.begin(), args.end(), flag) != args.end();
    };
    std::vector<std::string> extra;
    if (sub == "data" && sub2 == "fetch") {
      // The corpus in the user's data cache (scripts/build.sh fetched it): verified, not
      // downloaded.
      env->erase(std::remove_if(env->begin(), env->end(),
                                [](const std::string& e) { return e.rfind("GLLM_DATA=", 0) == 0; }),
                 env->end());
    } else if (sub == "data" && sub2 == "info") {
      // The Brown corpus's row: a small tokenizer, trained once and reused below.
      if (args.size() < 3 || args[2].rfind("--", 0) == 0) extra = {"--vocab-size", "512"};
    } else if (sub == "data" && sub2 == "prepare") {
      // The Brown corpus holds about 1.2M words: splits of a few documents, a tokenizer trained
      // on a fifth of it.
      if (!has("--val-tokens")) extra = {"--val-tokens", "20k", "--heldout-tokens", "20k"};
      extra.insert(extra.end(), {"--tokenizer-sample", "1M", "--quiet"});
    } else if (sub == "bench" && sub2 == "data") {
      extra = {"--size-gib", "0.004",          "--tokenizer-sample", "200k",
               "--vocab",    "1024",           "--train-steps",      "2",
               "--dir",      at("bench-data"), "--no-save"};
    } else if (sub == "profiles") {
      extra = {"--vocab-size", "512", "--bootstrap", "4"};
    } else if (sub == "train") {
      if (!has("--steps")) extra = {"--steps", "2"};
      // Two evaluations a run: the ladder plan's slope and the report's target need a curve.
      if (has("--sweep")) extra.insert(extra.end(), {"--eval-every", "1"});
      if (!has("--out") && !has("--sweep"))
        extra.insert(extra.end(),
                     {"--out", at(has("--fork") ? "runs/fork-train" : "runs/plain-train")});
      extra.push_back("--quiet");
    } else if (sub == "bench" && sub2 == "cone") {
      extra = {"--d", "64", "--repeats", "3"};
    } else if (sub == "bench" && sub2 == "train") {
      extra = {"--steps",         "1",
               "--warmup",        "0",
               "--rounds",        "1",
               "--gemm-n",        "64",
               "--no-gemm-bound", "--no-full-step",
               "--no-save"};
    } else if (sub == "bench" && sub2 == "attention") {
      extra = {"--lengths", "64", "--widths", "64", "--repeats", "1", "--no-compiled", "--no-save"};
    } else if (sub == "probe") {
      extra = {"--max-words", "500"};  // a few hundred words per split: the same code, less work
    } else if (sub == "resume" || sub == "compile") {
      extra = {"--quiet"};
      if (sub == "compile") extra = {"--probe-batch", "1", "--probe-len", "16"};
    }
    return extra;
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    work_ = tmp_.path().toStdString();
    // The Brown corpus of the user's data cache (scripts/build.sh fetched it), read through a data
    // cache of this test's own, so tokenizers and token caches built here stay here.
    auto fetch = gllm::test::run_cli({"data", "fetch", "--json"});
    QVERIFY2(fetch.exit_code == 0,
             ("the Brown corpus is needed (gllm data fetch): " + fetch.err).c_str());
    const fs::path corpus = nlohmann::json::parse(fetch.out)["dir"].get<std::string>();
    brown_dir_ = corpus.string();
    // The README's `data prepare --format jsonl` row reads JSON Lines: the Brown files, one
    // document a line.
    {
      std::string jsonl;
      for (const auto& e : fs::directory_iterator(corpus))
        if (e.is_regular_file())
          jsonl += nlohmann::json{{"text", gllm::read_file(e.path().string())}}.dump() + "\n";
      gllm::write_file_atomic(at("brown.jsonl"), jsonl);
      // `--format auto` reads a folder by file name: JSON Lines and plain text side by side.
      // (The Brown folder itself holds the npm package's package.json, not JSON Lines.)
      fs::create_directories(at("mixed"));
      fs::copy_file(at("brown.jsonl"), at("mixed/brown.jsonl"));
      gllm::write_file_atomic(at("mixed/notes.txt"),
                              "A plain text file beside the JSON Lines.\n\nIts second document.\n");
    }
    fs::create_directories(at("cache/brown"));
    fs::create_directory_symlink(corpus, at("cache/brown") + "/" + corpus.filename().string());
    // The presets as shipped, except that tiny-cpu (the base of the ladder arms) uses a small
    // vocabulary and short evaluations: the commands are the README's, the work is small.
    fs::copy(gllm::test::source_file("presets"), at("presets"), fs::copy_options::recursive);
    auto tiny = nlohmann::json::parse(gllm::read_file(at("presets/tiny-cpu.json")));
    tiny["data"]["vocab_size"] = 512;
    tiny["train"]["eval_tokens"] = 4096;
    tiny["train"]["heldout_tokens"] = 4096;
    gllm::write_file_atomic(at("presets/tiny-cpu.json"), tiny.dump(2));
    // The ladder arms start from a token reference of their own tokenizer: the one the README's
    // profiles and ladder rows write (at this vocabulary) before the sweep's row runs.
    for (const auto& e : fs::directory_iterator(at("presets"))) {
      if (e.path().filename().string().rfind("ladder-", 0) != 0) continue;
      auto arm = nlohmann::json::parse(gllm::read_file(e.path().string()));
      arm["grading"]["profiles_file"] = at("profiles.json");
      arm["grading"]["ladder_file"] = at("ladder.json");
      gllm::write_file_atomic(e.path().string(), arm.dump(2));
    }
    // The ladder sweep's six arms over two of its seeds (paired statistics need two).
    auto sweep = nlohmann::json::parse(gllm::read_file(at("presets/sweeps/ladder-tiny.json")));
    QVERIFY(sweep["seeds"].size() >= 2);
    sweep["seeds"] = {sweep["seeds"][0], sweep["seeds"][1]};
    gllm::write_file_atomic(at("presets/sweeps/ladder-tiny.json"), sweep.dump(2));
    train_dir_ = at("runs/readme-train");
    env_ = {"GLLM_PRESETS=" + at("presets"), "GLLM_DATA=" + at("cache"), "GLLM_RUNS=" + at("runs"),
            "GLLM_DIST_TIMEOUT_S=300"};
  }

  // One row per command of the table and variant, in the README's order (later rows read what
  // earlier ones wrote: profiles.json, the trained run, the sweep's runs).
  void everyCommandRuns_data() {
    QTest::addColumn<QString>("command");
    QTest::addColumn<QString>("variant");
    const auto commands = readme_commands(gllm::read_file(gllm::test::source_file("README.md")));
    QVERIFY2(commands.size() >= 20, "the README's CLI table was not found or lost rows");
    int row = 0;
    for (const auto& c : commands)
      for (const auto& v : variants(c))
        QTest::newRow(qPrintable(
            QString("%1 %2").arg(++row, 2, 10, QChar('0')).arg(QString::fromStdString(joined(v)))))
            << QString::fromStdString(c) << QString::fromStdString(joined(v));
  }
  void everyCommandRuns() {
    QFETCH(QString, command);
    QFETCH(QString, variant);
    const std::string c = command.toStdString();
    std::string unknown;
    auto args = fill(words(variant.toStdString()), &unknown);
    QVERIFY2(unknown.empty(), ("`" + c + "`: placeholder " + unknown +
                               " is new; teach tests/slow/test_cli_readme.cpp")
                                  .c_str());
    auto env = env_;
    auto extra = short_variant(args, &env);
    args.insert(args.end(), extra.begin(), extra.end());
    QElapsedTimer t;
    t.start();
    auto r = gllm::test::run_cli(args, env, 600000, work_);
    ran_.push_back("gllm " + joined(args));
    qInfo("exit %d after %.1f s: gllm %s", r.exit_code, t.elapsed() / 1000.0, joined(args).c_str());
    QVERIFY2(r.exit_code == 0,
             ("`" + c + "` as `gllm " + joined(args) + "` exited " + std::to_string(r.exit_code) +
              ":\n" + r.err.substr(r.err.size() > 1500 ? r.err.size() - 1500 : 0))
                 .c_str());
    if (std::find(args.begin(), args.end(), "--json") != args.end())
      QVERIFY2(nlohmann::json::accept(r.out),
               ("`gllm " + joined(args) + "` printed no JSON:\n" + r.out).c_str());
  }

  // The walk covered the commands that depend on each other (outputs of earlier rows).
  void walkCoveredTheTable() {
    auto ran_with = [&](const std::string& s) {
      return std::any_of(ran_.begin(), ran_.end(),
                         [&](const std::string& r) { return r.find(s) != std::string::npos; });
    };
    QVERIFY(ran_.size() >= 25);
    QVERIFY(ran_with("--total-params 345e6"));
    QVERIFY(ran_with("--nproc 2"));
    QVERIFY(ran_with("gllm bench attention"));
    QVERIFY(ran_with("gllm bench data"));
    QVERIFY(ran_with("--format jsonl"));
    QVERIFY(fs::exists(at("datasets/brown/manifest.json")));
    QVERIFY(fs::exists(at("datasets/imported/manifest.json")));
    QVERIFY(fs::exists(at("profiles.json")) && fs::exists(at("ladder.json")));
    QVERIFY(fs::exists(at("compiled.safetensors")));
    QVERIFY(fs::exists(at("runs/ladder-tiny/ladder-uniform-s41/summary.json")));
  }

  // The parser itself: the expansions the table relies on.
  void variantsOfTheTableSyntax() {
    auto v = variants("gllm train PRESET [--steps N] [--out DIR]");
    QCOMPARE(v.size(), size_t(2));
    QCOMPARE(joined(v[0]), std::string("gllm train PRESET"));
    QCOMPARE(joined(v[1]), std::string("gllm train PRESET --steps N --out DIR"));
    auto b = variants("gllm bench cone|train|attention");
    QCOMPARE(b.size(), size_t(3));
    QCOMPARE(joined(b[2]), std::string("gllm bench attention"));
    // The table's escaped bar is the command's plain one.
    auto escaped = readme_commands("## CLI\n| `gllm bench cone\\|data [--x a\\|b]` | y |\n");
    QCOMPARE(escaped.size(), size_t(1));
    QCOMPARE(escaped[0], std::string("gllm bench cone|data [--x a|b]"));
    QCOMPARE(joined(variants("gllm cone --profiles profiles.json ...")[0]),
             std::string("gllm cone --profiles profiles.json"));
    std::string unknown;
    QVERIFY(fill({"gllm", "frob", "WIDGET"}, &unknown).empty());
    QCOMPARE(unknown, std::string("WIDGET"));
    auto cmds = readme_commands(
        "## CLI\n\n| command | x |\n|---|---|\n| `gllm a [--json]` / `gllm b` | y `gllm no` |\n"
        "## Other\n| `gllm c` | z |\n");
    QCOMPARE(cmds.size(), size_t(2));
    QCOMPARE(cmds[1], std::string("gllm b"));
  }
};

// The sweep row trains twelve short runs: more than QtTest's default five minutes per function
// on a loaded two-core machine.
int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QTEST_FUNCTION_TIMEOUT"))
    qputenv("QTEST_FUNCTION_TIMEOUT", "900000");
  TestCliReadme t;
  return QTest::qExec(&t, argc, argv);
}
#include "test_cli_readme.moc"
