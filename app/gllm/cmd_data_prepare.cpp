// `gllm data prepare INPUT… --out DATASET`: a corpus of any size into llm.c token shards with a
// manifest (engine/dataset), with a progress line, Ctrl-C as a resumable stop; and the info report.
#include "app/gllm/cmd_data_prepare.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "app/gllm/command_registry.h"
#include "app/gllm/dataset_progress.h"
#include "engine/dataset/brown_tags.h"
#include "engine/dataset/dataset_manifest.h"
#include "engine/dataset/prepare.h"
#include "engine/io/error.h"

namespace gllm::cli {
namespace {

std::string human_bytes(double b) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", b, unit[u]);
  return buf;
}

uint64_t input_bytes(const nlohmann::json& manifest) {
  uint64_t n = 0;
  for (const auto& f : manifest.value("inputs", nlohmann::json::array()))
    n += f.value("size", uint64_t(0));
  return n;
}

struct PrepareArgs {
  PrepareOptions o;
  // Counts as parsed (add_count_option's range is that of a signed type); copied into `o`.
  int64_t val_tokens = 1000000, heldout_tokens = 1000000, tokenizer_sample = 10000000,
          shard_tokens = 100000000;
  std::string invalid_utf8 = "refuse", documents = "auto";
  bool json = false, quiet = false;
};

void run_prepare(PrepareArgs& a) {
  a.o.val_tokens = uint64_t(a.val_tokens);
  a.o.heldout_tokens = uint64_t(a.heldout_tokens);
  a.o.tokenizer_sample = uint64_t(a.tokenizer_sample);
  a.o.shard_tokens = uint64_t(a.shard_tokens);
  if (a.invalid_utf8 != "refuse" && a.invalid_utf8 != "replace")
    throw Error("--invalid-utf8 is '" + a.invalid_utf8 + "'; use refuse (the default) or replace");
  a.o.read.replace_invalid_utf8 = a.invalid_utf8 == "replace";
  if (a.documents == "auto")
    a.o.read.unit = DocumentUnit::Auto;
  else if (a.documents == "file")
    a.o.read.unit = DocumentUnit::File;
  else if (a.documents == "paragraphs")
    a.o.read.unit = DocumentUnit::Paragraphs;
  else
    throw Error("--documents is '" + a.documents + "'; use auto, file or paragraphs");
  double seconds = 0;
  const PrepareResult r = run_dataset_work(
      a.quiet, a.json, [&](const PrepareHooks& hooks) { return prepare_dataset(a.o, hooks); },
      &seconds);
  const uint64_t in_bytes = input_bytes(r.manifest);
  if (a.json) {
    print_json({{"dataset", a.o.out_dir},
                {"already_complete", r.already_complete},
                {"resumed", r.resumed},
                {"seconds", seconds},
                {"manifest", r.manifest}});
    return;
  }
  if (r.already_complete) {
    std::printf("%s is already prepared from these inputs with these options (nothing written)\n",
                a.o.out_dir.c_str());
  } else {
    std::printf("prepared %s%s: %s of input in %.1f s (%.1f MB/s)\n", a.o.out_dir.c_str(),
                r.resumed ? " (continued)" : "", human_bytes(double(in_bytes)).c_str(), seconds,
                seconds > 0 ? double(in_bytes) / 1e6 / seconds : 0.0);
  }
  print_dataset_splits(r.manifest);
}

RegisterSubcommand reg_data_prepare("data", "prepare", [](CLI::App& data) {
  auto* cmd = data.add_subcommand(
      "prepare",
      "Prepare a corpus of any size (text, JSON Lines, .gz/.zst) into a dataset: documents split "
      "by content hash into train/val/held-out, a BPE tokenizer, llm.c uint16 token shards and a "
      "manifest. Resumable: run the same command again after a stop or a kill");
  auto a = std::make_shared<PrepareArgs>();
  cmd->add_option("inputs", a->o.inputs, "Files and folders to read (folders recursively)")
      ->required()
      ->expected(1, -1);
  cmd->add_option("--out", a->o.out_dir, "The dataset folder to write")->required();
  add_count_option(cmd, "--vocab", a->o.vocab, "BPE vocabulary size (default 8192; at most 65535)",
                   1, 1000000000);
  add_count_option(cmd, "--val-tokens", a->val_tokens,
                   "Tokens in the validation split (default 1M; seed 001: 20.97M)");
  add_count_option(cmd, "--heldout-tokens", a->heldout_tokens,
                   "Tokens in the held-out split (default 1M; seed 001: 20.97M)");
  add_count_option(cmd, "--tokenizer-sample", a->tokenizer_sample,
                   "Characters of train documents the tokenizer is trained on, drawn across the "
                   "whole input (default 10M)");
  add_count_option(cmd, "--shard-tokens", a->shard_tokens,
                   "Tokens per shard (default 100M, as llm.c and modded-nanogpt)");
  cmd->add_option("--format", a->o.format,
                  "auto (by file name) | text | jsonl | brown (Brown Form C files: their "
                  "detokenized text, one document per file)")
      ->capture_default_str();
  cmd->add_option("--text-field", a->o.read.field, "JSON Lines: the string field with the text")
      ->capture_default_str();
  cmd->add_option("--documents", a->documents,
                  "Plain text: auto (a named file splits at blank lines, a file in a folder is one "
                  "document) | file | paragraphs")
      ->capture_default_str();
  cmd->add_option("--invalid-utf8", a->invalid_utf8,
                  "refuse (name the file and byte offset) | replace (by U+FFFD, counted)")
      ->capture_default_str();
  cmd->add_flag("--skip-bad-lines", a->o.read.skip_bad_lines,
                "JSON Lines: skip (and count) a line that is not JSON or lacks the field");
  cmd->add_option("--threads", a->o.threads, "Encoder threads (default: every core)")
      ->check(CLI::Range(0, 4096));
  cmd->add_flag("--json", a->json, "Print the result (and the manifest) as JSON");
  cmd->add_flag("--quiet", a->quiet, "No progress or news on stderr");
  cmd->callback([a] { run_prepare(*a); });
});

}  // namespace

void print_dataset_info(const std::string& dir, bool json, bool verify) {
  nlohmann::json m = read_manifest(dir);
  std::vector<std::string> problems;
  if (verify) {
    problems = verify_dataset_shards(dir, m);
    if (const std::string why = brown_tags_problem(dir, m); !why.empty()) problems.push_back(why);
  }
  if (json) {
    nlohmann::json out = m;
    out["dataset"] = dir;
    if (verify) out["verified"] = {{"whole", problems.empty()}, {"problems", problems}};
    print_json(out);
  } else {
    const auto& t = m.value("tokenizer", nlohmann::json::object());
    std::printf("dataset     %s\n", dir.c_str());
    std::printf("made by     %s\n", m.value("created_by", std::string("?")).c_str());
    std::printf("inputs      %zu file(s), %s\n", m.value("inputs", nlohmann::json::array()).size(),
                human_bytes(double(input_bytes(m))).c_str());
    const auto& rd = m.value("reading", nlohmann::json::object());
    std::printf(
        "documents   %llu (blank skipped %llu, bad lines skipped %llu, invalid UTF-8 "
        "bytes replaced %llu)\n",
        (unsigned long long)rd.value("documents", uint64_t(0)),
        (unsigned long long)rd.value("blank_documents_skipped", uint64_t(0)),
        (unsigned long long)rd.value("bad_lines_skipped", uint64_t(0)),
        (unsigned long long)rd.value("invalid_utf8_bytes_replaced", uint64_t(0)));
    std::printf("tokenizer   %s, vocab %d, sample %llu characters, sha512 %.16s…\n",
                t.value("file", std::string("?")).c_str(), t.value("vocab_size", 0),
                (unsigned long long)t.value("sample_characters", uint64_t(0)),
                t.value("sha512", std::string()).c_str());
    std::printf(
        "shards      llm.c format (magic 20240520, version 1, uint16), BOS id %d per "
        "document\n",
        m.value("shard_format", nlohmann::json::object()).value("bos_id", 1));
    const nlohmann::json tags = brown_tags_entry(m);
    if (!tags.empty())
      std::printf("POS tags    %s: %llu words of %llu documents (profiles, probe)\n",
                  tags.value("file", std::string("?")).c_str(),
                  (unsigned long long)tags.value("words", uint64_t(0)),
                  (unsigned long long)tags.value("documents", uint64_t(0)));
    print_dataset_splits(m);
    if (verify) {
      if (problems.empty())
        std::printf(tags.empty()
                        ? "verified    every shard has its recorded size, header and SHA-512\n"
                        : "verified    every shard has its recorded size, header and SHA-512; "
                          "the POS tags file its SHA-512\n");
      for (const auto& p : problems) std::printf("PROBLEM     %s\n", p.c_str());
    }
  }
  if (!problems.empty())
    throw Error("dataset " + dir + " has " + std::to_string(problems.size()) +
                " problem(s) (listed above); restore the files they name, or prepare the "
                "dataset again into a new folder");
}

}  // namespace gllm::cli
