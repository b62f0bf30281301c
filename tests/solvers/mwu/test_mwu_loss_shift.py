"""The loss shift of the MWU schedule (docs/mwu.md, "Step and width"): shifting every loss by a
multiple of the identity leaves the iterates unchanged, and the public half-range ``s`` of the
rows is the largest ``(lambda_max - lambda_min) / 2`` of their spectra (1 for private rows)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

import cvxdp
from cvxdp.solvers.mwu.mwu import BlockAlgebra, scmwu
from cvxdp.solvers.mwu.mwu_form import build_mwu_form
from cvxdp.solvers.mwu.oracles import exact_oracle
from cvxdp.solvers.mwu.schedule import loss_half_range
from cvxdp.transform import to_scp


def _smat(v, r):
    """svec (SCS order: lower triangle, column-major, off-diagonals x sqrt 2) -> matrix."""
    M = np.zeros((r, r))
    iu, ju = np.triu_indices(r)
    scale = np.where(iu == ju, 1.0, np.sqrt(2.0))
    M[ju, iu] = v / scale
    M[iu, ju] = v / scale
    return M


def test_shifting_losses_by_the_identity_leaves_the_iterates_unchanged():
    # orthant(3) x SOC(3) x PSD(3): e = (1,1,1 | 1,0,0 | I); in dual coordinates the identity
    # row is gram * e (the spin factor's <a, x> = 2 a'x)
    alg = BlockAlgebra(nonneg=3, soc=(3,), psd=(3,))
    rng = np.random.default_rng(0)
    G = rng.uniform(-1, 1, (6, alg.dim)) / 4
    h = rng.uniform(0, 0.1, 6)
    e_dual = alg.gram * alg.identity()
    kw = dict(eta=0.2, iterations=300, oracle=exact_oracle(), backend="python")
    # rows a_i + c e with right-hand sides h_i + c: the scores <a_i + c e, x> - h_i - c are
    # unchanged (tr x = 1), so the same rows are chosen; only the losses move by c e
    c = 0.3
    a = scmwu(sp.csr_matrix(G), h, alg, rng=np.random.default_rng(1), **kw)
    b = scmwu(sp.csr_matrix(G + c * e_dual[None, :]), h + c, alg,
              rng=np.random.default_rng(1), **kw)
    np.testing.assert_allclose(a.x, b.x, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(a.chosen, b.chosen)


def test_half_range_of_public_rows_against_eigvalsh():
    alg = BlockAlgebra(nonneg=2, soc=(3,), psd=(3,))
    rng = np.random.default_rng(2)
    rows = rng.uniform(-1, 1, (5, alg.dim)) * 0.3
    rows[4, :2] = [0.2, 0.9]  # an orthant-only row: spectrum {0.2, 0.9, 0 (untouched blocks)}
    rows[4, 2:] = 0.0
    expect = []
    for g in rows:
        a = g / alg.gram
        lam = list(a[:2])
        t, xb = a[2], a[3:5]
        lam += [t + np.linalg.norm(xb), t - np.linalg.norm(xb)]
        lam += list(np.linalg.eigvalsh(_smat(a[5:], 3)))
        expect.append((max(lam) - min(lam)) / 2)
    assert expect[4] == 0.45

    class _Form:  # the two attributes loss_half_range reads, with every row public
        algebra = alg
        G = sp.csr_matrix(rows)
        dG = sp.csr_matrix(rows.shape)
        m = rows.shape[0]

    assert abs(loss_half_range(_Form) - min(1.0, max(expect))) < 1e-12


def test_private_rows_count_as_half_range_one_and_public_lp_rows_as_computed():
    rng = np.random.default_rng(3)
    A = cp.Parameter((6, 4), name="A", value=rng.uniform(0, 1, (6, 4)))
    b = cp.Parameter(6, name="b", value=np.ones(6))
    x = cp.Variable(4, nonneg=True)
    M = rng.uniform(0, 1, (6, 4))
    for spec, s in [(cvxdp.ConstraintPrivacy(A, sensitivity=1e-3), 1.0),
                    (cvxdp.ScalarPrivacy(b, sensitivity=1e-3), None)]:
        lhs = A if isinstance(spec, cvxdp.ConstraintPrivacy) else M
        prob = cp.Problem(cp.Maximize(cp.sum(x)), [lhs @ x <= b, cp.sum(x) <= 2])
        scp = to_scp(prob, private=spec)
        form = build_mwu_form(scp.A, scp.b, scp.c, scp.dims, dA=scp.sensitivity.A,
                              db=scp.sensitivity.b, width=1.0)
        got = loss_half_range(form)
        if s is not None:
            assert got == s
        else:  # nonnegative public rows of width 1 with an untouched trace-slack coordinate
            G = form.G.toarray()
            assert abs(got - float(np.max(G.max(axis=1) - np.minimum(G.min(axis=1), 0)) / 2)) \
                < 1e-12
            assert got <= 0.5 + 1e-12
