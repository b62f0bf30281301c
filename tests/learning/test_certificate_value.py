"""RowPrivacy answers carry their certificate, and the released value its error bound.

The certificate's bounds are checked against the exact (non-private) solve on the same data;
the value's error bound against the independent tail formula of its noise (Laplace / Gaussian
on the loss sum, sensitivity the public bound on one row's loss) and against the true
objective at the released point over seeded draws.
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

from cvxdp.solution import Certificate
from cvxdp.status import status_of
from tests.learning.gallery import data, huber_fit, logistic


def _violation(prob):
    return max((float(np.max(c.violation())) for c in prob.constraints), default=0.0)


@pytest.mark.parametrize("build", [logistic, huber_fit], ids=["logistic", "huber"])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("accuracy", [None, 1.0])
def test_every_answer_carries_its_certificate_and_it_holds(build, seed, accuracy):
    prob, spec = build(*data(seed=seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve_private(epsilon=10.0, delta=1e-6, private=spec, rng=seed,
                                 reference=True, accuracy=accuracy)
    cert = sol.certificate
    assert isinstance(cert, Certificate)
    # the status is the certificate's, through the one rule
    assert (sol.status, sol.status_reason) == status_of(cert, accuracy)
    assert sol.info.get("status_reason") == sol.status_reason
    assert sol.info["guarantee"] == str(cert)
    assert cert.probability == pytest.approx(1 - sol.info["beta"])
    # the bounds hold against the exact solve (minimised sense: the gap is sense * (f - OPT))
    gap = sol.validation.objective_gap
    assert -1e-6 <= gap <= cert.gap_bound
    assert cert.gap_bound == sol.info["excess_risk_bound"]
    got = sol.validation.metrics["private_objective_on_true_data"]
    sense = -1.0 if isinstance(prob.objective, cp.Maximize) else 1.0
    assert sense * got <= cert.objective_upper
    assert cert.optimum_lower <= sense * sol.validation.reference_value
    assert _violation(prob) <= cert.violation_bound + 1e-9


def test_both_statuses_come_from_the_certificate():
    prob, spec = logistic(*data(seed=0))
    tight = prob.solve_private(epsilon=10.0, delta=1e-6, private=spec, rng=0, accuracy=1e-6)
    loose = prob.solve_private(epsilon=10.0, delta=1e-6, private=spec, rng=0, accuracy=10.0)
    assert tight.status == cp.USER_LIMIT and "certified relative gap" in tight.status_reason
    assert loose.status == cp.OPTIMAL_INACCURATE and loose.status_reason is None
    for sol, acc in ((tight, 1e-6), (loose, 10.0)):
        assert (sol.status, sol.status_reason) == status_of(sol.certificate, acc)
