"""The robust counterpart of a cone program with noisy data (kept name; the code is
:mod:`cvxdp.solvers.perturbation.counterpart`)."""

from cvxdp.solvers.perturbation.counterpart import counterpart

__all__ = ["counterpart"]
