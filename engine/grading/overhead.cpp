// §8.1.3 parameter overhead: d² (level projections) + K·H·d_k (head grades) + d (level grades)
// + |V| (output grades), and its fraction of the total parameter count.
#include "engine/grading/overhead.h"

#include <cmath>
#include <string>

#include "engine/io/error.h"

namespace gllm::grading {

int64_t round_significant(int64_t x, int digits) {
  if (x <= 0) return 0;
  int magnitude = static_cast<int>(std::floor(std::log10(static_cast<double>(x))));
  double scale = std::pow(10.0, magnitude - digits + 1);
  return static_cast<int64_t>(std::llround(std::round(static_cast<double>(x) / scale) * scale));
}

Overhead compute_overhead(const OverheadInput& in) {
  auto need = [](int64_t v, const char* name, const char* hint) {
    if (v < 1)
      throw Error(std::string(name) + " = " + std::to_string(v) + " must be ≥ 1 (" + hint + ")");
  };
  need(in.d, "d", "the model width, e.g. --d 1024");
  need(in.layers, "layers", "the number of blocks K, e.g. --layers 24");
  need(in.heads, "heads", "attention heads per block H, e.g. --heads 16");
  need(in.levels, "levels", "MLGE levels L, e.g. --levels 4");
  need(in.vocab, "vocab", "the vocabulary size |V|, e.g. --vocab 50257");
  need(in.total_params, "total_params",
       "the model's parameter count N, e.g. --total-params 345000000");
  if (in.d % in.heads != 0)
    throw Error("d = " + std::to_string(in.d) + " is not divisible by heads = " +
                std::to_string(in.heads) + "; choose H dividing d so that d_k = d/H is an integer");
  if (in.levels > in.d)
    throw Error("levels = " + std::to_string(in.levels) + " exceeds d = " + std::to_string(in.d) +
                "; every level needs at least one coordinate");
  Overhead o;
  o.head_dim = in.d / in.heads;
  o.projections = in.d * in.d;  // Σ_l d·d_l with Σ_l d_l = d
  o.head_grades = in.layers * in.heads * o.head_dim;
  o.level_grades = in.d;
  o.output_grades = in.vocab;
  o.total = o.projections + o.head_grades + o.level_grades + o.output_grades;
  o.fraction = static_cast<double>(o.total) / static_cast<double>(in.total_params);
  o.total_rounded_components =
      round_significant(o.projections, 3) + round_significant(o.head_grades, 3) +
      round_significant(o.level_grades, 3) + round_significant(o.output_grades, 3);
  return o;
}

}  // namespace gllm::grading
