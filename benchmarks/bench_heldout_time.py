"""Held-out models: time of the default private solve against the exact solve (issue 35).

Models written the way CVXPY's examples and documentation write them, with the data declared
private as a user would (``ScalarPrivacy`` on the observed values or targets, sensitivity about
1% of the data's public scale; ``ObjectivePrivacy`` on a portfolio's returns): fitting censored
data (CVXPY's ``censored_data`` example, 200 x 30), total-variation in-painting (20 x 20 grey,
20 x 20 x 3 colour, 40 x 40 grey), ridge regression (the docs' machine-learning example), lasso,
Huber and least-absolute-deviation fits, NNLS, Markowitz, a resource-allocation LP (200 and
2,000 variables), a transport LP, the docs' SOCP and SDP examples, a norm-constrained least
squares, a hinge-loss fit, and held-out trial 22a's two time outliers (a Hodrick-Prescott
filter of 1,500 private samples, a Lyapunov LMI of order 12 with a private system matrix).
None of them is in the test suite or the gallery.

Each row: ``exact`` = ``problem.solve()`` on a fresh copy (CVXPY's default solver), ``private``
= ``problem.solve_private(epsilon=eps, delta=1e-6, private=spec, rng=0)`` (``mechanism="auto"``,
no reference solve), the minimum of ``--repeat`` runs each, and their ratio.  ``--save FILE``
writes a fingerprint of each release (status, value, certificate, a digest of the point) and
``--compare FILE`` says whether it is identical, so a speed change can be checked not to change
what is released.  ``--profile`` adds cProfile's time of the main steps.

Usage::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_heldout_time.py
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_heldout_time.py --models nnls sdp_mid --eps 1
    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_heldout_time.py --save a.json
    ... --compare a.json        # on another commit: same releases?
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import io
import json
import pstats
import time
import warnings

import cvxpy as cp
import numpy as np

import cvxdp


def _censored_data(seed: int) -> tuple[np.ndarray, np.ndarray, float, int]:
    """CVXPY's "fitting censored data" data: ``(X, y, D, M)``, rows sorted by ``y``; n = 30,
    M = 50 observed, K = 200."""
    rng = np.random.default_rng(seed)
    n, M, K = 30, 50, 200
    c_true = rng.random(n)
    X = rng.standard_normal((K, n))
    y = X @ c_true + 0.3 * np.sqrt(n) * rng.standard_normal(K)
    order = np.argsort(y)
    y, X = y[order], X[order]
    return X, y, (y[M - 1] + y[M]) / 2.0, M


def censored(seed: int = 0):
    """CVXPY's "fitting censored data": n = 30, M = 50 observed, K = 200; private targets."""
    X, y, D, M = _censored_data(seed)
    y_obs = cp.Parameter(M, name="y_obs")
    y_obs.value = y[:M]
    c = cp.Variable(X.shape[1])
    prob = cp.Problem(cp.Minimize(cp.sum_squares(X[:M] @ c - y_obs)), [X[M:] @ c >= D])
    return prob, cvxdp.ScalarPrivacy(y_obs, sensitivity=0.08)


def censored_full(seed: int = 0):
    """The same with every observed value private (the censored ones equal to D)."""
    X, y, D, M = _censored_data(seed)
    yc = cp.Parameter(X.shape[0], name="y_cens")
    yc.value = np.minimum(y, D)
    c = cp.Variable(X.shape[1])
    prob = cp.Problem(cp.Minimize(cp.sum_squares(X[:M] @ c - yc[:M])), [X[M:] @ c >= yc[M:]])
    return prob, cvxdp.ScalarPrivacy(yc, sensitivity=0.08)


def _image(r: int, c: int, rng: np.random.Generator, freq: float = 4.0) -> np.ndarray:
    xx, yy = np.meshgrid(np.linspace(0, 1, c), np.linspace(0, 1, r))
    img = 0.5 + 0.4 * np.sin(freq * xx) * np.cos(3 * yy) + 0.05 * rng.standard_normal((r, c))
    return np.clip(img, 0, 1)


def tv_inpaint(seed: int = 0, size: int = 20):
    """CVXPY's total-variation in-painting, grey image in [0, 1], 30% of pixels unknown."""
    rng = np.random.default_rng(seed)
    orig = _image(size, size, rng)
    known = (rng.random((size, size)) > 0.3).astype(float)
    U_obs = cp.Parameter((size, size), name="U_obs")
    U_obs.value = orig
    U = cp.Variable((size, size))
    prob = cp.Problem(cp.Minimize(cp.tv(U)), [cp.multiply(known, U) == cp.multiply(known, U_obs)])
    return prob, cvxdp.ScalarPrivacy(U_obs, sensitivity=0.01)


def tv_color(seed: int = 0):
    """The same in colour (three channels, one tv of all), as CVXPY's example."""
    rng = np.random.default_rng(seed)
    r = c = 20
    known = (rng.random((r, c)) > 0.3).astype(float)
    Us, cons, specs = [], [], []
    for ch in range(3):
        P = cp.Parameter((r, c), name=f"U_obs{ch}")
        P.value = np.clip(_image(r, c, rng, 4.0 + ch), 0, 1)
        U = cp.Variable((r, c))
        Us.append(U)
        cons.append(cp.multiply(known, U) == cp.multiply(known, P))
        specs.append(cvxdp.ScalarPrivacy(P, sensitivity=0.01))
    return cp.Problem(cp.Minimize(cp.tv(*Us)), cons), specs


def ridge(seed: int = 0):
    """The docs' ridge regression (m = 100, n = 20, sigma = 5, density 0.2); private Y."""
    rng = np.random.default_rng(seed)
    m, n, sigma, density = 100, 20, 5, 0.2
    beta_star = rng.standard_normal(n)
    beta_star[rng.choice(range(n), int((1 - density) * n), replace=False)] = 0
    X = rng.standard_normal((m, n))
    Y = cp.Parameter(m, name="Y")
    Y.value = X @ beta_star + rng.normal(0, sigma, size=m)
    beta = cp.Variable(n)
    lambd = 1.0
    obj = cp.pnorm(X @ beta - Y, p=2) ** 2 + lambd * cp.pnorm(beta, p=2) ** 2
    return cp.Problem(cp.Minimize(obj)), cvxdp.ScalarPrivacy(Y, sensitivity=0.01 * 4 * sigma)


def _targets(rng: np.random.Generator, m: int, n: int, sparsity: float = 1.0):
    X = rng.standard_normal((m, n))
    w = rng.standard_normal(n) * (rng.random(n) < sparsity)
    Y = cp.Parameter(m, name="Y")
    Y.value = X @ w + rng.standard_normal(m)
    return X, Y


def lasso(seed: int = 0):
    X, Y = _targets(np.random.default_rng(seed), 200, 50, 0.2)
    beta = cp.Variable(50)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(X @ beta - Y) + 5.0 * cp.norm1(beta)))
    return prob, cvxdp.ScalarPrivacy(Y, sensitivity=0.04)


def huber(seed: int = 0, m: int = 300, n: int = 30):
    X, Y = _targets(np.random.default_rng(seed), m, n)
    beta = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.huber(X @ beta - Y, 1))))
    return prob, cvxdp.ScalarPrivacy(Y, sensitivity=0.05)


def lad(seed: int = 0):
    X, Y = _targets(np.random.default_rng(seed), 1000, 100)
    beta = cp.Variable(100)
    return cp.Problem(cp.Minimize(cp.norm1(X @ beta - Y))), cvxdp.ScalarPrivacy(Y, sensitivity=0.05)


def nnls(seed: int = 0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((400, 100))
    y = cp.Parameter(400, name="y")
    y.value = A @ np.abs(rng.standard_normal(100)) + rng.standard_normal(400)
    x = cp.Variable(100)
    return cp.Problem(cp.Minimize(cp.sum_squares(A @ x - y)), [x >= 0]), \
        cvxdp.ScalarPrivacy(y, sensitivity=0.1)


def hinge(seed: int = 0):
    """A hinge-loss fit whose margins are private (1000 x 50, ridge 0.1)."""
    rng = np.random.default_rng(seed)
    m, n = 1000, 50
    X = rng.standard_normal((m, n))
    labels = np.sign(X @ rng.standard_normal(n) + 0.5 * rng.standard_normal(m))
    margin = cp.Parameter(m, name="margin")
    margin.value = np.ones(m)
    beta = cp.Variable(n)
    loss = cp.sum(cp.pos(margin - cp.multiply(labels, X @ beta))) + 0.1 * cp.sum_squares(beta)
    return cp.Problem(cp.Minimize(loss)), cvxdp.ScalarPrivacy(margin, sensitivity=0.01)


def lp_alloc(seed: int = 0, m: int = 80, n: int = 200, density: float = 1.0):
    """Resource allocation ``max c'x, A x <= b, 0 <= x <= 1`` with private capacities b."""
    rng = np.random.default_rng(seed)
    A = rng.uniform(0, 1, (m, n)) * (rng.random((m, n)) < density)
    c = rng.uniform(0.5, 1.5, n)
    b = cp.Parameter(m, name="b")
    b.value = rng.uniform(5, 10, m)
    x = cp.Variable(n)
    prob = cp.Problem(cp.Maximize(c @ x), [A @ x <= b, x >= 0, x <= 1])
    return prob, cvxdp.ScalarPrivacy(b, sensitivity=0.1)


def lp_transport(seed: int = 0):
    """Transportation LP, 20 x 50 = 1,000 variables, private demands."""
    rng = np.random.default_rng(seed)
    S, D = 20, 50
    cost = rng.uniform(1, 10, (S, D))
    d = cp.Parameter(D, name="demand")
    d.value = rng.uniform(10, 30, D)
    X = cp.Variable((S, D), nonneg=True)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(cost, X))),
                      [cp.sum(X, axis=1) <= 100.0, cp.sum(X, axis=0) >= d])
    return prob, cvxdp.ScalarPrivacy(d, sensitivity=0.3)


def portfolio(seed: int = 0):
    """Markowitz (n = 100, factor covariance), private expected returns."""
    rng = np.random.default_rng(seed)
    n = 100
    mu = cp.Parameter(n, name="mu")
    mu.value = np.abs(rng.standard_normal(n)) * 0.1
    F = rng.standard_normal((n, 10)) * 0.1
    Sigma = F @ F.T + np.diag(rng.uniform(0, 0.01, n))
    w = cp.Variable(n)
    prob = cp.Problem(cp.Maximize(mu @ w - 2.0 * cp.quad_form(w, Sigma)), [cp.sum(w) == 1, w >= 0])
    return prob, cvxdp.ObjectivePrivacy(mu, sensitivity=0.002)


def socp_docs(seed: int = 0):
    """The docs' SOCP (m = 10 cones, n = 100), private right-hand side of F x == g."""
    rng = np.random.default_rng(seed)
    m, n, p, n_i = 10, 100, 20, 10
    f = rng.standard_normal(n)
    A = [rng.standard_normal((n_i, n)) for _ in range(m)]
    b = [rng.standard_normal(n_i) for _ in range(m)]
    c = [rng.standard_normal(n) for _ in range(m)]
    d = [np.linalg.norm(b[i]) + 1.0 for i in range(m)]
    F = rng.standard_normal((p, n))
    g = cp.Parameter(p, name="g")
    g.value = F @ (0.01 * rng.standard_normal(n))
    x = cp.Variable(n)
    cons = [cp.SOC(c[i] @ x + d[i], A[i] @ x + b[i]) for i in range(m)] + [F @ x == g]
    return cp.Problem(cp.Minimize(f @ x), cons), cvxdp.ScalarPrivacy(g, sensitivity=0.005)


def norm_ls(seed: int = 0):
    """``min ||A x - y||_2, ||x||_2 <= 1`` (150 x 60), private y."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((150, 60))
    y = cp.Parameter(150, name="y")
    y.value = A @ rng.standard_normal(60) * 0.1 + rng.standard_normal(150)
    x = cp.Variable(60)
    prob = cp.Problem(cp.Minimize(cp.norm(A @ x - y, 2)), [cp.norm(x, 2) <= 1.0])
    return prob, cvxdp.ScalarPrivacy(y, sensitivity=0.03)


def sdp_docs(seed: int = 0, n: int = 8, p: int = 5):
    """The docs' SDP (``trace(A_i X) == b_i``, ``X >> 0``, here with ``trace(X) <= 2 n``),
    private b."""
    rng = np.random.default_rng(seed)
    C = rng.standard_normal((n, n))
    C = C + C.T
    A = []
    for _ in range(p):
        Ai = rng.standard_normal((n, n))
        A.append(Ai + Ai.T)
    b = cp.Parameter(p, name="b")
    b.value = np.array([np.trace(A[i]) for i in range(p)])
    X = cp.Variable((n, n), symmetric=True)
    cons = [X >> 0, cp.trace(X) <= 2 * n] + [cp.trace(A[i] @ X) == b[i] for i in range(p)]
    return cp.Problem(cp.Minimize(cp.trace(C @ X)), cons), cvxdp.ScalarPrivacy(b, sensitivity=0.05)


def hp_filter(seed: int = 0, n: int = 1500):
    """A Hodrick-Prescott filter (held-out trial 22a): ``0.5 ||y - x||^2 + 50 ||D2 x||^2``
    with n = 1500 private samples."""
    rng = np.random.default_rng(seed)
    y = cp.Parameter(n, name="y")
    y.value = np.clip(np.cumsum(0.02 * rng.standard_normal(n)) + 0.5, 0, 1)
    x = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(y - x)
                                  + 50 * cp.sum_squares(cp.diff(x, 2))))
    return prob, cvxdp.ScalarPrivacy(y, sensitivity=0.01)


def lyapunov(seed: int = 0, n: int = 12):
    """A Lyapunov LMI (held-out trial 22a): ``min tr P``, ``P >> I``, ``A'P + P A << -I`` with
    a private stable ``A`` of order 12 (``ConstraintPrivacy``, data inside PSD rows)."""
    rng = np.random.default_rng(seed)
    Av = rng.standard_normal((n, n)) / np.sqrt(n)
    Av -= (np.max(np.linalg.eigvals(Av).real) + 0.3) * np.eye(n)
    A = cp.Parameter((n, n), name="A")
    A.value = Av
    P = cp.Variable((n, n), symmetric=True)
    prob = cp.Problem(cp.Minimize(cp.trace(P)), [P >> np.eye(n), A.T @ P + P @ A << -np.eye(n)])
    return prob, cvxdp.ConstraintPrivacy(A, sensitivity=0.01)


MODELS = {
    "censored": censored,
    "censored_full": censored_full,
    "tv_inpaint": tv_inpaint,
    "tv_color": tv_color,
    "tv_inpaint40": lambda seed=0: tv_inpaint(seed, 40),
    "ridge": ridge,
    "lasso": lasso,
    "huber": huber,
    "huber_big": lambda seed=0: huber(seed, 2000, 50),
    "lad": lad,
    "nnls": nnls,
    "hinge": hinge,
    "lp_alloc": lp_alloc,
    "lp_alloc2000": lambda seed=0: lp_alloc(seed, 300, 2000, 0.05),
    "lp_transport": lp_transport,
    "portfolio": portfolio,
    "socp_docs": socp_docs,
    "norm_ls": norm_ls,
    "sdp_docs": sdp_docs,
    "sdp_mid": lambda seed=0: sdp_docs(seed, 30, 20),
    "hp_filter": hp_filter,
    "lyapunov": lyapunov,
}

#: cProfile's cumulative time of these steps (``--profile``): a builtin by its name, a function
#: by its file and name (no line number, which moves with every edit above it)
STEPS = {
    "clarabel": "<method 'solve' of 'builtins.DefaultSolver' objects>",
    "compile": ("canon.py", "_compile"),
    "auto": ("auto.py", "_choose"),
    "public": ("public_part.py", "public_bounds"),
    "tightened": ("solve.py", "solve_robust_counterpart"),
    "loosened": ("loosened.py", "solve_loosened"),
}


def fingerprint(prob: cp.Problem, sol) -> dict:
    """What is released: status, value, certificate, and a digest of the point."""
    cert = sol.certificate
    h = hashlib.sha256()
    for var in prob.variables():
        v = sol.primal.get(var.name())
        if v is not None:
            h.update(np.ascontiguousarray(np.asarray(v, dtype=float)).tobytes())
    return {"status": sol.status, "value": repr(sol.value),
            "certificate": None if cert is None else repr(cert), "point": h.hexdigest()[:16]}


def run(name: str, eps: float, profile: bool = False) -> dict:
    prob, _ = MODELS[name](0)
    t0 = time.perf_counter()
    prob.solve()
    exact = time.perf_counter() - t0
    prob, spec = MODELS[name](0)
    pr = cProfile.Profile() if profile else None
    t0 = time.perf_counter()
    if pr:
        pr.enable()
    sol = prob.solve_private(epsilon=eps, delta=1e-6, private=spec, rng=0)
    if pr:
        pr.disable()
    out = {"exact": exact, "private": time.perf_counter() - t0, "fp": fingerprint(prob, sol)}
    if pr:
        st = pstats.Stats(pr, stream=io.StringIO())
        out["steps"] = {k: sum(v[3] for f, v in st.stats.items()
                               if (f[0].endswith("/" + pat[0]) and f[2] == pat[1]
                                   if isinstance(pat, tuple) else f[2] == pat))
                        for k, pat in STEPS.items()}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="*", default=list(MODELS))
    ap.add_argument("--eps", nargs="*", type=float, default=[1e6, 10.0, 1.0])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--save")
    ap.add_argument("--compare")
    a = ap.parse_args()
    warnings.filterwarnings("ignore")
    ref = json.load(open(a.compare)) if a.compare else {}
    saved = {}
    print(f"{'model':14s} {'eps':>6s} {'exact s':>8s} {'private s':>9s} {'ratio':>7s}  status")
    for name in a.models:
        for eps in a.eps:
            runs = [run(name, eps, a.profile) for _ in range(a.repeat)]
            r = runs[0]
            ex, pv = min(x["exact"] for x in runs), min(x["private"] for x in runs)
            key = f"{name}@{eps:g}"
            saved[key] = r["fp"]
            line = f"{name:14s} {eps:6g} {ex:8.3f} {pv:9.3f} {pv / ex:6.1f}x  {r['fp']['status']}"
            if key in ref:
                line += "  same release" if ref[key] == r["fp"] else "  RELEASE DIFFERS"
            print(line, flush=True)
            if a.profile:
                print("    " + " ".join(f"{k}={v:.3f}" for k, v in r["steps"].items()))
    if a.save:
        with open(a.save, "w") as f:
            json.dump(saved, f, indent=1)


if __name__ == "__main__":
    main()
