"""Portfolio allocation under clients' private exposure limits (private LP, constraint privacy).

A fund splits one unit of capital across 15 assets. Each of 40 client mandates limits the
portfolio's exposure to that client's risk factors: row i of A holds client i's private factor
loadings (confidential), b_i is its public limit (from the public contract, never from A). The
fund publishes the allocation; it must not reveal the clients' loadings beyond what moving every
loading by 1e-3 could explain.

Run:  python examples/portfolio_lp.py [--quick]
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
m, n = (30, 10) if quick else (40, 15)
loadings = rng.uniform(0, 1, (m, n))
# Each mandate's limit is written in the client's public contract (0.7 here). A public constant
# must come from public knowledge: deriving it from the private loadings would leak them.
limits = np.full(m, 0.7)
expected_return = rng.uniform(0.01, 0.08, n)

A = cp.Parameter((m, n), name="loadings", value=loadings)
w = cp.Variable(n, nonneg=True, name="weights")
prob = cp.Problem(cp.Maximize(expected_return @ w), [A @ w <= limits, cp.sum(w) == 1])

sol = prob.solve_private(mechanism="mwu", epsilon=1.0, delta=1e-6, rng=1, reference=True,
                         private=cvxdp.ConstraintPrivacy(A, sensitivity=1e-3))
v = sol.validation
print(f"private allocation (top 5): {np.round(np.sort(w.value)[::-1][:5], 3)}")
print(f"expected return: private {v.metrics['private_value']:.4f} vs exact {v.reference_value:.4f}")
print(f"largest mandate breach on the true data: {v.max_violation:.4f} "
      f"({v.violated} of {len(prob.constraints)} constraints above 1e-6)")
print(f"status {sol.status}: {sol.certificate}")
print(f"privacy: {sol.privacy.guarantee}, epsilon={sol.privacy.epsilon:.3g}, "
      f"delta={sol.privacy.delta:.1g}; {sol.privacy.neighbouring}")
