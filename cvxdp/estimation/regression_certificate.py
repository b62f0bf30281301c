"""The certificate of a least-squares answer released by sufficient-statistics perturbation.

SSP releases ``G~ = G + W`` with ``G = [X y]^T [X y]`` (the rows mapped into the public domain)
and ``W = sigma (Z + Z^T) / 2``, ``Z`` a standard Gaussian ``m x m`` matrix (``m = d + 1``).
With ``z(b) = [b; -1]`` the objective is ``f(b) = ||X b - y||^2 = z^T G z``, so for EVERY ``b``

    |z^T G~ z - f(b)| = |z^T W z| <= ||W||_op (||b||^2 + 1).

``||W||_op <= sigma ||Z||_op`` and ``||Z||_op <= 2 sqrt(m) + t`` except with probability
``e^{-t^2/2}`` (``E ||Z||_op <= 2 sqrt(m)``, Davidson & Szarek 2001, Thm II.13; the norm is
1-Lipschitz in the entries, so Gaussian concentration gives the tail).  On that event, with
``B = sigma (2 sqrt(m) + sqrt(2 ln(1 / beta)))``:

* upper bound on the TRUE objective at the released ``b^``: ``z^T G~ z + B (||b^||^2 + 1)``;
* lower bound on the TRUE optimum: ``f(b) >= z^T (G~ - B I) z`` for every ``b``, so ``OPT >=
  min_b z^T (G~ - B I) z`` -- a convex quadratic when ``G~_xx - B I`` is positive definite, with
  closed-form minimum ``(G~_yy - B) - g^T (G~_xx - B I)^{-1} g`` (``g = G~_xy``); public
  constraints on ``b`` only raise the optimum, so the unconstrained minimum bounds it too; and
  ``OPT >= 0`` always.

Without public constraints the gap itself has a sharper bound.  ``f`` is a quadratic with
Hessian ``2 G_xx`` minimised at ``b* = G_xx^{-1} g``, so ``f(b^) - OPT = v^T G_xx^{-1} v`` with
``v = G_xx b^ - g = r~ - (W z(b^))_{1:d}`` and ``r~ = G~_xx b^ - g~`` (released).  On the event,
``||v|| <= ||r~|| + B ||z(b^)||`` and ``lambda_min(G_xx) >= lambda_min(G~_xx) - B`` (Weyl), so

    f(b^) - OPT <= (||r~|| + B ||z(b^)||)^2 / (lambda_min(G~_xx) - B)

when the denominator is positive.  The certificate keeps the smaller of the two gap bounds.

Everything is computed from the released ``G~``, the released ``b^`` and the public ``sigma``:
post-processing, no budget.  The bound is for the objective over the rows as mapped into the
declared public domain (``row_bound``), which is the user's objective whenever every row lies in
the domain the user declared.
"""

from __future__ import annotations

import math

import numpy as np

from cvxdp.solution import Certificate
from cvxdp.status import DEFAULT_BETA

__all__ = ["ssp_certificate"]


def ssp_certificate(gram: np.ndarray, coef: np.ndarray, sigma: float,
                    beta: float = DEFAULT_BETA, constrained: bool = False
                    ) -> Certificate:
    """Certificate of ``coef`` from the released noisy Gram matrix ``gram`` (module doc);
    ``constrained``: ``coef`` was fitted under public constraints (the sharper gap bound, which
    needs the unconstrained minimiser, is then not used)."""
    m = gram.shape[0]
    d = m - 1
    B = sigma * (2.0 * math.sqrt(m) + math.sqrt(2.0 * math.log(1.0 / beta)))
    z = np.append(np.asarray(coef, dtype=float), -1.0)
    upper = float(z @ gram @ z) + B * float(z @ z)
    lower = 0.0
    gap = None
    shifted = gram[:d, :d] - B * np.eye(d)
    lam = np.linalg.eigvalsh(shifted)
    if lam.size and lam[0] > 0:
        g = gram[:d, d]
        lower = max(lower, float(gram[d, d] - B - g @ np.linalg.solve(shifted, g)))
        if not constrained:
            resid = float(np.linalg.norm(gram[:d, :d] @ z[:d] - g))
            gap = (resid + B * float(np.linalg.norm(z))) ** 2 / float(lam[0])
    return Certificate.from_bounds(
        objective_upper=upper, optimum_lower=lower, violation_bound=0.0, gap_bound=gap,
        equality_violation_bound=None, probability=1.0 - beta,
        how=("sufficient-statistics perturbation: |z'Wz| <= ||W||_op (||b||^2 + 1) with a "
             "Gaussian spectral-norm tail (Davidson & Szarek 2001, Thm II.13), at the released "
             "point and for the optimum"))
