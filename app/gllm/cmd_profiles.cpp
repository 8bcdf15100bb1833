// `gllm profiles`: estimates seed 000's profiles on the Brown corpus (graded basis, α̂, τ̂, per-level
// targets, BC, bootstrap, held-out, part-of-speech grades) and writes the profiles file.
#include <chrono>
#include <filesystem>

#include "app/gllm/command_registry.h"
#include "engine/config/run_config.h"
#include "engine/data/corpus.h"
#include "engine/data/dataset.h"
#include "engine/data/profile_estimation.h"
#include "engine/dataset/brown_tags.h"
#include "engine/dataset/dataset_manifest.h"
#include "engine/grading/profiles.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/train/embedding_reference.h"
#include "engine/train/head_profiles.h"

namespace {

gllm::cli::RegisterCommand reg_profiles("profiles", [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "profiles",
      "Estimate α̂/τ̂ profiles, graded basis, BC and part-of-speech grades on the Brown "
      "corpus (seed 000 §7.1–§7.3) and write a profiles file; with --checkpoint "
      "alone, the profiles of every attention head in its own coordinates");
  struct Opts {
    gllm::ProfileOptions p;
    std::string corpus = "brown", path, out, config;
    bool json = false, no_output_grades = false;
    int vocab = 0;
    gllm::HeadProfileOptions heads;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--corpus", o->corpus,
                  "Corpus with annotations: brown (the Brown corpus as the data cache's prepared "
                  "dataset, made on first use as training does), or prepared (a dataset prepared "
                  "from it with `gllm data prepare BROWN --format brown`)")
      ->check(CLI::IsMember({"brown", "prepared"}))
      ->capture_default_str();
  cmd->add_option("--path", o->path,
                  "Brown folder (default: the data cache), or with --corpus prepared the dataset "
                  "folder");
  cmd->add_option("--config", o->config,
                  "Take the data section (evaluation fractions, vocab) from this RunConfig");
  auto* reference =
      cmd->add_option(
             "--reference", o->p.reference,
             "Reference representation: token_ppmi (PPMI + truncated SVD over the run's BPE "
             "tokens: a model starts from it with model.wte_init = \"reference\"), wte (a "
             "checkpoint's own embedding W_e·G, for arms forked from it), ppmi (over word types: "
             "coordinates no model has), or heads (every attention head of --checkpoint; the "
             "default when --checkpoint is given alone)")
          ->check(CLI::IsMember({"ppmi", "token_ppmi", "wte", "heads"}));
  cmd->add_option(
      "--checkpoint", o->p.checkpoint,
      "Run folder or checkpoint: head profiles (each head's keys after RoPE and QK-norm), or the "
      "reference embedding with --reference wte");
  cmd->add_option("--features", o->heads.features, "Head profiles: read the heads' keys or queries")
      ->check(CLI::IsMember({"keys", "queries"}))
      ->capture_default_str();
  cmd->add_option("--max-tokens", o->heads.max_tokens,
                  "Head profiles: validation tokens read at most")
      ->check(CLI::Range(int64_t(1000), int64_t(100000000)))
      ->capture_default_str();
  cmd->add_option("--wte-name", o->p.wte_name,
                  "Tensor name of the token embedding in the checkpoint");
  cmd->add_option("--d", o->p.d, "Width of the PPMI reference (wte: taken from the checkpoint)")
      ->check(CLI::Range(2, 4096));
  cmd->add_option("--levels", o->p.levels, "Levels L (1–4; Brown levels 0 … L−1)")
      ->check(CLI::Range(1, 4));
  cmd->add_option("--target", o->p.target,
                  "Probe target of α̂: noun, verb_distance, negation, document_position or mixture")
      ->check(CLI::IsMember({"noun", "verb_distance", "negation", "document_position", "mixture"}));
  cmd->add_option("--bootstrap", o->p.bootstrap, "Bootstrap resamples over validation sentences")
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--seed", o->p.seed, "Seed (SVD sketch, bootstrap)");
  cmd->add_option("--ridge", o->p.ridge,
                  "Ridge of the probes, relative to the mean coordinate variance")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--min-count", o->p.min_count,
                  "Word types seen fewer times have no representation")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--max-types", o->p.max_types, "PPMI: most frequent word types kept")
      ->check(CLI::Range(10, 1000000));
  cmd->add_option("--contexts", o->p.contexts, "PPMI: context vocabulary size")
      ->check(CLI::Range(10, 100000));
  cmd->add_option("--window", o->p.window, "PPMI: ± window within a sentence")
      ->check(CLI::Range(1, 20));
  cmd->add_option("--threads", o->p.threads, "Worker threads (0 = all cores)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--vocab-size", o->vocab,
                  "Tokenizer vocabulary for per-token output grades (default: config or 8192)");
  cmd->add_flag("--no-output-grades", o->no_output_grades, "Skip the per-token output grades");
  cmd->add_option("--out", o->out, "Profiles file to write")->required();
  cmd->add_flag("--json", o->json, "Print the estimation report as JSON");
  cmd->callback([o, reference] {
    const bool heads =
        o->p.reference == "heads" || (reference->count() == 0 && !o->p.checkpoint.empty());
    if (heads) {
      if (o->p.checkpoint.empty())
        throw gllm::Error("--reference heads needs --checkpoint RUN_OR_CKPT");
      auto h = o->heads;
      h.checkpoint = o->p.checkpoint;
      h.target = o->p.target;
      h.bootstrap = o->p.bootstrap;
      h.seed = o->p.seed;
      h.ridge = o->p.ridge;
      h.corpus_path = o->path;
      auto t0 = std::chrono::steady_clock::now();
      auto hp = gllm::estimate_head_profiles(h, [&](const std::string& s) {
        if (!o->json) std::cerr << s << std::endl;
      });
      gllm::grading::save_head_profiles(o->out, hp);
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      nlohmann::json bc = nlohmann::json::array();
      for (int l = 0; l < hp.layers; ++l)
        for (int k = 0; k < hp.heads; ++k)
          bc.push_back({{"layer", l},
                        {"head", k},
                        {"bc", gllm::grading::bhattacharyya(hp.at(l, k).profiles.alpha,
                                                            hp.at(l, k).profiles.tau)}});
      if (o->json) {
        gllm::cli::print_json({{"out", o->out},
                               {"kind", "heads"},
                               {"layers", hp.layers},
                               {"heads", hp.heads},
                               {"planes", hp.planes},
                               {"bc", bc},
                               {"meta", hp.meta},
                               {"total_seconds", secs}});
        return;
      }
      std::cout << "wrote " << o->out << " (" << hp.layers << " layers × " << hp.heads << " heads, "
                << hp.planes << " planes, " << h.bootstrap << " bootstrap resamples) in " << secs
                << " s\n";
      for (const auto& e : bc)
        std::cout << "  layer " << e["layer"] << " head " << e["head"] << ": BC "
                  << e["bc"].get<double>() << "\n";
      std::cout << std::flush;
      return;
    }
    if (!o->p.checkpoint.empty() && o->p.reference != "wte")
      throw gllm::Error("--checkpoint is read with --reference heads or wte; --reference " +
                        o->p.reference +
                        " reads no checkpoint, so the profiles would not be the checkpoint's. "
                        "Drop --checkpoint or choose --reference heads / wte");
    gllm::DataConfig cfg;
    if (!o->config.empty()) cfg = gllm::RunConfig::load(o->config).data;
    cfg.corpus = o->corpus;
    if (!o->path.empty()) cfg.corpus_path = o->path;
    if (o->vocab) cfg.vocab_size = o->vocab;
    // A prepared dataset's vocabulary is its tokenizer's unless --vocab or --config says otherwise
    // (and then it must be the same: the dataset says so).
    if (cfg.corpus == "prepared" && !o->vocab && o->config.empty() && !cfg.corpus_path.empty())
      cfg.vocab_size = gllm::json_int_or(
          gllm::read_manifest(cfg.corpus_path).value("tokenizer", nlohmann::json::object()),
          "vocab_size", cfg.vocab_size);
    gllm::DataConfig::schema().from_json(cfg, gllm::DataConfig::schema().to_json(cfg), "data");
    auto say = [&](const std::string& s) {
      if (!o->json) std::cerr << s << std::endl;
    };
    auto t0 = std::chrono::steady_clock::now();
    // A dataset prepared from the Brown corpus (for brown, the data cache's): its splits,
    // tokenizer and kept tags.
    const gllm::TaggedData tagged = gllm::open_tagged_data(cfg, say);
    const gllm::Corpus& corpus = tagged.corpus;
    const gllm::Dataset& ds = tagged.ds;
    const gllm::Splits& splits = ds.splits;
    const bool token_units = o->p.reference == "wte" || o->p.reference == "token_ppmi";
    gllm::grading::TokenReference checkpoint_ref;
    if (o->p.reference == "wte") {
      if (o->p.checkpoint.empty())
        throw gllm::Error(
            "--reference wte reads a checkpoint's embedding: give --checkpoint "
            "RUN_OR_CKPT");
      checkpoint_ref = gllm::checkpoint_reference(o->p.checkpoint, o->p.wte_name);
      checkpoint_ref.tokenizer_hash = ds.tokenizer.hash();
      o->p.token_reference = &checkpoint_ref;
    }
    // The tokenizer serves the per-token output grades and the token-level references.
    const bool with_tokens = !o->no_output_grades || token_units;
    auto r = gllm::estimate_profiles(corpus, splits, o->p, with_tokens ? &ds.tokenizer : nullptr,
                                     with_tokens ? ds.shard.get() : nullptr, say);
    if (o->p.reference == "wte") {
      r.file.reference["checkpoint"] = checkpoint_ref.meta["checkpoint"];
      r.file.reference["step"] = checkpoint_ref.meta["step"];
    }
    if (r.reference.vectors.size() > 0) {
      // The table a model starts from, beside the profiles (named relative to them).
      const std::filesystem::path out(o->out);
      const std::string table = out.stem().string() + ".reference.safetensors";
      gllm::grading::save_token_reference((out.parent_path() / table).string(), r.reference);
      r.file.reference["file"] = table;
      say("wrote the token reference table " + (out.parent_path() / table).string());
    }
    r.file.meta["split"] = {{"train", splits.train.size()},
                            {"val", splits.val.size()},
                            {"heldout", splits.heldout.size()},
                            {"by", "content hash"},
                            {"dataset", ds.cache_dir}};
    if (cfg.corpus == "brown") {
      r.file.meta["split"]["val_fraction"] = cfg.val_fraction;
      r.file.meta["split"]["heldout_fraction"] = cfg.heldout_fraction;
    }
    r.file.meta["report"] = r.report;
    gllm::grading::save_profiles_file(o->out, r.file);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.report["total_seconds"] = secs;
    r.report["out"] = o->out;
    if (o->json) {
      gllm::cli::print_json(r.report);
      return;
    }
    std::cout << "wrote " << o->out << " (d = " << r.file.profiles.d()
              << ", L = " << r.file.profiles.levels() << ", " << r.file.bootstrap.size()
              << " bootstrap resamples) in " << secs << " s\n"
              << "BC(α̂, τ̂) [" << o->p.target << "] = " << r.report["bc"].get<double>() << "\n";
    for (auto& [name, e] : r.report["bc_per_target"].items())
      std::cout << "  level " << e["level"] << " target " << name << ": BC "
                << e["bc"].get<double>()
                << (e.contains("bc_low") ? " [" + std::to_string(e["bc_low"].get<double>()) + ", " +
                                               std::to_string(e["bc_high"].get<double>()) + "]"
                                         : std::string())
                << "\n";
    for (const char* arm : {"taxonomic", "pos"})
      if (r.report.contains(arm))
        std::cout << "  " << arm
                  << " arm: <q, α̂−τ̂> = " << r.report[arm]["certificate"].get<double>()
                  << ", sign kept in " << 100 * r.report[arm]["sign_fraction"].get<double>()
                  << " % of resamples\n";
    std::cout << std::flush;
  });
});

}  // namespace
