"""The status rule of a private answer: one function, from its certificate.

A status is a promise.  ``optimal_inaccurate`` is returned only when the answer's
:class:`~cvxdp.solution.Certificate` -- bounds computed from released quantities and public data,
valid on the mechanism's noise event -- shows a relative sub-optimality and a violation of the
TRUE constraints both at most the requested ``accuracy``.  Otherwise the answer is released with
``user_limit`` and a reason that quotes the certified numbers.  (CVXPY reads ``user_limit`` as "a
limit the user set was reached"; in cvxdp the limit is the privacy budget: the answer is the
best the budget allows, and its certificate says how good it is.)  ``infeasible`` is reserved for
a model whose PUBLIC part is infeasible, decided before any budget is spent;
``infeasible_inaccurate`` for one a certificate proves infeasible for the true data (with its
probability: perturbation's loosened counterpart, a superset of the true feasible set, is empty).
"""

from __future__ import annotations

import math
from typing import Any

import cvxpy as cp

from cvxdp.solution import Certificate

__all__ = ["DEFAULT_ACCURACY", "DEFAULT_BETA", "REFINE_SHARE", "refine_until", "status_of",
           "within_objective_range"]

#: the accuracy a certificate must show for ``optimal_inaccurate`` when the user gives none:
#: a relative gap (to ``max(1, |OPT|)``) and a violation of at most 1%
DEFAULT_ACCURACY = 1e-2

#: the probability with which a certificate may fail, when the user gives no ``beta=``: one
#: value for every mechanism, so that two mechanisms' certificates (and ``auto``'s predictions
#: of them) make the same promise.  1e-3: a pipeline that runs a thousand private solves
#: expects at most about one certificate that does not hold (docs/certificates.md, "The
#: certificate's probability").
DEFAULT_BETA = 1e-3


#: the share of the requested accuracy below which a certificate is not refined further: the
#: status (``status_of``) is decided there, and a refinement costs exact solves (the loosened
#: box's shrink, the fit terms' conjugate and curvature bounds, objective perturbation's
#: level-set search); a quarter leaves room for the relative gap's denominator
REFINE_SHARE = 0.25


def refine_until(accuracy: float | None = None) -> float:
    """The relative gap at which certificate refinements stop: :data:`REFINE_SHARE` of the
    requested accuracy (default :data:`DEFAULT_ACCURACY`).  A time rule, never a validity
    one: every refinement's bound holds wherever it stops."""
    return REFINE_SHARE * (DEFAULT_ACCURACY if accuracy is None else float(accuracy))


def status_of(certificate: Certificate | None, accuracy: float | None = None
              ) -> tuple[str, str | None]:
    """The CVXPY status of a released point and the reason when it is not a success.

    Parameters
    ----------
    certificate : Certificate or None
        The released point's certificate; None when the mechanism proves nothing for it.
    accuracy : float, optional
        The requested accuracy (default :data:`DEFAULT_ACCURACY`).

    Returns
    -------
    (status, reason) : (str, str or None)
        ``("optimal_inaccurate", None)`` when ``certificate.meets(accuracy)``, else
        ``("user_limit", reason)``.
    """
    acc = DEFAULT_ACCURACY if accuracy is None else float(accuracy)
    if certificate is None:
        return cp.USER_LIMIT, ("no bound on the sub-optimality or the violation of the true "
                               "constraints is proven for this answer")
    if certificate.meets(acc):
        return cp.OPTIMAL_INACCURATE, None
    parts = []
    advice = "raise epsilon, add public bounds on the variables, or loosen accuracy="
    upper_open = not math.isfinite(certificate.objective_upper)
    lower_open = not math.isfinite(certificate.optimum_lower)
    if not math.isfinite(certificate.relative_gap_bound) and upper_open != lower_open:
        # which side is open says what would close it: the optimum's lower bound needs public
        # bounds on the variables; the point's upper bound needs the noise interval of the
        # private data to stay where the objective is finite, which only epsilon shrinks
        if upper_open:
            parts.append(
                "no bound on the sub-optimality is proven: nothing bounds the true objective "
                "at the released point from above (within the noise interval of the private "
                "data it can be infinite, e.g. where a private argument of log, kl_div, "
                "rel_entr, entr or inv_pos can reach 0, or unbounded, where private data "
                "multiply variables no public constraint bounds)")
            advice = "raise epsilon (the noise interval shrinks as it grows) or add public " \
                     "bounds on the variables"
        else:
            parts.append("no bound on the sub-optimality is proven: nothing bounds the true "
                         "optimum from below")
    elif not math.isfinite(certificate.relative_gap_bound):
        parts.append("no bound on the sub-optimality is proven")
    elif certificate.relative_gap_bound > acc:
        parts.append(f"the certified relative gap is {certificate.relative_gap_bound:.3g}")
    if certificate.violation_bound > acc:
        rows = (f" (on all but {certificate.excluded_rows} of them)"
                if certificate.excluded_rows else "")
        parts.append(f"the certified violation of the true constraints{rows} is "
                     f"{certificate.violation_bound:.3g}")
    # the accuracy and the probability are quoted beside numbers only
    quoted = len(parts) > 1 or math.isfinite(certificate.relative_gap_bound)
    where = (f" (> accuracy {acc:g}, with probability >= {certificate.probability:g})"
             if quoted else "")
    return cp.USER_LIMIT, f"{' and '.join(parts)}{where}; {advice}"


def within_objective_range(sol: Any, lower: float, upper: float,
                           accuracy: float | None = None) -> Any:
    """``sol`` with its certificate narrowed to the objective's public range (see
    :meth:`Certificate.within`) and its status re-derived from the narrowed certificate.

    The status is re-derived only when the mechanism had derived it from the certificate by
    :func:`status_of` (a status set for another reason, e.g. a point from the loosened
    counterpart, stays).  Public: the range comes from the model's structure
    (:func:`cvxdp.transform.domain.objective_range`), so this is post-processing.
    """
    cert = getattr(sol, "certificate", None)
    if cert is None:
        return sol
    narrowed = cert.within(lower, upper, "the objective's sign (CVXPY's sign analysis of its "
                                         "expression) bounds it over the whole domain")
    if narrowed is cert:
        return sol
    # derived: the status and the reason's first part are status_of's (a mechanism may have
    # appended a note after it, "; ..." or ". Also: ...", which is kept)
    status0, reason0 = status_of(cert, accuracy)
    given = sol.status_reason or ""
    derived = sol.status == status0 and (given.startswith(reason0) if reason0 is not None
                                         else not given)
    sol.certificate = narrowed
    if "guarantee" in sol.info:
        sol.info["guarantee"] = str(narrowed)
    if derived:
        status1, reason1 = status_of(narrowed, accuracy)
        note = given[len(reason0 or ""):]
        # a success carries no note (as the mechanisms append one only to a user_limit)
        sol.set_status(status1, None if reason1 is None else reason1 + note)
    return sol
