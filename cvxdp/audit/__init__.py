"""Empirical privacy auditing: statistical lower bounds on a mechanism's epsilon."""

from cvxdp.audit.auditor import AuditResult, audit_mechanism, clopper_pearson
from cvxdp.audit.neighbours import add_point, close_rows, move_constraint, move_rhs, remove_point

__all__ = [
    "AuditResult",
    "add_point",
    "audit_mechanism",
    "clopper_pearson",
    "close_rows",
    "move_constraint",
    "move_rhs",
    "remove_point",
]
