"""Empirical privacy audit of one round of the private covering oracle (continuous exponential
mechanism on the sphere) on neighbouring constraint sets (add one constraint), and of an
under-noised twin that the audit must catch."""

import numpy as np
import pytest

from cvxdp.audit.auditor import audit_mechanism
from cvxdp.solvers.covering.bingham import sample_bingham
from cvxdp.solvers.covering.dense_mwu import bregman_project_log

S, N_DUMMY = 2.0, 2
E1, E2 = np.diag([1.0, 0, 0]), np.diag([0, 1.0, 0])
D = np.stack([E1, E1])
D_PLUS = np.stack([E1, E1, E2])  # neighbour: one whole constraint added, orthogonal direction


def _oracle_round(kappa):
    def mech(data, gen):
        y = bregman_project_log(np.zeros(len(data) + N_DUMMY), S)[: len(data)]
        v = sample_bingham(np.tensordot(y, data, axes=1), kappa, rng=gen)
        return v[1] ** 2

    return mech


@pytest.mark.parametrize("claimed", [1.0])
def test_oracle_round_passes_audit(claimed):
    # kappa = eps' OPT / (2 Delta) with Delta = OPT / s
    res = audit_mechanism(_oracle_round(claimed * S / 2), D, D_PLUS, epsilon=claimed, delta=0.0,
                          n_samples=5000, rng=0)
    assert res.passed and res.epsilon_lower <= claimed


def test_under_noised_oracle_is_caught():
    res = audit_mechanism(_oracle_round(12 * S / 2), D, D_PLUS, epsilon=1.0, delta=0.0,
                          n_samples=5000, rng=0)
    assert not res.passed and res.epsilon_lower > 1.0
