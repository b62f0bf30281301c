"""Private regression on patient records, written as an ordinary CVXPY least-squares model.

Rows (x_i, y_i) are patients (private): three standardised measurements and an outcome. The model
is the usual sum_squares objective; LeastSquaresPrivacy names the private parameters and the
public bound on a row's norm (rows above it are clipped). Neighbours: one patient added/removed.

Run:  python examples/private_regression.py [--quick]
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
n, d = (5000, 3) if quick else (50000, 3)
Xv = rng.uniform(-1, 1, (n, d)) / 2
yv = Xv @ np.array([0.8, -0.4, 0.2]) + 0.1 * rng.standard_normal(n)

X = cp.Parameter((n, d), name="X", value=Xv)
y = cp.Parameter(n, name="y", value=yv)
beta = cp.Variable(d, name="beta")
prob = cp.Problem(cp.Minimize(cp.sum_squares(X @ beta - y)))

for eps in (0.5, 1.0, 2.0):
    sol = prob.solve_private(epsilon=eps, delta=1e-6, rng=1, reference=True,
                             private=cvxdp.LeastSquaresPrivacy(X, y, row_bound=1.0))
    print(f"eps={eps}: beta={np.round(beta.value, 3)}, relative error vs OLS "
          f"{sol.validation.relative_error:.4f}, rows clipped {sol.validation.rows_clipped}, "
          f"guarantee={sol.privacy.guarantee}")
