"""Pictures for ``cvxdp demo --plot DIR`` (needs the ``plot`` extra: matplotlib).

* ``ball.png`` -- 2-D points, the exact and the private minimum enclosing ball.
* ``ellipsoid.png`` -- a 2-D polytope {x : -1 <= A x <= 1}, its exact and private John ellipsoids.
* ``privacy_utility.png`` -- utility against epsilon for the enclosing ball, least squares and
  the private LP (median over seeds).
"""

from __future__ import annotations

import pathlib
import warnings

import numpy as np

import cvxdp
from cvxdp.demo_data import ball_data, regression_data

__all__ = ["write_demo_plots"]


def _plt():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as err:  # pragma: no cover - depends on the extra
        raise ImportError("cvxdp demo --plot needs matplotlib: pip install 'cvxdp[plot]'") from err
    return plt


def _circle(ax, center, radius, **kw):
    t = np.linspace(0, 2 * np.pi, 400)
    ax.plot(center[0] + radius * np.cos(t), center[1] + radius * np.sin(t), **kw)


def _ellipse(ax, Q, center, **kw):
    # boundary of {x : (x - c)' Q (x - c) <= 1}
    t = np.linspace(0, 2 * np.pi, 400)
    L = np.linalg.cholesky(np.linalg.inv(Q))
    pts = center[:, None] + L @ np.vstack([np.cos(t), np.sin(t)])
    ax.plot(pts[0], pts[1], **kw)


def plot_ball(path: pathlib.Path, seed: int) -> None:
    plt = _plt()
    P = ball_data(seed, n=20000)
    prob = cvxdp.min_enclosing_ball(P)
    prob.solve()
    exact = prob.ball
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, accuracy=0.2, bounds=(-10.0, 10.0),
                             rng=seed + 1)
    fig, ax = plt.subplots(figsize=(5.5, 5.5))
    ax.scatter(P[:, 0], P[:, 1], s=1, alpha=0.2, color="gray", label="private points")
    _circle(ax, exact.center, exact.radius, color="C0", lw=2, label="exact MEB")
    _circle(ax, sol.ball.center, sol.ball.radius, color="C3", lw=2, ls="--",
            label="DP-MEB (eps=1)")
    ax.set_aspect("equal")
    ax.legend(loc="upper right")
    ax.set_title("Minimum enclosing ball: exact vs private")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def plot_ellipsoid(path: pathlib.Path, seed: int) -> None:
    plt = _plt()
    rng = np.random.default_rng(seed)
    ang = rng.uniform(0, np.pi, 300)
    # an elongated polytope: rows long in one direction, short in the other
    A = np.c_[np.cos(ang), 0.35 * np.sin(ang)] * rng.uniform(0.8, 1.0, (300, 1))
    prob = cvxdp.john_ellipsoid(A)
    prob.solve()
    exact = prob.ellipsoid
    eps0 = 1e-6  # one row may move by 1e-6 in l2; smaller eps0 gives a closer fit (john.md)
    sol = prob.solve_private(epsilon=1.0, delta=1e-6, closeness=eps0, row_bound=1.0,
                             rng=seed + 1, inscribed=True)
    fig, ax = plt.subplots(figsize=(6, 6))
    g = np.linspace(-3.5, 3.5, 500)
    gx, gy = np.meshgrid(g, g)
    slack = np.abs(np.tensordot(A, np.stack([gx, gy]), axes=1)).max(axis=0)
    ax.contourf(gx, gy, slack <= 1, levels=[0.5, 1.5], colors=["0.9"])
    ax.contour(gx, gy, slack, levels=[1.0], colors="gray", linewidths=1)
    _ellipse(ax, exact.matrix, exact.center, color="C0", lw=2, label="exact John ellipsoid")
    _ellipse(ax, sol.ellipsoid.matrix, sol.ellipsoid.center, color="C3", lw=2, ls="--",
             label=f"DP John ellipsoid (eps=1, eps0={eps0:g}, inscribed)")
    ax.set_xlim(-3.5, 3.5)
    ax.set_ylim(-3.5, 3.5)
    ax.set_aspect("equal")
    ax.legend(loc="upper right")
    ax.set_title("John ellipsoid of P = {x : -1 <= Ax <= 1} (grey), n=300 private rows")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def plot_privacy_utility(path: pathlib.Path, seed: int) -> None:
    plt = _plt()
    import matplotlib.ticker
    eps_grid = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
    P = ball_data(seed, n=20000)
    ball = cvxdp.min_enclosing_ball(P)
    X, y = regression_data(seed)
    ls = cvxdp.least_squares(X, y, row_bound=1.0)
    rr, unc, le = [], [], []
    for eps in eps_grid:
        vals = [ball.solve_private(epsilon=eps, delta=1e-6, accuracy=0.2, bounds=(-10.0, 10.0),
                                   rng=s, reference=True).validation for s in range(2)]
        rr.append(np.median([v.radius_ratio for v in vals]))
        unc.append(np.median([v.uncovered / P.shape[0] for v in vals]))
        le.append(np.median([ls.solve_private(epsilon=eps, delta=1e-6, rng=s, reference=True)
                             .validation.relative_error for s in range(3)]))
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    axes[0].plot(eps_grid, rr, "o-")
    axes[0].axhline(1.0, color="gray", lw=0.8)
    axes[0].set(ylabel="released radius / exact radius", title="Enclosing ball, n=20000, d=2")
    axes[1].plot(eps_grid, unc, "o-", color="C1")
    axes[1].set(ylabel="fraction of points outside", title="Enclosing ball: uncovered points")
    axes[2].plot(eps_grid, le, "o-", color="C2")
    axes[2].set(yscale="log", ylabel="relative coefficient error (log)",
                title="Least squares, n=20000, d=3")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xticks(eps_grid, [f"{e:g}" for e in eps_grid])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_xlabel("epsilon (delta = 1e-6)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_demo_plots(directory: str, *, seed: int = 0) -> list[pathlib.Path]:
    """Write the demo's pictures into ``directory`` (created if needed); return their paths."""
    out = pathlib.Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, fn in (("ball.png", plot_ball), ("ellipsoid.png", plot_ellipsoid),
                         ("privacy_utility.png", plot_privacy_utility)):
            fn(out / name, seed)
            paths.append(out / name)
    return paths
