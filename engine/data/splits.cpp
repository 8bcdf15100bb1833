// Deterministic document split (portable splitmix64 + Fisher–Yates) into train / val / held-out.
#include "engine/data/splits.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/io/error.h"

namespace gllm {

uint64_t SplitMix64::next() {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t SplitMix64::below(uint64_t n) {
  if (n <= 1) return 0;
  uint64_t limit = UINT64_MAX - (UINT64_MAX % n);  // reject the biased tail
  uint64_t x;
  do x = next();
  while (x >= limit);
  return x % n;
}

const std::vector<uint32_t>& Splits::get(const std::string& name) const {
  if (name == "train") return train;
  if (name == "val") return val;
  if (name == "heldout") return heldout;
  throw Error("unknown split '" + name + "'; use train, val or heldout");
}

Splits split_documents(size_t n, double val_fraction, double heldout_fraction, uint64_t seed) {
  auto count = [n](double f) -> size_t {
    if (f <= 0) return 0;
    return std::max<size_t>(1, static_cast<size_t>(std::llround(f * double(n))));
  };
  size_t nv = count(val_fraction), nh = count(heldout_fraction);
  if (nv + nh >= n)
    throw Error("the corpus has " + std::to_string(n) + " documents, too few for " +
                std::to_string(nv) + " validation + " + std::to_string(nh) +
                " held-out documents and a non-empty training split; "
                "use a larger corpus or lower data.val_fraction / data.heldout_fraction");
  std::vector<uint32_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0u);
  SplitMix64 rng(seed ^ 0x5EEDDA7A5EEDDA7Aull);
  for (size_t i = n; i > 1; --i) std::swap(perm[i - 1], perm[rng.below(i)]);
  Splits s;
  s.val.assign(perm.begin(), perm.begin() + nv);
  s.heldout.assign(perm.begin() + nv, perm.begin() + nv + nh);
  s.train.assign(perm.begin() + nv + nh, perm.end());
  std::sort(s.val.begin(), s.val.end());
  std::sort(s.heldout.begin(), s.heldout.end());
  std::sort(s.train.begin(), s.train.end());
  return s;
}

}  // namespace gllm
