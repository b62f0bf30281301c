"""cvxdp's row-level learning models against diffprivlib (benchmark only, pure epsilon-DP).

Same data, same public bounds, same epsilon (both pure DP: cvxdp with delta = 0), d = 10, rows
scaled into the unit ball, no intercept (``fit_intercept=False``), replace-one neighbours.

* Logistic regression: the model ``mean_i logistic(-y_i x_i'w) + lam/2 ||w||^2`` with
  ``lam = 1 / n`` -- exactly diffprivlib's ``LogisticRegression(C=1)`` objective (scikit-learn
  minimises ``C sum_i loss + ||w||^2 / 2``); diffprivlib ``data_norm=1``; cvxdp
  ``RowPrivacy(row_bound=1, label_bound=1)``, no constraint (nothing diffprivlib does not get).
* Linear regression: ``mean_i (x_i'w - y_i)^2``; X uniform in the box ``|x_j| <= 1/sqrt(d)``
  (so ``||x|| <= 1``), ``y = x'w* + noise`` clipped to [-1, 1], ``||w*|| = 1``; diffprivlib
  ``LinearRegression(bounds_X=(-1/sqrt(d), 1/sqrt(d)), bounds_y=(-1, 1))``; cvxdp adds the
  public constraint ``||w|| <= 2`` (its squared loss needs a bounded domain; stated).

Reported: excess empirical risk ``F(w) - F*`` on the training rows (F* by an exact solve),
test accuracy (logistic) or test MSE (linear) on 10,000 fresh rows, and wall time; median
over the seeds (10 by default: the excess risk of one release moves by a factor 3 between
seeds, as the squared norm of a Gamma(d) noise vector does) -- one seed at n = 1e6
(``--large-seeds``; the ``seeds`` column says which).  cvxdp releases no objective value here
(``value_share=0``: all the budget on the model, as diffprivlib).

Sizes: n in 1e3 .. 1e6 for both tasks (``--quick``: 1e3 and 1e4).  cvxdp solves the perturbed
logistic objective by its certified projected Newton method (the model's public part is a
ridge and no constraint; ``cvxdp.learning.newton_solve``), the squared loss through ``X'X``.

diffprivlib is NOT a dependency of cvxdp: ``pip install 'cvxdp[peers]'``.
Usage: ``python benchmarks/bench_erm_peers.py [--quick] [--seeds 10] [--large-seeds 1]
[--tasks logistic] [--sizes 1e3,1e4] [--seed-offset 1000]``;
``--mechanism-check --sizes 1e5 --seeds 30`` averages many seeds at large n with the perturbed
objective solved by L-BFGS (:func:`mechanism_check`).
"""

from __future__ import annotations

import argparse
import time
import warnings

import cvxpy as cp
import numpy as np
from scipy import optimize

import cvxdp
from cvxdp.learning.detect import detect
from cvxdp.learning.domain import theta_bound
from cvxdp.learning.objective_perturbation import plan_objective_perturbation
from cvxdp.privacy.budgets import PureDP
from cvxdp.privacy.rng import as_generator
from cvxdp.table import format_table

D = 10
EPSILONS = (0.1, 1.0, 10.0)
#: cvxdp's noise seeds are offset from the data seeds: ``default_rng(seed)`` draws the data, and
#: the same seed would make the first noise draw (the noise direction) the true coefficient
#: direction
NOISE_SEED = 10_000


def logistic_data(n: int, seed: int):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=D)
    w *= 4 / np.linalg.norm(w)

    def draw(m):
        X = rng.normal(size=(m, D)) / np.sqrt(D)
        X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
        p = 1 / (1 + np.exp(-X @ w))
        return X, np.where(rng.uniform(size=m) < p, 1.0, -1.0)

    return draw(n), draw(10_000)


def linear_data(n: int, seed: int):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=D)
    w /= np.linalg.norm(w)
    b = 1 / np.sqrt(D)

    def draw(m):
        X = rng.uniform(-b, b, size=(m, D))
        return X, np.clip(X @ w + 0.1 * rng.normal(size=m), -1, 1)

    return draw(n), draw(10_000)


def logistic_risk(X, y, w, lam):
    return float(np.mean(np.logaddexp(0, -y * (X @ w))) + lam / 2 * w @ w)


def _diffprivlib_logistic():
    """diffprivlib 0.6.6's LogisticRegression passes ``multi_class='ovr'`` to scikit-learn's
    constructor, which scikit-learn 1.8 removed; accept and drop it (binary labels here, where
    OvR is the only scheme anyway).  Benchmark-only shim."""
    import sklearn.linear_model as sk  # optional extra (peers)
    from diffprivlib.models import LogisticRegression  # optional extra (peers)

    init = sk.LogisticRegression.__init__
    if "multi_class" not in init.__code__.co_varnames:
        def patched(self, *a, multi_class=None, **kw):
            del multi_class
            init(self, *a, **kw)
        sk.LogisticRegression.__init__ = patched
    return LogisticRegression


def exact_logistic(X, y, lam, linear=None):
    """The exact minimiser of ``mean logistic + lam/2 ||w||^2 (+ linear' w)`` by L-BFGS on the
    smooth objective (gradient norm to 1e-12): the reference, independent of cvxdp's own
    solvers."""
    c = np.zeros(X.shape[1]) if linear is None else linear

    def f(w):
        z = y * (X @ w)
        s = -y * 0.5 * (1 - np.tanh(z / 2))      # d/dz log(1 + e^-z) * y
        return (float(np.mean(np.logaddexp(0, -z)) + lam / 2 * w @ w + c @ w),
                X.T @ s / len(y) + lam * w + c)
    res = optimize.minimize(f, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B",
                            options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10_000})
    return res.x


def run_logistic(n, eps, seed):
    (X, y), (Xt, yt) = logistic_data(n, seed)
    lam = 1.0 / n
    Xp, yp = cp.Parameter((n, D), value=X), cp.Parameter(n, value=y)
    w = cp.Variable(D)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.logistic(-cp.multiply(yp, Xp @ w))) / n
                                  + lam / 2 * cp.sum_squares(w)))
    best = logistic_risk(X, y, exact_logistic(X, y, lam), lam)
    t0 = time.perf_counter()
    prob.solve_private(epsilon=eps, rng=NOISE_SEED + seed, value_share=0.0,
                       private=cvxdp.RowPrivacy(Xp, yp, row_bound=1.0, label_bound=1.0))
    t_cvx = time.perf_counter() - t0
    w_cvx = np.asarray(w.value)
    LogisticRegression = _diffprivlib_logistic()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = LogisticRegression(epsilon=eps, data_norm=1.0, C=1.0, fit_intercept=False,
                               random_state=seed).fit(X, y)
    t_dpl = time.perf_counter() - t0
    w_dpl = m.coef_.ravel()
    acc = lambda v: float(np.mean(np.sign(Xt @ v) == yt))  # noqa: E731
    return {"cvxdp": (logistic_risk(X, y, w_cvx, lam) - best, acc(w_cvx), t_cvx),
            "diffprivlib": (logistic_risk(X, y, w_dpl, lam) - best, acc(w_dpl), t_dpl)}


def run_linear(n, eps, seed):
    (X, y), (Xt, yt) = linear_data(n, seed)
    ols = np.linalg.lstsq(X, y, rcond=None)[0]
    mse = lambda A, b, v: float(np.mean((A @ v - b) ** 2))  # noqa: E731
    best = mse(X, y, ols)
    Xp, yp = cp.Parameter((n, D), value=X), cp.Parameter(n, value=y)
    w = cp.Variable(D)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(Xp @ w - yp) / n), [cp.norm(w, 2) <= 2])
    t0 = time.perf_counter()
    prob.solve_private(epsilon=eps, rng=NOISE_SEED + seed, value_share=0.0,
                       private=cvxdp.RowPrivacy(Xp, yp, row_bound=1.0, label_bound=1.0))
    t_cvx = time.perf_counter() - t0
    w_cvx = np.asarray(w.value)
    from diffprivlib.models import LinearRegression  # optional extra (peers)

    b = 1 / np.sqrt(D)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = LinearRegression(epsilon=eps, bounds_X=(-b, b), bounds_y=(-1, 1),
                             fit_intercept=False, random_state=seed).fit(X, y)
    t_dpl = time.perf_counter() - t0
    w_dpl = m.coef_.ravel()
    return {"cvxdp": (mse(X, y, w_cvx) - best, mse(Xt, yt, w_cvx), t_cvx),
            "diffprivlib": (mse(X, y, w_dpl) - best, mse(Xt, yt, w_dpl), t_dpl)}


def mechanism_check(n, eps, seed):
    """cvxdp's objective perturbation with its own plan and noise draw (the same generator
    calls as ``solve_private``), its perturbed objective solved by an independent L-BFGS --
    the mechanism's utility without any of cvxdp's solvers, to average many seeds at large n
    -- against diffprivlib's own fit.  The conic solve of the same perturbed objective agreed
    to four digits where both were run (n = 1e5)."""
    (X, y), _ = logistic_data(n, seed)
    lam = 1.0 / n
    best = logistic_risk(X, y, exact_logistic(X, y, lam), lam)
    Xp, yp = cp.Parameter((n, D), value=X), cp.Parameter(n, value=y)
    w = cp.Variable(D)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.logistic(-cp.multiply(yp, Xp @ w))) / n
                                  + lam / 2 * cp.sum_squares(w)))
    model = detect(prob, cvxdp.RowPrivacy(Xp, yp, row_bound=1.0, label_bound=1.0))
    plan = plan_objective_perturbation(model, PureDP(eps), theta_bound(model), beta=1e-3)
    gen = as_generator(NOISE_SEED + seed)
    direction = gen.standard_normal(D)
    b = gen.gamma(D, plan.gamma_scale) * direction / np.linalg.norm(direction)
    w_cvx = exact_logistic(X, y, lam + plan.Delta, linear=b)
    LogisticRegression = _diffprivlib_logistic()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = LogisticRegression(epsilon=eps, data_norm=1.0, C=1.0, fit_intercept=False,
                               random_state=seed).fit(X, y)
    return (logistic_risk(X, y, w_cvx, lam) - best,
            logistic_risk(X, y, m.coef_.ravel(), lam) - best)


def paired(cvx: list[float], dpl: list[float]) -> dict[str, float | str]:
    """Paired comparison over the seeds (same data per seed): mean excess +- standard error
    of each, and the share of seeds where cvxdp's excess is the lower."""
    a, b = np.asarray(cvx), np.asarray(dpl)
    se = (lambda v: float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1  # noqa: E731
          else float("nan"))
    return {"mean excess cvxdp": f"{a.mean():.3g} +- {se(a):.2g}",
            "mean excess diffprivlib": f"{b.mean():.3g} +- {se(b):.2g}",
            "cvxdp lower on": float(np.mean(a < b))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--seed-offset", type=int, default=0,
                    help="first seed (fresh seeds for a report: e.g. 1000)")
    ap.add_argument("--large-seeds", type=int, default=1,
                    help="seeds at n >= 1e6 (one release there takes seconds per method)")
    ap.add_argument("--tasks", default="logistic,linear",
                    help="comma-separated subset of logistic,linear")
    ap.add_argument("--sizes", default=None, help="comma-separated n, instead of the grid")
    ap.add_argument("--epsilons", default=None, help="comma-separated epsilons (default 0.1,1,10)")
    ap.add_argument("--mechanism-check", action="store_true",
                    help="logistic only: mean excess over the seeds of cvxdp's mechanism "
                         "(perturbed objective solved by L-BFGS) vs diffprivlib")
    args = ap.parse_args()
    epsilons = (tuple(float(v) for v in args.epsilons.split(",")) if args.epsilons
                else EPSILONS)
    if args.mechanism_check:
        rows = []
        for n in (tuple(int(float(v)) for v in args.sizes.split(",")) if args.sizes
                  else (100_000,)):
            for eps in epsilons:
                r = np.array([mechanism_check(n, eps, s) for s in
                               range(args.seed_offset, args.seed_offset + args.seeds)])
                se = r.std(axis=0, ddof=1) / np.sqrt(len(r))
                rows.append({"n": n, "epsilon": eps, "mean excess cvxdp": float(r[:, 0].mean()),
                             "se cvxdp": float(se[0]),
                             "mean excess diffprivlib": float(r[:, 1].mean()),
                             "se diffprivlib": float(se[1]),
                             "cvxdp lower on": float(np.mean(r[:, 0] < r[:, 1]))})
        print(f"\nlogistic regression, mechanism check, {args.seeds} seeds")
        print(format_table(rows, list(rows[0])))
        return
    grid = (1_000, 10_000) if args.quick else (1_000, 10_000, 100_000, 1_000_000)
    sizes = {"logistic": grid, "linear": grid}
    if args.sizes:
        sizes = {k: tuple(int(float(v)) for v in args.sizes.split(",")) for k in sizes}
    for task, fn, metric in (("logistic", run_logistic, "test acc"),
                             ("linear", run_linear, "test MSE")):
        if task not in args.tasks.split(","):
            continue
        rows = []
        for n in sizes[task]:
            seeds = args.large_seeds if n >= 1_000_000 else args.seeds
            for eps in epsilons:
                res = [fn(n, eps, s) for s in range(args.seed_offset, args.seed_offset + seeds)]
                med = {k: np.median([r[k] for r in res], axis=0) for k in res[0]}
                c, p = med["cvxdp"], med["diffprivlib"]
                rows.append({"n": n, "epsilon": eps, "seeds": seeds,
                             "excess cvxdp": float(c[0]),
                             "excess diffprivlib": float(p[0]), f"{metric} cvxdp": float(c[1]),
                             f"{metric} diffprivlib": float(p[1]),
                             "time cvxdp (s)": float(c[2]),
                             "time diffprivlib (s)": float(p[2]),
                             "excess ratio dpl/cvxdp": float(p[0] / max(c[0], 1e-12)),
                             **paired([r["cvxdp"][0] for r in res],
                                      [r["diffprivlib"][0] for r in res])})
                print(f"  {task} n={n} eps={eps}: done", flush=True)
        print(f"\n{task} regression, d = {D}, median over the seeds (pure DP)")
        print(format_table(rows, list(rows[0])))


if __name__ == "__main__":
    main()
