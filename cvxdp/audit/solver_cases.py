"""End-to-end audits of every solver a user calls, each next to a twin with a planted bug.

Each case calls the public entry point (``problem.solve_private``, ``ball.solve_private``,
``cvxdp.private_gaussian``, ...) once per run on one of two neighbouring datasets D and D', and
reads a few numbers off everything the call releases: the released point (or a coordinate of
it), the released objective ``value`` and, for CVXPY models, the ``problem.value`` left on the
user's problem.  The released objective enters as its gap ``log10(|value - f_D| + 1e-15)``,
where ``f_D`` is the value the field would have if it were computed from D's true data (the
auditor knows D; a fixed function of the output is post-processing, so the audit stays
valid).  The auditor (:func:`cvxdp.audit.audit_mechanism`) fits its statistics to these
features on the selection runs and bounds epsilon on the held-out ones.

The neighbours are where each mechanism is tight or nearly so: the declared sensitivity used in
full in the direction the released point moves most (one scalar right-hand side moved by its
sensitivity for the perturbation cases, where the release is exactly the calibrated Gaussian
mechanism; a point replaced by a far corner for the ball; a row added at the domain's corner for
least squares; a whole covering constraint added; a John row moved by exactly ``closeness``).

Planted twins (:mod:`cvxdp.audit.planting`), inside the solver's own call:

* ``<case>, true value`` (every case, in the default family): the released objective
  (``value``; the mean for the Gaussian pipeline) is recomputed from the TRUE data after the
  solver built its answer -- the leak the review found in the quad_form path.  The features
  then separate D from D' perfectly and 2 x 120 runs catch it.
* ``<case>, noise halved`` (slow; ``cvxdp audit --slow``): every noise draw of the call is half
  its size.  Catching a halved Gaussian needs 10^5 runs and more (docs/audit.md); the slow set
  has the Gaussian pipeline's bounded mean, whose 1-D K-norm (Laplace) noise at half size is
  2 epsilon and shows at 2 x 20,000 runs.

References
----------
M. Jagielski, J. Ullman, A. Oprea, "Auditing Differentially Private Machine Learning: How Private
is Private SGD?", NeurIPS 2020.
M. Nasr, S. Song, A. Thakurta, N. Papernot, N. Carlini, "Adversary Instantiation: Lower Bounds
for Differentially Private Machine Learning", IEEE S&P 2021.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import numpy as np

import cvxdp
from cvxdp.audit.planting import ScaledNoise, field_from_true_data

__all__ = ["SolverCase", "solver_cases"]

RUNS = 200  # runs per input of a default solver case (a planted field needs ~100)
CONIC_RUNS = 120  # the same for a case that compiles and solves a conic program per run
SLOW_RUNS = 20_000  # runs per input of a noise-halved twin (the Laplace mean: 1.8 at this size)
MISSING = -1e3    # feature of a run that released no point (a public outcome, kept as an atom)


@dataclass(frozen=True)
class SolverCase:
    """One solver's audit: :meth:`mechanism` ``(data, rng) -> features``, optionally planted.

    Attributes
    ----------
    name : str
    solve : callable
        ``solve(data, rng) -> answer``: one end-to-end call of the public entry point.
    features : callable
        ``features(answer) -> 1-D array``: the audited numbers of the release.
    data, neighbour : any
        D and D'.
    epsilon, delta : float
        The claim of the call.
    plant : callable or None
        ``plant(data) -> context manager`` active during a planted call on ``data``.
    noise_factor : float
        Scale of every noise draw of the call (1 honest, 0.5 for the noise-halved twin;
        :class:`~cvxdp.audit.planting.ScaledNoise`).
    broken : bool
    n_samples : int
    slow : bool
    """

    name: str
    solve: Callable[[Any, Any], Any]
    features: Callable[[Any], np.ndarray]
    data: Any
    neighbour: Any
    epsilon: float
    delta: float
    plant: Callable[[Any], Any] | None = None
    noise_factor: float = 1.0
    broken: bool = False
    n_samples: int = RUNS
    slow: bool = False

    def mechanism(self, data: Any, gen: np.random.Generator) -> np.ndarray:
        """One audited run (the signature :func:`cvxdp.audit.audit_mechanism` calls)."""
        rng = gen if self.noise_factor == 1.0 else ScaledNoise(
            int(gen.integers(2**63)), self.noise_factor)
        plant = self.plant(data) if self.plant is not None else contextlib.nullcontext()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # accuracy warnings: public, not audited
            with plant:
                answer = self.solve(data, rng)
        out = np.asarray(self.features(answer), dtype=float)
        return np.where(np.isfinite(out), out, MISSING)  # inf / nan: no point released


def _value(x: Any) -> float:
    return MISSING if x is None else float(x)


def _gap(released: Any, f_D: float) -> float:
    """``log10(|released - f_D| + 1e-15)``: -15 exactly when the released number equals D's
    true value, which a linear statistic then separates from any neighbour's (the raw gap
    hides an exact match among small gaps)."""
    if released is None or not np.isfinite(float(released)):
        return MISSING
    return float(np.log10(abs(float(released) - f_D) + 1e-15))


def _exact_value(problem: cp.Problem, param: cp.Parameter, value: np.ndarray) -> float:
    """Exact optimum of a CVXPY model at one dataset (the auditor's f_D; not private)."""
    param.value = value
    problem.solve()
    return float(problem.value)


class _Cache(dict):
    """Exact reference values per dataset (computed once: a plant must not cost a solve)."""

    def of(self, key: Any, fn: Callable[[], float]) -> float:
        k = id(key)
        if k not in self:
            self[k] = fn()
        return self[k]


# ------------------------------------------------------------------------------ general models


def _perturbation(noise: str, eps: float, delta: float) -> list[SolverCase]:
    # one private scalar b, sensitivity 1: minimise x s.t. x >= b releases x = b~ + tau with
    # b~ = b + sigma g -- exactly the calibrated Gaussian mechanism (K = 1), tight at b vs b + 1
    b = cp.Parameter(name="b", value=0.0)
    x = cp.Variable(name="x")
    prob = cp.Problem(cp.Minimize(x), [x >= b])
    spec = cvxdp.ScalarPrivacy(b, sensitivity=1.0)
    D, Dn = np.array(0.0), np.array(1.0)

    def solve(data: np.ndarray, rng: Any) -> Any:
        b.value = float(data)
        return prob.solve_private(epsilon=eps, delta=delta, rng=rng, mechanism="perturbation",
                                  noise=noise, private=spec)

    def features(sol: Any) -> np.ndarray:
        # the exact optimum on D is b_D = 0
        return np.array([_value(x.value), _gap(sol.value, 0.0), _gap(prob.value, 0.0)])

    def plant(data: np.ndarray) -> Any:
        return field_from_true_data("cvxdp.solvers.perturbation.certified", "PrivateSolution",
                                    "value", lambda sol: float(data))

    name = f"perturbation {noise}"
    return _pair(name, solve, features, D, Dn, eps, delta, plant, runs=CONIC_RUNS)


def _mwu(eps: float, delta: float) -> list[SolverCase]:
    # constraint privacy, each entry of A moves by 0.5: row 0 tightens, row 1 loosens
    sens = 0.5
    A = cp.Parameter((2, 2), name="A", value=np.eye(2))
    x = cp.Variable(2, nonneg=True, name="x")
    prob = cp.Problem(cp.Maximize(x[0]), [A @ x <= 0.7, cp.sum(x) == 1])
    spec = cvxdp.ConstraintPrivacy(A, sensitivity=sens)
    D = np.eye(2)
    Dn = D + sens * np.array([[1.0, -1.0], [-1.0, 1.0]])
    ref_prob = cp.Problem(cp.Maximize(x[0]), [A @ x <= 0.7, cp.sum(x) == 1])
    cache = _Cache()

    def opt(data: np.ndarray) -> float:
        return cache.of(data, lambda: _exact_value(ref_prob, A, data))

    f_D = opt(D)
    opt(Dn)

    def solve(data: np.ndarray, rng: Any) -> Any:
        A.value = data
        return prob.solve_private(epsilon=eps, delta=delta, rng=rng, mechanism="mwu",
                                  private=spec)

    def features(sol: Any) -> np.ndarray:
        x0 = MISSING if x.value is None else float(x.value[0])
        return np.array([x0, _gap(sol.value, f_D), _gap(prob.value, f_D)])

    def plant(data: np.ndarray) -> Any:   # value := the exact optimum on the true data
        return field_from_true_data("cvxdp.solvers.mwu.solve", "PrivateSolution", "value",
                                    lambda sol: opt(data))

    return _pair("MWU LP", solve, features, D, Dn, eps, delta, plant, runs=CONIC_RUNS)


def _quadform(eps: float, delta: float) -> list[SolverCase]:
    # a private 2x2 covariance in quad_form(w, Sigma); every entry moves by 0.1
    sens = 0.1
    Sigma = cp.Parameter((2, 2), PSD=True, name="Sigma")
    w = cp.Variable(2, name="w")
    prob = cp.Problem(cp.Minimize(cp.quad_form(w, Sigma) - np.array([0.1, 0.0]) @ w),
                      [cp.sum(w) == 1, w >= 0])
    spec = cvxdp.ObjectivePrivacy(Sigma, sensitivity=sens)
    D = np.array([[0.5, 0.0], [0.0, 0.5]])
    Dn = D + sens * np.array([[1.0, 0.0], [0.0, -1.0]])  # w moves towards the cheaper asset

    def true_objective(data: np.ndarray, wv: np.ndarray) -> float:
        return float(wv @ data @ wv - 0.1 * wv[0])

    def solve(data: np.ndarray, rng: Any) -> Any:
        Sigma.value = data
        return prob.solve_private(epsilon=eps, delta=delta, rng=rng, private=spec)

    def features(sol: Any) -> np.ndarray:
        if w.value is None:
            return np.array([MISSING, MISSING, MISSING])
        wv = np.asarray(w.value, dtype=float)
        f_D = true_objective(D, wv)
        return np.array([wv[0], _gap(sol.value, f_D), _gap(prob.value, f_D)])

    def plant(data: np.ndarray) -> Any:  # value := the true objective at the released point
        return field_from_true_data(
            "cvxdp.solvers.quadform_perturbation", "PrivateSolution", "value",
            lambda sol: true_objective(data, np.asarray(w.value, dtype=float)))

    return _pair("quad_form", solve, features, D, Dn, eps, delta, plant, runs=CONIC_RUNS)


# --------------------------------------------------------------------------- structured solvers


def _meb(eps: float, delta: float) -> list[SolverCase]:
    rng = np.random.default_rng(0)
    D = rng.uniform(-0.3, 0.3, (20, 2))
    Dn = D.copy()
    Dn[0] = [1.0, 1.0]  # one point replaced by the public box's corner
    balls = {id(D): cvxdp.min_enclosing_ball(D), id(Dn): cvxdp.min_enclosing_ball(Dn)}

    def fit(points: np.ndarray, centre: np.ndarray) -> float:
        return float(np.max(np.linalg.norm(points - centre, axis=1)))

    def solve(data: np.ndarray, rng: Any) -> Any:
        return balls[id(data)].solve_private(epsilon=eps, delta=delta, bounds=(-1.0, 1.0),
                                             rng=rng)

    def features(sol: Any) -> np.ndarray:
        c = np.asarray(sol.ball.center, dtype=float)
        return np.array([c[0] + c[1], _value(sol.value), _gap(sol.value, fit(D, c))])

    def plant(data: np.ndarray) -> Any:  # radius := what covers the true points exactly
        return field_from_true_data("cvxdp.geometry.meb.meb_solve", "MEBPrivateSolution",
                                    "value", lambda sol: fit(data, sol.ball.center))

    return _pair("min_enclosing_ball", solve, features, D, Dn, eps, delta, plant)


def _john(eps: float, delta: float) -> list[SolverCase]:
    eps0 = 2e-3
    rng = np.random.default_rng(0)
    D = rng.standard_normal((12, 2)) / np.sqrt(2)
    D *= np.minimum(1.0, 0.9 / np.linalg.norm(D, axis=1))[:, None]
    # row 10 is on the John ellipsoid's boundary (exact weight > 0): moved outwards by exactly
    # eps0, it narrows its slab and the exact log volume drops by 1.2e-3 (rows inside move it by
    # < 1e-5)
    Dn = D.copy()
    Dn[10] += eps0 * D[10] / np.linalg.norm(D[10])
    probs = {id(D): cvxdp.john_ellipsoid(D), id(Dn): cvxdp.john_ellipsoid(Dn)}
    cache = _Cache()

    def exact(data: np.ndarray) -> float:
        return cache.of(data, lambda: float(cvxdp.john_ellipsoid(data).solve()))

    f_D = exact(D)
    exact(Dn)

    def solve(data: np.ndarray, rng: Any) -> Any:
        return probs[id(data)].solve_private(epsilon=eps, delta=delta, closeness=eps0,
                                             row_bound=1.0, rng=rng, iterations=5)

    def features(sol: Any) -> np.ndarray:
        # the released weights (none when the uniform-weights candidate is released: -1)
        wts = sol.ellipsoid.weights
        w10 = float(np.asarray(wts, dtype=float)[10]) if wts is not None and np.ndim(wts) else -1.0
        return np.array([w10, _gap(sol.value, f_D)])

    def plant(data: np.ndarray) -> Any:  # log volume := the exact John ellipsoid's
        return field_from_true_data("cvxdp.geometry.john.release", "JohnPrivateSolution",
                                    "value", lambda sol: exact(data))

    return _pair("john_ellipsoid", solve, features, D, Dn, eps, delta, plant)


def _least_squares(eps: float, delta: float) -> list[SolverCase]:
    bound = 1.0
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.4, 0.4, (20, 1))
    y = 0.5 * X[:, 0] + rng.uniform(-0.1, 0.1, 20)
    D = np.column_stack([X, y])
    Dn = np.vstack([D, [bound / np.sqrt(2), -bound / np.sqrt(2)]])  # a row added at the corner
    probs = {id(D): cvxdp.least_squares(D[:, :1], D[:, 1], row_bound=bound),
             id(Dn): cvxdp.least_squares(Dn[:, :1], Dn[:, 1], row_bound=bound)}

    def loss(data: np.ndarray, coef: np.ndarray) -> float:
        return float(np.sum((data[:, :1] @ coef - data[:, 1]) ** 2))

    def solve(data: np.ndarray, rng: Any) -> Any:
        return probs[id(data)].solve_private(epsilon=eps, delta=delta, rng=rng)

    def features(sol: Any) -> np.ndarray:
        coef = np.asarray(sol.coef, dtype=float)
        return np.array([coef[0], _gap(sol.value, loss(D, coef))])

    def plant(data: np.ndarray) -> Any:  # value := the true residual sum of squares
        return field_from_true_data("cvxdp.estimation.regression", "LeastSquaresSolution",
                                    "value", lambda sol: loss(data, np.asarray(sol.coef)))

    # no noise-halved twin: the released coefficient sees the noise of X'y only (the floor
    # on X'X dominates at this n), whose share of the loss is ~1.4 epsilon at half the noise;
    # 2 x 20,000 runs bounded it at 0.67 against the claim 1
    cases = _pair("least_squares", solve, features, D, Dn, eps, delta, plant)
    return cases


def _gaussian(eps: float, delta: float) -> list[SolverCase]:
    # bounded mean in 1-D: one sample moved across the whole public interval [-1, 1]
    rng = np.random.default_rng(0)
    D = rng.uniform(-0.5, 0.5, (50, 1))
    D[0] = -1.0
    Dn = D.copy()
    Dn[0] = 1.0
    mean_D = float(D.mean())

    def solve(data: np.ndarray, rng: Any) -> Any:
        return cvxdp.private_gaussian(data, epsilon=eps, delta=delta, rng=rng,
                                      bounds=(-1.0, 1.0), estimate="mean")

    def features(sol: Any) -> np.ndarray:
        return np.array([MISSING if sol.mean is None else float(sol.mean[0]) - mean_D])

    def plant(data: np.ndarray) -> Any:  # the mean := the true sample mean
        return field_from_true_data("cvxdp.estimation.gaussian_learner", "GaussianSolution", "mean",
                                    lambda sol: data.mean(axis=0))

    cases = _pair("private_gaussian", solve, features, D, Dn, eps, delta, plant,
                  field="mean")
    cases.append(SolverCase("private_gaussian, noise halved", solve, features,
                            D, Dn, eps, delta, noise_factor=0.5, broken=True,
                            n_samples=SLOW_RUNS, slow=True))
    return cases


def _covering(eps: float, delta: float) -> list[SolverCase]:
    D = np.array([[1.0, 0.0, 0.0]] * 3 + [[0.0, 1.0, 0.0]] * 3)
    Dn = np.vstack([D, [[0.0, 0.0, 1.0]]])  # one person's whole constraint added
    probs = {id(D): cvxdp.covering_lp(D), id(Dn): cvxdp.covering_lp(Dn)}
    cache = _Cache()

    def exact(data: np.ndarray) -> float:
        return cache.of(data, lambda: float(cvxdp.covering_lp(data).solve()))

    f_D = exact(D)
    exact(Dn)

    def solve(data: np.ndarray, rng: Any) -> Any:
        return probs[id(data)].solve_private(epsilon=eps, delta=delta, rng=rng, T=4,
                                             opt_bounds=(1.0, 6.0))

    def features(sol: Any) -> np.ndarray:
        p = np.zeros(3) if sol.point is None else np.asarray(sol.point, dtype=float)
        return np.array([p[2] / max(float(np.sum(p)), 1e-12), _gap(sol.value, f_D)])

    def plant(data: np.ndarray) -> Any:  # value := the exact optimum on the true data
        return field_from_true_data("cvxdp.solvers.covering.covering", "CoveringSolution",
                                    "value", lambda sol: exact(data))

    return _pair("covering_lp", solve, features, D, Dn, eps, delta, plant)


def _pair(name: str, solve: Callable, features: Callable, D: Any, Dn: Any, eps: float,
          delta: float, plant: Callable, field: str = "value", runs: int = RUNS
          ) -> list[SolverCase]:
    return [SolverCase(name, solve, features, D, Dn, eps, delta, n_samples=runs),
            SolverCase(f"{name}, true {field}", solve, features, D, Dn, eps, delta,
                       plant=plant, broken=True, n_samples=runs)]


def solver_cases(epsilon: float = 1.0, delta: float = 1e-5) -> list[SolverCase]:
    """Every solver's end-to-end case and planted twins (slow ones have ``slow=True``)."""
    out: list[SolverCase] = []
    for build in (_mwu, lambda e, d: _perturbation("gaussian", e, d),
                  lambda e, d: _perturbation("truncated", e, d), _quadform, _meb, _john,
                  _least_squares, _gaussian, _covering):
        out += build(epsilon, delta)
    return out
