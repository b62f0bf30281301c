"""Neighbouring relations: what "one person's data" means in each setting.

A guarantee is only meaningful together with its neighbouring relation; every
:class:`~cvxdp.privacy.accountant.PrivacyReport` names one through :meth:`describe`.
The paper-specific relations (eps0-close rows for the John ellipsoid, add/remove a constraint for
covering programs, ...) are instances of these types with their parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

from cvxdp.errors import PrivacySpecError, check_positive

__all__ = ["Neighbouring", "AddRemoveOne", "ReplaceOne", "BoundedChange"]


class Neighbouring:
    """Base class of neighbouring relations."""

    def describe(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError


@dataclass(frozen=True)
class AddRemoveOne(Neighbouring):
    """Datasets differ by adding or removing one record (unbounded DP).

    Parameters
    ----------
    unit : str
        What a record is: ``"row"``, ``"point"``, ``"constraint"``, ...
    """

    unit: str = "record"

    def describe(self) -> str:
        return f"add/remove one {self.unit}"


@dataclass(frozen=True)
class ReplaceOne(Neighbouring):
    """Datasets of equal size differing in one record (bounded DP)."""

    unit: str = "record"

    def describe(self) -> str:
        return f"replace one {self.unit}"


@dataclass(frozen=True)
class BoundedChange(Neighbouring):
    """The private data moves by at most ``bound`` in the norm ``norm``.

    Parameters
    ----------
    norm : str
        E.g. ``"linf"`` (entrywise), ``"l2"``, ``"spectral"`` (EJA l-inf), ``"row-l2"`` (one row
        moves by at most ``bound`` in l2: the eps0-close relation).
    bound : float
        Finite, > 0.
    what : str
        Which data moves (``"constraint data A"``, ``"right-hand side b"``, ...).
    """

    norm: str
    bound: float
    what: str = "private data"

    def __post_init__(self) -> None:
        b = check_positive(
            self.bound, PrivacySpecError,
            f"the neighbouring bound (sensitivity) must be finite and > 0, got {self.bound!r}.")
        object.__setattr__(self, "bound", b)

    def describe(self) -> str:
        return f"{self.what} changes by at most {self.bound:g} in {self.norm} norm"
