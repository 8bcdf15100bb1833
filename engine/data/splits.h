// Train / validation / held-out split, disjoint by document and deterministic from a seed.
// The held-out split is for final evaluation only.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gllm {

struct Splits {
  std::vector<uint32_t> train, val, heldout;  // document indices, each ascending
  const std::vector<uint32_t>& get(const std::string& name) const;  // "train" | "val" | "heldout"
};

// n_val = round(n·val_fraction) (at least 1 when the fraction is > 0), same for held-out; the rest
// trains. Uses its own PRNG (splitmix64 + Fisher–Yates), so the split is identical on every
// platform and standard library. Throws gllm::Error when a split would be empty.
Splits split_documents(size_t n_documents, double val_fraction, double heldout_fraction,
                       uint64_t seed);

// Small portable PRNG used by the split and the loader (splitmix64).
struct SplitMix64 {
  uint64_t state;
  explicit SplitMix64(uint64_t seed) : state(seed) {}
  uint64_t next();
  uint64_t below(uint64_t n);  // uniform in [0, n), unbiased
};

}  // namespace gllm
