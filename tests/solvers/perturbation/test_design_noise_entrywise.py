"""The noise matrix of a private design whose entries are distinct noise coordinates (``A @ x``
with a private ``A``) is bounded by Davidson-Szarek's ``sigma_max (sqrt(rows) + sqrt(n) + t)``
beside Tropp's matrix Gaussian series, whose ``sqrt(2 v ln((rows + n) / beta))`` pays the
dimension's logarithm (fit_bilinear.design_noise_norm; docs/certificates.md, "Square with a
private design matrix")."""

from __future__ import annotations

import math

import numpy as np

from cvxdp.solvers.perturbation.fit_bilinear import design_noise_norm


def _entrywise(rows, n, extra=0):
    """B[:, k, :] of W = sum_k e_k B_k with W[i, j] = e_{i + rows j} (column-major entries of a
    private rows x n design) and ``extra`` noise coordinates that do not reach W."""
    K = rows * n + extra
    B = np.zeros((rows, K, n))
    for j in range(n):
        for i in range(rows):
            B[i, i + rows * j, j] = 1.0
    return B


def test_entrywise_design_bound_is_davidson_szarek():
    # reproducer (trial 14's nnls_A_and_b: 100 x 8 private design): Tropp's bound was
    # sqrt(2 v ln((rows + n) / beta)) = 8.4 sigma-units at beta 1e-4, where E||G|| <= sqrt(100)
    # + sqrt(8) = 12.8 and the 1e-4 tail adds 4.3: 17.1
    B = _entrywise(100, 8, extra=100)
    sigma = np.full(B.shape[1], 0.1)
    w = design_noise_norm(B, sigma, 1e-4, "gaussian")
    assert w <= 0.1 * (10 + math.sqrt(8) + math.sqrt(2 * math.log(1e4))) * (1 + 1e-12)
    # and it holds: simulated failure at beta 1e-2 over 2,000 draws below 1e-2 + 3 s.e.
    rng = np.random.default_rng(1)
    w2 = design_noise_norm(B, sigma, 1e-2, "gaussian")
    norms = [np.linalg.norm(0.1 * rng.standard_normal((100, 8)), 2) for _ in range(2000)]
    assert np.mean(np.array(norms) > w2) <= 1e-2 + 3 * math.sqrt(1e-2 / 2000)
