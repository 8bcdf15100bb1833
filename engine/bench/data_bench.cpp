// `gllm bench data`: the generated corpus prepared by a child `gllm data prepare` (timed by its
// progress lines, measured by wait4), the same files through spm_encode, and a tiny-cpu run's
// loader.
#include "engine/bench/data_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "engine/bench/bench_report.h"
#include "engine/bench/measured_process.h"
#include "engine/bench/zipf_corpus.h"
#include "engine/config/run_config.h"
#include "engine/data/tokenizer.h"
#include "engine/dataset/dataset_manifest.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/paths.h"
#include "engine/io/subprocess.h"

namespace gllm::bench {
namespace {

namespace fs = std::filesystem;

std::string last_lines(const MeasuredProcess& p, size_t n) {
  std::string out;
  const size_t from = p.stderr_lines.size() > n ? p.stderr_lines.size() - n : 0;
  for (size_t i = from; i < p.stderr_lines.size(); ++i) out += "\n  " + p.stderr_lines[i].second;
  return out;
}

void remove_all_or_throw(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) throw Error("cannot clear " + path + " for the benchmark: " + ec.message());
}

// Seconds at which each stage's first "progress: STAGE" line arrived.
std::map<std::string, double> stage_starts(const MeasuredProcess& p) {
  std::map<std::string, double> at;
  for (const auto& [t, line] : p.stderr_lines) {
    if (line.rfind("progress: ", 0) != 0) continue;
    const std::string rest = line.substr(10);
    const std::string stage = rest.substr(0, rest.find(' '));
    at.emplace(stage, t);
  }
  return at;
}

// The first `n` documents of a generated file (one line each, a blank line between).
std::vector<std::string> first_documents(const std::string& path, size_t n) {
  std::ifstream in(path);
  std::vector<std::string> docs;
  for (std::string line; docs.size() < n && std::getline(in, line);)
    if (!line.empty()) docs.push_back(line);
  return docs;
}

// Encodes the first documents with spm_encode and with the workbench's tokenizer, id for id.
nlohmann::json compare_tokens(const std::string& dir, const std::string& model,
                              const std::string& first_file) {
  const auto docs = first_documents(first_file, 200);
  std::string text;
  for (const auto& d : docs) text += d + "\n";
  const std::string sample = dir + "/same-tokens.txt", ids = dir + "/same-tokens.ids";
  write_file_atomic(sample, text);
  auto r = run_measured({"spm_encode", "--model=" + model, "--output_format=id"}, sample, ids);
  if (r.exit_code != 0)
    throw Error("spm_encode failed on the sample (exit " + std::to_string(r.exit_code) + ")" +
                last_lines(r, 5));
  const Tokenizer tok = Tokenizer::load(model);
  std::ifstream in(ids);
  size_t same = 0, compared = 0;
  for (const auto& d : docs) {
    std::string line;
    if (!std::getline(in, line)) break;
    std::vector<int32_t> theirs;
    std::istringstream fields(line);
    for (int32_t id; fields >> id;) theirs.push_back(id);
    ++compared;
    if (tok.encode(d) == theirs) ++same;
  }
  return {{"documents", compared},
          {"identical", compared == docs.size() && same == compared},
          {"differing", compared - same}};
}

// spm_encode over the files on `threads` processes (files dealt round-robin); one wall time.
nlohmann::json run_spm_encode(const std::string& dir, const std::string& model,
                              const std::vector<std::string>& files, int threads) {
  std::vector<std::vector<std::string>> groups(static_cast<size_t>(threads));
  for (size_t i = 0; i < files.size(); ++i) groups[i % groups.size()].push_back(files[i]);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<ChildProcess>> children;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].empty()) continue;
    std::vector<std::string> argv = {"spm_encode", "--model=" + model, "--output_format=id"};
    argv.insert(argv.end(), groups[g].begin(), groups[g].end());
    children.push_back(std::make_unique<ChildProcess>(
        argv, "", "/dev/null", dir + "/spm_encode-" + std::to_string(g) + ".log"));
  }
  double peak = 0;
  for (size_t g = 0; g < children.size(); ++g) {
    const auto r = children[g]->finish();
    if (r.exit_code != 0)
      throw Error("spm_encode exited with " + std::to_string(r.exit_code) + "; see " + dir +
                  "/spm_encode-" + std::to_string(g) + ".log");
    peak = std::max(peak, r.peak_rss_mib);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {{"wall_s", wall}, {"peak_rss_mib", peak}, {"processes", children.size()}};
}

// Trains the preset from the dataset in a child `gllm train` and reads the loader's share.
nlohmann::json loader_share(const DataBenchOptions& o, const std::string& dataset,
                            const std::string& exe) {
  RunConfig c = RunConfig::load(resolve_preset_path(o.preset));
  c.name = "bench-data";
  c.data.corpus = "prepared";
  c.data.corpus_path = dataset;
  c.data.vocab_size = o.vocab;
  c.train.steps = o.train_steps;
  c.train.eval_every = 0;  // one evaluation, at the end (outside the timed steps)
  c.train.eval_tokens = std::min<int64_t>(c.train.eval_tokens, 16384);
  c.train.heldout_tokens = std::min<int64_t>(c.train.heldout_tokens, 16384);
  c.train.checkpoint_every = 0;
  c.train.threads = o.threads;
  const std::string config = o.dir + "/train-config.json", run = o.dir + "/run";
  write_file_atomic(config, c.to_json().dump(2));
  remove_all_or_throw(run);
  const auto r = run_measured({exe, "train", config, "--out", run, "--quiet"});
  if (r.exit_code != 0)
    throw Error("gllm train from the benchmark's dataset exited with " +
                std::to_string(r.exit_code) + last_lines(r, 8));
  const auto s = nlohmann::json::parse(read_file(run + "/summary.json"));
  const double loader = s.value("loader_s", 0.0), train = s.value("train_s", 0.0);
  return {{"steps", s.value("step", int64_t(0))},
          {"loader_s", loader},
          {"train_s", train},
          {"share", train > 0 ? loader / train : 0.0},
          {"tokens_per_s", s.value("tokens_per_s", 0.0)},
          {"val_bpb", s.value("val_bpb", nlohmann::json())}};
}

}  // namespace

nlohmann::json run_data_bench(const DataBenchOptions& o_in) {
  DataBenchOptions o = o_in;
  if (o.dir.empty()) throw Error("the benchmark needs a folder to work in (--dir)");
  if (o.threads <= 0)
    o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (!program_available("spm_encode"))
    throw Error(
        "spm_encode (sentencepiece's encoder, the benchmark's yardstick) is not on PATH; "
        "run scripts/setup.sh, which installs Debian's sentencepiece");
  auto log = [&](const std::string& line) {
    if (o.log) o.log(line);
  };
  const std::string exe = this_program_path();

  ZipfCorpusSpec spec;
  spec.bytes = o.bytes;
  spec.seed = o.seed;
  // Files of about 128 MiB, at least one per thread and a whole number per thread.
  const int per_thread = static_cast<int>(
      std::max<uint64_t>(1, (o.bytes / (uint64_t(128) << 20) + o.threads - 1) / o.threads));
  spec.files = per_thread * o.threads;
  log("corpus: " + std::to_string(o.bytes >> 20) + " MiB of Zipfian documents in " +
      std::to_string(spec.files) + " files (seed " + std::to_string(o.seed) + ")");
  const auto corpus = write_zipf_corpus(o.dir + "/corpus", spec, o.threads);

  const std::string dataset = o.dir + "/dataset";
  remove_all_or_throw(dataset);
  // Evaluation splits of 1 M tokens each (the seeds' 20.97 M scaled to the corpus), at most a
  // twentieth of the text's tokens (about 5 bytes each) each.
  const uint64_t eval_tokens =
      std::max<uint64_t>(4096, std::min<uint64_t>(1000000, o.bytes / 5 / 20));
  std::vector<std::string> argv = {exe,
                                   "data",
                                   "prepare",
                                   "--out",
                                   dataset,
                                   "--vocab",
                                   std::to_string(o.vocab),
                                   "--threads",
                                   std::to_string(o.threads),
                                   "--tokenizer-sample",
                                   std::to_string(o.tokenizer_sample),
                                   "--val-tokens",
                                   std::to_string(eval_tokens),
                                   "--heldout-tokens",
                                   std::to_string(eval_tokens)};
  argv.insert(argv.end(), corpus.files.begin(), corpus.files.end());
  log("prepare: gllm data prepare on " + std::to_string(o.threads) + " threads");
  const auto prep = run_measured(argv);
  if (prep.exit_code != 0)
    throw Error("gllm data prepare exited with " + std::to_string(prep.exit_code) +
                last_lines(prep, 8));
  const auto starts = stage_starts(prep);
  nlohmann::json stage_s = nlohmann::json::object();
  const char* order[] = {"scan", "sample", "tokenizer", "encode", "finish"};
  for (size_t i = 0; i < 5; ++i) {
    if (!starts.count(order[i])) continue;
    double end = prep.wall_s;
    for (size_t k = i + 1; k < 5; ++k)
      if (starts.count(order[k])) {
        end = starts.at(order[k]);
        break;
      }
    stage_s[order[i]] = end - starts.at(order[i]);
  }
  const double encode_s = stage_s.value("encode", prep.wall_s);
  const double mb = double(o.bytes) / 1e6;
  const auto manifest = read_manifest(dataset);
  const std::string model = dataset + "/" + manifest["tokenizer"].value("file", "tokenizer.model");

  log("spm_encode: the same files and model on " + std::to_string(o.threads) + " processes");
  auto spm = run_spm_encode(o.dir, model, corpus.files, o.threads);
  spm["mb_per_s"] = mb / spm["wall_s"].get<double>();
  const auto same = compare_tokens(o.dir, model, corpus.files.front());

  nlohmann::json splits = nlohmann::json::object();
  uint64_t split_documents = 0;
  for (const char* s : {"train", "val", "heldout"}) {
    const auto& sp = manifest["splits"][s];
    splits[s] = {{"documents", sp.value("documents", uint64_t(0))},
                 {"tokens", sp.value("tokens", uint64_t(0))}};
    split_documents += sp.value("documents", uint64_t(0));
  }

  nlohmann::json loader = nullptr;
  if (o.train_steps > 0) {
    log("loader: " + o.preset + " for " + std::to_string(o.train_steps) +
        " steps from the dataset");
    loader = loader_share(o, dataset, exe);
  }
  const double input_mib = double(o.bytes) / (1 << 20);
  nlohmann::json result = {{"kind", "data"},
                           {"corpus",
                            {{"bytes", o.bytes},
                             {"files", spec.files},
                             {"documents", corpus.documents},
                             {"seed", o.seed},
                             {"words", spec.words},
                             {"exponent", spec.exponent}}},
                           {"threads", o.threads},
                           {"vocab", o.vocab},
                           {"prepare",
                            {{"wall_s", prep.wall_s},
                             {"stage_s", stage_s},
                             {"encode_s", encode_s},
                             {"encode_mb_per_s", mb / encode_s},
                             {"total_mb_per_s", mb / prep.wall_s},
                             {"peak_rss_mib", prep.peak_rss_mib},
                             {"rss_over_input", prep.peak_rss_mib / input_mib}}},
                           {"spm_encode", spm},
                           {"encode_ratio", (mb / encode_s) / spm["mb_per_s"].get<double>()},
                           {"same_tokens", same},
                           {"splits", splits},
                           {"disjoint", split_documents == corpus.documents},
                           {"loader", loader},
                           {"machine", machine_info()}};
  return result;
}

std::string format_data_bench(const nlohmann::json& r) {
  char buf[512];
  std::string out;
  const auto& p = r["prepare"];
  const auto& s = r["spm_encode"];
  const double gib = r["corpus"]["bytes"].get<double>() / double(uint64_t(1) << 30);
  std::snprintf(buf, sizeof buf,
                "gllm bench data: %.2f GiB of Zipfian documents (%llu documents, seed %llu), "
                "vocabulary %d, %d threads\n\n",
                gib, (unsigned long long)r["corpus"]["documents"].get<uint64_t>(),
                (unsigned long long)r["corpus"]["seed"].get<uint64_t>(), r["vocab"].get<int>(),
                r["threads"].get<int>());
  out += buf;
  std::snprintf(buf, sizeof buf, "%-28s %14s %14s %8s\n", "", "gllm prepare", "spm_encode",
                "ratio");
  out += buf;
  std::snprintf(buf, sizeof buf, "%-28s %14.1f %14.1f %7.2fx\n", "encode MB/s (same threads)",
                p["encode_mb_per_s"].get<double>(), s["mb_per_s"].get<double>(),
                r["encode_ratio"].get<double>());
  out += buf;
  std::snprintf(buf, sizeof buf, "%-28s %14.1f %14s\n", "whole prepare MB/s",
                p["total_mb_per_s"].get<double>(), "-");
  out += buf;
  std::snprintf(buf, sizeof buf, "%-28s %14.0f %14.0f\n", "peak RSS MiB (per process)",
                p["peak_rss_mib"].get<double>(), s["peak_rss_mib"].get<double>());
  out += buf;
  std::snprintf(buf, sizeof buf, "%-28s %14.3f %14s   (input %.0f MiB)\n", "peak RSS / input",
                p["rss_over_input"].get<double>(), "-",
                r["corpus"]["bytes"].get<double>() / double(1 << 20));
  out += buf;
  std::string stages;
  for (const auto& [k, v] : p["stage_s"].items()) {
    std::snprintf(buf, sizeof buf, "%s%s %.1f s", stages.empty() ? "" : ", ", k.c_str(),
                  v.get<double>());
    stages += buf;
  }
  out += "\nprepare stages: " + stages + "\n";
  const auto& same = r["same_tokens"];
  std::snprintf(buf, sizeof buf, "same tokens: %s on the first %d documents (%d differ)\n",
                same["identical"].get<bool>() ? "identical" : "NOT identical",
                same["documents"].get<int>(), same["differing"].get<int>());
  out += buf;
  std::string split_line;
  for (const char* k : {"train", "val", "heldout"}) {
    std::snprintf(buf, sizeof buf, "%s%s %llu documents / %llu tokens",
                  split_line.empty() ? "" : "; ", k,
                  (unsigned long long)r["splits"][k]["documents"].get<uint64_t>(),
                  (unsigned long long)r["splits"][k]["tokens"].get<uint64_t>());
    split_line += buf;
  }
  out += "splits: " + split_line +
         (r["disjoint"].get<bool>() ? " (each document in exactly one split)\n"
                                    : " (DOCUMENT COUNTS DO NOT ADD UP)\n");
  if (r["loader"].is_object()) {
    const auto& l = r["loader"];
    std::snprintf(buf, sizeof buf,
                  "loader: %.2f %% of the step (%.3f s of %.2f s over %lld steps, %.0f tok/s; "
                  "target ≤ 1 %%)\n",
                  100.0 * l["share"].get<double>(), l["loader_s"].get<double>(),
                  l["train_s"].get<double>(), (long long)l["steps"].get<int64_t>(),
                  l["tokens_per_s"].get<double>());
    out += buf;
  }
  return out;
}

}  // namespace gllm::bench
