"""Dask is optional: without it the core imports and the numpy paths run (issue 24)."""

import subprocess
import sys
import textwrap


def test_core_runs_without_dask():
    code = textwrap.dedent("""
        import sys
        for m in ("dask", "dask.array", "distributed"):
            sys.modules[m] = None          # import dask -> ImportError
        import numpy as np, cvxdp
        import cvxdp.dask_backend, cvxdp.dask_backend.meb, cvxdp.dask_backend.regression
        X = np.random.default_rng(0).uniform(-1, 1, (2000, 2))
        b = cvxdp.min_enclosing_ball(X).solve_private(rho=1.0, bounds=(-1, 1), rng=0).ball
        c = cvxdp.least_squares(X, X[:, 0], row_bound=2.0).solve_private(rho=1.0, rng=0).coef
        assert 0.5 < b.radius < 2.0 and abs(c[0] - 1.0) < 0.1
        assert "dask" not in {k.split(".")[0] for k, v in sys.modules.items() if v is not None}
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
