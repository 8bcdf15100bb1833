// The educated grading q*_C (seed 000 Cor. 4, Prop. 10, Prop. 11): minimise log Λ(q) (+ ν_mag‖q‖²)
// on the box [0, q_max]^d or on the L-level reduced box, returning the gauge representative min q =
// 0.
#pragma once
#include <string>
#include <vector>

#include "engine/grading/profiles.h"

namespace gllm::grading {

struct SelectOptions {
  double lambda = 0;            // base λ > 1 (required)
  double clip = 2;              // C > 1; use a huge C (e.g. 1e12) for the "unclipped" problem
  double magnitude_weight = 0;  // ν_mag ≥ 0 in ν_mag‖q‖² (Cor. 4)
  double tol = 1e-12;           // KKT tolerance (on ∇_u, dimensionless)
  int max_iter = 500;
};

struct Selection {
  std::vector<double> q;             // q*_C, size d (original coordinates, deleted ones included)
  std::vector<double> multipliers;   // g_j = λ^{q_j}
  std::vector<double> level_grades;  // per level mean of q (level-constant at the reduced optimum)
  double lambda_c = 1;               // Λ(q*_C) (without the penalty)
  double log_lambda = 0;
  double gain = 1;          // 1/Λ(q*_C)
  double objective = 0;     // log Λ + ν_mag‖q‖²
  double kkt_residual = 0;  // ‖q − Π_box(q − ∇_q objective)‖_∞
  double q_max = 0;
  int iterations = 0;
  bool converged = false;
  std::string method;        // "kkt-bisection" (ν_mag = 0) or "projected-newton"
  std::vector<int> deleted;  // Def. 2 coordinates (α_j = 0 or τ_j = 0), reported. The box
                             // program stays well posed with them (compact feasible set), and
                             // is solved on the original profiles: its optimum puts q_j = 0
                             // where α_j = 0 and q_j = q_max where only τ_j = 0.
};

// Per-coordinate program on [0, q_max]^d.
//  * ν_mag = 0: Prop. 10(ii) says every minimiser is q_j = clamp(r_j + c, 0, q_max) with
//    r_j = log(α_j/τ_j) / (4 log λ) and one scalar c solving c = log(T/A)/(4 log λ). That
//    fixed-point map has slope ≤ 1 in c (a sum of tilted masses ≤ 2, halved), so its residual is
//    monotone and bisection finds the root: the exact convex optimum, O(d) per step.
//  * ν_mag > 0: strictly convex; projected Newton (Bertsekas) with Armijo search along the
//    projection arc; the Hessian diag(α^{(u)} + τ^{(u)}) − α^{(u)}α^{(u)ᵀ} − τ^{(u)}τ^{(u)ᵀ} + 2ν I
//    on the free set is inverted by Woodbury in O(d).
// `penalty_weights` (optional, size d) scales ν_mag per coordinate (the level program uses d_l).
Selection select_educated(const Profiles& p, const SelectOptions& opt,
                          const std::vector<double>& penalty_weights = {});

// Prop. 11: the L-variable program over level-constant grades on (a_l, s_l); the result's q is
// expanded to coordinates (q_j = v_l on V_l) and level_grades holds v. Needs level structure.
Selection select_levels(const Profiles& p, const SelectOptions& opt);

// The table-3 style summary of the reduced program at geometric (ν, μ).
struct GeometricSummary {
  double bc = 0;           // BC(a, s)
  double lambda_star = 0;  // BC² (Cor. 3 closed form; the column Table 3 prints as Λ*)
  double lambda_c = 0;     // Λ*_C from the L-variable box program
  double gain = 0;         // 1/Λ*_C
  double clip_bound = 0;   // C⁻²
  std::vector<double> v;   // q*_C per level (gauge min v = 0)
  std::vector<double> g;   // λ^{v_l} (g_0 = 1 representative)
  std::vector<double> a, s;
  double kkt_residual = 0;
};
GeometricSummary geometric_summary(double nu, double mu, int levels, double lambda, double clip);

}  // namespace gllm::grading
