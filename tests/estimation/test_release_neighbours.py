"""Release tests for the least-squares and Gaussian private paths (issue 21, "done when").

With ``reference=False``, no field of a solution (value, coef/estimates, primal, info, privacy
details, repr) may be an exact function of the private data other than through the mechanisms'
noisy outputs.  Two checks per path:

* **held noise**: every mechanism is wrapped by a spy that records its (noisy) output on the
  data and replays that output on a neighbour (one record replaced); with the noisy outputs held
  equal, every field must be identical, so nothing reaches the release around the mechanisms;
* **replayed rng**: the same seed on the neighbour changes the noisy estimates (a little) and
  nothing else.
"""

from __future__ import annotations

import re

import cvxpy as cp
import numpy as np
import pytest

import cvxdp.estimation.gaussian_pipeline as gmod  # the steps call the mechanisms there
import cvxdp.estimation.regression_mechanisms as rmod  # the mechanisms call the noise there
from cvxdp.estimation.gaussian_steps import layout
from cvxdp.estimation.gaussians import private_gaussian
from cvxdp.estimation.regression import (
    LeastSquaresPrivacy,
    least_squares,
    least_squares_from_model,
)


def _copy(v):
    """Copy arrays inside tuples/lists/dicts (records and reports are immutable)."""
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, (list, tuple)):
        return type(v)(_copy(x) for x in v)
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    return v


class Spy:
    """Record a mechanism's outputs, then replay them (ignoring the data) in the same order."""

    def __init__(self, fn):
        self.fn, self.outputs, self.replay, self.i = fn, [], False, 0

    def __call__(self, *args, **kwargs):
        if self.replay:
            self.i += 1
            return _copy(self.outputs[self.i - 1])
        out = self.fn(*args, **kwargs)
        self.outputs.append(_copy(out))
        return out


def _spy(monkeypatch, module, names):
    spies = [Spy(getattr(module, n)) for n in names]
    for n, s in zip(names, spies, strict=True):
        monkeypatch.setattr(module, n, s)

    def replay():
        for s in spies:
            s.replay, s.i = True, 0
    return spies, replay


def _canon(v):
    if isinstance(v, np.ndarray):
        return ("array", v.shape, v.tolist())
    if isinstance(v, dict):
        return {k: _canon(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_canon(x) for x in v]
    return v


def _same(a, b, rtol=1e-12):
    """Equal up to BLAS rounding (a matmul's last bit can depend on memory alignment); a leak
    of the data around the mechanisms moves a field by far more than 1e-12 relative."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], rtol) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y, rtol) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= rtol * max(abs(a), abs(b))
    return a == b


def _fields(sol):
    """Every released field, with the (measured) solve_time masked: see docs/privacy.md."""
    rep = re.sub(r"solve_time=[^)]*\)", "solve_time=?)", repr(sol))
    out = {k: _canon(getattr(sol, k)) for k in ("status", "value", "iterations", "primal", "info")}
    out["repr"] = rep
    out["privacy"] = repr(sol.privacy)
    out["details"] = _canon(dict(sol.privacy.details))
    for k in ("coef", "mean", "covariance", "rank"):
        if hasattr(sol, k):
            out[k] = _canon(getattr(sol, k))
    if hasattr(sol, "step_records"):
        out["step_records"] = repr(sol.step_records)
        out["samples_required"] = repr(sol.samples_required)
    assert sol.validation is None
    return out


# --------------------------------------------------------------------------- least squares

def _ls_data(n=3000, d=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, d)) / np.sqrt(2 * d)
    y = x @ np.linspace(-0.5, 0.5, d) + 0.05 * rng.standard_normal(n)
    xn, yn = x.copy(), y.copy()
    xn[11], yn[11] = [0.5, -0.5, 0.3][:d], -0.6  # one record replaced (still inside the bound)
    return (x, y), (xn, yn)


MECH_FN = {"ssp": "noisy_gram", "rp": "random_projection", "ls": "ls_release",
           "als": "als_release"}


@pytest.mark.parametrize("mechanism", ["ssp", "rp", "ls", "als"])
def test_least_squares_held_noise_gives_identical_fields(monkeypatch, mechanism):
    (x, y), (xn, yn) = _ls_data()
    _, replay = _spy(monkeypatch, rmod, [MECH_FN[mechanism]])
    kw = {"epsilon": 1.0, "delta": 1e-6, "rng": 7, "mechanism": mechanism, "sketch_size": 50}
    a = least_squares(x, y, row_bound=1.0).solve_private(**kw)
    replay()
    b = least_squares(xn, yn, row_bound=1.0).solve_private(**kw)
    assert _same(_fields(a), _fields(b)), (_fields(a), _fields(b))


def test_least_squares_with_public_constraints_held_noise(monkeypatch):
    """The user-model path (public constraints solved on the released surrogate)."""
    (x, y), (xn, yn) = _ls_data()
    _, replay = _spy(monkeypatch, rmod, ["noisy_gram"])
    sols = []
    for xx, yy in ((x, y), (xn, yn)):
        X, Y = cp.Parameter(xx.shape, value=xx), cp.Parameter(yy.shape, value=yy)
        beta = cp.Variable(3)
        prob = cp.Problem(cp.Minimize(cp.sum_squares(X @ beta - Y)), [beta >= -0.1])
        structured = least_squares_from_model(prob, LeastSquaresPrivacy(X, Y, 1.0))
        sols.append(structured.solve_private(epsilon=1.0, delta=1e-6, rng=3))
        replay()
    assert _same(_fields(sols[0]), _fields(sols[1]))


def test_least_squares_value_comes_from_the_noisy_gram(monkeypatch):
    """ssp's value is the released surrogate's objective at coef (``c0 - q'coef`` at its
    minimiser), not the exact residual ``||X coef - y||^2``."""
    (x, y), _ = _ls_data()
    spies, _ = _spy(monkeypatch, rmod, ["noisy_gram"])
    sol = least_squares(x, y, row_bound=1.0).solve_private(epsilon=1.0, delta=1e-6, rng=7)
    gram = spies[0].outputs[0]
    from_release = gram[3, 3] - gram[:3, 3] @ sol.coef
    assert sol.value == pytest.approx(from_release, rel=1e-9, abs=1e-9)
    exact = float(np.sum((x @ sol.coef - y) ** 2))
    assert abs(sol.value - exact) > 1e-3 * exact  # differs by the noise, not by rounding


@pytest.mark.parametrize("mechanism", ["ssp", "rp"])
def test_least_squares_replayed_rng_changes_only_the_noisy_estimates(mechanism):
    (x, y), (xn, yn) = _ls_data()
    kw = {"epsilon": 1.0, "delta": 1e-6, "rng": 7, "mechanism": mechanism, "sketch_size": 50}
    a = _fields(least_squares(x, y, row_bound=1.0).solve_private(**kw))
    b = _fields(least_squares(xn, yn, row_bound=1.0).solve_private(**kw))
    noisy = {"value", "coef", "primal", "repr"}
    assert {k for k in a if not _same(a[k], b[k])} == noisy
    coef_a, coef_b = np.array(a["coef"][2]), np.array(b["coef"][2])
    assert 0 < np.linalg.norm(coef_a - coef_b) < 0.05


# ------------------------------------------------------------------------------- Gaussians

GAUSS_MECHS = ["private_subspace", "log_scale", "coinpress_covariance", "clipped_mean",
               "populous_mean"]


def _gauss_data(n, d, rank, seed):
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.standard_normal((d, d)))[0][:, :rank]
    x = 50.0 + (rng.standard_normal((n, rank)) * np.linspace(1.0, 4.0, rank)) @ basis.T
    return x, basis


def _neighbour_in_block(x, basis, block, seed):
    """Replace the record that the seeded permutation puts in the middle of ``block`` by a far
    one (1e3 along the support), so a leak of that block's exact statistics is visible."""
    n, d = x.shape
    sizes = layout(n, d, 1.0, 1e-6, "practical")
    start = 0
    for name, size in sizes.items():
        if name == block:
            break
        start += size
    idx = np.random.default_rng(seed).permutation(n)[start + sizes[block] // 2]
    xn = x.copy()
    xn[idx] = x[idx] + 1e3 * basis[:, 0]
    return xn


@pytest.mark.parametrize("block", ["subspace", "perp_mean", "scale", "covariance", "mean"])
@pytest.mark.parametrize("d, rank", [(2, 2), (3, 2)])
def test_gaussian_held_noise_gives_identical_fields(monkeypatch, d, rank, block):
    """All five kinds of mechanism held (subspace, scale histograms, covariance rounds, clipped
    mean, and for a singular covariance the orthogonal-mean step); the neighbour's replaced
    record sits in each block in turn."""
    x, basis = _gauss_data(40_000, d, rank, seed=d)
    xn = _neighbour_in_block(x, basis, block, seed=9)
    spies, replay = _spy(monkeypatch, gmod, GAUSS_MECHS)
    a = private_gaussian(x, epsilon=1.0, delta=1e-6, rng=9, method="practical")
    replay()
    b = private_gaussian(xn, epsilon=1.0, delta=1e-6, rng=9, method="practical")
    assert a.mean is not None and a.rank == rank
    assert ("perp_mean" in a.step_records) == (rank < d)
    assert _same(_fields(a), _fields(b)), (_fields(a), _fields(b))
    assert sum(s.i for s in spies) == sum(len(s.outputs) for s in spies)  # all replayed


def test_gaussian_replayed_rng_changes_only_the_noisy_estimates():
    """Same seed, the neighbour's record in the mean block: the released mean moves (by the
    clipped record's share), nothing public does."""
    x, basis = _gauss_data(40_000, 2, 2, seed=4)
    xn = _neighbour_in_block(x, basis, "mean", seed=9)
    a = _fields(private_gaussian(x, epsilon=1.0, delta=1e-6, rng=9, method="practical"))
    b = _fields(private_gaussian(xn, epsilon=1.0, delta=1e-6, rng=9, method="practical"))
    changed = {k for k in a if not _same(a[k], b[k])}
    assert changed == {"mean", "repr"} or changed == {"mean"}, changed
    assert a["status"] == b["status"] and a["privacy"] == b["privacy"]
    assert a["step_records"] == b["step_records"] and a["info"] == b["info"]
    # the histogram draws one Laplace per non-empty cell and the far record opens a new cell,
    # so the clipped mean's Gaussian draw is shifted too: the move is of the noise's order
    # (sigma = 0.017 whitened, up to 4x that here), not the exact sensitivity 2R/m = 0.0028
    ma, mb = np.array(a["mean"][2]), np.array(b["mean"][2])
    assert 0 < np.linalg.norm(ma - mb) < 0.5
