"""The private MEB's numpy path at the memory limit (issue 24 item 4).

Peak RSS at 1e7 x 10 must stay within 1.5x the array, interpreter included: the solve may
allocate well under half the array on top of it.  Measured here with tracemalloc (numpy reports
its buffers to it), deterministic, on 2e5 x 10: data inside the public box are neither copied
nor translated into a new array, a few finite points outside the box are patched (left out,
their clipped images added) instead of copying the array, and no pass builds an (n, d)
temporary.  The compiled row loops are used, as they are at 1e7 rows (the numpy loops' (n,)
temporaries are for data below ``FAST_ROWS``).
"""

import tracemalloc

import numpy as np
import pytest

import cvxdp


@pytest.fixture
def compiled_loops():
    pytest.importorskip("numba")
    from cvxdp.geometry.meb import meb_kernels

    before = meb_kernels._state.get("choice", "auto")
    meb_kernels.set_backend("numba")
    yield
    meb_kernels.set_backend(before)


@pytest.mark.parametrize("accuracy", [0.2, 0.5])
@pytest.mark.parametrize("box", [8.0, 4.0])        # 4: a few points outside, patched
def test_private_meb_allocates_well_under_half_the_array(compiled_loops, accuracy, box):
    X = np.random.default_rng(2).standard_normal((200_000, 10))
    kw = dict(rho=1.0, bounds=(-box, box), rng=0, accuracy=accuracy)
    cvxdp.min_enclosing_ball(X[:5000]).solve_private(**kw)     # imports outside the measurement
    prob = cvxdp.min_enclosing_ball(X)
    tracemalloc.start()
    try:
        sol = prob.solve_private(**kw)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 0.35 * X.nbytes, f"the solve allocated {peak / X.nbytes:.2f} x the array"
    assert sol.ball.uncovered(X) <= sol.info["uncovered_bound"]


@pytest.mark.parametrize("model", ["central", "local"])
def test_patched_outliers_give_the_clipped_copys_ball(model):
    """Finite points outside the box are patched, not copied: the released ball equals the one
    released on the explicitly clipped data (same seed) up to the order of additions."""
    import warnings

    from cvxdp.geometry.meb.meb_solve import clip_into_box

    X = np.random.default_rng(4).uniform(-1, 1, (20_000, 3))
    X[[5, 70, 900]] = [[3.0, 0.2, 0.1], [-0.5, -9.0, 0.0], [2.0, 2.0, -2.5]]
    Y, count = clip_into_box(X, np.full(3, -1.5), np.full(3, 1.5))
    assert count == 3
    kw = dict(rho=1.0, bounds=(-1.5, 1.5), rng=3, accuracy=0.5, model=model,
              count_clipped=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        a = cvxdp.min_enclosing_ball(X).solve_private(**kw)
        b = cvxdp.min_enclosing_ball(Y).solve_private(**kw)
    assert a.iterations == b.iterations
    np.testing.assert_allclose(a.ball.center, b.ball.center, rtol=1e-9, atol=1e-12)
    assert a.ball.radius == pytest.approx(b.ball.radius, rel=1e-9)
    # the clipped count: 3 on the patched data, 0 on the clipped copy (one noise draw apart)
    assert a.info["clipped_points_noisy"] - b.info["clipped_points_noisy"] == pytest.approx(3.0)

