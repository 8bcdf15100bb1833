// A streamed reader of one input file's bytes: plain, gzip (zlib) or zstd (libzstd), chosen by the
// file's magic bytes; a truncated or corrupt stream is a gllm::Error naming the file.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>

namespace gllm {

class Sha512;

enum class Compression { None, Gzip, Zstd };
const char* compression_name(Compression c);  // "none" | "gzip" | "zstd"

class ByteStream {
 public:
  // Opens a regular file (a FIFO, device or folder is refused without blocking). When
  // `raw_digest` is given, every raw (compressed) byte read is fed to it.
  explicit ByteStream(const std::string& path, Sha512* raw_digest = nullptr);
  ~ByteStream();
  ByteStream(const ByteStream&) = delete;
  ByteStream& operator=(const ByteStream&) = delete;

  // Fills up to `cap` decompressed bytes; 0 only at the end of the stream. Throws gllm::Error on a
  // read error, a corrupt stream, or one that ends before its compressed data does.
  size_t read(char* out, size_t cap);

  Compression compression() const { return compression_; }
  uint64_t raw_bytes_read() const { return raw_read_; }
  const std::string& path() const { return path_; }

  struct Codec;  // zlib / zstd state (byte_stream.cpp)

 private:
  size_t read_raw(unsigned char* out, size_t cap);
  std::string path_;
  int fd_ = -1;
  Sha512* digest_ = nullptr;
  Compression compression_ = Compression::None;
  uint64_t raw_read_ = 0;
  std::unique_ptr<Codec> codec_;
};

}  // namespace gllm
