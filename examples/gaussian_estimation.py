"""Mean and covariance of private lab measurements with no a-priori bounds
(Ashtiani & Liaw 2022, "Private and polynomial time algorithms for learning Gaussians and beyond").

Five lab values per patient, on wildly different scales (means around 1e3, variances from 1 to
1e3). Classical DP estimators need a box around the mean and a range for the covariance; this one
needs only (epsilon, delta). Neighbours: one patient's record replaced.

Run:  python examples/gaussian_estimation.py [--quick]
"""

import argparse
import warnings

import numpy as np

import cvxdp

parser = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--quick", action="store_true", help="smaller sizes (seconds)")
quick = parser.parse_args().quick
rng = np.random.default_rng(0)
n, d = (100_000 if quick else 400_000), 5
q, _ = np.linalg.qr(rng.standard_normal((d, d)))
cov = q @ np.diag(np.logspace(0, 3, d)) @ q.T
X = rng.multivariate_normal(np.full(d, 1e3 / np.sqrt(d)), cov, size=n)

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    # reference=True attaches a NON-private comparison with the empirical estimates (for the
    # data owner only; never publish sol.validation)
    sol = cvxdp.private_gaussian(X, epsilon=1.0, delta=1e-6, rng=1, reference=True)
for w in caught:
    print(f"warning: {w.message}")
v = sol.validation
print(f"status {sol.status}; samples the theorem asks for: {sol.samples_required}")
print(f"Mahalanobis error of the mean: {v.mahalanobis_mean_error:.4f}")
print(f"relative Frobenius error of the covariance: {v.rel_frobenius_cov_error:.4f}")
print(f"privacy: {sol.privacy.guarantee}, epsilon={sol.privacy.epsilon:.3g}, "
      f"delta={sol.privacy.delta:.1g}; {sol.privacy.neighbouring}")
