// The encode stage of prepare_dataset: documents read in order and tokenized in parallel; train
// documents stream into train shards, evaluation candidates spill to region.* and are then split
// by content hash into validation, held-out and train; progress.json makes every shard a restart.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "engine/data/tokenizer.h"
#include "engine/dataset/content_hash.h"
#include "engine/dataset/parallel_encoder.h"
#include "engine/dataset/prepare_stages.h"
#include "engine/dataset/shard_file.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"

namespace gllm {
namespace {

// One evaluation candidate in region.index (five little-endian uint64, 40 bytes).
struct RegionRecord {
  uint64_t hash = 0;    // split hash
  uint64_t doc = 0;     // global document index
  uint64_t offset = 0;  // first token in region.tokens
  uint64_t tokens = 0;  // BOS included
  uint64_t bytes = 0;   // UTF-8 bytes of the text
};
static_assert(sizeof(RegionRecord) == 40, "region.index records are 40 bytes");

// A file appended to and fsynced at journal points; reopened truncated to a journal's length.
class AppendFile {
 public:
  AppendFile(const std::string& path, uint64_t keep_bytes) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd_ < 0) throw Error("cannot open " + path + ": " + std::strerror(errno));
    struct stat st {};
    ::fstat(fd_, &st);
    if (uint64_t(st.st_size) < keep_bytes)
      throw Error(path + " is shorter than its journal says (" + std::to_string(st.st_size) +
                  " < " + std::to_string(keep_bytes) +
                  " bytes); delete the unfinished dataset folder and prepare again");
    if (::ftruncate(fd_, static_cast<off_t>(keep_bytes)) != 0 ||
        ::lseek(fd_, static_cast<off_t>(keep_bytes), SEEK_SET) < 0)
      throw Error("cannot truncate " + path + ": " + std::strerror(errno));
    size_ = keep_bytes;
  }
  ~AppendFile() { ::close(fd_); }
  void append(const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        throw Error("cannot write " + path_ + ": " + std::strerror(errno) +
                    " (check free disk space); run the prepare again once there is room — it "
                    "continues from its last whole shard");
      }
      p += w;
      n -= size_t(w);
      size_ += uint64_t(w);
    }
  }
  void sync() {
    if (::fsync(fd_) != 0) throw Error("cannot fsync " + path_ + ": " + std::strerror(errno));
  }
  void read_at(uint64_t offset, void* out, size_t n) const {
    char* p = static_cast<char*>(out);
    while (n > 0) {
      ssize_t r = ::pread(fd_, p, n, static_cast<off_t>(offset));
      if (r <= 0) throw Error("cannot read " + path_ + " back (" + std::strerror(errno) + ")");
      p += r;
      n -= size_t(r);
      offset += uint64_t(r);
    }
  }
  uint64_t size() const { return size_; }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

struct SplitTotals {
  uint64_t documents = 0, tokens = 0, bytes = 0;
  nlohmann::json json(const nlohmann::json& shards) const {
    return {{"documents", documents},
            {"tokens", tokens},
            {"bytes", bytes},
            {"bytes_per_token", tokens ? double(bytes) / double(tokens) : 0.0},
            {"shards", shards}};
  }
};

// The resumable state, rewritten (atomically) after every train shard.
struct Journal {
  std::string phase = "main";                  // main | region | done
  uint64_t next_doc = 0, doc_offset = 0;       // main: next document, its tokens already placed
  uint64_t region_pos = 0, region_offset = 0;  // region: next region-train document, placed
  nlohmann::json train_shards = nlohmann::json::array();
  SplitTotals train;
  uint64_t region_tokens_bytes = 0, region_index_bytes = 0;
  std::string tokenizer_sha512;
  uint32_t region_end = 0;
  uint64_t main_train_tokens = 0;  // train tokens when the main phase ended (fractions' base)

  nlohmann::json json() const {
    return {{"format", 1},
            {"phase", phase},
            {"next_doc", next_doc},
            {"doc_offset", doc_offset},
            {"region_pos", region_pos},
            {"region_offset", region_offset},
            {"train_shards", train_shards},
            {"train",
             {{"documents", train.documents}, {"tokens", train.tokens}, {"bytes", train.bytes}}},
            {"region_tokens_bytes", region_tokens_bytes},
            {"region_index_bytes", region_index_bytes},
            {"tokenizer_sha512", tokenizer_sha512},
            {"region_end", region_end},
            {"main_train_tokens", main_train_tokens}};
  }
  static Journal from(const nlohmann::json& j) {
    Journal s;
    s.phase = j.at("phase").get<std::string>();
    s.next_doc = j.at("next_doc").get<uint64_t>();
    s.doc_offset = j.at("doc_offset").get<uint64_t>();
    s.region_pos = j.at("region_pos").get<uint64_t>();
    s.region_offset = j.at("region_offset").get<uint64_t>();
    s.train_shards = j.at("train_shards");
    s.train.documents = j.at("train").at("documents").get<uint64_t>();
    s.train.tokens = j.at("train").at("tokens").get<uint64_t>();
    s.train.bytes = j.at("train").at("bytes").get<uint64_t>();
    s.region_tokens_bytes = j.at("region_tokens_bytes").get<uint64_t>();
    s.region_index_bytes = j.at("region_index_bytes").get<uint64_t>();
    s.tokenizer_sha512 = j.at("tokenizer_sha512").get<std::string>();
    s.region_end = j.at("region_end").get<uint32_t>();
    s.main_train_tokens = j.value("main_train_tokens", uint64_t(0));
    if (s.phase != "main" && s.phase != "region" && s.phase != "done")
      throw Error("unknown phase '" + s.phase + "'");
    return s;
  }
};

void remove_temporaries(const std::string& dir) {
  std::error_code ec;
  for (auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.find(".tmp.") != std::string::npos) std::filesystem::remove(e.path(), ec);
  }
}

}  // namespace

nlohmann::json encode_dataset(const PrepareOptions& o, const PreparePlan& plan,
                              const Tokenizer& tok, const PrepareHooks& hooks, bool& resumed) {
  const std::string journal_path = join_path(o.out_dir, kProgressFile);
  remove_temporaries(o.out_dir);  // half-written shards of a killed run: never used
  Journal js;
  js.tokenizer_sha512 = tok.hash();
  js.region_end = plan.region_end;
  if (file_exists(journal_path)) {
    try {
      Journal old = Journal::from(read_json_file(journal_path, "", large_json_limits()));
      if (old.tokenizer_sha512 == js.tokenizer_sha512 && old.region_end == js.region_end) {
        js = old;
        resumed = true;
        if (hooks.log)
          hooks.log("continuing after " + std::to_string(js.train_shards.size()) +
                    " whole train shard(s)");
      } else if (hooks.log) {
        hooks.log("the unfinished encoding used another tokenizer; encoding again from the start");
      }
    } catch (const std::exception& e) {
      if (hooks.log)
        hooks.log(std::string("progress.json is unreadable (") + e.what() +
                  "); encoding again from the start");
    }
  }
  AppendFile region_tokens(join_path(o.out_dir, kRegionTokensFile), js.region_tokens_bytes);
  AppendFile region_index(join_path(o.out_dir, kRegionIndexFile), js.region_index_bytes);
  ShardWriter train(o.out_dir, "train", o.shard_tokens, js.train_shards.size());
  train.on_commit = [&](const ShardRecord& r) { js.train_shards.push_back(shard_record_json(r)); };
  auto write_journal = [&] {
    region_tokens.sync();
    region_index.sync();
    js.region_tokens_bytes = region_tokens.size();
    js.region_index_bytes = region_index.size();
    write_file_atomic(journal_path, json_text(js.json()) + "\n");
    if (hooks.after_shard) hooks.after_shard(js.train_shards.size());
  };
  // Places a train document's tokens from `from` on; journals at every whole shard. `count` adds
  // the document to the train totals (not when a resume continues one already counted).
  auto push_train = [&](const uint16_t* toks, uint64_t n, uint64_t from, uint64_t bytes, bool count,
                        uint64_t& pos_field, uint64_t& offset_field, uint64_t pos) {
    if (count) {
      ++js.train.documents;
      js.train.tokens += n;
      js.train.bytes += bytes;
    }
    while (from < n) {
      const uint64_t room = o.shard_tokens - train.buffered();
      const uint64_t take = std::min(room, n - from);
      train.push(toks + from, take);
      from += take;
      if (train.buffered() == 0) {  // a shard was just committed
        pos_field = from == n ? pos + 1 : pos;
        offset_field = from == n ? 0 : from;
        write_journal();
      }
    }
  };

  if (js.phase == "main") {
    ParallelEncoder enc(tok, effective_threads(o.threads));
    const size_t max_in_flight = 2 * size_t(enc.threads()) + 1;
    const uint64_t resume_doc = js.next_doc, resume_offset = js.doc_offset;
    uint64_t consumed = resume_doc;
    auto consume = [&](EncodeBatch& b) {
      for (size_t i = 0; i < b.index.size(); ++i) {
        const auto& t = b.tokens[i];
        const uint64_t d = b.index[i];
        if (split_bucket(b.hash[i]) < plan.region_end) {
          RegionRecord r{b.hash[i], d, region_tokens.size() / 2, t.size(), b.bytes[i]};
          region_tokens.append(t.data(), 2 * t.size());
          region_index.append(&r, sizeof r);
        } else {
          const bool continuing = d == resume_doc && resume_offset > 0;
          push_train(t.data(), t.size(), continuing ? resume_offset : 0, b.bytes[i], !continuing,
                     js.next_doc, js.doc_offset, d);
        }
      }
      consumed += b.index.size();
      if (hooks.progress) hooks.progress({"encode", consumed, plan.counts.documents});
    };
    auto batch = std::make_unique<EncodeBatch>();
    auto flush = [&] {
      if (batch->texts.empty()) return;
      enc.submit(std::move(batch));
      batch = std::make_unique<EncodeBatch>();
      while (enc.in_flight() >= max_in_flight) consume(*enc.next_done());
    };
    for_each_document(o, plan, hooks, [&](uint64_t index, std::string& text) {
      if (index < resume_doc) return;  // placed before the restart
      batch->hash.push_back(content_hash64(text, kSplitHashKey));
      batch->index.push_back(index);
      batch->bytes.push_back(text.size());
      batch->text_bytes += text.size();
      batch->texts.push_back(std::move(text));
      if (batch->text_bytes >= (1u << 20) || batch->texts.size() >= 1024) flush();
    });
    flush();
    while (enc.in_flight() > 0) consume(*enc.next_done());
    js.phase = "region";
    js.main_train_tokens = js.train.tokens;
    js.region_pos = 0;
    js.region_offset = 0;
  }

  // The evaluation candidates in hash order: validation, then held-out, to the tokens asked for
  // (a run of equal hashes, i.e. of equal texts, never straddles a boundary); the rest train.
  region_tokens.sync();
  region_index.sync();
  std::vector<RegionRecord> region(region_index.size() / sizeof(RegionRecord));
  if (!region.empty()) region_index.read_at(0, region.data(), region.size() * sizeof(RegionRecord));
  std::vector<RegionRecord> by_hash = region;
  std::stable_sort(by_hash.begin(), by_hash.end(),
                   [](const RegionRecord& a, const RegionRecord& b) { return a.hash < b.hash; });
  // Fractions count every document's tokens: those trained on in the main phase and the region's.
  uint64_t all_tokens = js.main_train_tokens;
  for (const auto& r : region) all_tokens += r.tokens;
  const bool by_fraction = o.evaluation_by_fraction();
  const uint64_t val_target =
      by_fraction ? uint64_t(std::llround(o.val_fraction * double(all_tokens))) : o.val_tokens;
  const uint64_t heldout_target =
      by_fraction ? uint64_t(std::llround(o.heldout_fraction * double(all_tokens)))
                  : o.heldout_tokens;
  std::vector<RegionRecord> val, heldout;
  std::vector<uint64_t> eval_docs;
  {
    size_t i = 0;
    auto fill = [&](std::vector<RegionRecord>& out, uint64_t want) {
      uint64_t got = 0;
      while (i < by_hash.size() &&
             (got < want || (!out.empty() && by_hash[i].hash == out.back().hash))) {
        got += by_hash[i].tokens;
        eval_docs.push_back(by_hash[i].doc);
        out.push_back(by_hash[i++]);
      }
    };
    fill(val, val_target);
    fill(heldout, heldout_target);
    std::sort(eval_docs.begin(), eval_docs.end());
  }
  std::vector<RegionRecord> region_train;  // document order
  for (const auto& r : region)
    if (!std::binary_search(eval_docs.begin(), eval_docs.end(), r.doc)) region_train.push_back(r);

  std::vector<uint16_t> buf;
  auto load = [&](const RegionRecord& r) {
    buf.resize(r.tokens);
    region_tokens.read_at(r.offset * 2, buf.data(), 2 * r.tokens);
  };
  if (js.phase == "region") {
    const uint64_t start = js.region_pos, start_offset = js.region_offset;
    for (uint64_t p = start; p < region_train.size(); ++p) {
      check_stop(hooks);
      load(region_train[p]);
      const bool continuing = p == start && start_offset > 0;
      push_train(buf.data(), buf.size(), continuing ? start_offset : 0, region_train[p].bytes,
                 !continuing, js.region_pos, js.region_offset, p);
    }
    train.finish();
    js.phase = "done";
    write_journal();
  }

  auto write_split = [&](const std::string& name, const std::vector<RegionRecord>& docs) {
    SplitTotals t;
    nlohmann::json shards = nlohmann::json::array();
    ShardWriter w(o.out_dir, name, o.shard_tokens);
    w.on_commit = [&](const ShardRecord& r) { shards.push_back(shard_record_json(r)); };
    for (const auto& r : docs) {
      load(r);
      w.push(buf.data(), buf.size());
      ++t.documents;
      t.tokens += r.tokens;
      t.bytes += r.bytes;
    }
    w.finish();
    return t.json(shards);
  };
  if (hooks.progress) hooks.progress({"finish", 0, 0});
  nlohmann::json splits;
  splits["train"] = js.train.json(js.train_shards);
  splits["val"] = write_split("val", val);
  splits["heldout"] = write_split("heldout", heldout);
  splits["val"]["tokens_requested"] = val_target;
  splits["heldout"]["tokens_requested"] = heldout_target;
  if (hooks.log) {
    for (const char* s : {"val", "heldout"})
      if (splits[s]["tokens"].get<uint64_t>() < splits[s]["tokens_requested"].get<uint64_t>())
        hooks.log(std::string("warning: the ") + s + " split holds " +
                  std::to_string(splits[s]["tokens"].get<uint64_t>()) + " tokens, fewer than the " +
                  std::to_string(splits[s]["tokens_requested"].get<uint64_t>()) +
                  " asked for: the corpus is too small (the evaluation splits take at most half "
                  "its text)");
  }
  return splits;
}

nlohmann::json shard_format_json(int32_t bos_id) {
  return {{"name", "llm.c"},          {"magic", kShardMagic},
          {"version", kShardVersion}, {"header_int32", kShardHeaderInts},
          {"dtype", "uint16"},        {"bos_per_document", true},
          {"bos_id", bos_id}};
}

nlohmann::json shard_record_json(const ShardRecord& r) {
  return {{"file", r.file}, {"tokens", r.tokens}, {"bytes", r.bytes}, {"sha512", r.sha512}};
}

}  // namespace gllm
