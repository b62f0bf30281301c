"""Euclidean Jordan algebras (EJA) for symmetric cone programs, and the Gaussian mechanism on them.

Adapters: :class:`Orthant` (LP), :class:`SpinFactor` (second-order cone), :class:`SymmetricMatrices`
(PSD cone, SCS svec), :class:`Product` (direct sums).  Elements are stored in CVXPY/SCS cone-row
coordinates; see :mod:`cvxdp.jordan.base`.  Pure numpy/scipy, no CVXPY.

References
----------
Song, Xue & Zhang (2025), Sections 3.2 and 4, Appendix A.
"""

from cvxdp.jordan.base import EuclideanJordanAlgebra
from cvxdp.jordan.mechanism import (
    effective_l2_sensitivity,
    gaussian_mechanism,
    gaussian_noise_bound,
)
from cvxdp.jordan.orthant import Orthant
from cvxdp.jordan.product import Product
from cvxdp.jordan.spin import SPIN_TRACE_FORM, SpinFactor
from cvxdp.jordan.symmetric import SymmetricMatrices, svec_indices

__all__ = [
    "EuclideanJordanAlgebra",
    "Orthant",
    "SpinFactor",
    "SymmetricMatrices",
    "Product",
    "gaussian_mechanism",
    "effective_l2_sensitivity",
    "gaussian_noise_bound",
    "svec_indices",
    "SPIN_TRACE_FORM",
]
