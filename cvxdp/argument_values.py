"""The value checks of public keywords: each returns the checked value or raises a typed
:class:`~cvxdp.CvxdpError` that names the argument, the value given and the valid range.

:mod:`cvxdp.arguments` applies them to the common keywords of every entry point (its table lists
the ranges); the entry points and estimators apply :func:`check_number`, :func:`check_count`,
:func:`check_choice` and :func:`check_box` to their own keywords, so a string is never converted
to a number, a count is an integer and a box is a finite ``(lo, hi)`` everywhere alike.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from cvxdp.errors import NOT_NUMBERS, ArgumentError, BudgetError, PrivacyGuaranteeError
from cvxdp.privacy.accountant import PrivacyAccountant
from cvxdp.privacy.budgets import ZCDP, ApproxDP, PureDP

__all__ = ["EPSILON_MAX", "DELTA_MAX", "RHO_MAX", "check_number", "check_count", "check_choice",
           "check_box", "check_epsilon", "check_delta", "check_rho", "check_budget",
           "check_rng", "check_flag", "check_accuracy", "check_beta", "check_iterations",
           "check_accountant"]

#: largest epsilon an entry point accepts (e^epsilon overflows at 710; nothing is private then)
EPSILON_MAX = 1e6
#: largest delta an entry point accepts (see :mod:`cvxdp.arguments`)
DELTA_MAX = 1e-2
#: largest rho an entry point accepts
RHO_MAX = 1e6


def _real(name: str, value: Any, valid: str, error: type[Exception]) -> float:
    try:
        if isinstance(value, NOT_NUMBERS):
            raise TypeError
        v = float(value)    # numbers, numpy scalars and 0-d arrays
    except (TypeError, ValueError):
        raise error(f"{name}={value!r} is not a number; {name} must be {valid}.") from None
    if not math.isfinite(v):
        raise error(f"{name}={value!r} is out of range: {name} must be {valid}.")
    return v


def check_number(name: str, value: Any, valid: str, ok: Callable[[float], bool], *,
                 error: type[Exception] = ArgumentError) -> float:
    """A real keyword (not a string or bool) as a finite float with ``ok(v)``, else ``error``
    naming ``name``, the value and ``valid`` (the range, in words, and why)."""
    v = _real(name, value, valid, error)
    if not ok(v):
        raise error(f"{name}={value!r} is out of range: {name} must be {valid}.")
    return v


def check_count(name: str, value: Any, *, minimum: int = 1,
                error: type[Exception] = ArgumentError) -> int:
    """An integer keyword (a count: an int, not a float or bool) ``>= minimum``."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= minimum:
        return int(value)
    raise error(f"{name}={value!r} is out of range: {name} must be an integer >= {minimum} (a "
                "count: not a float, a string or a bool).")


def check_choice(name: str, value: Any, choices: Iterable[Any], *,
                 error: type[Exception] = ArgumentError, hint: str = "") -> Any:
    """A keyword with a fixed set of values: one of ``choices``, else ``error`` listing them
    (``hint`` says why, or what else there is)."""
    choices = tuple(choices)
    if isinstance(value, (str, bool, type(None))) and value in choices:
        return value
    names = [repr(c) for c in choices]
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    raise error(f"{name}={value!r} is not valid: {name} must be {listed}{hint}.")


def check_box(name: str, value: Any, d: int, *, error: type[Exception] = ArgumentError,
              hint: str = "") -> tuple[np.ndarray, np.ndarray]:
    """A public box ``(lo, hi)``: numbers (not strings) or length-``d`` arrays, finite,
    ``lo < hi`` in every coordinate; as two ``(d,)`` float arrays, else ``error`` naming
    ``name``.  ``hint`` adds the other forms the keyword takes."""
    msg = (f"{name}={value!r} is not a box: {name} must be a pair (lo, hi) of numbers or "
           f"arrays of length {d}, finite, with lo < hi in every coordinate{hint} (public, "
           "never computed from the data).")
    try:
        lo, hi = value
        ends = [np.asarray(v) for v in (lo, hi)]
        if any(e.dtype.kind not in "iuf" for e in ends):
            raise TypeError
        lo, hi = (np.broadcast_to(e.astype(float), (d,)).copy() for e in ends)
    except (TypeError, ValueError):
        raise error(msg) from None
    if not (np.isfinite(lo).all() and np.isfinite(hi).all() and (lo < hi).all()):
        raise error(msg)
    return lo, hi


def check_epsilon(value: Any, *, maximum: float = EPSILON_MAX) -> float:
    """``epsilon`` as a float in ``(0, maximum]``, else :class:`BudgetError` naming it."""
    valid = f"a finite number with 0 < epsilon <= {maximum:g}"
    e = _real("epsilon", value, valid, BudgetError)
    if not 0 < e <= maximum:
        extra = (" (larger values promise no privacy: use the exact solve instead)"
                 if e > maximum else "")
        raise BudgetError(f"epsilon={value!r} is out of range: epsilon must be {valid}{extra}.")
    return e


def check_delta(value: Any) -> float:
    """``delta`` as a float in ``[0, DELTA_MAX]``, else :class:`BudgetError` naming it."""
    valid = f"a number with 0 <= delta <= {DELTA_MAX:g}"
    d = _real("delta", value, valid, BudgetError)
    if not 0 <= d <= DELTA_MAX:
        extra = (" (with a larger delta a mechanism may publish a person's record outright; "
                 "use delta well below 1/n, e.g. 1e-6)" if d > DELTA_MAX else "")
        raise BudgetError(f"delta={value!r} is out of range: delta must be {valid}{extra}.")
    return d


def check_rho(value: Any) -> float:
    """``rho`` (zCDP) as a float in ``(0, RHO_MAX]``, else :class:`BudgetError` naming it."""
    valid = f"a finite number with 0 < rho <= {RHO_MAX:g}"
    r = _real("rho", value, valid, BudgetError)
    if not 0 < r <= RHO_MAX:
        raise BudgetError(f"rho={value!r} is out of range: rho must be {valid}.")
    return r


def check_budget(value: Any) -> dict[str, float | None]:
    """``budget=`` (a ``PureDP`` / ``ApproxDP`` / ``ZCDP``) as ``epsilon`` / ``delta`` / ``rho``
    keywords."""

    if isinstance(value, PureDP):
        return {"epsilon": value.epsilon, "delta": None, "rho": None}
    if isinstance(value, ApproxDP):
        return {"epsilon": value.epsilon, "delta": value.delta or None, "rho": None}
    if isinstance(value, ZCDP):
        return {"epsilon": None, "delta": None, "rho": value.rho}
    raise BudgetError(f"budget={value!r} is not a budget: budget must be cvxdp.PureDP(epsilon), "
                      "cvxdp.ApproxDP(epsilon, delta) or cvxdp.ZCDP(rho).")


def check_rng(value: Any) -> None:
    """``rng`` must be None, an int seed >= 0 or a :class:`numpy.random.Generator`."""
    if value is None or isinstance(value, np.random.Generator):
        return
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        if value >= 0:
            return
    raise ArgumentError(
        f"rng={value!r} is not a source of randomness: rng must be None, a non-negative int "
        "seed or a numpy.random.Generator (rng must be one of these; use "
        "numpy.random.default_rng(seed) to make one).")


def check_flag(name: str, value: Any) -> bool:
    """A boolean keyword (``reference``, ``verbose``): True or False, nothing else."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ArgumentError(f"{name}={value!r} is not a flag: {name} must be True or False.")


def check_accuracy(value: Any) -> None:
    """``accuracy`` (the additive error alpha): None or a finite number > 0."""
    if value is None:
        return
    msg = (f"accuracy={value!r}: accuracy= is the additive error alpha the private solver must "
           f"reach; it must be a finite number > 0, got {value!r} (or leave it None for the "
           "default).")
    try:   # a number, not a string: as epsilon
        check_number("accuracy", value, "> 0", lambda v: v > 0, error=PrivacyGuaranteeError)
    except PrivacyGuaranteeError:
        raise PrivacyGuaranteeError(msg) from None


def check_beta(value: Any) -> float:
    """``beta`` (the failure probability of a mechanism's noise event): a number in (0, 1), as a
    float; one check and one message on every path that takes it."""
    return check_number("beta", value, "a number in (0, 1) (the failure probability of the "
                        "guarantee's noise event, e.g. 1e-3)", lambda v: 0 < v < 1)


def check_iterations(name: str, value: Any) -> None:
    """``iterations`` / ``max_iterations``: None or an int >= 1."""
    if value is not None:
        check_count(name, value)


def check_accountant(value: Any) -> None:
    """``accountant``: None or a :class:`cvxdp.PrivacyAccountant`."""

    if value is None or isinstance(value, PrivacyAccountant):
        return
    raise ArgumentError(f"accountant={value!r} is not an accountant: accountant must be a "
                        "cvxdp.PrivacyAccountant(total), e.g. "
                        "cvxdp.PrivacyAccountant(cvxdp.ApproxDP(1.0, 1e-6)).")
