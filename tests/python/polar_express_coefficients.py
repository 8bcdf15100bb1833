# Re-derives the five Polar Express polynomials (Amsel et al. 2025) of the baseline's Muon, as
# the paper's optimal_composition(l=1e-3, num_iters=5, safety_factor_eps=2e-2, cushion=0.02) does:
# each step the equioscillating odd quintic on [max(l, cushion·u), u] (a Remez solve of a 4×4
# system), recentred so 1 − p(l) = p(u) − 1, shrunk by the safety factor except on the last step.
# Standard library only; prints the (a, b, c) triples as JSON for test_optim_blocks.
import json
import math


def solve(a, rhs):
    """Gaussian elimination with partial pivoting for a small dense system."""
    n = len(rhs)
    m = [row[:] + [rhs[i]] for i, row in enumerate(a)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[piv] = m[piv], m[col]
        for r in range(n):
            if r != col:
                f = m[r][col] / m[col][col]
                for k in range(col, n + 1):
                    m[r][k] -= f * m[col][k]
    return [m[i][n] / m[i][i] for i in range(n)]


def optimal_quintic(lo, hi):
    """The odd quintic p(x) = a·x + b·x³ + c·x⁵ closest to 1 on [lo, hi] in the max norm."""
    if 1 - 5e-6 <= lo / hi:
        return (15 / 8) / hi, (-10 / 8) / hi ** 3, (3 / 8) / hi ** 5
    q, r = (3 * lo + 1) / 4, (lo + 3) / 4  # interior extrema, refined until the error settles
    err, old = math.inf, None
    while old is None or abs(old - err) > 1e-15:
        old = err
        rows = [[x, x ** 3, x ** 5, s] for x, s in ((lo, 1), (q, -1), (r, 1), (hi, -1))]
        a, b, c, err = solve(rows, [1, 1, 1, 1])
        disc = math.sqrt(9 * b * b - 20 * a * c)
        q = math.sqrt((-3 * b - disc) / (10 * c))
        r = math.sqrt((-3 * b + disc) / (10 * c))
    return a, b, c


def optimal_composition(lo, iters, eps, cushion):
    hi = 1.0
    out = []
    for step in range(iters):
        a, b, c = optimal_quintic(max(lo, cushion * hi), hi)
        p_lo = a * lo + b * lo ** 3 + c * lo ** 5
        p_hi = a * hi + b * hi ** 3 + c * hi ** 5
        s = 2 / (p_lo + p_hi)
        a, b, c = a * s, b * s, c * s
        if step < iters - 1:
            a, b, c = a / (1 + eps), b / (1 + eps) ** 3, c / (1 + eps) ** 5
        out.append((a, b, c))
        lo = a * lo + b * lo ** 3 + c * lo ** 5
        hi = 2 - lo
    return out


if __name__ == "__main__":
    print(json.dumps(optimal_composition(1e-3, 5, 2e-2, 0.02)))
