"""Float32 storage for the private MEB (issue 24 item 4): a float32 array is read as it is (no
float64 copy) and every product and sum is taken in float64, so the release is the float64
path's on the same numbers."""

import tracemalloc
import warnings

import numpy as np
import pytest

import cvxdp


@pytest.fixture(autouse=True)
def _every_backend(kernels):
    """numpy loops and, when installed, the compiled ones (a float32 specialisation)."""


def _data(kind, rng):
    if kind == "gauss":
        x = rng.normal(size=(60_000, 6))
    elif kind == "patched":              # a few rows outside the box: patched, not copied
        x = rng.normal(size=(60_000, 6))
        x[[5, 999, 42_000]] = 7.5
    else:                                # grid data: stored compressed
        x = rng.integers(-2, 3, size=(60_000, 6)).astype(float) * 0.5
    return x.astype(np.float32)


@pytest.mark.parametrize("kind", ["gauss", "patched", "grid"])
@pytest.mark.parametrize("accuracy", [0.3, 0.5])
def test_float32_storage_releases_the_float64_ball(kind, accuracy):
    x32 = _data(kind, np.random.default_rng(11))
    prob32 = cvxdp.min_enclosing_ball(x32)
    assert prob32.points is x32                       # the builder keeps the float32 array
    kw = dict(rho=1.0, bounds=(-5, 5), rng=3, accuracy=accuracy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = prob32.solve_private(**kw)
        b = cvxdp.min_enclosing_ball(x32.astype(np.float64)).solve_private(**kw)
    assert a.info["search_path"] == b.info["search_path"]
    np.testing.assert_allclose(a.ball.center, b.ball.center, rtol=1e-9, atol=1e-12)
    assert a.ball.radius == pytest.approx(b.ball.radius, rel=1e-12)


def test_float32_private_solve_makes_no_float64_copy():
    x32 = np.random.default_rng(2).normal(size=(200_000, 10)).astype(np.float32)
    kw = dict(rho=1.0, bounds=(-6, 6), rng=0, accuracy=0.5)
    prob = cvxdp.min_enclosing_ball(x32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cvxdp.min_enclosing_ball(x32[:5000]).solve_private(**kw)   # imports, compiled loops
        tracemalloc.start()
        try:
            prob.solve_private(**kw)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    # a float64 copy alone would be 2x the float32 array; the squared norms are 0.2x
    assert peak < 0.9 * x32.nbytes, f"peak {peak / x32.nbytes:.2f} x the float32 array"


def test_float32_exact_solve_is_the_float64_one():
    x32 = np.random.default_rng(4).normal(size=(3000, 3)).astype(np.float32)
    a = cvxdp.min_enclosing_ball(x32).exact_ball(method="active-set")[0]
    b = cvxdp.min_enclosing_ball(x32.astype(np.float64)).exact_ball(method="active-set")[0]
    np.testing.assert_allclose(a.center, b.center, atol=1e-9)
    assert a.radius == pytest.approx(b.radius, rel=1e-9)
