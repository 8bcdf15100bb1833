// The 64-bit content hashes that place a document: one decides its split, an independent second one
// ranks it for the tokenizer sample. Portable (bytes read little-endian), fast, deterministic.
#pragma once
#include <cstdint>
#include <cstring>
#include <string_view>

namespace gllm {

// A keyed multiply-xorshift hash over 8-byte words (splitmix64's finaliser per word and at the
// end). Not cryptographic: it only has to spread documents evenly and be the same everywhere.
inline uint64_t content_hash64(std::string_view s, uint64_t key) {
  auto mix = [](uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  uint64_t h = mix(key ^ (0x9E3779B97F4A7C15ull * (s.size() + 1)));
  const unsigned char* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w = 0;
    for (int b = 0; b < 8; ++b) w |= static_cast<uint64_t>(p[i + b]) << (8 * b);
    h = mix(h ^ w) + 0x9E3779B97F4A7C15ull;
  }
  uint64_t w = 0;
  for (int b = 0; i < n; ++i, ++b) w |= static_cast<uint64_t>(p[i]) << (8 * b);
  return mix(h ^ w ^ 0xD6E8FEB86659FD93ull);
}

constexpr uint64_t kSplitHashKey = 0x5EED0001C0FFEEull;    // which split a document joins
constexpr uint64_t kSampleHashKey = 0x5A4D91E0BADC0DEull;  // its rank for the tokenizer sample

}  // namespace gllm
