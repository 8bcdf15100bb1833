// import_shards: shards made elsewhere → checked (header, BOS, ids), counted (documents at BOS,
// bytes from the model's pieces), linked or copied in, held-out cut from the train tail, manifest.
#include "engine/dataset/import_shards.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <regex>

#include "engine/data/tokenizer.h"
#include "engine/dataset/dataset_manifest.h"
#include "engine/dataset/prepare_stages.h"
#include "engine/dataset/shard_file.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"
#include "engine/io/sha512.h"

#ifndef GLLM_VERSION
#define GLLM_VERSION "dev"
#endif

namespace gllm {
namespace {

constexpr const char* kImportPlanFile = "import.json";  // until the manifest is written
constexpr uint64_t kHeldoutShardTokens = 100000000;

// A shard file as the manifest records it (path, size, change time) with its split and tokens.
struct InputShard : InputFile {
  std::string split;
  uint64_t tokens = 0;
};

// The shard files of the command line, in order: a folder gives its *.bin files sorted by name.
std::vector<InputShard> expand_shards(const std::vector<std::string>& inputs,
                                      const std::string& out_dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const auto& in : inputs) {
    std::error_code ec;
    const auto st = fs::status(in, ec);
    if (ec || !fs::exists(st)) throw Error(in + " does not exist; name llm.c shard files (.bin)");
    if (fs::is_directory(st)) {
      std::vector<std::string> here;
      for (const auto& e : fs::directory_iterator(in, ec))
        if (e.path().extension() == ".bin" && e.is_regular_file()) here.push_back(e.path());
      if (ec) throw Error("cannot list " + in + ": " + ec.message());
      std::sort(here.begin(), here.end());
      if (here.empty()) throw Error(in + " holds no .bin shard; name the shard files themselves");
      files.insert(files.end(), here.begin(), here.end());
    } else if (fs::is_regular_file(st)) {
      files.push_back(in);
    } else {
      throw Error(in + " is not a regular file (a FIFO, socket or device); name the shard files");
    }
  }
  std::vector<InputShard> out;
  const auto out_abs = fs::weakly_canonical(out_dir);
  for (const auto& f : files) {
    const auto abs = fs::weakly_canonical(f);
    if (abs.parent_path() == out_abs)
      throw Error(f + " lies inside the dataset folder " + out_dir +
                  " being written; import into another folder");
    if (std::any_of(out.begin(), out.end(),
                    [&](const InputShard& s) { return fs::weakly_canonical(s.path) == abs; }))
      continue;  // the same file named twice is imported once
    struct stat st {};
    if (::stat(f.c_str(), &st) != 0) throw Error("cannot stat " + f + ": " + std::strerror(errno));
    InputShard s;
    s.path = s.name = f;
    s.split = imported_shard_split(fs::path(f).filename().string());
    s.size = uint64_t(st.st_size);
    s.mtime_ns = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    out.push_back(s);
  }
  return out;
}

// A modded-nanogpt or llm.c header of another version says what it is before the generic check.
void check_shard_version(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open shard " + path + ": " + std::strerror(errno));
  int32_t h[3] = {};
  const ssize_t got = ::pread(fd, h, sizeof h, 0);
  ::close(fd);
  if (got == ssize_t(sizeof h) && h[0] == kShardMagic && h[1] == 7)
    throw Error("shard " + path +
                " is llm.c's version 7 (uint32 tokens, a vocabulary above 65,535); the workbench "
                "reads version 1 (uint16 tokens) only — re-export it with a vocabulary that fits");
}

nlohmann::json inputs_json(const std::vector<InputShard>& in,
                           const std::vector<std::string>& sha512) {
  nlohmann::json a = nlohmann::json::array();
  for (size_t i = 0; i < in.size(); ++i) {
    nlohmann::json f = {{"path", in[i].path},
                        {"split", in[i].split},
                        {"size", in[i].size},
                        {"mtime_ns", in[i].mtime_ns},
                        {"tokens", in[i].tokens}};
    if (i < sha512.size()) f["sha512"] = sha512[i];
    a.push_back(f);
  }
  return a;
}

std::string hash_file(const std::string& path) {
  auto d = sha512_file(path);
  return to_hex(d.data(), d.size());
}

// Puts a shard into the dataset as `file`: a hard link where the file system allows (same
// content, no copy: its record takes `src_sha512`, the hash of the input read before, and the
// final check that no input changed covers it), else a copy written atomically and hashed as it
// is written. Returns its record.
ShardRecord place_shard(const MappedShard& src, const std::string& src_sha512,
                        const std::string& dir, const std::string& file, bool copy, bool* linked) {
  const std::string dst = join_path(dir, file);
  std::error_code ec;
  std::filesystem::remove(dst, ec);
  *linked = false;
  if (!copy && ::link(src.path().c_str(), dst.c_str()) == 0) {
    *linked = true;
    return ShardRecord{file, src.size(), kShardHeaderBytes + 2 * src.size(), src_sha512};
  }
  return write_shard(dir, file, src.tokens(), src.size());
}

// Counts of one split as the manifest records them.
struct Totals {
  uint64_t documents = 0, tokens = 0, bytes = 0;
  nlohmann::json shards = nlohmann::json::array();
  void add(const uint16_t* t, uint64_t n, int32_t bos, const std::vector<int32_t>& token_bytes) {
    tokens += n;
    for (uint64_t i = 0; i < n; ++i) {
      if (t[i] == bos) ++documents;
      bytes += uint64_t(token_bytes[t[i]]);
    }
  }
  nlohmann::json json() const {
    return {{"documents", documents},
            {"tokens", tokens},
            {"bytes", bytes},
            {"bytes_per_token", tokens ? double(bytes) / double(tokens) : 0.0},
            {"shards", shards}};
  }
};

// Checks every token of a mapped shard: the first is BOS (each split's first shard), every id is
// inside the vocabulary.
void check_tokens(const MappedShard& s, bool first_of_split, int32_t bos, int vocab) {
  const uint16_t* t = s.tokens();
  if (s.size() == 0) throw Error("shard " + s.path() + " holds no tokens; leave it out");
  if (first_of_split && t[0] != bos)
    throw Error("shard " + s.path() + " starts with token " + std::to_string(t[0]) +
                ", not the model's BOS (id " + std::to_string(bos) +
                "): its documents cannot be found. It was made with another model, or without a "
                "BOS before each document; give the sentencepiece model that made it");
  uint16_t top = 0;
  for (uint64_t i = 0; i < s.size(); ++i) top = std::max(top, t[i]);
  if (int(top) >= vocab)
    throw Error("shard " + s.path() + " holds token id " + std::to_string(top) +
                ", outside the model's vocabulary of " + std::to_string(vocab) +
                "; give the sentencepiece model that made it");
}

}  // namespace

std::string imported_shard_split(const std::string& file_name) {
  static const std::regex val("(^|[_.\\-])val([_.\\-]|$)", std::regex::icase);
  return std::regex_search(file_name, val) ? "val" : "train";
}

nlohmann::json import_options_json(const ImportOptions& o) {
  return {{"imported", true}, {"heldout_tokens", o.heldout_tokens}};
}

PrepareResult import_shards(const ImportOptions& o, const PrepareHooks& hooks) {
  auto say = [&](const std::string& s) {
    if (hooks.log) hooks.log(s);
  };
  if (o.out_dir.empty()) throw Error("name the dataset folder to write (--out DATASET)");
  if (o.tokenizer_model.empty())
    throw Error(
        "importing shards needs the sentencepiece model that made them (--tokenizer "
        "MODEL.model): without it their ids cannot be read as text or scored in bytes");
  if (o.heldout_tokens == 0)
    throw Error("--heldout-tokens must be at least 1: the trainer scores a held-out split");
  make_directories(o.out_dir);
  DatasetFolderLock lock(o.out_dir);
  std::vector<InputShard> in = expand_shards(o.inputs, o.out_dir);
  if (in.empty()) throw Error("no shard to import; name llm.c shard files (.bin)");
  const nlohmann::json options = import_options_json(o);

  PrepareResult result;
  if (is_prepared_dataset(o.out_dir)) {
    nlohmann::json m = read_manifest(o.out_dir);
    const std::string why =
        record_differs(m, std::vector<InputFile>(in.begin(), in.end()), options);
    if (!why.empty())
      throw Error(o.out_dir + " already holds a finished dataset (" + why +
                  "); a finished dataset is never rewritten — import into a new folder");
    result.already_complete = true;
    result.manifest = std::move(m);
    say(o.out_dir + " already holds this import; nothing to do");
    return result;
  }
  // A folder with files other than an unfinished import's is someone else's.
  {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(o.out_dir, ec)) {
      const std::string n = e.path().filename().string();
      const bool ours =
          n == kImportPlanFile || n == "tokenizer.model" || n.rfind(".prepare.lock", 0) == 0 ||
          n.find(".tmp.") != std::string::npos ||
          (e.path().extension() == ".bin" &&
           (n.rfind("train_", 0) == 0 || n.rfind("val_", 0) == 0 || n.rfind("heldout_", 0) == 0));
      if (!ours)
        throw Error(o.out_dir + " is not empty (it holds " + n +
                    "); import into a new or empty folder");
    }
  }
  if (file_exists(join_path(o.out_dir, kImportPlanFile)))
    say("continuing an unfinished import into " + o.out_dir + " (it starts over)");
  write_file_atomic(join_path(o.out_dir, kImportPlanFile),
                    json_text({{"options", options}, {"inputs", inputs_json(in, {})}}, 1) + "\n");

  Tokenizer tok = Tokenizer::load_sentencepiece(o.tokenizer_model);
  const int vocab = tok.vocab_size();
  if (vocab > kShardMaxVocab + 1)
    throw Error("the model " + o.tokenizer_model + " has " + std::to_string(vocab) +
                " pieces; llm.c's uint16 shards hold ids up to 65,535 only");
  const int32_t bos = tok.bos_id();
  const auto& token_bytes = tok.token_bytes();
  say("tokenizer " + o.tokenizer_model + ": " + std::to_string(vocab) + " pieces, BOS id " +
      std::to_string(bos));

  // Open and check every shard; the train tail that becomes held-out is found from the end.
  std::vector<std::unique_ptr<MappedShard>> maps;
  std::vector<std::string> sha512;
  uint64_t train_tokens = 0;
  bool first_train = true, first_val = true;
  for (size_t i = 0; i < in.size(); ++i) {
    check_stop(hooks);
    if (hooks.progress) hooks.progress({"check", i, in.size()});
    check_shard_version(in[i].path);
    in[i].tokens = read_shard_header(in[i].path);
    maps.push_back(std::make_unique<MappedShard>(in[i].path));
    bool& first = in[i].split == "val" ? first_val : first_train;
    check_tokens(*maps.back(), first, bos, vocab);
    first = false;
    if (in[i].split == "train") train_tokens += in[i].tokens;
    sha512.push_back(hash_file(in[i].path));
  }
  if (first_val)
    throw Error(
        "no validation shard among the inputs: a shard whose file name has `val` as a word "
        "(fineweb_val_000000.bin, as llm.c and modded-nanogpt name it) is validation; add one");
  if (first_train) throw Error("no train shard among the inputs (every one is named `val`)");

  // The cut: the last BOS with at least heldout_tokens after it, in the train shards' order.
  std::vector<size_t> train_idx;
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i].split == "train") train_idx.push_back(i);
  uint64_t cut = UINT64_MAX;  // global position in the train stream
  {
    uint64_t end = train_tokens;
    for (size_t k = train_idx.size(); k-- > 0 && cut == UINT64_MAX;) {
      const MappedShard& s = *maps[train_idx[k]];
      const uint64_t begin = end - s.size();
      for (uint64_t j = s.size(); j-- > 0;)
        if (s.tokens()[j] == bos && train_tokens - (begin + j) >= o.heldout_tokens) {
          cut = begin + j;
          break;
        }
      end = begin;
    }
  }
  if (cut == UINT64_MAX || cut == 0)
    throw Error("the train shards hold " + std::to_string(train_tokens) +
                " tokens: too few to keep " + std::to_string(o.heldout_tokens) +
                " held-out tokens and train on the rest; give a smaller --heldout-tokens");

  Totals train, val, heldout;
  size_t train_n = 0, val_n = 0, linked = 0, copied = 0;
  ShardWriter held(o.out_dir, "heldout", kHeldoutShardTokens);
  held.on_commit = [&](const ShardRecord& r) { heldout.shards.push_back(shard_record_json(r)); };
  uint64_t pos = 0;  // train stream position of the current train shard
  for (size_t i = 0; i < in.size(); ++i) {
    check_stop(hooks);
    if (hooks.progress) hooks.progress({"import", i, in.size()});
    const MappedShard& s = *maps[i];
    bool was_linked = false;
    if (in[i].split == "val") {
      auto r = place_shard(s, sha512[i], o.out_dir, shard_file_name("val", val_n++), o.copy,
                           &was_linked);
      val.add(s.tokens(), s.size(), bos, token_bytes);
      val.shards.push_back(shard_record_json(r));
    } else {
      const uint64_t begin = pos, end = pos + s.size();
      pos = end;
      if (end <= cut) {  // wholly train
        auto r = place_shard(s, sha512[i], o.out_dir, shard_file_name("train", train_n++), o.copy,
                             &was_linked);
        train.add(s.tokens(), s.size(), bos, token_bytes);
        train.shards.push_back(shard_record_json(r));
      } else {
        const uint64_t head = cut > begin ? cut - begin : 0;  // tokens that stay train
        if (head > 0) {
          auto r = write_shard(o.out_dir, shard_file_name("train", train_n++), s.tokens(), head);
          train.add(s.tokens(), head, bos, token_bytes);
          train.shards.push_back(shard_record_json(r));
        }
        held.push(s.tokens() + head, s.size() - head);
        heldout.add(s.tokens() + head, s.size() - head, bos, token_bytes);
      }
    }
    ++(was_linked ? linked : copied);
  }
  held.finish();
  if (train.documents == 0 || heldout.documents == 0 || val.documents == 0)
    throw Error("an empty split after the import (train " + std::to_string(train.documents) +
                ", val " + std::to_string(val.documents) + ", held-out " +
                std::to_string(heldout.documents) + " documents); give other shards");
  for (size_t i = 0; i < in.size(); ++i) {  // nothing changed while it was read
    struct stat st {};
    if (::stat(in[i].path.c_str(), &st) != 0 || uint64_t(st.st_size) != in[i].size ||
        int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec != in[i].mtime_ns)
      throw Error(in[i].path + " changed while it was imported; import it again");
  }
  write_file_atomic(join_path(o.out_dir, "tokenizer.model"), tok.model_bytes());

  nlohmann::json splits = {
      {"train", train.json()}, {"val", val.json()}, {"heldout", heldout.json()}};
  splits["heldout"]["tokens_requested"] = o.heldout_tokens;
  nlohmann::json m = {
      {"format", "gllm-dataset"},
      {"version", 1},
      {"created_by", std::string("gllm ") + GLLM_VERSION + " (data import)"},
      {"shard_format", shard_format_json(bos)},
      {"options", options},
      {"inputs", inputs_json(in, sha512)},
      {"tokenizer",
       {{"file", "tokenizer.model"},
        {"sha512", tok.hash()},
        {"vocab_size", vocab},
        {"bos_id", bos},
        {"layout", tok.workbench_layout() ? "gllm" : "sentencepiece"},
        {"source", o.tokenizer_model},
        {"bytes_rule",
         "a token's bytes are its piece's UTF-8 bytes, U+2581 counted as the one space it "
         "stands for, byte pieces one, control pieces none"}}},
      {"split_rule",
       {{"rule",
         "imported: a shard whose file name has `val` as a word is validation; held-out is "
         "the last documents of the train shards, at least heldout_tokens; every other "
         "document trains"}}},
      {"splits", splits}};
  write_file_atomic(join_path(o.out_dir, kManifestFile), json_text(m, 1) + "\n");
  std::error_code ec;
  std::filesystem::remove(join_path(o.out_dir, kImportPlanFile), ec);
  say("imported " + std::to_string(in.size()) + " shard(s) (" + std::to_string(linked) +
      " hard-linked, " + std::to_string(copied) + " copied or cut): train " +
      std::to_string(train.documents) + ", val " + std::to_string(val.documents) + ", held-out " +
      std::to_string(heldout.documents) + " documents");
  result.manifest = std::move(m);
  return result;
}

}  // namespace gllm
