"""One place where the keywords of every public entry point are checked, the same way.

Every private entry point (``cvxdp.solve_private``, the ``solve_private`` methods of the
structured problems -- covering, minimum enclosing ball, John ellipsoid, least squares --,
``random_projection``, ``relative_random_projection`` and ``private_gaussian``) is wrapped by
:func:`entry_point`.  Before the entry function runs (so before any data is read) the wrapper

* refuses a keyword the entry point does not take with a ``TypeError`` naming the nearest valid
  one (:func:`check_options`);
* checks the common keywords (:data:`COMMON_KEYWORDS`) and raises a :class:`~cvxdp.CvxdpError`
  that names the argument, the value given and the valid range:

  ========== =============================================== ==========================
  keyword    valid values                                    error
  ========== =============================================== ==========================
  epsilon    finite, ``0 < epsilon <= 1e6`` (the entry point  BudgetError
             may state a lower maximum)
  delta      ``0 <= delta <= 0.01``                          BudgetError
  rho        finite, ``0 < rho <= 1e6``                      BudgetError
  budget     ``PureDP`` / ``ApproxDP`` / ``ZCDP`` (instead   BudgetError
             of epsilon, delta, rho)
  rng        None, an int seed >= 0, numpy Generator         ArgumentError
  reference  bool                                            ArgumentError
  verbose    bool                                            ArgumentError
  accuracy   None or finite > 0                              PrivacyGuaranteeError
  accountant None or :class:`~cvxdp.PrivacyAccountant`       ArgumentError
  iterations None or int >= 1 (also ``max_iterations``)      ArgumentError
  ========== =============================================== ==========================

  A common keyword the entry point has no use for is accepted when it asks for nothing
  (``verbose=`` is accepted everywhere; ``reference=False``, ``accuracy=None``) and refused with
  a ``TypeError`` otherwise (``accuracy=0.1`` on least squares is not dropped silently);
  ``rho=`` on an entry point analysed only in (epsilon, delta) is a ``BudgetError``;
* handles ``accountant=`` (:func:`_spend_into`): the call's stated budget must fit into what is
  left of the accountant's total (else :class:`~cvxdp.BudgetError`, before any data is read),
  and the call's guarantee is written into the ledger after it returns.

The value checks themselves live in :mod:`cvxdp.argument_values` (re-exported here), with the
helpers entry points and estimators use on their own keywords (``check_number``,
``check_count``, ``check_choice``, ``check_box``).

Why ``delta <= 0.01``: a mechanism that publishes a random record with probability delta is
(0, delta)-DP, so a larger delta admits releasing a person's data outright; the usual advice is
delta well below 1/n.  Why ``epsilon <= 1e6``: beyond it the guarantee says nothing
(e^epsilon overflows a float at 710), so such a call is the exact solve in disguise.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import math
from collections.abc import Callable, Iterable
from typing import Any

from cvxdp.argument_values import (
    DELTA_MAX,
    EPSILON_MAX,
    RHO_MAX,
    check_accountant,
    check_accuracy,
    check_beta,
    check_box,
    check_budget,
    check_choice,
    check_count,
    check_delta,
    check_epsilon,
    check_flag,
    check_iterations,
    check_number,
    check_rho,
    check_rng,
)
from cvxdp.errors import BudgetError, CvxdpError, PrivacyGuaranteeError
from cvxdp.privacy.accountant import PrivacyRecord, PrivacyReport
from cvxdp.privacy.budgets import ZCDP, resolve_budget

__all__ = [
    "COMMON_KEYWORDS",
    "COMMON_OPTIONS",
    "EPSILON_MAX",
    "DELTA_MAX",
    "RHO_MAX",
    "check_options",
    "option_names",
    "check_epsilon",
    "check_delta",
    "check_rho",
    "check_budget",
    "check_rng",
    "check_flag",
    "check_accuracy",
    "check_iterations",
    "check_accountant",
    "check_number",
    "check_count",
    "check_choice",
    "check_box",
    "entry_point",
]

#: keywords every private entry point takes (and checks here)
COMMON_KEYWORDS = ("epsilon", "delta", "rho", "budget", "rng", "reference", "verbose",
                   "accuracy", "accountant")
#: keywords of ``Problem.solve_private`` itself, valid on every path (the common keywords plus
#: the spec and CVXPY's ``solver=``)
COMMON_OPTIONS = (*COMMON_KEYWORDS, "private", "solver")
#: method keywords with one meaning wherever they appear: a count of iterations (int >= 1)
_ITERATION_KEYWORDS = ("iterations", "max_iterations")


# -- keywords ------------------------------------------------------------------------------------
def option_names(fn: Callable[..., Any]) -> tuple[set[str], bool]:
    """Keyword names ``fn`` accepts (``self`` and the problem excluded), and whether it takes
    any other keyword too (``**kwargs``).  A catch-all spelt ``**_`` only swallows the common
    options of the front door and does not count as open.  Follows ``functools.wraps``."""
    params = inspect.signature(fn).parameters.values()
    names = {p.name for p in params
             if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)} - {"self", "problem"}
    return names, any(p.kind is p.VAR_KEYWORD and p.name != "_" for p in params)


def check_options(given: Iterable[str], valid: Iterable[str], path: str, *,
                  caller: str = "solve_private") -> None:
    """Raise ``TypeError`` for every keyword in ``given`` that is not in ``valid``.

    The message names, for each unknown keyword, the nearest valid one
    (:func:`difflib.get_close_matches`) and lists what ``path`` takes.

    Raises
    ------
    TypeError
        ``solve_private: unknown option 'max_iteration' (did you mean 'max_iterations'?) ...``
    """
    valid = sorted(set(valid))
    bad = [k for k in given if k not in valid]
    if not bad:
        return
    parts = []
    for key in bad:
        near = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
        parts.append(f"{key!r}" + (f" (did you mean {near[0]!r}?)" if near else ""))
    raise TypeError(f"{caller}: unknown option{'s' if len(bad) > 1 else ''} "
                    f"{', '.join(parts)} for {path}; it takes {', '.join(valid)}.")


# -- the decorator -------------------------------------------------------------------------------
class _Keywords:
    """What the wrapped function takes, resolved on first use (delegates import lazily)."""

    def __init__(self, fn: Callable[..., Any], options: Callable[[], Callable[..., Any]] | None):
        self._fn, self._options, self._value = fn, options, None

    def get(self) -> tuple[frozenset[str], frozenset[str], bool]:
        """(names the function itself takes, names valid at the entry point, open)."""
        if self._value is None:
            own, open_ = option_names(self._fn)
            if self._options is not None:
                own, open_ = option_names(self._options())
            self._value = (frozenset(own), frozenset(own | set(COMMON_KEYWORDS)), open_)
        return self._value


def entry_point(name: str | None = None, *,
                options: Callable[[], Callable[..., Any]] | None = None,
                epsilon_max: float = EPSILON_MAX, guarantee: str = "dp",
                describe: Callable[..., str] | None = None) -> Callable[[Any], Any]:
    """Make ``fn`` a public private-solve entry point: check its keywords, handle ``accountant=``.

    Parameters
    ----------
    name : str, optional
        How errors and the accountant's ledger name the entry point; default: the function's
        name (``ClassName.solve_private`` for a method).
    options : callable, optional
        Returns the function whose signature lists the options, when ``fn`` only forwards
        ``**kwargs`` to it (e.g. ``MinEnclosingBall.solve_private`` -> ``solve_private_meb``).
    epsilon_max : float
        Largest epsilon the entry point accepts (default :data:`EPSILON_MAX`).
    guarantee : str
        ``"dp"``; anything else (``"relative-dp"``) cannot be spent from an accountant.
    describe : callable, optional
        ``describe(*args)`` -> ledger name of one call (e.g. the problem's type).

    Returns
    -------
    decorator
        The wrapper keeps ``fn``'s signature for ``inspect`` (``functools.wraps``) and carries
        ``_entry_keywords()`` (the keywords valid at the entry point).
    """
    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        keywords = _Keywords(fn, options)
        params = list(inspect.signature(fn).parameters)
        is_method = bool(params) and params[0] == "self"

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            own, valid, open_ = keywords.get()
            label = name or (f"{type(args[0]).__name__}.{fn.__name__}" if is_method and args
                             else fn.__name__)
            if open_:
                # options of the path are checked by the path; a misspelt common keyword is
                # named before the budget check would report a missing budget
                typos = [k for k in kwargs if k not in valid and difflib.get_close_matches(
                    k, COMMON_KEYWORDS, n=1, cutoff=0.8)]
                check_options(typos, valid, label, caller=label)
            else:
                check_options(kwargs, valid, label, caller=label)
            accountant = kwargs.pop("accountant", None)
            check_accountant(accountant)
            _check_common(kwargs, label, own, open_, epsilon_max)
            if accountant is None:
                return fn(*args, **kwargs)
            if guarantee != "dp":
                raise PrivacyGuaranteeError(
                    f"{label} gives {guarantee}, not differential privacy: it cannot be spent "
                    "from a PrivacyAccountant (leave accountant= out).")
            call = describe(*args) if describe is not None else label
            return _spend_into(accountant, call, fn, args, kwargs)

        wrapper._entry_keywords = lambda: keywords.get()[1]  # type: ignore[attr-defined]
        return wrapper

    return decorate


def _check_common(kwargs: dict[str, Any], label: str, own: frozenset[str], open_: bool,
                  epsilon_max: float) -> None:
    """Check the common keywords in place; drop those ``fn`` does not take and that ask for
    nothing; refuse those it does not take that ask for something."""
    if kwargs.get("budget") is not None:
        given = [k for k in ("epsilon", "delta", "rho") if kwargs.get(k) is not None]
        if given:
            raise BudgetError(f"{label}: give the budget either as budget= or as "
                              f"{'/'.join(given)}=, not both.")
        for key, value in check_budget(kwargs.pop("budget")).items():
            if value is not None:
                kwargs[key] = value
    else:
        kwargs.pop("budget", None)
    if kwargs.get("epsilon") is not None:
        check_epsilon(kwargs["epsilon"], maximum=epsilon_max)
    if kwargs.get("delta") is not None:
        check_delta(kwargs["delta"])
    if kwargs.get("rho") is not None:
        check_rho(kwargs["rho"])
        if "rho" not in own and not open_:
            raise BudgetError(f"rho={kwargs['rho']!r}: {label} is analysed in (epsilon, delta)"
                              " only; give epsilon= and delta= instead of rho=.")
    if "rng" in kwargs:
        check_rng(kwargs["rng"])
    for flag in ("reference", "verbose"):
        if flag in kwargs:
            check_flag(flag, kwargs[flag])
    if "accuracy" in kwargs:
        check_accuracy(kwargs["accuracy"])
    for key in _ITERATION_KEYWORDS:
        if key in kwargs:
            check_iterations(key, kwargs[key])
    if kwargs.get("beta") is not None:
        check_beta(kwargs["beta"])
    if open_:
        return
    for key in [k for k in COMMON_KEYWORDS if k in kwargs and k not in own]:
        value = kwargs[key]
        if key == "verbose" or value is None or value is False:
            del kwargs[key]         # accepted, asks for nothing this entry point does
        else:
            raise TypeError(f"{label}: unknown option {key!r} for {label}: it does not take "
                            f"{key}={value!r} (leave it out).")


def _asked_budget(kwargs: dict[str, Any], label: str, accountant: Any) -> Any:
    if all(kwargs.get(k) is None for k in ("epsilon", "delta", "rho")):
        raise BudgetError(
            f"{label} with accountant=: state this call's budget too (epsilon= and delta=, or "
            f"rho=); the accountant has {accountant.describe_remaining()} left.")
    return resolve_budget(epsilon=kwargs.get("epsilon"), delta=kwargs.get("delta"),
                          rho=kwargs.get("rho"))


def _spend_into(accountant: Any, call: str, fn: Callable[..., Any], args: tuple,
                kwargs: dict[str, Any]) -> Any:
    """Run one call against a user's accountant: refuse before ``fn`` runs if the stated budget
    does not fit, record the call's guarantee after it returns.

    A refusal here records nothing; so does a typed :class:`~cvxdp.CvxdpError` from inside the
    call (cvxdp refuses only on public arguments, and a raised call returns nothing).  Any other
    exception is recorded with the call's stated budget: it may come from the data.
    """
    asked = _asked_budget(kwargs, call, accountant)
    stated = PrivacyRecord(call, asked, "stated budget of the call")
    accountant.check(stated)
    try:
        out = fn(*args, **kwargs)
    except CvxdpError:
        raise
    except BaseException as err:
        accountant.spend(PrivacyRecord(call, asked, "stated budget of the call",
                                       params={"outcome": f"raised {type(err).__name__}"}),
                         check=False, reserved=stated)
        raise
    # charged as checked (the stated budget with the ledger), ledgered with the call's proof
    accountant.spend(_call_record(call, asked, out), check=False, reserved=stated)
    return out


def _call_record(call: str, asked: Any, out: Any) -> Any:
    """The ledger line of one call: its stated budget, the tighter zCDP bound its own report
    proves when it has one (rho of the whole release, a sum over its steps), and its guarantee
    kind."""

    report = getattr(out, "privacy", None)
    if report is None and isinstance(out, tuple):
        report = next((o for o in out if isinstance(o, (PrivacyReport, PrivacyRecord))), None)
    params: dict[str, Any] = {}
    zcdp = None
    theorem = "stated budget of the call"
    if isinstance(report, PrivacyRecord):
        zcdp, theorem = report.zcdp, report.reference
        params["guarantee"] = "dp"
    elif isinstance(report, PrivacyReport):
        theorem = report.theorem
        params["guarantee"] = report.guarantee
        if (report.guarantee == "dp" and report.rho is not None and math.isfinite(report.rho)
                and report.rho > 0):  # a conjectural rho proves nothing
            zcdp = ZCDP(report.rho)
    default = PrivacyRecord(call, asked, theorem).zcdp
    if isinstance(asked, ZCDP):
        zcdp = asked     # the call was asked for rho-zCDP; its spend is accounted as asked
    elif default is not None and (zcdp is None or default.rho < zcdp.rho):
        zcdp = default
    return PrivacyRecord(call, asked, theorem, zcdp=zcdp, params=params)
