// initial_head_grades: the draw of random head grades and the diversity spread, with the model's
// own generators (CPU mt19937 seeded by grading.random_seed), so editor and model agree exactly.
#include "engine/model/initial_grades.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include "engine/io/error.h"

namespace gllm {

namespace {
at::Generator seeded(int64_t seed) {
  return at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(seed));
}
}  // namespace

std::vector<float> initial_head_grades(const RunConfig& config, const std::vector<double>& given) {
  torch::NoGradGuard no_grad;
  const auto& g = config.grading;
  const int64_t L = config.model.layers(), H = config.model.heads(),
                planes = config.model.head_dim() / 2;
  const double q_max = g.q_max(config.model.head_dim());
  torch::Tensor q;
  if (!given.empty()) {
    if (static_cast<int64_t>(given.size()) != L * H * planes)
      throw Error("attention grades have " + std::to_string(given.size()) +
                  " values but the model needs " + std::to_string(L * H * planes) +
                  " (layers × heads × RoPE planes); regenerate them for this model");
    q = torch::tensor(given, torch::kDouble)
            .to(torch::kFloat)
            .view({L, H, planes});  // (L, H, Dh/2)
  } else if (g.head_grades == "random") {
    auto rg = seeded(g.random_seed);
    q = torch::empty({L, H, planes}).uniform_(0.0, q_max, rg);  // (L, H, Dh/2)
  } else {
    q = torch::zeros({L, H, planes});  // uniform: every plane at grade 0 (the ungraded head)
  }
  // Eq. 20's repulsion Σ exp(−‖q_h − q_h'‖²) has zero gradient where two heads share a grading,
  // so refined grades with a diversity weight start apart: each (head, plane) moves by ε(r − ½),
  // r ~ U[0, 1) from the grades' seed, ε = 2 % of q_max (symmetric around the given grades,
  // before the clip), far below the grades' own scale.
  if (g.grades_trainable && g.diversity_weight > 0 && H > 1) {
    auto rg = seeded(static_cast<int64_t>(g.random_seed) + 104729);
    auto r = torch::rand({L, H, planes}, rg);  // (L, H, Dh/2)
    q = q + 0.02 * q_max * (r - 0.5);
  }
  q = q.clamp(0.0, q_max).contiguous();  // (L, H, Dh/2)
  return std::vector<float>(q.data_ptr<float>(), q.data_ptr<float>() + q.numel());
}

}  // namespace gllm
