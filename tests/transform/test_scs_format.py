"""The permuting SCS interface compiles every cone type to the same parameter tensor and data
as CVXPY's own SCS interface (the same entries, the same values to the bit)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

from cvxdp.transform.scs_format import PermutingScs, mirrors_cvxpy

OPTS = {"use_quad_obj": False}


def _models():
    rng = np.random.default_rng(0)
    n = 6
    x = cp.Variable(n)
    p = cp.Parameter(n, value=rng.normal(size=n))
    q = cp.Parameter((4, n), value=rng.normal(size=(4, n)))
    X = cp.Variable((3, 4))
    P2 = cp.Parameter((3, 4), value=rng.normal(size=(3, 4)))
    S = cp.Variable((4, 4), symmetric=True)
    M = cp.Parameter((4, 4), value=np.eye(4))
    y = cp.Parameter(60, value=rng.normal(size=60))
    z = cp.Variable(60)
    mask = np.array([0.0, 1, 0, 1, 1, 1])
    return {
        "lp": cp.Problem(cp.Minimize(p @ x), [q @ x <= 1, x >= -1, cp.sum(x) == 1]),
        "soc": cp.Problem(cp.Minimize(cp.norm(q @ x - 1) + cp.sum_squares(x - p)), [x <= 3]),
        "soc_axis": cp.Problem(cp.Minimize(cp.sum(cp.norm(X - P2, axis=0))
                                           + cp.sum(cp.norm(X, axis=1)))),
        "exp": cp.Problem(cp.Minimize(cp.sum(cp.exp(x - p)) - cp.sum(cp.log(x + 5))), [x <= 2]),
        "pow3d": cp.Problem(cp.Minimize(cp.sum(cp.power(cp.pos(x - p), 3.5, approx=False))),
                            [x <= 2]),
        "pownd": cp.Problem(cp.Maximize(cp.geo_mean(x + 3, approx=False) + p @ x),
                            [x <= 2, x >= 0]),
        "psd_soc": cp.Problem(cp.Minimize(cp.lambda_max(S + M) + cp.norm(S, "fro")),
                              [cp.diag(S) == p[:4], S >> 0]),
        "scalar_soc": cp.Problem(cp.Minimize(cp.abs(p[0] - x[0]) + cp.norm(x, 2))),
        "second_difference": cp.Problem(cp.Minimize(cp.sum_squares(y - z)
                                                    + 50 * cp.sum_squares(cp.diff(z, 2)))),
        "zero_coefficients": cp.Problem(cp.Minimize(cp.sum_squares(cp.multiply(mask, x) - p)),
                                        [cp.multiply(mask, x) == 0 * p]),
    }


def _canonical(tensor):
    out = sp.csc_matrix(tensor, copy=True)
    out.sum_duplicates()
    return out


def test_installed_cvxpy_formatting_is_the_mirrored_code():
    # when this fails after a CVXPY upgrade, PermutingScs hands every model to CVXPY's own
    # (slower) formatting: re-derive restructuring_permutation and its source hash
    assert mirrors_cvxpy()


@pytest.mark.parametrize("name", sorted(_models()))
def test_same_tensor_and_data_as_cvxpys_scs(name):
    prob = _models()[name]
    ref, _, _ = prob.get_problem_data(cp.SCS, solver_opts=OPTS)
    ours, _, _ = prob.get_problem_data(PermutingScs(), solver_opts=OPTS)
    t_ref = ref[cp.settings.PARAM_PROB].A
    t_ours = ours[cp.settings.PARAM_PROB].A
    assert type(t_ours) is type(t_ref)
    assert t_ours.shape == t_ref.shape and t_ours.nnz == t_ref.nnz  # explicit zeros kept alike
    a, b = _canonical(t_ref), _canonical(t_ours)
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.data.view(np.uint64), b.data.view(np.uint64))
    for key in ("A", "b", "c"):
        u, v = ref[key], ours[key]
        u, v = (u.toarray(), v.toarray()) if sp.issparse(u) else (u, v)
        np.testing.assert_array_equal(u, v)
    assert str(ref["dims"]) == str(ours["dims"])
