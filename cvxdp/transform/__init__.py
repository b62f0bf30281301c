"""CVXPY -> canonical symmetric cone program -> back."""
from cvxdp.transform.scp import ConeDims, SymmetricConeProgram

__all__ = ["ConeDims", "SymmetricConeProgram"]
