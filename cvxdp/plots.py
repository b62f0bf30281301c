"""Pictures for ``cvxdp demo --plot DIR`` (needs the ``plot`` extra: matplotlib).

* ``ball.png`` -- the demo table's enclosing-ball problem (same data, budget and seed): the
  points, the exact and the private minimum enclosing ball, the radius ratio in the legend.
* ``ellipsoid.png`` -- a 2-D polytope {x : -1 <= A x <= 1}, its exact and private John
  ellipsoids, with the table's neighbouring distance ``eps0`` (:data:`cvxdp.demo_data.JOHN_EPS0`).
* ``privacy_utility.png`` -- utility against epsilon for the enclosing ball and least squares:
  mean and standard deviation (error bars) over :data:`UTILITY_SEEDS` seeds.

Each ``draw_*`` function returns the figure and the numbers it shows, so a test can check that
a picture and the table beside it agree. Legends sit below the axes, clear of the data.
"""

from __future__ import annotations

import pathlib
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import cvxdp
from cvxdp.demo_data import DELTA, JOHN_EPS0, ball_data, regression_data

__all__ = ["UTILITY_SEEDS", "draw_ball", "draw_ellipsoid", "draw_privacy_utility",
           "missing_plot_extra", "write_demo_plots"]

#: Seeds per epsilon in the privacy-utility picture (its error bars).
UTILITY_SEEDS = 5
_EXTRA = "cvxdp demo --plot needs matplotlib: pip install 'cvxdp[plot]'"


def missing_plot_extra() -> str | None:
    """``None`` when matplotlib can be imported; otherwise the message naming the extra."""
    try:
        import matplotlib  # noqa: F401  (optional extra cvxdp[plot])
    except ImportError:
        return _EXTRA
    return None


def _plt():
    try:
        # optional extra (cvxdp[plot])
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # optional extra (cvxdp[plot])
    except ImportError as err:  # pragma: no cover - depends on the extra
        raise ImportError(_EXTRA) from err
    return plt


def _legend_below(ax, ncol: int = 1) -> None:
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=ncol, frameon=False)


def _circle(ax, center, radius, **kw):
    t = np.linspace(0, 2 * np.pi, 400)
    ax.plot(center[0] + radius * np.cos(t), center[1] + radius * np.sin(t), **kw)


def _ellipse(ax, Q, center, **kw):
    # boundary of {x : (x - c)' Q (x - c) <= 1}
    t = np.linspace(0, 2 * np.pi, 400)
    L = np.linalg.cholesky(np.linalg.inv(Q))
    pts = center[:, None] + L @ np.vstack([np.cos(t), np.sin(t)])
    ax.plot(pts[0], pts[1], **kw)


def draw_ball(seed: int = 0) -> tuple[Any, dict[str, Any]]:
    """The demo table's enclosing ball (``cvxdp.demo.demo_ball``: same data, budget, seed)."""
    plt = _plt()
    P = ball_data(seed)
    eps = 1.0
    prob = cvxdp.min_enclosing_ball(P)
    sol = prob.solve_private(epsilon=eps, delta=DELTA, accuracy=0.2, bounds=(-10.0, 10.0),
                             rng=seed + 1, reference=True)
    prob.solve()
    exact = prob.ball
    shown = {"n": P.shape[0], "epsilon": eps, "radius_ratio": sol.validation.radius_ratio,
             "uncovered": sol.validation.uncovered}
    fig, ax = plt.subplots(figsize=(5.5, 6.2))
    ax.scatter(P[:, 0], P[:, 1], s=1, alpha=0.15, color="gray", label="private points")
    _circle(ax, exact.center, exact.radius, color="C0", lw=2, label="exact MEB")
    _circle(ax, sol.ball.center, sol.ball.radius, color="C3", lw=2, ls="--",
            label=f"DP-MEB (eps={eps:g}, delta={DELTA:g}): radius ratio "
                  f"{shown['radius_ratio']:.3f}, {shown['uncovered']} uncovered")
    ax.set_aspect("equal")
    _legend_below(ax)
    ax.set_title(f"Minimum enclosing ball, n={shown['n']}: exact vs private")
    return fig, shown


def draw_ellipsoid(seed: int = 0) -> tuple[Any, dict[str, Any]]:
    """A 2-D polytope's exact and private John ellipsoids, with the demo's ``eps0``."""
    plt = _plt()
    rng = np.random.default_rng(seed)
    ang = rng.uniform(0, np.pi, 300)
    # an elongated polytope: rows long in one direction, short in the other
    A = np.c_[np.cos(ang), 0.35 * np.sin(ang)] * rng.uniform(0.8, 1.0, (300, 1))
    prob = cvxdp.john_ellipsoid(A)
    eps = 1.0
    sol = prob.solve_private(epsilon=eps, delta=DELTA, closeness=JOHN_EPS0, row_bound=1.0,
                             rng=seed + 1, inscribed=True, reference=True)
    prob.solve()
    exact = prob.ellipsoid
    shown = {"eps0": JOHN_EPS0, "epsilon": eps, "volume_ratio": sol.validation.volume_ratio}
    fig, ax = plt.subplots(figsize=(6, 6.8))
    g = np.linspace(-3.5, 3.5, 500)
    gx, gy = np.meshgrid(g, g)
    slack = np.zeros_like(gx)
    for a in A:  # max_i |a_i' x| on the grid, one row at a time (no n x grid array)
        np.maximum(slack, np.abs(a[0] * gx + a[1] * gy), out=slack)
    ax.contourf(gx, gy, slack <= 1, levels=[0.5, 1.5], colors=["0.9"])
    ax.contour(gx, gy, slack, levels=[1.0], colors="gray", linewidths=1)
    _ellipse(ax, exact.matrix, exact.center, color="C0", lw=2, label="exact John ellipsoid")
    _ellipse(ax, sol.ellipsoid.matrix, sol.ellipsoid.center, color="C3", lw=2, ls="--",
             label=f"DP John ellipsoid (eps={eps:g}, eps0={JOHN_EPS0:g}, inscribed): "
                   f"(vol ratio)^(1/d) {shown['volume_ratio']:.3f}")
    ax.set_xlim(-3.5, 3.5)
    ax.set_ylim(-3.5, 3.5)
    ax.set_aspect("equal")
    _legend_below(ax)
    ax.set_title("John ellipsoid of P = {x : -1 <= Ax <= 1} (grey), n=300 private rows")
    return fig, shown


def draw_privacy_utility(seed: int = 0, progress: Callable[[str], None] | None = None
                         ) -> tuple[Any, dict[str, Any]]:
    """Utility against epsilon: mean +- one standard deviation over :data:`UTILITY_SEEDS`;
    ``progress(line)`` is told each epsilon as it starts."""
    plt = _plt()
    import matplotlib.ticker  # optional extra (cvxdp[plot])

    eps_grid = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
    P = ball_data(seed, n=20000)
    ball = cvxdp.min_enclosing_ball(P)
    X, y = regression_data(seed)
    ls = cvxdp.least_squares(X, y, row_bound=1.0)
    seeds = range(seed, seed + UTILITY_SEEDS)
    rr, unc, le = [], [], []
    for k, eps in enumerate(eps_grid, start=1):
        if progress is not None:
            progress(f"  epsilon {eps:g} ({k}/{len(eps_grid)}): {UTILITY_SEEDS} seeds x 2 solves")
        vals = [ball.solve_private(epsilon=eps, delta=DELTA, accuracy=0.2, bounds=(-10.0, 10.0),
                                   rng=s, reference=True).validation for s in seeds]
        rr.append([v.radius_ratio for v in vals])
        unc.append([v.uncovered / P.shape[0] for v in vals])
        le.append([ls.solve_private(epsilon=eps, delta=DELTA, rng=s, reference=True)
                   .validation.relative_error for s in seeds])
    shown = {"seeds": UTILITY_SEEDS, "epsilon": eps_grid,
             "radius_ratio": np.array(rr), "uncovered_share": np.array(unc),
             "relative_error": np.array(le)}
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    panels = [("radius_ratio", "released radius / exact radius", "Enclosing ball, n=20000, d=2"),
              ("uncovered_share", "fraction of points outside", "Enclosing ball: uncovered"),
              ("relative_error", "relative coefficient error (log)",
               "Least squares, n=20000, d=3")]
    for k, (ax, (key, ylabel, title)) in enumerate(zip(axes, panels, strict=True)):
        a = shown[key]
        ax.errorbar(eps_grid, a.mean(axis=1), yerr=a.std(axis=1), fmt="o-", capsize=3,
                    color=f"C{k}")
        ax.set(ylabel=ylabel, title=title)
        ax.set_xscale("log")
        ax.set_xticks(eps_grid, [f"{e:g}" for e in eps_grid])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_xlabel(f"epsilon (delta = {DELTA:g})")
    axes[0].axhline(1.0, color="gray", lw=0.8)
    axes[2].set_yscale("log")
    fig.suptitle(f"Mean and one standard deviation over {UTILITY_SEEDS} seeds")
    fig.tight_layout()
    return fig, shown


def write_demo_plots(directory: str, *, seed: int = 0,
                     progress: Callable[[str], None] | None = None) -> list[pathlib.Path]:
    """Write the demo's pictures into ``directory`` (created if needed); return their paths.
    ``progress(line)`` (e.g. a print to stderr) is told each picture as it starts and ends."""
    plt = _plt()
    out = pathlib.Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    say = progress or (lambda line: None)
    pictures = [("ball.png", draw_ball), ("ellipsoid.png", draw_ellipsoid),
                ("privacy_utility.png", lambda s: draw_privacy_utility(s, progress=say))]
    paths = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k, (name, draw) in enumerate(pictures, start=1):
            say(f"picture {k}/{len(pictures)}: {name} ...")
            t0 = time.perf_counter()
            fig, _ = draw(seed)
            fig.savefig(out / name, dpi=110, bbox_inches="tight")
            plt.close(fig)
            paths.append(out / name)
            say(f"picture {k}/{len(pictures)}: wrote {out / name} "
                f"({time.perf_counter() - t0:.1f} s)")
    return paths
