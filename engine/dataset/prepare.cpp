// prepare_dataset: the folder lock, the first pass (input hashes, documents, the content-hash
// histogram that fixes the evaluation region), the tokenizer sample and training, the manifest.
#include "engine/dataset/prepare.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <queue>
#include <thread>

#include "engine/data/corpus.h"
#include "engine/data/tokenizer.h"
#include "engine/dataset/brown_tags.h"
#include "engine/dataset/content_hash.h"
#include "engine/dataset/dataset_manifest.h"
#include "engine/dataset/prepare_stages.h"
#include "engine/dataset/shard_file.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"
#include "engine/io/sha512.h"

namespace gllm {

namespace {

constexpr const char* kLockFile = ".prepare.lock";
// The evaluation region holds this many text bytes per requested evaluation token: BPE on text
// gives about 4 bytes a token, so the region holds several times the tokens asked for, and the
// tokenizer sample, drawn outside it, can never meet an evaluation document.
constexpr uint64_t kRegionBytesPerToken = 16;

std::string plan_path(const PrepareOptions& o) {
  return join_path(o.out_dir, kPlanFile);
}

nlohmann::json inputs_json(const std::vector<InputFile>& files,
                           const std::vector<std::string>& sha) {
  nlohmann::json a = nlohmann::json::array();
  for (size_t i = 0; i < files.size(); ++i) {
    const auto& f = files[i];
    a.push_back({{"name", f.name},
                 {"path", f.path},
                 {"size", f.size},
                 {"mtime_ns", f.mtime_ns},
                 {"format", f.format == InputFormat::Jsonl   ? "jsonl"
                            : f.format == InputFormat::Brown ? "brown"
                                                             : "text"},
                 {"sha512", i < sha.size() ? sha[i] : ""}});
  }
  return a;
}

uint64_t utf8_chars(const std::string& s) {
  uint64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

nlohmann::json counts_json(const DocumentReadCounts& c) {
  return {{"documents", c.documents},
          {"bytes", c.bytes},
          {"blank_documents_skipped", c.empty_documents},
          {"invalid_utf8_bytes_replaced", c.replaced_bytes},
          {"bad_lines_skipped", c.skipped_lines},
          {"first_skipped_line", c.first_skip}};
}

// The first pass: every input's raw SHA-512, the documents' count and bytes, and the bytes per
// split bucket, from which the evaluation region is cut.
PreparePlan scan_inputs(const PrepareOptions& o, std::vector<InputFile> files,
                        const PrepareHooks& hooks) {
  PreparePlan plan;
  plan.options = prepare_options_json(o);
  plan.inputs = std::move(files);
  std::vector<uint64_t> bucket_bytes(65536, 0);
  uint64_t total_raw = 0, raw_done = 0;
  for (const auto& f : plan.inputs) total_raw += f.size;
  for (const auto& f : plan.inputs) {
    check_stop(hooks);
    Sha512 digest;
    DocumentReadCounts c;
    read_documents(f, o.read, c, &digest, [&](std::string& text) {
      bucket_bytes[split_bucket(content_hash64(text, kSplitHashKey))] += text.size();
    });
    auto d = digest.finish();
    plan.input_sha512.push_back(to_hex(d.data(), d.size()));
    plan.counts.add(c);
    raw_done += f.size;
    if (hooks.progress) hooks.progress({"scan", raw_done, total_raw});
  }
  const auto& c = plan.counts;
  if (c.documents == 0)
    throw Error("the inputs hold no documents (" + std::to_string(plan.inputs.size()) +
                " file(s): " + std::to_string(c.empty_documents) + " blank document(s), " +
                std::to_string(c.skipped_lines) +
                " skipped line(s)); give files with text, or check --format and --field");
  // The region: the first buckets holding kRegionBytesPerToken bytes per evaluation token asked
  // for, but never more than half the text (train keeps at least half, and the sample with it).
  // Fractions of the tokens ask for the same share of the text, at about four bytes a token.
  const bool by_fraction = o.evaluation_by_fraction();
  const uint64_t want = by_fraction
                            ? uint64_t(double(c.bytes) * (o.val_fraction + o.heldout_fraction) *
                                       double(kRegionBytesPerToken) / 4.0)
                            : (o.val_tokens + o.heldout_tokens) * kRegionBytesPerToken;
  uint64_t cum = 0;
  uint32_t end = 0;
  if (want > 0)
    while (end < 65536 && cum < want && cum + bucket_bytes[end] <= c.bytes / 2)
      cum += bucket_bytes[end++];
  plan.region_end = end;
  if (hooks.log)
    hooks.log("read " + std::to_string(c.documents) + " documents, " + std::to_string(c.bytes) +
              " bytes; evaluation candidates: " + std::to_string(cum) + " bytes in " +
              std::to_string(end) + " of 65536 hash buckets");
  return plan;
}

nlohmann::json plan_json(const PreparePlan& p) {
  return {{"format", 1},
          {"options", p.options},
          {"inputs", inputs_json(p.inputs, p.input_sha512)},
          {"reading", counts_json(p.counts)},
          {"region_end", p.region_end}};
}

PreparePlan plan_from_json(const nlohmann::json& j, std::vector<InputFile> files) {
  PreparePlan p;
  p.options = j.at("options");
  p.inputs = std::move(files);
  for (const auto& r : j.at("inputs")) p.input_sha512.push_back(r.at("sha512").get<std::string>());
  const auto& c = j.at("reading");
  p.counts.documents = c.at("documents").get<uint64_t>();
  p.counts.bytes = c.at("bytes").get<uint64_t>();
  p.counts.empty_documents = c.at("blank_documents_skipped").get<uint64_t>();
  p.counts.replaced_bytes = c.at("invalid_utf8_bytes_replaced").get<uint64_t>();
  p.counts.skipped_lines = c.at("bad_lines_skipped").get<uint64_t>();
  p.counts.first_skip = c.at("first_skipped_line").get<std::string>();
  p.region_end = j.at("region_end").get<uint32_t>();
  return p;
}

// The tokenizer sample: the train documents (outside the evaluation region) with the smallest
// second content hash, up to `tokenizer_sample` characters — spread over the whole input, in no
// way its first megabytes. Then sentencepiece BPE, trained as engine/data/tokenizer trains.
nlohmann::json train_tokenizer(const PrepareOptions& o, const PreparePlan& plan,
                               const PrepareHooks& hooks, Tokenizer& tok) {
  using Entry = std::pair<uint64_t, std::string>;  // (sample hash, text)
  auto by_hash = [](const Entry& a, const Entry& b) { return a.first < b.first; };
  std::priority_queue<Entry, std::vector<Entry>, decltype(by_hash)> heap(by_hash);
  uint64_t chars = 0, done = 0;
  for_each_document(o, plan, hooks, [&](uint64_t, std::string& text) {
    if (++done % 4096 == 0 && hooks.progress)
      hooks.progress({"sample", done, plan.counts.documents});
    if (split_bucket(content_hash64(text, kSplitHashKey)) < plan.region_end) return;
    const uint64_t h = content_hash64(text, kSampleHashKey);
    if (chars >= o.tokenizer_sample && !heap.empty() && h >= heap.top().first) return;
    chars += utf8_chars(text);
    heap.emplace(h, std::move(text));
    // Keep the smallest set whose characters reach the budget.
    while (heap.size() > 1) {
      const uint64_t top_chars = utf8_chars(heap.top().second);
      if (chars - top_chars < o.tokenizer_sample) break;
      chars -= top_chars;
      heap.pop();
    }
  });
  Corpus sample;
  sample.kind = "text";
  sample.source = "tokenizer sample";
  while (!heap.empty()) {
    Document d;
    d.text = std::move(const_cast<Entry&>(heap.top()).second);
    heap.pop();
    sample.documents.push_back(std::move(d));
  }
  std::reverse(sample.documents.begin(), sample.documents.end());  // ascending sample hash
  if (hooks.log)
    hooks.log("training the BPE tokenizer (vocab " + std::to_string(o.vocab) + ") on " +
              std::to_string(sample.documents.size()) + " train documents, " +
              std::to_string(chars) + " characters");
  if (hooks.progress) hooks.progress({"tokenizer", 0, 0});
  tok = Tokenizer::train(sample, o.vocab, join_path(o.out_dir, "tokenizer.model"),
                         effective_threads(o.threads));
  return {{"file", "tokenizer.model"},
          {"sha512", tok.hash()},
          {"requested_vocab", o.vocab},
          {"vocab_size", tok.vocab_size()},
          {"bos_id", tok.bos_id()},
          {"sample_documents", sample.documents.size()},
          {"sample_characters", chars},
          {"sample_rule",
           "train documents with the smallest second content hash, up to tokenizer_sample "
           "characters; never a validation or held-out document"}};
}

// Empty when `recorded` (a plan's or a manifest's "inputs") names the same files with the same
// sizes and change times as `files`; else what differs.
std::string recorded_inputs_differ(const nlohmann::json& recorded,
                                   const std::vector<InputFile>& files) {
  if (!recorded.is_array() || recorded.size() != files.size())
    return "it was made from " + std::to_string(recorded.is_array() ? recorded.size() : 0) +
           " input files, these are " + std::to_string(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    const auto& r = recorded[i];
    if (!r.is_object()) return "its input list is damaged";
    if (json_string_or(r, "path", "") != files[i].path)
      return "input " + std::to_string(i + 1) + " was " + json_string_or(r, "path", "?") +
             ", now " + files[i].path;
    if (uint64_t(json_int_or(r, "size", -1)) != files[i].size ||
        json_int_or(r, "mtime_ns", -1) != files[i].mtime_ns)
      return "input " + files[i].path + " changed since (size or time)";
  }
  return "";
}

}  // namespace

std::string record_differs(const nlohmann::json& record, const std::vector<InputFile>& files,
                           const nlohmann::json& options) {
  std::string why = recorded_inputs_differ(record.value("inputs", nlohmann::json()), files);
  if (why.empty() && record.value("options", nlohmann::json()) != options)
    why = "it was made with other options";
  return why;
}

DatasetFolderLock::DatasetFolderLock(const std::string& dir) {
  const std::string p = join_path(dir, kLockFile);
  fd_ = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) throw Error("cannot create " + p + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    throw Error("another prepare or import is writing " + dir + " now; wait for it to finish");
  }
}

DatasetFolderLock::~DatasetFolderLock() {
  ::close(fd_);
}

int effective_threads(int threads) {
  return threads > 0 ? threads
                     : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void check_stop(const PrepareHooks& hooks) {
  if (hooks.stop && hooks.stop->load())
    throw Error(
        "prepare stopped before it finished; run the same command again to continue "
        "where it stopped");
}

void for_each_document(const PrepareOptions& o, const PreparePlan& plan, const PrepareHooks& hooks,
                       const std::function<void(uint64_t, std::string&)>& fn) {
  uint64_t index = 0;
  for (const auto& f : plan.inputs) {
    check_input_unchanged(f);
    DocumentReadCounts c;
    read_documents(f, o.read, c, nullptr, [&](std::string& text) {
      check_stop(hooks);  // one relaxed load a document: a stop is heard at once
      fn(index++, text);
    });
  }
  if (index != plan.counts.documents)
    throw Error("the inputs gave " + std::to_string(index) + " documents now but " +
                std::to_string(plan.counts.documents) +
                " in the first pass; an input changed — delete the unfinished dataset folder and "
                "prepare again");
}

nlohmann::json prepare_options_json(const PrepareOptions& o) {
  const char* unit = o.read.unit == DocumentUnit::File         ? "file"
                     : o.read.unit == DocumentUnit::Paragraphs ? "paragraphs"
                                                               : "auto";
  nlohmann::json j = {{"format", o.format},
                      {"field", o.read.field},
                      {"documents", unit},
                      {"invalid_utf8", o.read.replace_invalid_utf8 ? "replace" : "refuse"},
                      {"skip_bad_lines", o.read.skip_bad_lines},
                      {"max_document_bytes", o.read.max_document_bytes},
                      {"vocab", o.vocab},
                      {"tokenizer_sample", o.tokenizer_sample},
                      {"val_tokens", o.val_tokens},
                      {"heldout_tokens", o.heldout_tokens},
                      {"shard_tokens", o.shard_tokens}};
  if (o.evaluation_by_fraction()) {  // absent otherwise: older manifests match
    j["val_fraction"] = o.val_fraction;
    j["heldout_fraction"] = o.heldout_fraction;
  }
  return j;
}

PrepareResult prepare_dataset(const PrepareOptions& o, const PrepareHooks& hooks) {
  if (o.out_dir.empty()) throw Error("no dataset folder given; name one with --out DATASET");
  if (o.vocab > kShardMaxVocab)
    throw Error("--vocab " + std::to_string(o.vocab) +
                " does not fit llm.c's uint16 token shards (ids up to 65535); use at most 65535");
  if (o.vocab < Tokenizer::kNumSpecial + 257)
    throw Error("--vocab " + std::to_string(o.vocab) +
                " is too small: byte fallback needs at least 261 (4 specials + 256 bytes + 1)");
  if (o.shard_tokens < 1024 || o.shard_tokens > 0x7fffffffull)
    throw Error("--shard-tokens " + std::to_string(o.shard_tokens) +
                " is outside [1024, 2147483647] (llm.c's header holds an int32 count)");
  if (o.val_fraction < 0 || o.heldout_fraction < 0 || o.val_fraction + o.heldout_fraction > 0.5)
    throw Error("evaluation fractions " + std::to_string(o.val_fraction) + " + " +
                std::to_string(o.heldout_fraction) +
                " must each be at least 0 and sum to at most 0.5 (training keeps at least half "
                "the text)");
  if (o.tokenizer_sample < 1000)
    throw Error("--tokenizer-sample " + std::to_string(o.tokenizer_sample) +
                " characters is too few to train a tokenizer; give at least 1000");
  const std::string manifest_path = join_path(o.out_dir, kManifestFile);
  // A finished dataset is only read: no lock file is made in it (the check runs again below,
  // under the lock, for a prepare that finishes meanwhile).
  const bool finished_before = file_exists(manifest_path);
  if (!finished_before) make_directories(o.out_dir);
  std::unique_ptr<DatasetFolderLock> lock;
  if (!finished_before) lock = std::make_unique<DatasetFolderLock>(o.out_dir);
  auto files = expand_inputs(o.inputs, o.format, o.out_dir);
  const nlohmann::json options = prepare_options_json(o);
  PrepareResult result;
  if (file_exists(manifest_path)) {
    nlohmann::json m = read_manifest(o.out_dir);
    const std::string why = record_differs(m, files, options);
    if (!why.empty())
      throw Error(o.out_dir + " holds a finished dataset, and " + why +
                  "; a finished dataset is never rewritten — choose another --out, or delete it "
                  "first");
    if (hooks.log) hooks.log(o.out_dir + " is already prepared from these inputs; nothing to do");
    result.manifest = std::move(m);
    result.already_complete = true;
    return result;
  }
  PreparePlan plan;
  nlohmann::json plan_j;
  if (file_exists(plan_path(o))) {
    plan_j = read_json_file(plan_path(o), "delete " + o.out_dir + " and prepare again",
                            large_json_limits());
    const std::string why = record_differs(plan_j, files, options);
    if (!why.empty())
      throw Error(o.out_dir + " holds an unfinished prepare, and " + why +
                  "; run it with the arguments it was started with, or delete the folder");
    try {
      plan = plan_from_json(plan_j, std::move(files));
    } catch (const nlohmann::json::exception& e) {
      throw Error(plan_path(o) + " is damaged (" + e.what() + "); delete " + o.out_dir +
                  " and prepare again");
    }
    result.resumed = true;
    if (hooks.log) hooks.log("continuing the unfinished prepare in " + o.out_dir);
  } else {
    plan = scan_inputs(o, std::move(files), hooks);
    plan_j = plan_json(plan);
    write_file_atomic(plan_path(o), json_text(plan_j, 1) + "\n");
  }
  Tokenizer tok;
  const std::string model_path = join_path(o.out_dir, "tokenizer.model");
  bool have_tokenizer = false;
  if (plan_j.contains("tokenizer") && file_exists(model_path)) {
    tok = Tokenizer::load(model_path);
    have_tokenizer = tok.hash() == json_string_or(plan_j["tokenizer"], "sha512", "");
  }
  if (!have_tokenizer) {
    plan_j["tokenizer"] = train_tokenizer(o, plan, hooks, tok);
    write_file_atomic(plan_path(o), json_text(plan_j, 1) + "\n");
  }
  bool encode_resumed = false;
  nlohmann::json splits = encode_dataset(o, plan, tok, hooks, encode_resumed);
  result.resumed = result.resumed || encode_resumed;
  // The Brown corpus keeps its POS tags beside the shards (the profiles and the probe read them).
  nlohmann::json annotations;
  if (std::all_of(plan.inputs.begin(), plan.inputs.end(),
                  [](const InputFile& f) { return f.format == InputFormat::Brown; })) {
    if (hooks.log) hooks.log(std::string("keeping the Brown POS tags in ") + kBrownTagsFile);
    annotations = write_brown_tags(plan.inputs, o.read, o.out_dir);
  }
  nlohmann::json m = {{"format", "gllm-dataset"},
                      {"version", 1},
                      {"created_by", std::string("gllm ") + GLLM_VERSION},
                      {"shard_format", shard_format_json(tok.bos_id())},
                      {"options", options},
                      {"inputs", plan_j["inputs"]},
                      {"reading", plan_j["reading"]},
                      {"tokenizer", plan_j["tokenizer"]},
                      {"split_rule",
                       {{"hash", "content_hash64 of the document text (engine/dataset)"},
                        {"region_buckets", plan.region_end},
                        {"rule",
                         "documents in the first region_buckets of 65536 hash buckets are the "
                         "evaluation candidates; in hash order they fill validation, then "
                         "held-out, to the tokens asked for; equal texts share a hash and a "
                         "split; every other document trains"}}},
                      {"splits", splits}};
  if (!annotations.is_null()) m["annotations"] = std::move(annotations);
  write_file_atomic(manifest_path, json_text(m, 1) + "\n");
  for (const char* f : {kProgressFile, kRegionTokensFile, kRegionIndexFile, kPlanFile, kLockFile}) {
    std::error_code ec;
    std::filesystem::remove(join_path(o.out_dir, f), ec);
  }
  if (hooks.log) hooks.log("dataset written: " + manifest_path);
  result.manifest = std::move(m);
  return result;
}

}  // namespace gllm
