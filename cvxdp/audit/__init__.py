"""Empirical privacy auditing: statistical lower bounds on a mechanism's epsilon."""

from cvxdp.audit.auditor import AuditResult, audit_family, audit_mechanism, audit_outputs
from cvxdp.audit.bounds import (
    clopper_pearson,
    epsilon_lower_bound,
    epsilon_p_value,
    family_levels,
)
from cvxdp.audit.neighbours import add_point, close_rows, move_constraint, move_rhs, remove_point

__all__ = [
    "AuditResult",
    "add_point",
    "audit_family",
    "audit_mechanism",
    "audit_outputs",
    "clopper_pearson",
    "close_rows",
    "epsilon_lower_bound",
    "epsilon_p_value",
    "family_levels",
    "move_constraint",
    "move_rhs",
    "remove_point",
]
