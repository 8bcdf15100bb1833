// ByteStream: raw reads through a file descriptor (regular files only), gzip through zlib's inflate
// (concatenated members included), zstd through ZSTD_decompressStream; truncation is detected.
#include "engine/dataset/byte_stream.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "engine/io/error.h"
#include "engine/io/regular_file.h"
#include "engine/io/sha512.h"

namespace gllm {

const char* compression_name(Compression c) {
  switch (c) {
    case Compression::Gzip:
      return "gzip";
    case Compression::Zstd:
      return "zstd";
    default:
      return "none";
  }
}

struct ByteStream::Codec {
  std::vector<unsigned char> in = std::vector<unsigned char>(1 << 20);
  size_t in_pos = 0, in_len = 0;  // unread raw bytes: in[in_pos, in_len)
  bool raw_eof = false;
  z_stream zs{};
  bool zs_init = false;
  ZSTD_DCtx* zd = nullptr;
  bool in_member = false;  // inside a gzip member or zstd frame not yet finished
  bool done = false;
  ~Codec() {
    if (zs_init) inflateEnd(&zs);
    if (zd) ZSTD_freeDCtx(zd);
  }
};

ByteStream::ByteStream(const std::string& path, Sha512* raw_digest)
    : path_(path), digest_(raw_digest), codec_(std::make_unique<Codec>()) {
  check_regular_file(path);
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0)
    throw Error("cannot open input " + path + ": " + std::strerror(errno) +
                "; check that it exists and is readable");
  // Magic bytes decide: 1f 8b is gzip, 28 b5 2f fd is a zstd frame; anything else is read as is.
  Codec& c = *codec_;
  while (c.in_len < 4 && !c.raw_eof) {
    size_t n = read_raw(c.in.data() + c.in_len, 4 - c.in_len);
    if (n == 0) c.raw_eof = true;
    c.in_len += n;
  }
  const unsigned char* m = c.in.data();
  if (c.in_len >= 2 && m[0] == 0x1f && m[1] == 0x8b) {
    compression_ = Compression::Gzip;
    if (inflateInit2(&c.zs, 15 + 16) != Z_OK)
      throw Error("cannot start the gzip decoder for " + path + " (out of memory?)");
    c.zs_init = true;
  } else if (c.in_len >= 4 && m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd) {
    compression_ = Compression::Zstd;
    c.zd = ZSTD_createDCtx();
    if (!c.zd) throw Error("cannot start the zstd decoder for " + path + " (out of memory?)");
  }
}

ByteStream::~ByteStream() {
  if (fd_ >= 0) ::close(fd_);
}

size_t ByteStream::read_raw(unsigned char* out, size_t cap) {
  for (;;) {
    ssize_t n = ::read(fd_, out, cap);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error("cannot read input " + path_ + ": " + std::strerror(errno) + " (after byte " +
                  std::to_string(raw_read_) + ")");
    }
    if (digest_) digest_->update(out, static_cast<size_t>(n));
    raw_read_ += static_cast<uint64_t>(n);
    return static_cast<size_t>(n);
  }
}

size_t ByteStream::read(char* out, size_t cap) {
  Codec& c = *codec_;
  if (cap == 0 || c.done) return 0;
  auto refill = [&] {
    if (c.in_pos < c.in_len || c.raw_eof) return;
    c.in_pos = 0;
    c.in_len = read_raw(c.in.data(), c.in.size());
    if (c.in_len == 0) c.raw_eof = true;
  };
  if (compression_ == Compression::None) {
    if (c.in_pos < c.in_len) {  // the magic bytes read while opening
      size_t n = std::min(cap, c.in_len - c.in_pos);
      std::memcpy(out, c.in.data() + c.in_pos, n);
      c.in_pos += n;
      return n;
    }
    size_t n = c.raw_eof ? 0 : read_raw(reinterpret_cast<unsigned char*>(out), cap);
    if (n == 0) c.done = true;
    return n;
  }
  const std::string fix = "; the file is damaged or was cut short — fetch or compress it again";
  size_t produced = 0;
  while (produced == 0) {
    refill();
    // At the end of the raw input a decoder may still hold output; only when it yields nothing
    // more while inside a member or frame is the stream cut short.
    const bool final_input = c.in_pos >= c.in_len && c.raw_eof;
    if (final_input && !c.in_member) {
      c.done = true;
      return 0;
    }
    if (compression_ == Compression::Gzip) {
      c.zs.next_in = c.in.data() + c.in_pos;
      c.zs.avail_in = static_cast<uInt>(c.in_len - c.in_pos);
      c.zs.next_out = reinterpret_cast<Bytef*>(out);
      c.zs.avail_out = static_cast<uInt>(std::min<size_t>(cap, 1u << 30));
      c.in_member = true;
      int rc = inflate(&c.zs, Z_NO_FLUSH);
      produced = static_cast<size_t>(reinterpret_cast<char*>(c.zs.next_out) - out);
      c.in_pos = c.in_len - c.zs.avail_in;
      if (rc == Z_STREAM_END) {
        c.in_member = false;
        inflateReset(&c.zs);  // a concatenated member may follow
        // Whatever follows a member must be another member; NUL padding ends the stream.
        refill();
        if (c.in_pos < c.in_len && c.in.data()[c.in_pos] == 0) c.done = true;
        if (produced == 0 && c.done) return 0;
        continue;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR)
        throw Error("input " + path_ + ": corrupt gzip data near byte " +
                    std::to_string(raw_read_) + " (" + (c.zs.msg ? c.zs.msg : "inflate error") +
                    ")" + fix);
    } else {
      ZSTD_inBuffer ib{c.in.data() + c.in_pos, c.in_len - c.in_pos, 0};
      ZSTD_outBuffer ob{out, cap, 0};
      size_t rc = ZSTD_decompressStream(c.zd, &ob, &ib);
      if (ZSTD_isError(rc))
        throw Error("input " + path_ + ": corrupt zstd data near byte " +
                    std::to_string(raw_read_) + " (" + ZSTD_getErrorName(rc) + ")" + fix);
      c.in_pos += ib.pos;
      produced = ob.pos;
      c.in_member = rc != 0;  // 0: a frame just ended and its output is flushed
    }
    if (produced == 0 && final_input)
      throw Error("input " + path_ + ": the " + compression_name(compression_) +
                  " stream is truncated (it ends inside compressed data after " +
                  std::to_string(raw_read_) + " bytes)" + fix);
  }
  return produced;
}

}  // namespace gllm
