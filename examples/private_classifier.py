"""A private credit-default classifier, written the way CVXPY's SVM and logistic examples are.

Rows (x_i, y_i) are customers (private): five standardised features and a default label in
{-1, +1}.  RowPrivacy says that neighbouring datasets differ in one customer's row (replace
one), with two PUBLIC bounds taken from how the features were built, not from the data: every
feature vector has norm <= 1 (features are scaled into the unit ball by a public rule) and every
label has |y| <= 1.  The norm-ball constraint on the coefficients is a public modelling choice;
it gives the proven excess-risk bound.  Rows outside the bounds would be clipped, never refused.

Run:  python examples/private_classifier.py [--quick]
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
n, d = (2000, 5) if quick else (20000, 5)
Xv = rng.normal(size=(n, d)) / np.sqrt(d)
Xv /= np.maximum(1.0, np.linalg.norm(Xv, axis=1))[:, None]      # the public scaling rule
yv = np.where(Xv @ np.array([2.0, -1.5, 1.0, 0.0, 0.5]) + 0.3 * rng.normal(size=n) > 0,
              1.0, -1.0)

X = cp.Parameter((n, d), name="X", value=Xv)
y = cp.Parameter(n, name="y", value=yv)
beta = cp.Variable(d, name="beta")
v = cp.Variable(name="v")
private = cvxdp.RowPrivacy(X, y, row_bound=1.0, label_bound=1.0)

models = {
    "SVM (hinge + l1)": cp.Problem(
        cp.Minimize(cp.sum(cp.pos(1 - cp.multiply(y, X @ beta - v))) / n
                    + 0.01 * cp.norm(beta, 1)),
        [cp.norm(beta, 2) <= 5, cp.abs(v) <= 1]),
    "logistic (+ ridge)": cp.Problem(
        cp.Minimize(cp.sum(cp.logistic(-cp.multiply(y, X @ beta))) / n
                    + 0.01 * cp.sum_squares(beta)),
        [cp.norm(beta, 2) <= 5]),
}
print(cvxdp.explain(models["SVM (hinge + l1)"], private) or "SVM: a row-level model")
for name, prob in models.items():
    for eps in (0.5, 2.0):
        sol = prob.solve_private(epsilon=eps, delta=1e-6, private=private, rng=1,
                                 reference=True)
        acc = float(np.mean(np.sign(Xv @ beta.value - (v.value if "SVM" in name else 0.0))
                            == yv))
        print(f"{name}, eps={eps}: {sol.status}, mechanism {sol.info['mechanism']}, "
              f"released value {sol.value:.4f}, excess risk {sol.validation.objective_gap:.4f} "
              f"(proven bound {sol.info['excess_risk_bound']:.3f}), training accuracy "
              f"{acc:.3f} (not private: for the data owner), guarantee {sol.privacy.guarantee} "
              f"(eps={sol.privacy.epsilon:.3g}, delta={sol.privacy.delta:.0e})")
