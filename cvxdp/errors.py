"""Typed errors raised by cvxdp.

Every error says what was wrong *and* what to change.  They derive from ``ValueError`` (or
``RuntimeError`` for solver failures) so that generic handlers keep working.
"""

from __future__ import annotations

import math
import sys
import warnings
from typing import Any

import numpy as np

__all__ = [
    "warn_user",
    "CvxdpError",
    "BudgetError",
    "PrivacySpecError",
    "UnsupportedProblemError",
    "InfeasibleProblemError",
    "PrivacyGuaranteeError",
    "ArgumentError",
    "check_positive",
    "NOT_NUMBERS",
]


class CvxdpError(Exception):
    """Base class of every error cvxdp raises on purpose."""


class BudgetError(CvxdpError, ValueError):
    """A privacy budget is out of range, or a spend would exceed the accountant's total."""


class PrivacySpecError(CvxdpError, ValueError):
    """A privacy specification does not fit the model (wrong parameter, place or sensitivity)."""


class UnsupportedProblemError(CvxdpError, ValueError):
    """The model is not something cvxdp can solve privately (cone, integrality, DCP, data)."""


class InfeasibleProblemError(CvxdpError, ValueError):
    """The public part of the model (or the exact reference) is infeasible or unbounded."""


class PrivacyGuaranteeError(CvxdpError, ValueError):
    """A mechanism cannot be made private as requested (e.g. the budget is too small for the
    theorem's accuracy bound to be non-vacuous and the caller asked for a strict guarantee)."""


class ArgumentError(CvxdpError, ValueError, TypeError):
    """A common keyword of an entry point has a value outside its range (``rng``, ``verbose``,
    ``reference``, ``iterations``, ``accountant``); the message names the argument, the value and
    what is valid.  Also a ``TypeError``, so handlers written for the old type errors still
    catch it."""


#: text and booleans are not numbers, even where ``float()`` would convert them
NOT_NUMBERS = (str, bytes, bool, np.bool_)


def check_positive(value: Any, error: type[CvxdpError], message: str, *,
                   type_message: str | None = None) -> float:
    """``float(value)`` if it is a finite number > 0, else raise ``error``.

    ``message`` is the error text for a non-finite or non-positive number; ``type_message`` (by
    default ``message``) the text for something that is not a number at all.
    """
    if isinstance(value, NOT_NUMBERS):
        raise error(f"{type_message or message} (got {value!r}: give a number, not "
                    f"{type(value).__name__})")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise error(type_message or message) from None
    if not math.isfinite(v) or v <= 0:
        raise error(message)
    return v


def warn_user(message: Warning | str, category: type[Warning] = UserWarning) -> None:
    """Issue a warning attributed to the user's line: the first frame outside cvxdp.

    A fixed ``stacklevel`` points into cvxdp's own entry-point wrapper whenever a solver is
    reached through it; walking the stack to the caller of the outermost cvxdp frame makes
    ``warnings`` filters and the printed location name the user's code."""
    frame = sys._getframe(1)  # warn_user's caller: stacklevel 2
    level = 2
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith("cvxdp"):
        frame = frame.f_back
        level += 1
    if isinstance(message, Warning):
        warnings.warn(message, stacklevel=level)
    else:
        warnings.warn(message, category, stacklevel=level)
