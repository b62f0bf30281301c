"""A public gallery of CVXPY models with private data (issue 22 item 7).

Every model is written the way CVXPY's documentation and test suite write it (``cp.Variable``,
``cp.Parameter`` for the private data, ``cp.Problem(objective, constraints)``), and declares
which parameter is private with one of cvxdp's specs.  :func:`models` lists them; each entry
has a ``build(seed)`` that returns a *fresh* ``(problem, private_spec, description)`` whose
private parameters hold data drawn from ``seed``.

Rules every model follows
-------------------------
* **Neighbouring datasets** are stated in the entry (``neighbouring``): what one person changes.
  The declared ``sensitivity`` follows from that statement (e.g. an average over ``N`` people of
  values in ``[0, 1]`` moves by at most ``1/N``).
* **Public bounds** (boxes, budgets, ``sum(w) == 1``, ``diag(X) == 1``, capacities) are public
  constants of the model -- physical limits, policy, the problem's definition.  They are never
  computed from the private data (``bounds`` says where each comes from).  Where the private
  values are drawn below, they are drawn inside the public domain the bounds assume.
* The exact solve with ``problem.solve()`` is the reference of the benchmark
  (``benchmarks/bench_gallery.py``); gap and violations are measured on the user's model, in the
  user's terms.

Run ``python benchmarks/bench_gallery.py --quick`` for the table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import numpy as np

import cvxdp

__all__ = ["GalleryModel", "models", "by_name"]

Built = tuple[cp.Problem, Any, str]


@dataclass(frozen=True)
class GalleryModel:
    """One gallery entry.

    Attributes
    ----------
    name : str
    build : callable ``seed -> (problem, private, description)``
        A fresh problem each call; ``private`` is the spec (or list of specs) for
        ``solve_private``.
    kind : {"LP", "QP", "SOCP", "SDP"}
    privacy : str
        The spec class (``ConstraintPrivacy``, ``ScalarPrivacy``, ``ObjectivePrivacy``,
        ``ConstraintSetPrivacy``).
    neighbouring : str
        What neighbouring datasets are.
    bounds : str
        Where the public bounds come from.
    """

    name: str
    build: Callable[[int], Built]
    kind: str
    privacy: str
    neighbouring: str
    bounds: str


def _param(shape: Any, value: np.ndarray, name: str, **attrs: Any) -> cp.Parameter:
    p = cp.Parameter(shape, name=name, **attrs)
    p.value = value
    return p


# ----------------------------------------------------------------------------------------------
# LP
# ----------------------------------------------------------------------------------------------

def lp_resource(seed: int) -> Built:
    """Resource allocation: max c'x s.t. A x <= b, 0 <= x <= 1 (CVXPY's LP example)."""
    # Neighbours: A[i, j] is the average use of resource i per unit of product j, measured over
    # N = 1000 workers (each in [0, 1]); one worker changes an entry by <= 1e-3.
    # Public bounds: 0 <= x <= 1 is the plant's capacity per product (public).
    rng = np.random.default_rng(seed)
    m, n = 8, 6
    A = _param((m, n), rng.uniform(0, 1, (m, n)), "A")
    c = rng.uniform(0.5, 1.5, n)
    b = np.full(m, n / 4)
    x = cp.Variable(n, name="x")
    prob = cp.Problem(cp.Maximize(c @ x), [A @ x <= b, x >= 0, x <= 1])
    return prob, cvxdp.ConstraintPrivacy(A, sensitivity=1e-3), "resource allocation LP"


def diet(seed: int) -> Built:
    """The diet problem: min cost'x s.t. N x >= r (nutrients), 0 <= x <= x_max."""
    # Neighbours: r (required nutrient amounts) is the average requirement of N = 500 surveyed
    # people (each in [0, 1]); one person moves an entry by <= 2e-3.
    # Public bounds: x <= x_max = 3 servings of each food (a dietary guideline, public).
    rng = np.random.default_rng(seed)
    foods, nutrients = 8, 5
    Nmat = rng.uniform(0, 1, (nutrients, foods))
    cost = rng.uniform(1, 3, foods)
    r = _param(nutrients, rng.uniform(0.3, 0.9, nutrients), "r")
    x = cp.Variable(foods, name="servings")
    prob = cp.Problem(cp.Minimize(cost @ x), [Nmat @ x >= r, x >= 0, x <= 3])
    return prob, cvxdp.ScalarPrivacy(r, sensitivity=2e-3), "diet problem"


def transport(seed: int) -> Built:
    """Transportation: min sum(C * X) s.t. X 1 <= supply, X' 1 == demand, X >= 0."""
    # Neighbours: demand[j] is the (normalised) number of orders at shop j; one customer moves
    # one entry by <= 1e-2.
    # Public bounds: supply per warehouse (public capacity) bounds every X[i, j] and sum(X).
    rng = np.random.default_rng(seed)
    s, d = 3, 4
    C = rng.uniform(1, 4, (s, d))
    supply = np.full(s, 1.0)
    demand = _param(d, rng.uniform(0.3, 0.6, d), "demand")
    X = cp.Variable((s, d), name="X")
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(C, X))),
                      [cp.sum(X, axis=1) <= supply, cp.sum(X, axis=0) == demand, X >= 0])
    return prob, cvxdp.ScalarPrivacy(demand, sensitivity=1e-2), "transportation problem"


def max_flow(seed: int) -> Built:
    """Maximum flow from node 0 to node n-1: flow conservation (equalities), 0 <= f <= cap."""
    # Neighbours: cap[e] is the measured capacity of link e (normalised); one user's traffic
    # reservation changes one capacity by <= 1e-2.
    # Public bounds: f <= 1, the links' nominal (public) capacity.
    rng = np.random.default_rng(seed)
    nodes = 6
    edges = [(0, 1), (0, 2), (1, 2), (1, 3), (2, 4), (3, 4), (3, 5), (4, 5), (2, 3)]
    inc = np.zeros((nodes, len(edges)))
    for k, (i, j) in enumerate(edges):
        inc[i, k], inc[j, k] = -1.0, 1.0
    cap = _param(len(edges), rng.uniform(0.3, 0.9, len(edges)), "cap")
    f = cp.Variable(len(edges), name="f")
    t = cp.Variable(name="t")
    e = np.zeros(nodes)
    e[0], e[-1] = -1.0, 1.0
    prob = cp.Problem(cp.Maximize(t), [inc @ f == t * e, f >= 0, f <= cap, f <= 1])
    return prob, cvxdp.ScalarPrivacy(cap, sensitivity=1e-2), "max-flow LP (free variable t)"


def blending(seed: int) -> Built:
    """Blending: min cost'x s.t. sum(x) == 1, Q x >= q_min, x >= 0."""
    # Neighbours: Q[k, j] is the average quality k of ingredient j measured on N = 1000 samples
    # (each in [0, 1]); one sample moves an entry by <= 1e-3.
    # Public bounds: sum(x) == 1 and x >= 0 (the blend is a mixture).
    rng = np.random.default_rng(seed)
    ing, qual = 6, 3
    Q = _param((qual, ing), rng.uniform(0, 1, (qual, ing)), "Q")
    cost = rng.uniform(1, 2, ing)
    x = cp.Variable(ing, name="x")
    prob = cp.Problem(cp.Minimize(cost @ x), [cp.sum(x) == 1, Q @ x >= 0.4, x >= 0])
    return prob, cvxdp.ConstraintPrivacy(Q, sensitivity=1e-3), "blending LP"


def production(seed: int) -> Built:
    """Production planning with private prices: max p'x s.t. A x <= b, x >= 0."""
    # Neighbours: p[j] is the average price customers paid for product j (prices in [0, 1],
    # N = 200 customers); one customer moves an entry by <= 5e-3.
    # Public bounds: A x <= b with public A > 0 (machine hours), so x <= b / A entrywise.
    rng = np.random.default_rng(seed)
    m, n = 4, 5
    A = rng.uniform(0.2, 1, (m, n))
    b = np.full(m, 2.0)
    p = _param(n, rng.uniform(0.2, 1, n), "p")
    x = cp.Variable(n, name="x")
    prob = cp.Problem(cp.Maximize(p @ x), [A @ x <= b, x >= 0])
    return prob, cvxdp.ObjectivePrivacy(p, sensitivity=5e-3), "production planning LP"


def inventory(seed: int) -> Built:
    """Multi-period inventory: s[t+1] == s[t] + u[t] - d[t], 0 <= s <= S, 0 <= u <= U."""
    # Neighbours: d[t] is the demand in period t (normalised order counts); one customer moves
    # one entry by <= 1e-2.
    # Public bounds: warehouse size S = 2 and order limit U = 1 (public).
    rng = np.random.default_rng(seed)
    T = 6
    d = _param(T, rng.uniform(0.2, 0.8, T), "d")
    u = cp.Variable(T, name="u")
    s = cp.Variable(T + 1, name="s")
    cost = rng.uniform(1, 2, T)
    cons = [s[0] == 0.5, s[1:] == s[:-1] + u - d, s >= 0, s <= 2, u >= 0, u <= 1]
    prob = cp.Problem(cp.Minimize(cost @ u + 0.1 * cp.sum(s)), cons)
    return prob, cvxdp.ScalarPrivacy(d, sensitivity=1e-2), "inventory LP (equalities)"


def chebyshev_fit(seed: int) -> Built:
    """l-inf (Chebyshev) regression: min ||A x - b||_inf, ||x||_inf <= 1 (free x)."""
    # Neighbours: A[i, j] is a feature averaged over N = 1000 records in [0, 1]; one record
    # moves an entry by <= 1e-3.
    # Public bounds: ||x||_inf <= 1 (the model's coefficient range, public).
    rng = np.random.default_rng(seed)
    m, n = 12, 4
    A = _param((m, n), rng.uniform(0, 1, (m, n)), "A")
    b = rng.uniform(0, 1, m)
    x = cp.Variable(n, name="x")
    prob = cp.Problem(cp.Minimize(cp.norm_inf(A @ x - b)), [cp.norm_inf(x) <= 1])
    return prob, cvxdp.ConstraintPrivacy(A, sensitivity=1e-3), "l-inf regression LP"


def lad(seed: int) -> Built:
    """Least absolute deviations: min ||A x - b||_1 with private b, ||x||_inf <= 5."""
    # Neighbours: b[i] is a normalised response of one group; one person moves it by <= 1e-2.
    # Public bounds: ||x||_inf <= 5 (public coefficient range).
    rng = np.random.default_rng(seed)
    m, n = 15, 3
    A = rng.standard_normal((m, n))
    b = _param(m, A @ rng.uniform(-1, 1, n) + 0.1 * rng.standard_normal(m), "b")
    x = cp.Variable(n, name="x")
    prob = cp.Problem(cp.Minimize(cp.norm1(A @ x - b)), [cp.norm_inf(x) <= 5])
    return prob, cvxdp.ScalarPrivacy(b, sensitivity=1e-2), "LAD regression LP"


def covering_lp(seed: int) -> Built:
    """Covering LP: min c'x s.t. A x >= 1, x >= 0, one row per person."""
    # Neighbours: add or remove one person's row A_i (entries in [0, 1]).
    # Public bounds: the domain [0, 1] of the rows and the public costs c.
    rng = np.random.default_rng(seed)
    m, n = 200, 6
    A = _param((m, n), rng.uniform(0, 1, (m, n)) * (rng.uniform(size=(m, n)) < 0.6), "A")
    c = rng.uniform(1, 2, n)
    x = cp.Variable(n, name="x", nonneg=True)
    con = A @ x >= 1
    prob = cp.Problem(cp.Minimize(c @ x), [con])
    return prob, cvxdp.ConstraintSetPrivacy(con), "covering LP"


def set_cover_cheap(seed: int) -> Built:
    """Fractional set cover with costs below 1: min c'x s.t. A x >= 1, x >= 0."""
    # Neighbours: add or remove one element's row (which sets contain it; entries 0/1).
    # Public bounds: the rows' 0/1 domain and the public costs c in [0.2, 0.9].
    rng = np.random.default_rng(seed)
    m, n = 150, 8
    rows = (rng.uniform(size=(m, n)) < 0.4).astype(float)
    rows[np.arange(m), rng.integers(0, n, m)] = 1.0  # every element lies in some set
    A = _param((m, n), rows, "A")
    c = rng.uniform(0.2, 0.9, n)
    x = cp.Variable(n, name="x")
    con = A @ x >= 1
    prob = cp.Problem(cp.Minimize(c @ x), [con, x >= 0])
    return prob, cvxdp.ConstraintSetPrivacy(con), "set cover LP (costs < 1, x >= 0 written)"


# ----------------------------------------------------------------------------------------------
# QP
# ----------------------------------------------------------------------------------------------

def qp_docs(seed: int) -> Built:
    """CVXPY's QP example: min 1/2 x'Px + q'x s.t. G x <= h, A x == b, with private q."""
    # Neighbours: q is an average over N = 100 users of vectors in [-1, 1]^n; one user moves
    # an entry by <= 2e-2.
    # Public bounds: ||x||_inf <= 1 (public box) on top of the public G x <= h, A x == b.
    rng = np.random.default_rng(seed)
    n, m, p = 6, 4, 2
    P = rng.standard_normal((n, n))
    P = P.T @ P
    q = _param(n, rng.uniform(-1, 1, n), "q")
    G = rng.standard_normal((m, n))
    x0 = rng.uniform(-0.5, 0.5, n)
    h = G @ x0 + 0.5
    A = rng.standard_normal((p, n))
    b = A @ x0
    x = cp.Variable(n, name="x")
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, P) + q.T @ x),
                      [G @ x <= h, A @ x == b, cp.norm_inf(x) <= 1])
    return prob, cvxdp.ObjectivePrivacy(q, sensitivity=2e-2), "QP (CVXPY docs), private q"


def nnls(seed: int) -> Built:
    """Non-negative least squares: min ||A x - b||^2, x >= 0, private b."""
    # Neighbours: b[i] is one group's normalised measurement; one person moves it by <= 1e-2.
    # Public bounds: x <= 2 (public range of the non-negative coefficients).
    rng = np.random.default_rng(seed)
    m, n = 20, 5
    A = rng.uniform(0, 1, (m, n))
    b = _param(m, A @ rng.uniform(0, 1, n) + 0.05 * rng.standard_normal(m), "b")
    x = cp.Variable(n, name="x")
    prob = cp.Problem(cp.Minimize(cp.sum_squares(A @ x - b)), [x >= 0, x <= 2])
    return prob, cvxdp.ScalarPrivacy(b, sensitivity=1e-2), "NNLS"


def markowitz(seed: int) -> Built:
    """Markowitz portfolio: max mu'w - gamma w'Sigma w, sum(w) == 1, w >= 0, private mu."""
    # Neighbours: mu is the mean of N = 250 daily returns (each in [-1, 1]); one day moves an
    # entry by <= 8e-3.  Sigma is a public (published) covariance.
    # Public bounds: the simplex sum(w) == 1, w >= 0.
    rng = np.random.default_rng(seed)
    n = 8
    F = rng.standard_normal((n, 3)) * 0.3
    Sigma = F @ F.T + 0.05 * np.eye(n)
    mu = _param(n, rng.uniform(-0.1, 0.3, n), "mu")
    w = cp.Variable(n, name="w")
    prob = cp.Problem(cp.Maximize(mu @ w - 0.5 * cp.quad_form(w, Sigma)),
                      [cp.sum(w) == 1, w >= 0])
    return prob, cvxdp.ObjectivePrivacy(mu, sensitivity=8e-3), "Markowitz, private mean"


def min_variance_factor(seed: int) -> Built:
    """Minimum variance with a private factor: min ||F w||^2, sum(w) == 1, w >= 0."""
    # Neighbours: F = R / sqrt(N) for N = 250 returns R in [-1, 1]; one day moves an entry by
    # <= 1/sqrt(250) ~ 0.063 (every entry of its own row; declared as an entrywise bound).
    # Public bounds: the simplex sum(w) == 1, w >= 0.
    rng = np.random.default_rng(seed)
    N, n = 30, 6
    F = _param((N, n), rng.uniform(-1, 1, (N, n)) / np.sqrt(N), "F")
    w = cp.Variable(n, name="w")
    prob = cp.Problem(cp.Minimize(cp.sum_squares(F @ w)), [cp.sum(w) == 1, w >= 0])
    return prob, cvxdp.ConstraintPrivacy(F, sensitivity=1e-2), "min-variance, private factor"


def min_variance_psd(seed: int) -> Built:
    """Minimum variance with a private covariance: min w'Sigma w, Sigma = Parameter(PSD=True)."""
    # Neighbours: Sigma is an average of N = 500 outer products r r' (|r_i| <= 1); one
    # observation moves an entry by <= 2/500.
    # Public bounds: the simplex sum(w) == 1, w >= 0.
    rng = np.random.default_rng(seed)
    n = 5
    R = rng.uniform(-1, 1, (500, n))
    Sigma = _param((n, n), R.T @ R / 500, "Sigma", PSD=True)
    w = cp.Variable(n, name="w")
    prob = cp.Problem(cp.Minimize(cp.quad_form(w, Sigma)), [cp.sum(w) == 1, w >= 0])
    return prob, cvxdp.ConstraintPrivacy(Sigma, sensitivity=4e-3), "min-variance, PSD parameter"


def constrained_ls(seed: int) -> Built:
    """Constrained least squares: min ||A x - b||^2 s.t. sum(x) == 1, ||x||_inf <= 1."""
    # Neighbours: A[i, j] averaged over N = 1000 records in [0, 1]; one record moves an entry
    # by <= 1e-3.
    # Public bounds: ||x||_inf <= 1 and sum(x) == 1 (the model's definition).
    rng = np.random.default_rng(seed)
    m, n = 15, 4
    A = _param((m, n), rng.uniform(0, 1, (m, n)), "A")
    b = rng.uniform(0, 1, m)
    x = cp.Variable(n, name="x")
    prob = cp.Problem(cp.Minimize(cp.sum_squares(A @ x - b)),
                      [cp.sum(x) == 1, cp.norm_inf(x) <= 1])
    return prob, cvxdp.ConstraintPrivacy(A, sensitivity=1e-3), "equality-constrained LS"


# ----------------------------------------------------------------------------------------------
# SOCP
# ----------------------------------------------------------------------------------------------

def chebyshev_centre(seed: int) -> Built:
    """Chebyshev centre of a polyhedron (CVXPY example): max r s.t. a_i'x + r||a_i|| <= b_i."""
    # Neighbours: b[i] is the (normalised) position of wall i reported by users; one user moves
    # one entry by <= 1e-2.
    # Public bounds: ||x||_inf <= 2 and r <= 2 (the public map's extent).
    rng = np.random.default_rng(seed)
    m, n = 8, 2
    a = rng.standard_normal((m, n))
    b = _param(m, rng.uniform(0.5, 1.5, m), "b")
    xc = cp.Variable(n, name="xc")
    r = cp.Variable(name="r")
    cons = [a[i] @ xc + r * np.linalg.norm(a[i]) <= b[i] for i in range(m)]
    cons += [cp.norm_inf(xc) <= 2, r <= 2]
    prob = cp.Problem(cp.Maximize(r), cons)
    return prob, cvxdp.ScalarPrivacy(b, sensitivity=1e-2), "Chebyshev centre"


def robust_lp(seed: int) -> Built:
    """Robust LP with ellipsoidal uncertainty: max c'x s.t. a_i'x + ||P x|| <= b_i, x in box."""
    # Neighbours: the nominal rows a_i average N = 1000 records in [0, 1]; one record moves an
    # entry by <= 1e-3.
    # Public bounds: 0 <= x <= 1 (public capacity).
    rng = np.random.default_rng(seed)
    m, n = 6, 4
    Abar = _param((m, n), rng.uniform(0, 1, (m, n)), "Abar")
    P = 0.1 * np.eye(n)
    b = np.full(m, 1.5)
    c = rng.uniform(0.5, 1.5, n)
    x = cp.Variable(n, name="x")
    cons = [Abar[i] @ x + cp.norm(P @ x) <= b[i] for i in range(m)] + [x >= 0, x <= 1]
    prob = cp.Problem(cp.Maximize(c @ x), cons)
    return prob, cvxdp.ConstraintPrivacy(Abar, sensitivity=1e-3), "robust LP (SOCP)"


def socp_docs(seed: int) -> Built:
    """CVXPY's SOCP example: min f'x s.t. ||A_i x + b_i|| <= c_i'x + d_i, F x == g."""
    # Neighbours: f is an average over N = 100 users of vectors in [-1, 1]^n; one user moves an
    # entry by <= 2e-2.
    # Public bounds: ||x||_2 <= 10 (public radius) on top of the public cone constraints.
    rng = np.random.default_rng(seed)
    m, n, p, n_i = 3, 6, 2, 3
    x0 = rng.standard_normal(n) * 0.3
    A, b, c, d = [], [], [], []
    for _ in range(m):
        A.append(rng.standard_normal((n_i, n)))
        b.append(rng.standard_normal(n_i))
        c.append(rng.standard_normal(n))
        d.append(np.linalg.norm(A[-1] @ x0 + b[-1], 2) - c[-1] @ x0 + 0.5)
    F = rng.standard_normal((p, n))
    g = F @ x0
    f = _param(n, rng.uniform(-1, 1, n), "f")
    x = cp.Variable(n, name="x")
    cons = [cp.SOC(c[i] @ x + d[i], A[i] @ x + b[i]) for i in range(m)]
    cons += [F @ x == g, cp.norm(x, 2) <= 10]
    prob = cp.Problem(cp.Minimize(f @ x), cons)
    return prob, cvxdp.ObjectivePrivacy(f, sensitivity=2e-2), "SOCP (CVXPY docs), private f"


def l2_regression(seed: int) -> Built:
    """Euclidean-norm regression: min ||A x - b||_2 with private b, ||x||_2 <= 3."""
    # Neighbours: b[i] is one group's normalised response; one person moves it by <= 1e-2.
    # Public bounds: ||x||_2 <= 3 (public coefficient radius).
    rng = np.random.default_rng(seed)
    m, n = 20, 4
    A = rng.standard_normal((m, n))
    b = _param(m, A @ rng.uniform(-0.5, 0.5, n) + 0.1 * rng.standard_normal(m), "b")
    x = cp.Variable(n, name="x")
    prob = cp.Problem(cp.Minimize(cp.norm(A @ x - b, 2)), [cp.norm(x, 2) <= 3])
    return prob, cvxdp.ScalarPrivacy(b, sensitivity=1e-2), "l2 regression SOCP"


def risk_budget(seed: int) -> Built:
    """Return maximisation under a risk budget: max mu'w s.t. ||F w|| <= s, sum(w) == 1, w >= 0."""
    # Neighbours: F = R / sqrt(N), N = 30 returns in [-1, 1]; one period moves an entry by
    # <= 1e-2 (declared entrywise).
    # Public bounds: the simplex; the risk limit s = 0.3 is policy.
    rng = np.random.default_rng(seed)
    N, n = 30, 6
    F = _param((N, n), rng.uniform(-1, 1, (N, n)) / np.sqrt(N), "F")
    mu = rng.uniform(0, 0.2, n)
    w = cp.Variable(n, name="w")
    prob = cp.Problem(cp.Maximize(mu @ w), [cp.norm(F @ w, 2) <= 0.3, cp.sum(w) == 1, w >= 0])
    return prob, cvxdp.ConstraintPrivacy(F, sensitivity=1e-2), "risk-budget portfolio SOCP"


def facility(seed: int) -> Built:
    """Facility location (Fermat-Weber): min sum_i ||x - p_i||, private customer locations."""
    # Neighbours: p_i is the (rounded) location of customer i; one customer moves by <= 0.05 in
    # each coordinate.
    # Public bounds: the facility must be inside the public region ||x||_inf <= 1.
    rng = np.random.default_rng(seed)
    k = 8
    pts = _param((k, 2), rng.uniform(-1, 1, (k, 2)), "p")
    x = cp.Variable(2, name="x")
    prob = cp.Problem(cp.Minimize(cp.sum([cp.norm(x - pts[i], 2) for i in range(k)])),
                      [cp.norm_inf(x) <= 1])
    return prob, cvxdp.ScalarPrivacy(pts, sensitivity=5e-2), "facility location SOCP"


# ----------------------------------------------------------------------------------------------
# SDP
# ----------------------------------------------------------------------------------------------

def max_cut(seed: int) -> Built:
    """Goemans-Williamson max-cut relaxation: max trace(L X)/4, diag(X) == 1, X PSD."""
    # Neighbours: the edge weights W (in [0, 1]) count interactions between people; one person
    # changes each weight by <= 1e-2, so each entry of L by <= 1e-2 * (n - 1) on the diagonal.
    # Public bounds: diag(X) == 1 (the relaxation's definition) gives trace(X) = n.
    rng = np.random.default_rng(seed)
    n = 6
    Wm = np.triu(rng.uniform(0, 1, (n, n)), 1)
    Wm = Wm + Wm.T
    L = _param((n, n), np.diag(Wm.sum(1)) - Wm, "L")
    X = cp.Variable((n, n), PSD=True, name="X")
    prob = cp.Problem(cp.Maximize(cp.trace(L @ X) / 4), [cp.diag(X) == 1])
    return prob, cvxdp.ObjectivePrivacy(L, sensitivity=5e-2), "max-cut SDP relaxation"


def nearest_correlation(seed: int) -> Built:
    """Nearest correlation matrix: min ||X - C||_F s.t. diag(X) == 1, X PSD, private C."""
    # Neighbours: C is an empirical correlation of N = 200 records (entries in [-1, 1]); one
    # record moves an entry by <= 2e-2.
    # Public bounds: diag(X) == 1 (a correlation matrix), so |X_ij| <= 1.
    rng = np.random.default_rng(seed)
    n = 5
    M = rng.uniform(-1, 1, (n, n))
    M = (M + M.T) / 2
    np.fill_diagonal(M, 1.0)
    C = _param((n, n), M, "C")
    X = cp.Variable((n, n), symmetric=True, name="X")
    prob = cp.Problem(cp.Minimize(cp.norm(X - C, "fro")), [cp.diag(X) == 1, X >> 0])
    return prob, cvxdp.ScalarPrivacy(C, sensitivity=2e-2), "nearest correlation SDP"


def sdp_docs(seed: int) -> Built:
    """CVXPY's SDP example: min trace(C X) s.t. trace(A_i X) == b_i, X PSD, private b."""
    # Neighbours: b[i] is a normalised aggregate; one person moves an entry by <= 1e-2.
    # Public bounds: trace(X) <= 2 n (public budget added to the docs' model).
    rng = np.random.default_rng(seed)
    n, p = 4, 3
    C = rng.standard_normal((n, n))
    C = C @ C.T
    A = [np.diag(rng.uniform(0, 1, n)) for _ in range(p)]
    X0 = np.eye(n) * 0.8
    b = _param(p, np.array([np.trace(Ai @ X0) for Ai in A]), "b")
    X = cp.Variable((n, n), symmetric=True, name="X")
    cons = [X >> 0] + [cp.trace(A[i] @ X) == b[i] for i in range(p)] + [cp.trace(X) <= 2 * n]
    prob = cp.Problem(cp.Minimize(cp.trace(C @ X)), cons)
    return prob, cvxdp.ScalarPrivacy(b, sensitivity=1e-2), "SDP (CVXPY docs), private b"


def sdp_constraint_private(seed: int) -> Built:
    """SDP with private matrices: max trace(C X) s.t. trace(A_i X) <= 0.8, trace(X) == 1."""
    # Neighbours: each A_i averages N = 1000 records' symmetric matrices (entries in [0, 1]);
    # one record moves an entry by <= 1e-3.
    # Public bounds: trace(X) == 1, X PSD (a density matrix).
    rng = np.random.default_rng(seed)
    r, m = 4, 6
    C = rng.standard_normal((r, r))
    C = (C + C.T) / 2
    As = []
    for i in range(m):
        M = rng.uniform(0, 1, (r, r))
        As.append(_param((r, r), (M + M.T) / 2, f"A{i}"))
    X = cp.Variable((r, r), PSD=True, name="X")
    cons = [cp.trace(As[i] @ X) <= 0.8 for i in range(m)] + [cp.trace(X) == 1]
    prob = cp.Problem(cp.Maximize(cp.trace(C @ X)), cons)
    return prob, cvxdp.ConstraintPrivacy(As, sensitivity=1e-3), "SDP, private A_i"


def lambda_max(seed: int) -> Built:
    """Eigenvalue minimisation: min lambda_max(A0 + sum_i x_i A_i), ||x||_inf <= 1, private A0."""
    # Neighbours: A0 is an average of N = 100 records' symmetric matrices (entries in [-1, 1]);
    # one record moves an entry by <= 2e-2.
    # Public bounds: ||x||_inf <= 1 (public range).
    rng = np.random.default_rng(seed)
    r, k = 4, 3
    M = rng.uniform(-1, 1, (r, r))
    A0 = _param((r, r), (M + M.T) / 2, "A0")
    As = []
    for _ in range(k):
        B = rng.standard_normal((r, r))
        As.append((B + B.T) / 2)
    x = cp.Variable(k, name="x")
    expr = A0 + sum(x[i] * As[i] for i in range(k))
    prob = cp.Problem(cp.Minimize(cp.lambda_max((expr + expr.T) / 2)), [cp.norm_inf(x) <= 1])
    return prob, cvxdp.ScalarPrivacy(A0, sensitivity=2e-2), "lambda_max minimisation SDP"


def sdp_symmetric_objective(seed: int) -> Built:
    """max trace(C X) s.t. trace(X) == 1, X PSD with C = Parameter(symmetric=True) private."""
    # Neighbours: C is an average of N = 100 records' symmetric matrices (entries in [-1, 1]);
    # one record moves an entry by <= 2e-2.
    # Public bounds: trace(X) == 1 (density matrix).
    rng = np.random.default_rng(seed)
    r = 4
    M = rng.uniform(-1, 1, (r, r))
    C = _param((r, r), (M + M.T) / 2, "C", symmetric=True)
    X = cp.Variable((r, r), PSD=True, name="X")
    prob = cp.Problem(cp.Maximize(cp.trace(C @ X)), [cp.trace(X) == 1])
    return prob, cvxdp.ObjectivePrivacy(C, sensitivity=2e-2), "SDP, symmetric parameter"


def covering_sdp(seed: int) -> Built:
    """Covering SDP: min trace(X) s.t. trace(A_i X) >= 1 (one A_i per person), X >> 0."""
    # Neighbours: add or remove one person's matrix A_i (PSD, spectral norm <= 1).
    # Public bounds: the domain 0 <= A_i <= I of the rows.
    rng = np.random.default_rng(seed)
    r, m = 3, 60
    mats = []
    for _ in range(m):
        v = rng.standard_normal((r, 2))
        M = v @ v.T
        mats.append(M / np.linalg.eigvalsh(M)[-1])
    P = _param((m, r * r), np.stack([M.ravel() for M in mats]), "A")
    X = cp.Variable((r, r), symmetric=True, name="X")
    con = P @ cp.vec(X, order="C") >= 1
    prob = cp.Problem(cp.Minimize(cp.trace(X)), [con, X >> 0])
    return prob, cvxdp.ConstraintSetPrivacy(con), "covering SDP (X >> 0 written)"


_MODELS = [
    GalleryModel("lp_resource", lp_resource, "LP", "ConstraintPrivacy",
                 "one worker moves an entry of A by <= 1e-3", "capacity box 0 <= x <= 1"),
    GalleryModel("diet", diet, "LP", "ScalarPrivacy",
                 "one person moves a requirement r_k by <= 2e-3", "guideline x <= 3"),
    GalleryModel("transport", transport, "LP", "ScalarPrivacy",
                 "one customer moves a demand by <= 1e-2", "public supplies"),
    GalleryModel("max_flow", max_flow, "LP", "ScalarPrivacy",
                 "one reservation moves a capacity by <= 1e-2", "nominal capacity f <= 1"),
    GalleryModel("blending", blending, "LP", "ConstraintPrivacy",
                 "one sample moves a quality entry by <= 1e-3", "mixture sum(x) == 1, x >= 0"),
    GalleryModel("production", production, "LP", "ObjectivePrivacy",
                 "one customer moves a price by <= 5e-3", "public machine hours A x <= b"),
    GalleryModel("inventory", inventory, "LP", "ScalarPrivacy",
                 "one customer moves a period's demand by <= 1e-2", "warehouse / order limits"),
    GalleryModel("chebyshev_fit", chebyshev_fit, "LP", "ConstraintPrivacy",
                 "one record moves a feature by <= 1e-3", "coefficient range |x| <= 1"),
    GalleryModel("lad", lad, "LP", "ScalarPrivacy",
                 "one person moves a response by <= 1e-2", "coefficient range |x| <= 5"),
    GalleryModel("covering_lp", covering_lp, "LP", "ConstraintSetPrivacy",
                 "add/remove one person's row", "row domain [0, 1], public costs"),
    GalleryModel("set_cover_cheap", set_cover_cheap, "LP", "ConstraintSetPrivacy",
                 "add/remove one element's row", "0/1 rows, public costs < 1"),
    GalleryModel("qp_docs", qp_docs, "QP", "ObjectivePrivacy",
                 "one user moves an entry of q by <= 2e-2", "public box |x| <= 1"),
    GalleryModel("nnls", nnls, "QP", "ScalarPrivacy",
                 "one person moves a measurement by <= 1e-2", "public range x <= 2"),
    GalleryModel("markowitz", markowitz, "QP", "ObjectivePrivacy",
                 "one day moves a mean return by <= 8e-3", "simplex"),
    GalleryModel("min_variance_factor", min_variance_factor, "QP", "ConstraintPrivacy",
                 "one period moves an entry of F by <= 1e-2", "simplex"),
    GalleryModel("min_variance_psd", min_variance_psd, "QP", "ConstraintPrivacy",
                 "one observation moves an entry of Sigma by <= 4e-3", "simplex"),
    GalleryModel("constrained_ls", constrained_ls, "QP", "ConstraintPrivacy",
                 "one record moves a feature by <= 1e-3", "|x| <= 1, sum(x) == 1"),
    GalleryModel("chebyshev_centre", chebyshev_centre, "SOCP", "ScalarPrivacy",
                 "one user moves a wall offset by <= 1e-2", "map extent |x| <= 2, r <= 2"),
    GalleryModel("robust_lp", robust_lp, "SOCP", "ConstraintPrivacy",
                 "one record moves a nominal entry by <= 1e-3", "capacity box"),
    GalleryModel("socp_docs", socp_docs, "SOCP", "ObjectivePrivacy",
                 "one user moves an entry of f by <= 2e-2", "public radius ||x|| <= 10"),
    GalleryModel("l2_regression", l2_regression, "SOCP", "ScalarPrivacy",
                 "one person moves a response by <= 1e-2", "public radius ||x|| <= 3"),
    GalleryModel("risk_budget", risk_budget, "SOCP", "ConstraintPrivacy",
                 "one period moves an entry of F by <= 1e-2", "simplex, policy risk limit"),
    GalleryModel("facility", facility, "SOCP", "ScalarPrivacy",
                 "one customer moves by <= 0.05 per coordinate", "public region |x| <= 1"),
    GalleryModel("max_cut", max_cut, "SDP", "ObjectivePrivacy",
                 "one person moves an entry of L by <= 5e-2", "diag(X) == 1"),
    GalleryModel("nearest_correlation", nearest_correlation, "SDP", "ScalarPrivacy",
                 "one record moves a correlation by <= 2e-2", "diag(X) == 1"),
    GalleryModel("sdp_docs", sdp_docs, "SDP", "ScalarPrivacy",
                 "one person moves an entry of b by <= 1e-2", "public trace(X) <= 2n"),
    GalleryModel("sdp_constraint_private", sdp_constraint_private, "SDP", "ConstraintPrivacy",
                 "one record moves an entry of an A_i by <= 1e-3", "trace(X) == 1"),
    GalleryModel("lambda_max", lambda_max, "SDP", "ScalarPrivacy",
                 "one record moves an entry of A0 by <= 2e-2", "public range |x| <= 1"),
    GalleryModel("sdp_symmetric_objective", sdp_symmetric_objective, "SDP", "ObjectivePrivacy",
                 "one record moves an entry of C by <= 2e-2", "trace(X) == 1"),
    GalleryModel("covering_sdp", covering_sdp, "SDP", "ConstraintSetPrivacy",
                 "add/remove one person's matrix A_i", "row domain 0 <= A_i <= I"),
]

#: a fast, varied subset (one or more per kind and privacy class) for --quick and the tests
QUICK = ("lp_resource", "diet", "transport", "production", "covering_lp", "qp_docs", "nnls",
         "markowitz", "min_variance_factor", "chebyshev_centre", "max_cut",
         "nearest_correlation", "covering_sdp")


def models() -> list[GalleryModel]:
    """All gallery entries, in a fixed order."""
    return list(_MODELS)


def by_name(name: str) -> GalleryModel:
    """The gallery entry called ``name`` (KeyError if none)."""
    for m in _MODELS:
        if m.name == name:
            return m
    raise KeyError(name)
