// llm.c's token-shard format, as its and modded-nanogpt's readers expect it: a header of 256
// little-endian int32 (magic 20240520, version 1, token count, zeros) then uint16 token ids.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gllm {

constexpr int32_t kShardMagic = 20240520;
constexpr int32_t kShardVersion = 1;
constexpr size_t kShardHeaderInts = 256;
constexpr size_t kShardHeaderBytes = kShardHeaderInts * 4;
constexpr int kShardMaxVocab = 65535;  // uint16 ids: 0 … 65535

struct ShardRecord {
  std::string file;  // name inside the dataset folder ("train_000000.bin")
  uint64_t tokens = 0;
  uint64_t bytes = 0;  // file size: 1024 + 2·tokens
  std::string sha512;  // of the whole file, hex
};

// Writes one shard atomically (temporary file, fsync, rename); returns its record.
ShardRecord write_shard(const std::string& dir, const std::string& file, const uint16_t* tokens,
                        size_t n);

// Reads and checks a shard's header against its size; returns its token count. Throws gllm::Error
// naming the file when it is not a shard of this format.
uint64_t read_shard_header(const std::string& path);

// A read-only memory map of one shard (header checked; the file may be many times RAM).
class MappedShard {
 public:
  explicit MappedShard(const std::string& path);
  ~MappedShard();
  MappedShard(const MappedShard&) = delete;
  MappedShard& operator=(const MappedShard&) = delete;
  const uint16_t* tokens() const { return tokens_; }
  uint64_t size() const { return n_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  const uint16_t* tokens_ = nullptr;
  uint64_t n_ = 0;
};

// Cuts a stream of tokens into shards of `shard_tokens` (the last may be shorter), written as
// <prefix>_<6-digit index>.bin, each atomically and only when whole; `on_commit` hears of each.
class ShardWriter {
 public:
  ShardWriter(std::string dir, std::string prefix, uint64_t shard_tokens, size_t first_index = 0);
  void push(const uint16_t* tokens, size_t n);
  void finish();  // writes the partial last shard, if any
  size_t buffered() const { return buffer_.size(); }
  size_t next_index() const { return index_; }
  std::function<void(const ShardRecord&)> on_commit;

 private:
  void commit();
  std::string dir_, prefix_;
  uint64_t shard_tokens_;
  size_t index_;
  std::vector<uint16_t> buffer_;
};

std::string shard_file_name(const std::string& prefix, size_t index);

}  // namespace gllm
