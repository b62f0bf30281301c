"""CVXPY -> canonical symmetric cone program -> back.

* :func:`to_scp` / :func:`from_scp`: the map and its inverse through CVXPY's own chain.
* :class:`SensitivityBounds` (``scp.sensitivity``): how much the canonical data can change
  between neighbouring datasets, derived from the declared privacy specs.
* :func:`solve_exact`, :func:`validate`, :func:`cone_violations`: the exact reference and the
  validation report (true data; not private).
* :func:`unsupported_reasons`: why a model is refused (empty list: supported).
"""

from cvxdp.transform.canon import (
    ScpInverse,
    build_cone,
    from_scp,
    objective_at,
    public_violation_at,
    released_values,
    to_scp,
)
from cvxdp.transform.exact import ExactSolution, solve_exact
from cvxdp.transform.reference import cone_violations, validate
from cvxdp.transform.scp import ConeDims, SymmetricConeProgram
from cvxdp.transform.sensitivity import SensitivityBounds, propagate
from cvxdp.transform.support import unsupported_reasons

__all__ = [
    "ConeDims",
    "ExactSolution",
    "ScpInverse",
    "SensitivityBounds",
    "SymmetricConeProgram",
    "build_cone",
    "cone_violations",
    "from_scp",
    "released_values",
    "objective_at",
    "public_violation_at",
    "propagate",
    "solve_exact",
    "to_scp",
    "unsupported_reasons",
    "validate",
]
