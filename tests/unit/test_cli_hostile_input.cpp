// The CLI against a careless user and hostile files: a second writer of a run folder refused and a
// dead one's lock taken over, damaged checkpoints refused by compile and audit, unbounded sizes
// refused up front, FIFOs, duplicate keys, metadata that does not describe its tensors and names
// that look like paths refused, and no bad input ending in rc 3 (a bug) or a raw library message.
#include <signal.h>
#include <sys/stat.h>

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "engine/io/atomic_file.h"
#include "engine/io/safetensors.h"
#include "engine/train/run_store.h"
#include "tests/support/test_support.h"

namespace fs = std::filesystem;
using gllm::test::run_cli;

namespace {

nlohmann::json tiny(int64_t steps, int checkpoint_every) {
  return {{"name", "cli-guard"},
          {"model", {{"n_layer", 1}, {"n_embd", 32}, {"n_head", 2}, {"sequence_len", 32}}},
          {"grading", {{"attention", true}}},
          {"data",
           {{"corpus", "text"},
            {"corpus_path", gllm::test::fixture("runs_corpus.txt")},
            {"vocab_size", 300},
            {"val_fraction", 0.1},
            {"heldout_fraction", 0.1}}},
          {"train",
           {{"steps", steps},
            {"device_batch", 2},
            {"eval_every", 0},
            {"eval_tokens", 256},
            {"heldout_tokens", 256},
            {"checkpoint_every", checkpoint_every},
            {"device", "cpu"},
            {"threads", 1}}}};
}

// "gllm: error: …" with rc 2: a clear message, not a crash (rc 3, a signal) and not silence.
#define QVERIFY_CLEAR_ERROR(r, part)                                                             \
  do {                                                                                           \
    QVERIFY2((r).exit_code == 2, ((r).err + (r).out).substr(0, 600).c_str());                    \
    QVERIFY2((r).err.find("gllm: error:") != std::string::npos, (r).err.substr(0, 600).c_str()); \
    QVERIFY2((r).err.find(part) != std::string::npos, (r).err.substr(0, 600).c_str());           \
    QVERIFY2((r).err.size() < 2000,                                                              \
             ("message of " + std::to_string((r).err.size()) + " bytes").c_str());               \
  } while (0)

// A safetensors file rewritten with an edited header (data section kept).
void edit_header(const std::string& path,
                 const std::function<void(nlohmann::json&, std::string&)>& fn) {
  std::string b = gllm::read_file(path);
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t(uint8_t(b[i])) << (8 * i);
  auto h = nlohmann::json::parse(b.substr(8, n));
  std::string data = b.substr(8 + n);
  fn(h, data);
  std::string hs = h.dump();
  while (hs.size() % 8) hs.push_back(' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = char((uint64_t(hs.size()) >> (8 * i)) & 0xff);
  gllm::write_file_atomic(path, out + hs + data);
}

}  // namespace

class TestCliHostileInput : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::vector<std::string> env_;
  std::string path(const std::string& name) const { return tmp_.path().toStdString() + "/" + name; }
  std::string weights_;  // a committed checkpoint of a finished tiny run

  gllm::test::CommandResult cli(const std::vector<std::string>& args,
                                std::vector<std::string> env = {}) {
    env.insert(env.end(), env_.begin(), env_.end());
    return run_cli(args, env, 120000);
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    env_ = {"GLLM_DATA=" + path("cache")};
    gllm::write_file_atomic(path("tiny.json"), tiny(3, 3).dump());
    auto r = cli({"train", path("tiny.json"), "--out", path("done"), "--quiet"});
    QVERIFY2(r.exit_code == 0, r.err.c_str());
    weights_ = path("done/checkpoints/step_000003.safetensors");
    QVERIFY(fs::exists(weights_));
  }

  void secondWriterRefusedAndDeadOwnerTakenOver() {
    gllm::write_file_atomic(path("long.json"), tiny(1000000, 0).dump());
    const std::string dir = path("busy");
    QProcess first;
    QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
    e.insert("GLLM_DATA", QString::fromStdString(path("cache")));
    first.setProcessEnvironment(e);
    first.start(QString::fromStdString(gllm::test::cli_path()),
                {"train", QString::fromStdString(path("long.json")), "--out",
                 QString::fromStdString(dir), "--quiet"});
    QVERIFY(first.waitForStarted(30000));
    // Wait until it trains (metrics written), so it holds the folder.
    for (int i = 0; i < 600 && !(fs::exists(dir + "/metrics.jsonl") &&
                                 fs::file_size(dir + "/metrics.jsonl") > 0);
         ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto r = cli({"resume", dir, "--quiet"});
    QVERIFY_CLEAR_ERROR(r, "in use by pid " + std::to_string(first.processId()));
    r = cli({"train", path("long.json"), "--out", dir, "--quiet"});
    QVERIFY_CLEAR_ERROR(r, "in use by pid");
    // kill -9 before any checkpoint: the lock goes with the process; resume starts it again in
    // place (a shorter run this time).
    ::kill(static_cast<pid_t>(first.processId()), SIGKILL);
    first.waitForFinished(30000);
    auto cfg = nlohmann::json::parse(gllm::read_file(dir + "/config.json"));
    cfg["train"]["steps"] = 3;  // train.steps changes no trained number: no --allow-config-change
    gllm::write_file_atomic(dir + "/config.json", cfg.dump(2));
    r = cli({"resume", dir});
    QVERIFY2(r.exit_code == 0, r.err.c_str());
    QVERIFY2(r.err.find("starting it again from step 0") != std::string::npos, r.err.c_str());
    r = cli({"resume", dir});  // completed: nothing to do, nothing rewritten
    QVERIFY_CLEAR_ERROR(r, "is completed");
  }

  void compileAndAuditRefuseDamagedCheckpoints() {
    // NaN weights must not compile "ok".
    fs::copy_file(weights_, path("nan.safetensors"));
    edit_header(path("nan.safetensors"), [](nlohmann::json& h, std::string& data) {
      const auto& off = h["transformer.wte.weight"]["data_offsets"];
      const float nan = std::numeric_limits<float>::quiet_NaN();
      for (size_t i = off[0].get<size_t>(); i < off[1].get<size_t>(); i += 4)
        std::memcpy(&data[i], &nan, 4);
    });
    auto r =
        cli({"compile", path("nan.safetensors"), "--out", path("nan-out.safetensors"), "--json"});
    QVERIFY_CLEAR_ERROR(r, "NaN");
    QVERIFY(r.out.find("\"ok\": true") == std::string::npos);
    QVERIFY(!fs::exists(path("nan-out.safetensors")));
    // F32 bytes relabelled as I32.
    fs::copy_file(weights_, path("i32.safetensors"));
    edit_header(path("i32.safetensors"), [](nlohmann::json& h, std::string&) {
      h["transformer.wte.weight"]["dtype"] = "I32";
    });
    r = cli({"compile", path("i32.safetensors"), "--out", path("i32-out.safetensors")});
    QVERIFY_CLEAR_ERROR(r, "stored as I32");
    // Compiling a checkpoint over itself.
    const std::string before = gllm::read_file(weights_);
    r = cli({"compile", weights_, "--out", weights_});
    QVERIFY_CLEAR_ERROR(r, "is the checkpoint being compiled");
    QCOMPARE(gllm::read_file(weights_), before);
    // Weights altered after their sidecar was written: audit and compile check the SHA-512.
    fs::copy(path("done"), path("altered"), fs::copy_options::recursive);
    const std::string w = path("altered/checkpoints/step_000003.safetensors");
    std::string bytes = gllm::read_file(w);
    bytes[bytes.size() - 3] ^= 0x40;
    gllm::write_file_atomic(w, bytes);
    r = cli({"audit", w});
    QVERIFY_CLEAR_ERROR(r, "SHA-512");
    r = cli({"audit", path("altered")});
    QVERIFY_CLEAR_ERROR(r, "SHA-512");
    r = cli({"compile", w, "--out", path("altered-out.safetensors")});
    QVERIFY_CLEAR_ERROR(r, "SHA-512");
    // A finished run whose summary is missing or torn is finished again from its final
    // checkpoint, and says so (no step trained, nothing discarded).
    for (const std::string& torn : {std::string(), std::string("{\"status\": \"compl")}) {
      const std::string dir = path(torn.empty() ? "nosummary" : "tornsummary");
      fs::copy(path("done"), dir, fs::copy_options::recursive);
      if (torn.empty())
        fs::remove(dir + "/summary.json");
      else
        gllm::write_file_atomic(dir + "/summary.json", torn);
      r = cli({"resume", dir});
      const std::string said = r.out + r.err;
      QVERIFY2(r.exit_code == 0 &&
                   said.find(torn.empty() ? "is missing" : "is damaged") != std::string::npos &&
                   said.find("finished again") != std::string::npos,
               said.c_str());
      QCOMPARE(gllm::read_run(dir).status, std::string("completed"));
    }
    // A sidecar with a size of the wrong type.
    auto side = nlohmann::json::parse(gllm::read_file(path("done/checkpoints/step_000003.json")));
    side["weights"]["bytes"] = "many";
    fs::copy(path("done"), path("typed"), fs::copy_options::recursive);
    gllm::write_file_atomic(path("typed/checkpoints/step_000003.json"), side.dump());
    r = cli({"audit", path("typed")});
    QVERIFY_CLEAR_ERROR(r, "size or SHA-512");
  }

  void unboundedSizesAreRefusedUpFront() {
    auto r = cli({"cone", "--geometric", "--nu", ".6", "--mu", ".3", "--levels", "2147483647"});
    QVERIFY2(r.exit_code != 0 && r.err.find("--levels") != std::string::npos, r.err.c_str());
    r = cli({"bench", "cone", "--d", "100000000"});
    QVERIFY2(r.exit_code != 0 && r.err.find("--d") != std::string::npos, r.err.c_str());
    r = cli({"overhead", "--d", "4000000000", "--layers", "2", "--heads", "1", "--vocab", "10",
             "--total-params", "1000"});
    QVERIFY2(r.exit_code != 0 && r.out.find("-") == std::string::npos, (r.out + r.err).c_str());
    r = cli({"train", path("tiny.json"), "--out", path("threads"), "--threads", "100000"});
    QVERIFY2(r.exit_code != 0 && r.err.find("--threads") != std::string::npos, r.err.c_str());
    QVERIFY(!fs::exists(path("threads")));
    r = cli({"version"}, {"GLLM_THREADS=100000"});
    QVERIFY_CLEAR_ERROR(r, "GLLM_THREADS");
    r = cli({"version"}, {"GLLM_THREADS=four"});
    QVERIFY_CLEAR_ERROR(r, "GLLM_THREADS");
    r = cli({"compile", weights_, "--out", path("probe.safetensors"), "--probe-len", "1048576",
             "--probe-batch", "1024"});
    QVERIFY_CLEAR_ERROR(r, "--probe-batch");
    r = cli({"train", path("tiny.json"), "--steps", "abc"});
    QVERIFY2(r.exit_code == 2 && r.err.size() < 300, r.err.c_str());
    // Option errors exit 2 like every other bad input (CLI11's own codes are 105, 106, ...);
    // --help still exits 0.
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"cone", "--geometric", "--nu", ".6", "--mu", ".3", "--levels", "2147483647"},
             {"bench", "cone", "--d", "100000000"},
             {"train", "--no-such-option"},
             {"no-such-command"}}) {
      r = cli(args);
      QVERIFY2(r.exit_code == 2, (args[0] + ": rc " + std::to_string(r.exit_code)).c_str());
    }
    QCOMPARE(cli({"train", "--help"}).exit_code, 0);
  }

  void filesThatAreNotWhatTheyClaimAreRefused() {
    // Metadata vocab_size of 1e9 over a 300-row embedding: refused before anything is built.
    fs::copy_file(weights_, path("vocab.safetensors"));
    edit_header(path("vocab.safetensors"), [](nlohmann::json& h, std::string&) {
      h["__metadata__"]["vocab_size"] = "1000000000";
    });
    auto r = cli({"compile", path("vocab.safetensors"), "--out", path("vocab-out.safetensors")});
    QVERIFY_CLEAR_ERROR(r, "does not match");
    for (const std::string bad : {"-5", "8192abc", "1e9"}) {
      edit_header(path("vocab.safetensors"),
                  [&](nlohmann::json& h, std::string&) { h["__metadata__"]["vocab_size"] = bad; });
      r = cli({"compile", path("vocab.safetensors"), "--out", path("vocab-out.safetensors")});
      QVERIFY_CLEAR_ERROR(r, "vocab_size");
    }
    // A stored config claiming n_embd 8192 over the small tensors.
    fs::copy_file(weights_, path("embd.safetensors"));
    edit_header(path("embd.safetensors"), [](nlohmann::json& h, std::string&) {
      auto c = nlohmann::json::parse(h["__metadata__"]["config"].get<std::string>());
      c["model"]["n_embd"] = 8192;
      c["model"]["n_head"] = 64;
      h["__metadata__"]["config"] = c.dump();
    });
    r = cli({"compile", path("embd.safetensors"), "--out", path("embd-out.safetensors")});
    QVERIFY_CLEAR_ERROR(r, "parameters but the file holds");
    // I32 where the model holds F32, without the format key that names a gllm file.
    fs::copy_file(weights_, path("i32-noformat.safetensors"));
    edit_header(path("i32-noformat.safetensors"), [](nlohmann::json& h, std::string&) {
      h["__metadata__"].erase("format");
      h["transformer.wte.weight"]["dtype"] = "I32";
    });
    r = cli({"compile", path("i32-noformat.safetensors"), "--out", path("i32n-out.safetensors")});
    QVERIFY_CLEAR_ERROR(r, "stored as Int");
    QVERIFY(!fs::exists(path("i32n-out.safetensors")));
    // A checkpoint without its output layer, and one with a tensor the model does not have.
    fs::copy_file(weights_, path("nohead.safetensors"));
    edit_header(path("nohead.safetensors"),
                [](nlohmann::json& h, std::string&) { h.erase("lm_head.weight"); });
    r = cli({"compile", path("nohead.safetensors"), "--out", path("nohead-out.safetensors")});
    QVERIFY_CLEAR_ERROR(r, "lacks lm_head.weight");
    fs::copy_file(weights_, path("stray.safetensors"));
    edit_header(path("stray.safetensors"), [](nlohmann::json& h, std::string&) {
      h["stray.weight"] = {{"dtype", "F32"}, {"shape", {0}}, {"data_offsets", {0, 0}}};
    });
    r = cli({"compile", path("stray.safetensors"), "--out", path("stray-out.safetensors")});
    QVERIFY_CLEAR_ERROR(r, "stray.weight");
    QVERIFY(!fs::exists(path("nohead-out.safetensors")) &&
            !fs::exists(path("stray-out.safetensors")));
    // A probe far longer than the model's sequences.
    r = cli({"compile", weights_, "--out", path("probe-out.safetensors"), "--probe-len", "60000"});
    QVERIFY_CLEAR_ERROR(r, "--probe-len");
    // A preset with a key twice; a preset that is a FIFO (no writer: a plain open would block).
    gllm::write_file_atomic(path("dup.json"),
                            R"({"name": "d", "train": {"steps": 5, "steps": 9}})");
    r = cli({"params", path("dup.json")});
    QVERIFY_CLEAR_ERROR(r, "appears twice");
    QCOMPARE(::mkfifo(path("fifo.json").c_str(), 0644), 0);
    r = cli({"params", path("fifo.json")});
    QVERIFY_CLEAR_ERROR(r, "named pipe");
    r = cli({"train", "--sweep", path("fifo.json")});
    QVERIFY_CLEAR_ERROR(r, "named pipe");
    // A run folder whose config.json is a FIFO.
    fs::create_directories(path("fiforun/checkpoints"));
    QCOMPARE(::mkfifo(path("fiforun/config.json").c_str(), 0644), 0);
    r = cli({"runs", path("fiforun")});
    QVERIFY_CLEAR_ERROR(r, "named pipe");
    r = cli({"resume", path("fiforun")});
    QVERIFY_CLEAR_ERROR(r, "named pipe");
  }

  void sweepArmNamesAreNotPaths() {
    const std::string out = path("sweep-out");
    gllm::write_file_atomic(
        path("escape.json"),
        nlohmann::json{{"arms", {{{"preset", path("tiny.json")}, {"name", "../../escaped"}}}},
                       {"seeds", {1}},
                       {"steps", 1}}
            .dump());
    auto r = cli({"train", "--sweep", path("escape.json"), "--out", out, "--quiet"});
    QVERIFY2(r.exit_code == 0, r.err.c_str());
    std::vector<std::string> made;
    for (const auto& e : fs::directory_iterator(out)) made.push_back(e.path().string());
    QCOMPARE(made.size(), size_t(1));
    QVERIFY2(fs::exists(made[0] + "/config.json"), made[0].c_str());
    QVERIFY(!fs::exists(path("escaped-s1")) &&
            !fs::exists(tmp_.path().toStdString() + "/../escaped-s1"));
    // Another arm that maps to the same folder with another config: not "skipped as completed".
    gllm::write_file_atomic(path("impostor.json"),
                            nlohmann::json{{"arms",
                                            {{{"preset", path("tiny.json")},
                                              {"name", "../../escaped"},
                                              {"set", {{"optim.matrix_lr", 0.5}}}}}},
                                           {"seeds", {1}},
                                           {"steps", 1}}
                                .dump());
    const std::string summary = gllm::read_file(made[0] + "/summary.json");
    r = cli({"train", "--sweep", path("impostor.json"), "--out", out, "--quiet"});
    QVERIFY_CLEAR_ERROR(r, "optim.matrix_lr");
    QVERIFY2(r.err.find("not arm") != std::string::npos, r.err.c_str());
    QCOMPARE(gllm::read_file(made[0] + "/summary.json"), summary);
    // The same sweep again: its own completed run is skipped.
    r = cli({"train", "--sweep", path("escape.json"), "--out", out, "--quiet"});
    QVERIFY2(r.exit_code == 0 && r.err.find("already completed") != std::string::npos,
             r.err.c_str());
  }

  void gradesOutsideTheClipAndNonFiniteWeights() {
    // Attention grades of 1e30 and −5: compile and certify refuse them, audit reports them.
    for (const float bad : {1e30f, -5.0f}) {
      const std::string f =
          path("grades" + std::to_string(static_cast<int>(bad > 0)) + ".safetensors");
      fs::copy_file(weights_, f, fs::copy_options::overwrite_existing);
      edit_header(f, [&](nlohmann::json& h, std::string& data) {
        const auto& off = h["attn_grades"]["data_offsets"];
        std::memcpy(&data[off[0].get<size_t>()], &bad, 4);
      });
      auto r = cli({"compile", f, "--out", path("grades-out.safetensors")});
      QVERIFY_CLEAR_ERROR(r, "outside [0, ");
      QVERIFY(!fs::exists(path("grades-out.safetensors")));
      r = cli({"audit", f, "--json"});
      QVERIFY2(r.exit_code == 0, r.err.c_str());
      const auto j = nlohmann::json::parse(r.out);
      QCOMPARE(j["grade_findings"].size(), size_t(1));
      QVERIFY2(
          j["grade_findings"][0].get<std::string>().find("attn_grades[0]") != std::string::npos,
          r.out.c_str());
    }
    // NaN in a grade tensor (not a matrix): an audit finding.
    fs::copy_file(weights_, path("nan-grades.safetensors"));
    edit_header(path("nan-grades.safetensors"), [](nlohmann::json& h, std::string& data) {
      const float nan = std::numeric_limits<float>::quiet_NaN();
      std::memcpy(&data[h["attn_grades"]["data_offsets"][0].get<size_t>()], &nan, 4);
    });
    auto r = cli({"audit", path("nan-grades.safetensors"), "--json"});
    QVERIFY2(r.exit_code == 0, r.err.c_str());
    const auto j = nlohmann::json::parse(r.out);
    QVERIFY2(j["nonfinite_tensors"].dump().find("attn_grades") != std::string::npos, r.out.c_str());
    // Head profiles of a 2-layer model against this 1-layer checkpoint: refused, naming both.
    nlohmann::json hp = {{"format", "gllm-head-profiles/1"},
                         {"layers", 2},
                         {"heads", 2},
                         {"planes", 8},
                         {"features", "keys"},
                         {"meta", nlohmann::json::object()}};
    for (int l = 0; l < 2; ++l)
      for (int k = 0; k < 2; ++k)
        hp["heads_profiles"].push_back({{"layer", l},
                                        {"head", k},
                                        {"alpha", std::vector<double>(8, 0.125)},
                                        {"tau", std::vector<double>(8, 0.125)},
                                        {"bc", 1.0},
                                        {"bootstrap", nlohmann::json::array()}});
    gllm::write_file_atomic(path("heads-2x2.json"), hp.dump());
    r = cli({"certify", weights_, "--profiles", path("heads-2x2.json")});
    QVERIFY_CLEAR_ERROR(r, "do not belong together");
    // Options: grades whose λ^(2q) overflows, a negative ladder seed, a checkpoint the chosen
    // reference would not read.
    r = cli({"cone", "--geometric", "--nu", ".6", "--mu", ".3", "--grades", "1e308,0,0,0"});
    QVERIFY_CLEAR_ERROR(r, "overflow");
    r = cli({"ladder", "--profiles", path("heads-2x2.json"), "--seed", "-1"});
    QVERIFY2(r.exit_code == 2 && r.err.find("--seed") != std::string::npos, r.err.c_str());
    r = cli({"profiles", "--checkpoint", weights_, "--reference", "ppmi", "--out", path("p.json")});
    QVERIFY_CLEAR_ERROR(r, "reads no checkpoint");
  }

  void invalidUtf8FolderNamesDoNotBreakTheListing() {
    const std::string parent = path("utf8");
    fs::create_directories(parent);
    fs::copy(path("done"), parent + "/ok", fs::copy_options::recursive);
    fs::copy(path("done"), parent + "/bad-\xff\xfe", fs::copy_options::recursive);
    auto r = cli({"runs", parent, "--json"});
    QVERIFY2(r.exit_code == 0, r.err.c_str());
    QCOMPARE(nlohmann::json::parse(r.out)["runs"].size(), size_t(2));
  }

  void crossObjectMismatchesAreRefused() {
    auto r = cli({"efficiency", path("done"), "--target", "nan"});
    QVERIFY2(r.exit_code == 2, (r.err + r.out).c_str());
    r = cli({"efficiency", path("done"), "--target", "2.5", "--uniform", "no-such-arm"});
    QVERIFY_CLEAR_ERROR(r, "names no arm");
  }

  void badInputNeverEndsInRcThree() {
    // One seed has no interval.
    auto r = cli({"stats", "paired", "--a", "1.0", "--b", "0.9"});
    QVERIFY_CLEAR_ERROR(r, "at least two seeds");
    // A sweep with values of the wrong type.
    gllm::write_file_atomic(path("sweep.json"),
                            R"({"arms": ["tiny-cpu"], "seeds": ["forty-two"]})");
    r = cli({"train", "--sweep", path("sweep.json")});
    QVERIFY_CLEAR_ERROR(r, "forty-two");
    // A preset nested 100,000 deep.
    gllm::write_file_atomic(path("deep.json"), "{\"model\": " + std::string(100000, '[') +
                                                   std::string(100000, ']') + "}");
    r = cli({"params", path("deep.json")});
    QVERIFY_CLEAR_ERROR(r, "nested deeper");
    // One damaged folder among run folders: the others are still listed and compared.
    const std::string parent = path("parent");
    fs::create_directories(parent + "/bad");
    fs::copy(path("done"), parent + "/good", fs::copy_options::recursive);
    gllm::write_file_atomic(parent + "/bad/config.json", R"({"name": 5, "train": {"seed": "x"}})");
    fs::create_directories(parent + "/worse");
    gllm::write_file_atomic(parent + "/worse/config.json", "[1]");
    gllm::write_file_atomic(parent + "/good/summary.json", R"({"status": 5, "pid": "me"})");
    gllm::write_file_atomic(parent + "/good/checkpoints/step_99999999999999999999.json", "{}");
    r = cli({"runs", parent, "--json"});
    QVERIFY2(r.exit_code == 0, r.err.c_str());
    auto j = nlohmann::json::parse(r.out);
    QCOMPARE(j["runs"].size(), size_t(2));
    QCOMPARE(j["errors"].size(), size_t(1));
    r = cli({"compare", parent, "--baseline", parent + "/good", "--metric", "val_bpb"});
    QVERIFY2(r.exit_code == 0, r.err.c_str());
    QVERIFY2(r.err.find("skipped") != std::string::npos, r.err.c_str());
    r = cli({"audit", parent + "/good"});
    QVERIFY2(r.exit_code == 0, r.err.c_str());
  }
};

QTEST_APPLESS_MAIN(TestCliHostileInput)
#include "test_cli_hostile_input.moc"
