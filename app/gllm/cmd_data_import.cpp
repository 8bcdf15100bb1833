// `gllm data import SHARD… --tokenizer MODEL --out DATASET`: llm.c shards made elsewhere, with the
// sentencepiece model that made them, as a dataset the trainer reads
// (engine/dataset/import_shards).
#include <cstdio>

#include "app/gllm/command_registry.h"
#include "app/gllm/dataset_progress.h"
#include "engine/dataset/import_shards.h"
#include "engine/io/error.h"

namespace gllm::cli {
namespace {

struct ImportArgs {
  ImportOptions o;
  int64_t heldout_tokens = 1000000;
  bool json = false, quiet = false;
};

void run_import(ImportArgs& a) {
  a.o.heldout_tokens = uint64_t(a.heldout_tokens);
  double seconds = 0;
  const PrepareResult r = run_dataset_work(
      a.quiet, a.json, [&](const PrepareHooks& hooks) { return import_shards(a.o, hooks); },
      &seconds);
  if (a.json) {
    print_json({{"dataset", a.o.out_dir},
                {"already_complete", r.already_complete},
                {"seconds", seconds},
                {"manifest", r.manifest}});
    return;
  }
  if (r.already_complete)
    std::printf("%s already holds this import (nothing written)\n", a.o.out_dir.c_str());
  else
    std::printf("imported %zu shard(s) into %s in %.1f s\n",
                r.manifest.value("inputs", nlohmann::json::array()).size(), a.o.out_dir.c_str(),
                seconds);
  print_dataset_splits(r.manifest);
}

RegisterSubcommand reg_data_import("data", "import", [](CLI::App& data) {
  auto* cmd = data.add_subcommand(
      "import",
      "Import llm.c token shards made elsewhere (llm.c, modded-nanogpt) with the sentencepiece "
      "model that made them: validation shards by file name (`val` in it), held-out cut from "
      "the end of the train shards, the rest hard-linked (or copied), a manifest");
  auto a = std::make_shared<ImportArgs>();
  cmd->add_option("shards", a->o.inputs, "Shard files (.bin), or folders of them")
      ->required()
      ->expected(1, -1);
  cmd->add_option("--tokenizer", a->o.tokenizer_model,
                  "The sentencepiece .model the shards were encoded with")
      ->required();
  cmd->add_option("--out", a->o.out_dir, "The dataset folder to write")->required();
  add_count_option(cmd, "--heldout-tokens", a->heldout_tokens,
                   "Tokens of held-out documents cut from the end of the train shards (default "
                   "1M)",
                   1, int64_t(1) << 40);
  cmd->add_flag("--copy", a->o.copy, "Copy the shards even where a hard link is possible");
  cmd->add_flag("--json", a->json, "Print the result (and the manifest) as JSON");
  cmd->add_flag("--quiet", a->quiet, "No progress or news on stderr");
  cmd->callback([a] { run_import(*a); });
});

}  // namespace
}  // namespace gllm::cli
