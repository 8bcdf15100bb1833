// Bits per byte as the baseline defines it: Σ nats over targets whose byte length is > 0, divided
// by (ln 2 · Σ bytes). Torch-free: fed per-target losses and target ids.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gllm {

class BpbAccumulator {
 public:
  explicit BpbAccumulator(std::vector<int32_t> token_bytes);  // Tokenizer::token_bytes()
  // nats[i] = −log p(targets[i] | context); targets with byte length 0 (specials, <pad>) skipped.
  void add(const float* nats, const int32_t* targets, size_t n);
  void add(const double* nats, const int64_t* targets, size_t n);
  void merge(const BpbAccumulator& other);
  double bpb() const;  // NaN when no bytes were seen
  double nats() const { return nats_; }
  double bytes() const { return static_cast<double>(bytes_); }
  int64_t targets() const { return targets_; }  // targets counted (byte length > 0)
  double mean_nats() const;                     // per counted target (the loss the BPB is made of)
  void reset();

 private:
  template <class F, class I>
  void add_impl(const F* nats, const I* targets, size_t n);
  std::vector<int32_t> token_bytes_;
  double nats_ = 0;
  int64_t bytes_ = 0, targets_ = 0;
};

}  // namespace gllm
