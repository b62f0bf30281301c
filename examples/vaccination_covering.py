"""Siting vaccination clinics so every household is covered (covering LP, whole-row privacy).

Each row is one household (private): a_ij in [0, 1] is how well clinic j serves it. We want the
cheapest clinic capacities x >= 0 with A x >= 1 for (almost) every household. Neighbours: one
household added or removed (its whole row) -- the dense MWU of Song, Xue & Zhang (2025) App. B
hides it, at the price of leaving up to s rows under-covered.

Run:  python examples/vaccination_covering.py [--quick]
"""

import argparse

import cvxpy as cp
import numpy as np

import cvxdp

parser = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--quick", action="store_true", help="smaller sizes (seconds)")
quick = parser.parse_args().quick
rng = np.random.default_rng(0)
m, n = (600, 12) if quick else (3000, 30)
A = rng.uniform(size=(m, n)) ** 3
x = cp.Variable(n, nonneg=True, name="capacity")
coverage = A @ x >= 1
prob = cp.Problem(cp.Minimize(cp.sum(x)), [coverage])

sol = prob.solve_private(epsilon=4.0, delta=1e-6, rng=1, reference=True,
                         private=cvxdp.ConstraintSetPrivacy(coverage))
v = sol.validation
print(f"total capacity: private {sol.value:.3f} vs exact {v.reference_value:.3f} "
      f"(ratio {v.cost_ratio:.2f})")
print(f"households fully covered: {100 * v.frac_covered:.1f}%, at least half covered: "
      f"{100 * v.frac_covered_half:.1f}% (theorem allows s={v.s} rows below 1 - alpha)")
print(f"privacy: {sol.privacy.guarantee}, epsilon={sol.privacy.epsilon:.3g}, "
      f"delta={sol.privacy.delta:.1g}; {sol.privacy.neighbouring}")
