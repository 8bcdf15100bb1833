// BPB accumulator: Σ nats over targets with byte length > 0 / (ln 2 · Σ bytes).
#include "engine/data/bpb.h"

#include <cmath>
#include <limits>
#include <string>

#include "engine/io/error.h"

namespace gllm {

BpbAccumulator::BpbAccumulator(std::vector<int32_t> token_bytes)
    : token_bytes_(std::move(token_bytes)) {}

template <class F, class I>
void BpbAccumulator::add_impl(const F* nats, const I* targets, size_t n) {
  const int64_t V = static_cast<int64_t>(token_bytes_.size());
  for (size_t i = 0; i < n; ++i) {
    int64_t t = static_cast<int64_t>(targets[i]);
    if (t < 0) continue;  // ignore_index-style targets carry no bytes
    if (t >= V)
      throw Error("BPB: target id " + std::to_string(t) + " is outside the vocabulary of " +
                  std::to_string(V));
    int32_t b = token_bytes_[t];
    if (b <= 0) continue;
    nats_ += static_cast<double>(nats[i]);
    bytes_ += b;
    ++targets_;
  }
}

void BpbAccumulator::add(const float* nats, const int32_t* targets, size_t n) {
  add_impl(nats, targets, n);
}
void BpbAccumulator::add(const double* nats, const int64_t* targets, size_t n) {
  add_impl(nats, targets, n);
}

void BpbAccumulator::merge(const BpbAccumulator& o) {
  nats_ += o.nats_;
  bytes_ += o.bytes_;
  targets_ += o.targets_;
}

double BpbAccumulator::bpb() const {
  if (bytes_ == 0) return std::numeric_limits<double>::quiet_NaN();
  return nats_ / (std::log(2.0) * static_cast<double>(bytes_));
}

double BpbAccumulator::mean_nats() const {
  return targets_ ? nats_ / static_cast<double>(targets_)
                  : std::numeric_limits<double>::quiet_NaN();
}

void BpbAccumulator::reset() {
  nats_ = 0;
  bytes_ = 0;
  targets_ = 0;
}

}  // namespace gllm
