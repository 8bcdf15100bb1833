// The admissible cone of seed 000 (Prop. 8, Prop. 10, Rem. 9): Λ(q), log Λ, gain, BC, Λ* = BC²,
// the certificate ⟨q, α−τ⟩, ∇ log Λ and the clip bound C⁻², in O(d) — cheap enough per slider move.
#pragma once
#include <string>
#include <vector>

#include "engine/grading/profiles.h"

namespace gllm::grading {

// Everything the cone panel shows for one grade vector.
struct ConeReport {
  double lambda_q = 1;     // Λ(q) = (Σ α_j λ^{−2q_j}) (Σ τ_j λ^{2q_j})
  double log_lambda = 0;   // log Λ(q)
  double gain = 1;         // token gain 1/Λ(q)
  double bc = 1;           // BC(α, τ) = Σ √(α_j τ_j)
  double lambda_star = 1;  // Λ* = BC² = min_q Λ (unclipped, Prop. 7(iii))
  double certificate = 0;  // ⟨q, α − τ⟩ (Eq. 15, first-order admissibility)
  int certificate_sign = 0;  // sign; 0 when |·| ≤ 1e-12·(1 + Σ|q_j|(α_j+τ_j))·√(d+1) (rounding)
  std::vector<double>
      gradient;  // ∇_q log Λ = 2 log λ (τ^{(u)} − α^{(u)}), per coordinate (or level)
  double clip_bound = 1;     // C⁻², the floor of Λ on the clip box (Prop. 10(iii))
  double clipped_floor = 1;  // max(BC², C⁻²): the Prop. 10(iii) lower bound on Λ*_C
  bool in_cone = false;      // Λ(q) < 1 (q ∈ Q₊)
  bool within_clip = true;   // 0 ≤ q_j ≤ q_max for all j
  double q_max = 0;          // log C / log λ
  double lambda = 0;         // λ used
  double clip = 0;           // C used
};

// Where q stands against the admissible cone Q₊ = {Λ(q) < 1} (Prop. 8) and against its
// first-order test, the sign of ⟨q, α−τ⟩ (Eq. 15, exact only to first order at q = 0). The two
// are different statements and every place that shows one shows the other.
enum class ConeVerdict {
  InCone,          // Λ(q) < 1
  FirstOrderOnly,  // ⟨q, α−τ⟩ > 0 but Λ(q) ≥ 1: outside the cone, positive first order
  Outside,         // Λ(q) ≥ 1 and ⟨q, α−τ⟩ ≤ 0 (q = 0 is on the boundary, Λ = 1)
};
ConeVerdict cone_verdict(double lambda_q, double certificate);
// "in the cone (Λ < 1)" | "first-order positive, outside the cone (Λ ≥ 1)" |
// "outside, negative first order" (or "on the boundary (q = 0, Λ = 1)" when both vanish).
std::string cone_verdict_text(double lambda_q, double certificate);
// "in_cone" | "first_order_only" | "outside" for JSON.
std::string cone_verdict_key(double lambda_q, double certificate);

// Checks λ > 1 and C > 1 (finite); throws gllm::Error saying what to pass instead.
void validate_base_and_clip(double lambda, double clip);
// q_max = log C / log λ.
double q_max_for(double lambda, double clip);

// Per-coordinate grades q (size d). Profiles are validated; zeros in α or τ are allowed here
// (Λ is defined), only the optimiser needs Def. 2's deletion.
ConeReport evaluate_cone(const Profiles& p, const std::vector<double>& q, double lambda,
                         double clip);

// Level-constant grades (Rem. 9): v has one entry per level, q_j = v_l on V_l. Uses the level
// aggregates (a_l, s_l), so Λ, the certificate Σ v_l (a_l − s_l) and the gradient are per level.
ConeReport evaluate_cone_levels(const Profiles& p, const std::vector<double>& v, double lambda,
                                double clip);

// Raw kernels on (α, τ) without validation, for solvers and benchmarks. u_j = 2 q_j log λ.
// Returns log Λ and, when grad_u is non-null, fills ∇_u log Λ = τ^{(u)} − α^{(u)}.
double log_lambda_u(const std::vector<double>& alpha, const std::vector<double>& tau,
                    const std::vector<double>& u, std::vector<double>* grad_u = nullptr);
double lambda_of(const std::vector<double>& alpha, const std::vector<double>& tau,
                 const std::vector<double>& q, double lambda);
double certificate(const std::vector<double>& alpha, const std::vector<double>& tau,
                   const std::vector<double>& q);

}  // namespace gllm::grading
