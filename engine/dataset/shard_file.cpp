// Shard files: the atomic writer with its SHA-512, the header check, the read-only memory map, and
// the writer that cuts a token stream into whole shards.
#include "engine/dataset/shard_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/paths.h"
#include "engine/io/regular_file.h"
#include "engine/io/sha512.h"

namespace gllm {
namespace {

void put_le32(unsigned char* p, int32_t v) {
  const uint32_t u = static_cast<uint32_t>(v);
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(u >> (8 * i));
}
int32_t get_le32(const unsigned char* p) {
  uint32_t u = 0;
  for (int i = 0; i < 4; ++i) u |= static_cast<uint32_t>(p[i]) << (8 * i);
  return static_cast<int32_t>(u);
}

// Checks a header image against the file size; returns the token count.
uint64_t check_header(const unsigned char* h, uint64_t file_bytes, const std::string& path) {
  const std::string fix =
      "; it is not an llm.c token shard, or it was damaged — prepare the "
      "dataset again (delete its folder first)";
  if (file_bytes < kShardHeaderBytes)
    throw Error("shard " + path + " is " + std::to_string(file_bytes) +
                " bytes, shorter than the 1024-byte header" + fix);
  if (get_le32(h) != kShardMagic)
    throw Error("shard " + path + " has magic " + std::to_string(get_le32(h)) + ", not " +
                std::to_string(kShardMagic) + fix);
  if (get_le32(h + 4) != kShardVersion)
    throw Error("shard " + path + " has version " + std::to_string(get_le32(h + 4)) +
                ", not 1 (uint16 tokens)" + fix);
  const int32_t n = get_le32(h + 8);
  if (n < 0 || kShardHeaderBytes + 2 * uint64_t(n) != file_bytes)
    throw Error("shard " + path + " says it holds " + std::to_string(n) + " tokens but is " +
                std::to_string(file_bytes) + " bytes (1024 + 2 per token expected)" + fix);
  return static_cast<uint64_t>(n);
}

}  // namespace

std::string shard_file_name(const std::string& prefix, size_t index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "_%06zu.bin", index);
  return prefix + buf;
}

ShardRecord write_shard(const std::string& dir, const std::string& file, const uint16_t* tokens,
                        size_t n) {
  if (n > 0x7fffffffull)
    throw Error("a shard of " + std::to_string(n) +
                " tokens does not fit llm.c's int32 count; use a smaller --shard-tokens");
  unsigned char header[kShardHeaderBytes] = {};
  put_le32(header, kShardMagic);
  put_le32(header + 4, kShardVersion);
  put_le32(header + 8, static_cast<int32_t>(n));
  Sha512 h;
  h.update(header, sizeof header);
  h.update(tokens, 2 * n);  // little-endian hosts only (x86-64, aarch64): ids are stored as is
  const std::string path = join_path(dir, file);
  AtomicFileWriter w(path);
  w.write(header, sizeof header);
  w.write(tokens, 2 * n);
  w.commit();
  auto digest = h.finish();
  return ShardRecord{file, n, kShardHeaderBytes + 2 * n, to_hex(digest.data(), digest.size())};
}

uint64_t read_shard_header(const std::string& path) {
  check_regular_file(path);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open shard " + path + ": " + std::strerror(errno));
  struct stat st {};
  ::fstat(fd, &st);
  unsigned char h[kShardHeaderBytes] = {};
  ssize_t got = ::pread(fd, h, sizeof h, 0);
  ::close(fd);
  if (got < 0) throw Error("cannot read shard " + path + ": " + std::strerror(errno));
  return check_header(h, static_cast<uint64_t>(st.st_size), path);
}

MappedShard::MappedShard(const std::string& path) : path_(path) {
  check_regular_file(path);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open shard " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(kShardHeaderBytes)) {
    ::close(fd);
    check_header(nullptr, static_cast<uint64_t>(st.st_size), path);  // throws: too short
  }
  map_bytes_ = static_cast<size_t>(st.st_size);
  map_ = ::mmap(nullptr, map_bytes_, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw Error("cannot memory-map shard " + path + ": " + std::strerror(errno));
  }
  try {
    n_ = check_header(static_cast<const unsigned char*>(map_), map_bytes_, path);
  } catch (...) {
    ::munmap(map_, map_bytes_);
    map_ = nullptr;
    throw;
  }
  tokens_ = reinterpret_cast<const uint16_t*>(static_cast<const char*>(map_) + kShardHeaderBytes);
}

MappedShard::~MappedShard() {
  if (map_) ::munmap(map_, map_bytes_);
}

ShardWriter::ShardWriter(std::string dir, std::string prefix, uint64_t shard_tokens,
                         size_t first_index)
    : dir_(std::move(dir)),
      prefix_(std::move(prefix)),
      shard_tokens_(shard_tokens),
      index_(first_index) {
  if (shard_tokens_ < 1) throw Error("--shard-tokens must be at least 1");
}

void ShardWriter::push(const uint16_t* tokens, size_t n) {
  while (n > 0) {
    const size_t room = static_cast<size_t>(shard_tokens_) - buffer_.size();
    const size_t take = std::min(room, n);
    buffer_.insert(buffer_.end(), tokens, tokens + take);
    tokens += take;
    n -= take;
    if (buffer_.size() == shard_tokens_) commit();
  }
}

void ShardWriter::finish() {
  if (!buffer_.empty()) commit();
}

void ShardWriter::commit() {
  ShardRecord r =
      write_shard(dir_, shard_file_name(prefix_, index_), buffer_.data(), buffer_.size());
  ++index_;
  buffer_.clear();
  if (on_commit) on_commit(r);
}

}  // namespace gllm
