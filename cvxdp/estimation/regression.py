"""Differentially private ordinary least squares: ``cvxdp.least_squares(X, y, row_bound=l)``.

The problem is ``minimise ||X beta - y||^2``; a person is one row (x_i, y_i) and neighbours add or
remove one row (Lu et al. 2024, §3).  ``row_bound`` l is a **public** bound on ``||(x_i, y_i)||_2``;
rows above it are clipped (never estimated from the data).

Mechanisms (``solve_private(mechanism=...)``; details and measurements in docs/regression.md):
``"ssp"`` (default, ``"dp"``): noisy Gram matrix ``[X y]^T [X y] + W``, analytic Gaussian with
l2 sensitivity l^2; ``"rp"`` (``"dp"``): M_RP sketch (Fig. 3, Thm 3) then OLS on it;
``"ls"`` (``"conjectural"``): M_LS (Fig. 4, Thm 5, rests on an unproven monotonicity);
``"als"`` (``"asymptotic"``): M_ALS (Fig. 11, private only as r -> infinity).

Records outside the public domain are mapped into it inside the mechanism, never refused (a
refusal would reveal that such a record exists): a row (x_i, y_i) with a NaN / inf entry becomes
the zero row, a longer row is clipped to ``row_bound``
(:func:`cvxdp.estimation.random_projection.public_domain_rows`).  How many rows were mapped is
private; ``count_clipped=`` releases it as a noisy count charged to the same budget.  Only the
exact (non-private) solves refuse non-finite data.

Why ``ssp`` is the default: the sketch-based mechanisms add a sketching error whose covariance
``||e||^2 (X^T X)^{-1} / r`` does not shrink with n (it is the residual variance over r), so
their coefficient error plateaus; ``ssp``'s error decays like 1/n.  Measured in
``benchmarks/bench_regression.py`` and ``docs/regression.md``.

A user's own ``cp.Minimize(cp.sum_squares(X @ beta - y))`` model and its spec
(``LeastSquaresPrivacy``, importable from here) are recognised in
:mod:`cvxdp.estimation.least_squares_model`; :func:`least_squares_from_model` builds the problem
on the matched data.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import numpy as np

from cvxdp.arguments import entry_point
from cvxdp.dask_backend import is_dask
from cvxdp.dask_backend.regression import gram_and_count, mapped_count, stacked_rows
from cvxdp.errors import (
    BudgetError,
    UnsupportedProblemError,
)
from cvxdp.estimation.least_squares_model import LeastSquaresPrivacy, match_least_squares
from cvxdp.estimation.random_projection import (
    check_bound,
    check_sketch_size,
    count_share,
    public_domain_rows,
)
from cvxdp.estimation.regression_certificate import ssp_certificate
from cvxdp.estimation.regression_mechanisms import (
    MECHANISMS,
    fit_surrogate,
    ls_or_als_release,
    noisy_gram,
    noisy_gram_of,
    release_report,
    rp_release,
    split_budget,
    ssp_release,
)
from cvxdp.privacy.budgets import ZCDP, ApproxDP, resolve_budget
from cvxdp.privacy.clipping import noisy_count
from cvxdp.privacy.rng import as_generator
from cvxdp.solution import PrivateSolution, ValidationReport
from cvxdp.status import status_of
from cvxdp.structured import StructuredProblem

__all__ = [
    "LeastSquaresPrivacy",
    "LeastSquaresSolution",
    "LeastSquaresProblem",
    "least_squares",
    "least_squares_from_model",
    "MECHANISMS",
    "noisy_gram",
    "noisy_gram_of",
]

DEFAULT_SKETCH_SIZE = 1000


@dataclass(repr=False)
class LeastSquaresSolution(PrivateSolution):
    """A private least-squares answer: :class:`PrivateSolution` plus the released ``coef``."""

    coef: np.ndarray | None = None


def _check_shape(X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    """X, y as float arrays of shapes (n, d), (n,); reads the shapes only (public), not the
    values: the private path maps non-finite rows into the domain instead of refusing them."""
    x = np.asarray(X, dtype=float)
    t = np.asarray(y, dtype=float)
    if x.ndim != 2 or t.ndim != 1 or x.shape[0] != t.shape[0]:
        raise UnsupportedProblemError(
            f"least_squares needs X of shape (n, d) and y of shape (n,); got {x.shape} and "
            f"{t.shape}.")
    if x.shape[0] < 1 or x.shape[1] < 1:
        raise UnsupportedProblemError("least_squares needs at least one row and one column.")
    return x, t


def _check_finite(x: np.ndarray, t: np.ndarray, what: str) -> None:
    """For the exact (non-private) solves only: the exact OLS of non-finite data is undefined."""
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(t))):
        raise UnsupportedProblemError(
            f"X or y contains NaN or inf; {what} is not private and needs finite data (drop or "
            "impute those rows).  solve_private(reference=False) accepts them: it maps such a "
            "row to the zero row.")


_DASK_EXACT = ("the exact OLS (solve(), reference=True) needs the rows in memory; on a Dask "
               "array only solve_private(mechanism='ssp' or 'rp') runs (chunk-wise, nothing "
               "of the data is gathered).  Validate on a sample, or on .compute()d arrays if "
               "they fit.")


def _ols_method(self: LeastSquaresProblem, **_: Any) -> float:
    _check_finite(self.X, self.y, "the exact OLS (method='ols')")
    coef = np.linalg.lstsq(self.X, self.y, rcond=None)[0]
    self.beta.value = coef
    return float(np.sum((self.X @ coef - self.y) ** 2))


class LeastSquaresProblem(StructuredProblem):
    """``minimise ||X beta - y||^2`` with a private solver.

    ``.solve()`` is the exact CVXPY solve, ``.solve(method="ols")`` the exact normal-equations
    solve (numpy lstsq), ``.solve_private(...)`` a private estimate.

    Attributes
    ----------
    X, y : ndarray
    row_bound : float
        Public bound l on ``||(x_i, y_i)||_2``.
    beta : cvxpy.Variable
    """

    _methods = {"ols": _ols_method}

    def __init__(self, X: Any, y: Any, row_bound: float) -> None:
        self.row_bound = check_bound(row_bound)
        self._user_variable: cp.Variable | None = None
        self._user_constraints: list[Any] = []
        if is_dask(X) or is_dask(y):
            # Dask arrays (data larger than memory): only solve_private runs, chunk-wise; the
            # objective below only carries beta (the exact solves refuse, see solve()).

            self.X, self.y = X, y
            self._dask_rows = stacked_rows(X, y)
            if self._dask_rows.shape[0] < 1 or self._dask_rows.shape[1] < 2:
                raise UnsupportedProblemError(
                    "least_squares needs at least one row and one column.")
            self.beta = cp.Variable(self._dask_rows.shape[1] - 1, name="beta")
            super().__init__(cp.Minimize(cp.sum_squares(self.beta)))
            return
        self._dask_rows = None
        self.X, self.y = _check_shape(X, y)
        self.beta = cp.Variable(self.X.shape[1], name="beta")
        super().__init__(cp.Minimize(cp.sum_squares(self.X @ self.beta - self.y)))

    def solve(self, *args: Any, method: str | None = None, **kwargs: Any) -> Any:
        """Exact solve (CVXPY, or ``method="ols"``); refuses non-finite data (not private)."""
        if self._dask_rows is not None:
            raise UnsupportedProblemError(_DASK_EXACT)
        if method is None:
            _check_finite(self.X, self.y, "the exact solve")
        return super().solve(*args, method=method, **kwargs)

    @entry_point()
    def solve_private(self, *, epsilon: float | None = None, delta: float | None = None,
                      rho: float | None = None, rng: None | int | np.random.Generator = None,
                      reference: bool = False, mechanism: str = "ssp",
                      sketch_size: int = DEFAULT_SKETCH_SIZE, count_clipped: bool | float = False,
                      accuracy: float | None = None, **_: Any) -> LeastSquaresSolution:
        """Release a private estimate of the OLS coefficients.

        Parameters
        ----------
        epsilon, delta, rho : float
            Budget; ``ssp`` accepts (epsilon, delta > 0) or rho (zCDP); the others need
            (epsilon, delta > 0).
        rng : None, int or Generator
        reference : bool
            Also compute the exact OLS (NOT private) and attach ``validation`` with
            ``coef_error``, ``relative_error`` and the objective gap.  Needs finite data.
        mechanism : {"ssp", "rp", "ls", "als"}
            See the module docstring; "ls"/"als" are not proven DP and their report says so.
        sketch_size : int
            r for "rp", "ls" and "als" (public; default 1000).
        count_clipped : bool or float
            Opt-in: also release how many rows were mapped into the public domain (a NaN / inf
            entry: zero row; norm above ``row_bound``: clipped) as ``info["clipped_rows_noisy"]``
            = count + noise, never exactly.  ``True`` spends 10% of the budget on it, a number in
            (0, 1) that share; the rest goes to the mechanism, so the total is unchanged.  The
            noise is Gaussian with rho-zCDP (``info["sigma_count"]``), else Laplace
            (``info["laplace_scale_count"]``); its record is in ``privacy.records``.
        accuracy : float, optional
            Relative sub-optimality the status promises (default ``cvxdp.status.
            DEFAULT_ACCURACY``).

        Returns
        -------
        LeastSquaresSolution
            ``coef``, ``certificate`` ("ssp": bounds on the TRUE objective at ``coef`` and on
            the optimum, :mod:`cvxdp.estimation.regression_certificate`), ``status``
            (``"optimal_inaccurate"`` when the certified relative gap meets ``accuracy``, else
            ``"user_limit"`` with ``status_reason``), ``privacy`` (guarantee "dp",
            "conjectural" or "asymptotic"), ``value`` (the objective estimated from the
            released statistics for "ssp"/"rp", else None).

        References
        ----------
        Lu et al. (2024): Fig. 3 / Thm 3 (rp), Fig. 4 / Thm 5 (ls), Fig. 11 (als).
        """
        if mechanism not in MECHANISMS:
            raise UnsupportedProblemError(
                f"mechanism must be one of {sorted(MECHANISMS)}, got {mechanism!r}.")
        budget = resolve_budget(epsilon=epsilon, delta=delta, rho=rho)
        if not (isinstance(budget, ApproxDP)
                or (mechanism == "ssp" and isinstance(budget, ZCDP))):
            raise BudgetError(
                f"mechanism={mechanism!r} needs an (epsilon, delta) budget with delta > 0"
                + (" or rho=" if mechanism == "ssp" else "") + "; least squares by a Gaussian "
                "release is never pure DP.")
        r = check_sketch_size(sketch_size)
        share = count_share(count_clipped)
        on_dask = self._dask_rows is not None
        if on_dask and mechanism not in ("ssp", "rp"):
            raise UnsupportedProblemError(
                f"on a Dask array mechanism='ssp' and 'rp' run (their statistics, the Gram "
                f"matrix and the sketch D^T G, are sums over row blocks); {mechanism!r} needs "
                "the rows in memory.")
        if on_dask and reference:
            raise UnsupportedProblemError(_DASK_EXACT)
        if reference:  # the exact reference is not private and is undefined on non-finite data
            _check_finite(self.X, self.y, "reference=True (an exact OLS)")
        gen = as_generator(rng)
        start = time.perf_counter()
        # rows outside the public domain are mapped into it (record by record), never refused;
        # on Dask block by block on the workers, reduced to the Gram matrix (cvxdp.dask_backend)
        exact_gram = None
        if on_dask:
            data = self._dask_rows
            if mechanism == "ssp":
                exact_gram, n_mapped = gram_and_count(data, self.row_bound)
            else:   # the count is one more reduction, run only when it is released (noisily)
                n_mapped = mapped_count(data, self.row_bound) if share else -1
        else:
            data, n_mapped = public_domain_rows(np.column_stack([self.X, self.y]),
                                                self.row_bound)
        budget, count_budget = split_budget(budget, share)
        cons = self._user_constraints
        if cons and mechanism not in ("ssp", "rp"):
            raise UnsupportedProblemError(
                f"public constraints on beta are supported by mechanism='ssp' or 'rp' (which "
                f"release a quadratic surrogate), not {mechanism!r}.")
        cert = None
        if mechanism in ("ssp", "rp"):
            surrogate, record, info = (ssp_release(data, budget, self.row_bound, gen, exact_gram)
                                       if mechanism ==
                                       "ssp" else rp_release(data, budget, self.row_bound, gen, r))
            coef, value = fit_surrogate(surrogate, self._user_variable, cons)
            if mechanism == "ssp":  # post-processing of the released Gram matrix
                cert = ssp_certificate(info.pop("noisy_gram"), coef, info["sigma"],
                                       constrained=bool(cons))
        else:
            coef, record, info, value = ls_or_als_release(data, budget, self.row_bound, gen, r,
                                                   mechanism)
        records = [record]
        if count_budget:  # released only noisily, its record charged to the same budget
            noisy, c_rec = noisy_count(n_mapped, rng=gen, what="rows mapped into the public "
                                       "domain (non-finite -> 0, norm > row_bound -> clipped)",
                                       **count_budget)
            records.append(c_rec)
            key = "sigma_count" if "rho" in count_budget else "laplace_scale_count"
            info = {**info, "clipped_rows_noisy": noisy,
                    key: c_rec.params["sigma" if "rho" in count_budget else "scale"]}
        report = release_report(resolve_budget(epsilon=epsilon, delta=delta, rho=rho), records,
                         mechanism, self.row_bound, info)
        elapsed = time.perf_counter() - start
        if cert is not None:
            status, reason = status_of(cert, accuracy)
        else:
            status, reason = cp.USER_LIMIT, (
                f"mechanism={mechanism!r} releases no bound on the answer's sub-optimality "
                "computable from released quantities; mechanism='ssp' does")
        info = {"mechanism": mechanism, **info}
        if reason:
            info["status_reason"] = reason
        sol = LeastSquaresSolution(status=status, value=value, privacy=report,
                                   solve_time=elapsed, primal={"beta": coef}, info=info,
                                   coef=coef, certificate=cert, status_reason=reason)
        if reference:  # before the private values are written (it solves the user's model)
            sol.validation = self._validate(coef)
        self.beta.value = coef
        if self._user_variable is not None:
            self._user_variable.value = coef
        return sol

    def _validate(self, coef: np.ndarray) -> ValidationReport:
        t0 = time.perf_counter()
        solver = "numpy.linalg.lstsq (exact OLS)"
        if self._user_constraints:
            ref = cp.Problem(cp.Minimize(cp.sum_squares(self.X @ self._user_variable - self.y)),
                             self._user_constraints)
            ref.solve()
            exact, solver = np.asarray(self._user_variable.value, dtype=float), "cvxpy"
        else:
            exact = np.linalg.lstsq(self.X, self.y, rcond=None)[0]
        ref_time = time.perf_counter() - t0
        with np.errstate(over="ignore", invalid="ignore"):  # a huge row: inf, not a warning
            best = float(np.sum((self.X @ exact - self.y) ** 2))
            got = float(np.sum((self.X @ coef - self.y) ** 2))
        err = float(np.linalg.norm(coef - exact))
        clipped = public_domain_rows(np.column_stack([self.X, self.y]), self.row_bound)[1]
        return ValidationReport(
            reference_value=best, objective_gap=got - best, reference_time=ref_time,
            reference_solver=solver,
            metrics={"coef_error": err,
                     "relative_error": err / max(float(np.linalg.norm(exact)), 1e-300),
                     "reference_coef": exact,
                     "rows_clipped": clipped})


def least_squares(X: Any, y: Any, *, row_bound: float) -> LeastSquaresProblem:
    """Build ``minimise ||X beta - y||^2`` with a private solver (see :class:`LeastSquaresProblem`).

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like, shape (n,)
    row_bound : float
        Public bound l on the l2 norm of a row (x_i, y_i); rows above it are clipped before any
        private release.  Must not be computed from the data.

    Examples
    --------
    >>> import numpy as np, cvxdp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (20000, 3)) / 2; y = X @ [1.0, -0.5, 0.25]
    >>> sol = cvxdp.least_squares(X, y, row_bound=1.0).solve_private(
    ...     epsilon=1.0, delta=1e-6, rng=1, reference=True)
    >>> bool(sol.validation.relative_error < 0.1)
    True
    """
    return LeastSquaresProblem(X, y, row_bound)


def least_squares_from_model(problem: cp.Problem, private: Any) -> LeastSquaresProblem:
    """Recognise a user's ``cp.Minimize(cp.sum_squares(X @ beta - y))`` and return the structured
    problem on its data, linked so that ``solve_private`` also sets ``beta.value``.

    Parameters
    ----------
    problem : cvxpy.Problem
        Objective exactly ``sum_squares(X @ beta - y)`` (or ``y - X @ beta``) with X, y
        Parameters (values set) and beta a vector Variable; constraints, if any, may involve only
        beta and public data (they are applied to the released surrogate: post-processing;
        mechanisms "ssp" and "rp" only).
    private : LeastSquaresPrivacy or a sequence holding one
        Names X and y and the public row bound.

    Raises
    ------
    UnsupportedProblemError
        The model is not of that form (message says what is expected).
    PrivacySpecError
        The spec does not name the model's X and y, or their values are missing.
    """
    spec, X, beta, y = match_least_squares(problem, private)
    out = LeastSquaresProblem(X.value, y.value, spec.row_bound)
    out._user_variable = beta
    out._user_constraints = list(problem.constraints)
    return out
