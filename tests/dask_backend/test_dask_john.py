"""The John ellipsoid on a Dask array over a LocalCluster (issue 24).

Same data and seed: the chunk-wise path (Gram matrices reduced on the workers, leverage ratios
mapped on the workers, the noise drawn on the client in row order) releases the numpy path's
weights and ellipsoid up to the order of additions (rtol 1e-9), with a long row and a non-finite
row mapped into the public domain, and the opt-in noisy count; the exact fixed-point iteration
too.
"""

import numpy as np
import pytest

import cvxdp
from cvxdp.errors import UnsupportedProblemError

da = pytest.importorskip("dask.array")


def _data(n=600, d=3, seed=2):
    A = np.random.default_rng(seed).standard_normal((n, d))
    A /= np.linalg.norm(A, axis=1, keepdims=True).max()
    return A


def _dirty(A):
    A = A.copy()
    A[5] *= 40.0            # longer than row_bound: clipped
    A[9, 1] = np.nan        # non-finite: zeroed
    return A


@pytest.mark.parametrize("inscribed", [False, True])
def test_dask_private_john_releases_the_numpy_ellipsoid(dask_client, inscribed):
    A = _dirty(_data())
    kw = dict(epsilon=5.0, delta=1e-6, closeness=1e-4, row_bound=1.0, rng=4, accuracy=0.9,
              count_clipped=True, inscribed=inscribed)
    a = cvxdp.john_ellipsoid(A).solve_private(**kw)
    Ad = da.from_array(A, chunks=(170, 2)).persist()    # uneven row blocks, split by columns
    b = cvxdp.john_ellipsoid(Ad).solve_private(**kw)
    assert a.info["fallback"] is None and a.iterations == b.iterations >= 2
    assert b.info["selected"] == a.info["selected"]
    np.testing.assert_allclose(np.asarray(b.primal["weights"]), a.primal["weights"],
                               rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(b.ellipsoid.matrix, a.ellipsoid.matrix, rtol=1e-9, atol=1e-12)
    assert b.value == pytest.approx(a.value, rel=1e-9)
    assert b.info["clipped_rows_noisy"] == pytest.approx(a.info["clipped_rows_noisy"],
                                                         rel=1e-12)
    assert b.privacy.epsilon == a.privacy.epsilon
    if inscribed:
        assert b.info["scale"] == pytest.approx(a.info["scale"], rel=1e-9)


def test_dask_john_fixed_point_equals_numpy(dask_client):
    A = _data(n=500, d=4, seed=5)
    p = cvxdp.john_ellipsoid(A)
    p.solve(method="fixed-point", accuracy=0.4)
    q = cvxdp.john_ellipsoid(da.from_array(A, chunks=130))
    q.solve(method="fixed-point", accuracy=0.4)
    np.testing.assert_allclose(q.ellipsoid.matrix, p.ellipsoid.matrix, rtol=1e-9)
    np.testing.assert_allclose(np.asarray(q.ellipsoid.weights), p.ellipsoid.weights, rtol=1e-9)
    assert q.ellipsoid.inscribed_in(A, tol=0.45)     # h_i(u) <= 1 + accuracy (Lemma 7.1)


def test_dask_john_refuses_what_needs_memory(dask_client):
    Ad = da.from_array(_data(), chunks=200)
    with pytest.raises(UnsupportedProblemError, match="in memory"):
        cvxdp.john_ellipsoid(Ad).solve()
    with pytest.raises(UnsupportedProblemError, match="in memory"):
        cvxdp.john_ellipsoid(Ad).solve_private(epsilon=1, delta=1e-6, closeness=1e-3,
                                               row_bound=1.0, reference=True)
    with pytest.raises(UnsupportedProblemError, match="fixed-point"):
        cvxdp.john_ellipsoid(Ad).solve(method="sketched")
    bad = _data().copy()
    bad[3, 0] = np.inf
    with pytest.raises(UnsupportedProblemError, match="NaN or inf"):
        cvxdp.john_ellipsoid(da.from_array(bad, chunks=200)).solve(method="fixed-point")


def test_dask_private_john_noise_on_the_workers(dask_client, monkeypatch):
    """Above CLIENT_NOISE_ROWS the iteration's noise is drawn per block on the workers: the
    numpy path's law, not its values; reproducible with the same seed and a valid ellipsoid."""
    import cvxdp.dask_backend.john as sj

    monkeypatch.setattr(sj, "CLIENT_NOISE_ROWS", 0)
    A = _data()
    kw = dict(epsilon=5.0, delta=1e-6, closeness=1e-4, row_bound=1.0, rng=4, accuracy=0.9)
    Ad = da.from_array(A, chunks=(170, 3)).persist()
    b1 = cvxdp.john_ellipsoid(Ad).solve_private(**kw)
    b2 = cvxdp.john_ellipsoid(Ad).solve_private(**kw)
    a = cvxdp.john_ellipsoid(A).solve_private(**kw)
    w1, w2 = np.asarray(b1.primal["weights"]), np.asarray(b2.primal["weights"])
    np.testing.assert_allclose(w1, w2, rtol=1e-12)     # same streams, same draws
    assert np.abs(w1 - a.primal["weights"]).max() > 1e-9        # other draws
    # the released weights v (sum 3) scale with the released ellipsoid E / k: v k^2
    assert np.linalg.eigvalsh(b1.ellipsoid.matrix)[0] > 0
    assert w1.sum() == pytest.approx(3.0 / b1.info["scale"] ** 2)


@pytest.mark.parametrize("closeness, epsilon", [(1e-2, 1.0), (1e-4, 5.0), (1e-5, 5.0)])
def test_dask_release_of_uniform_weights_equals_numpy_and_stays_on_the_workers(dask_client,
                                                                               closeness,
                                                                               epsilon):
    """Anisotropic rows: the uniform-weights ellipsoid is released (without iteration, or kept
    by the selection after 14 iterations).  The Dask path builds the weights ``d/n`` on the
    workers and returns them lazily (a Dask array, never n numbers on the client); computed,
    they, the matrix, the value and the scale equal the numpy path's with the same seed."""
    A = np.random.default_rng(7).standard_normal((900, 4)) * [1.0, 0.5, 0.1, 0.02]
    A /= np.linalg.norm(A, axis=1).max()
    kw = dict(epsilon=epsilon, delta=1e-6, closeness=closeness, row_bound=1.0, rng=3,
              accuracy=0.5)
    a = cvxdp.john_ellipsoid(A).solve_private(**kw)
    b = cvxdp.john_ellipsoid(da.from_array(A, chunks=(250, 4)).persist()).solve_private(**kw)
    assert a.info["selected"] == b.info["selected"]
    assert a.info["selected"].startswith("uniform")
    assert hasattr(b.primal["weights"], "dask")       # lazy: computed on the workers
    np.testing.assert_allclose(np.asarray(b.primal["weights"]), a.primal["weights"], rtol=1e-9)
    np.testing.assert_allclose(b.ellipsoid.matrix, a.ellipsoid.matrix, rtol=1e-9, atol=1e-12)
    assert b.value == pytest.approx(a.value, rel=1e-9)
    assert b.info["scale"] == pytest.approx(a.info["scale"], rel=1e-9)
