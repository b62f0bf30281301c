"""The private parameter entries of a perturbation release, and their released values.

The entries are listed in the order of the noise vector (public structure: which parameters,
their sizes and declared sensitivities); :func:`release_parameters` adds the scaled noise.
How each entry enters the canonical program is CVXPY's parameter map, read by
:func:`cvxdp.transform.parametric.entry_map`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from cvxdp.errors import PrivacySpecError
from cvxdp.specs import ConstraintSetPrivacy
from cvxdp.transform.parametric import EntryMap, entry_map
from cvxdp.transform.scp import SymmetricConeProgram
from cvxdp.transform.sensitivity import (
    full_value,
    parameter_columns,
    reduced_parameter,
    reduced_value,
)

__all__ = ["PrivateEntries", "private_entries", "release_parameters", "released_user_values",
           "objective_map"]


@dataclass(frozen=True)
class PrivateEntries:
    """The private parameter entries, in the order of the noise vector (public structure).

    Attributes
    ----------
    params : tuple of cvxpy.Parameter
    columns : ndarray of int, shape (K,)
        Columns of CVXPY's parameter tensor holding the entries (Fortran order per parameter).
    delta : ndarray, shape (K,)
        Declared per-entry sensitivity ``Delta_k`` of each entry.
    per_param : tuple of dict
        ``name``, ``size``, ``sensitivity`` (per entry) and ``l2_sensitivity``
        (``Delta_p sqrt(size_p)``) of each parameter.
    tensor_ids : tuple of int
        The id in CVXPY's tensor (a reduced parameter's for symmetric / PSD / diag / sparse
        parameters; the parameter's own otherwise).
    emap : EntryMap or None
        How the entries enter the canonical data (:func:`cvxdp.transform.parametric.entry_map`).
    """

    params: tuple[Any, ...]
    columns: np.ndarray
    delta: np.ndarray
    per_param: tuple[dict[str, Any], ...]
    tensor_ids: tuple[int, ...] = ()
    emap: EntryMap | None = None

    @property
    def K(self) -> int:
        return int(self.columns.size)

    @property
    def l2_sensitivity(self) -> float:
        """``sqrt(sum_k Delta_k^2)``: l2 sensitivity of all private entries, parameter units."""
        return float(np.sqrt(np.sum(self.delta**2)))


def private_entries(scp: SymmetricConeProgram, specs: tuple[Any, ...]) -> PrivateEntries:
    """Collect the private entries of ``specs`` (ConstraintPrivacy / ScalarPrivacy).

    Raises
    ------
    PrivacySpecError
        For ``ConstraintSetPrivacy`` (row add/remove has no bounded per-entry change) or a
        parameter declared twice.
    """
    pp = scp.meta["param_prob"]
    params, cols, deltas, per, tids = [], [], [], [], []
    seen: set[int] = set()
    for spec in specs:
        if isinstance(spec, ConstraintSetPrivacy):
            raise PrivacySpecError(
                "mechanism='perturbation' needs a bounded change per entry (ConstraintPrivacy / "
                "ScalarPrivacy / ObjectivePrivacy); ConstraintSetPrivacy (a whole row added or "
                "removed) is solved by the dense MWU: use mechanism='mwu'.")
        for p in spec.params:
            if p.id in seen:
                raise PrivacySpecError(f"parameter {p.name()!r} is declared private twice.")
            seen.add(p.id)
            c = parameter_columns(pp, p, type(spec).__name__)
            red = reduced_parameter(pp, p)
            tids.append(p.id if red is None else red.id)
            params.append(p)
            cols.append(c)
            deltas.append(np.full(c.size, float(spec.sensitivity)))
            per.append({"name": p.name(), "size": int(c.size),
                        "sensitivity": float(spec.sensitivity),
                        "l2_sensitivity": float(spec.sensitivity) * math.sqrt(c.size)})
    columns = np.concatenate(cols).astype(int)
    return PrivateEntries(tuple(params), columns, np.concatenate(deltas), tuple(per),
                          tuple(tids), entry_map(scp, columns))


def release_parameters(entries: PrivateEntries, g: np.ndarray, sigma_unit: float
                       ) -> dict[int, np.ndarray]:
    """The noisy parameter values ``theta~ = theta + Delta sigma_u g``.

    Keyed by the id in CVXPY's tensor: the parameter's own (value in its shape) or, for a
    symmetric / PSD / diag / sparse parameter, its reduced parameter's (the reduced entries,
    one per tensor column; :func:`cvxdp.transform.sensitivity.full_value` rebuilds the matrix).
    """
    out, at = {}, 0
    tids = entries.tensor_ids or tuple(p.id for p in entries.params)
    for p, tid in zip(entries.params, tids, strict=True):
        if tid == p.id:
            size = int(p.size)
            z = (entries.delta[at:at + size] * sigma_unit * g[at:at + size]).reshape(
                p.shape, order="F")
            out[tid] = np.asarray(p.value, dtype=float) + z
        else:
            base = reduced_value(p)
            size = int(base.size)
            out[tid] = base + entries.delta[at:at + size] * sigma_unit * g[at:at + size]
        at += size
    return out


def within_domains(entries: PrivateEntries, noisy: dict[int, np.ndarray]
                   ) -> dict[int, np.ndarray]:
    """``noisy`` with each sign-constrained parameter (``nonneg=`` / ``nonpos=``, a public
    domain) projected onto its sign: post-processing that keeps a convex atom's weight convex.
    The projection is coordinatewise and moves every entry towards the true value (which lies
    in the domain), so each entry's error is at most the drawn one and every bound that uses
    ``||g_u|| <= B_u`` with the Cauchy-Schwarz map of the certificate still holds."""
    out = dict(noisy)
    tids = entries.tensor_ids or tuple(p.id for p in entries.params)
    for p, tid in zip(entries.params, tids, strict=True):
        if tid != p.id:
            continue  # a reduced parameter (symmetric, PSD, ...): no sign attribute
        if p.is_nonneg():
            out[tid] = np.maximum(out[tid], 0.0)
        elif p.is_nonpos():
            out[tid] = np.minimum(out[tid], 0.0)
    return out


def released_user_values(entries: PrivateEntries, noisy: dict[int, np.ndarray]
                         ) -> dict[str, np.ndarray]:
    """The released values in the user's shapes (name -> array), symmetric ones rebuilt."""
    tids = entries.tensor_ids or tuple(p.id for p in entries.params)
    return {p.name(): (noisy[tid] if tid == p.id else full_value(p, noisy[tid]))
            for p, tid in zip(entries.params, tids, strict=True)}


def objective_map(scp: SymmetricConeProgram, entries: PrivateEntries) -> sp.csr_matrix:
    """``E_c``, shape ``(K, n + 1)``: row k holds ``Delta_k T_q[:, k]``, so the released
    objective's error at ``x`` is ``sigma g' E_c [x; 1]``, at most ``sigma ||g|| ||E_c [x; 1]||``
    (rows of entries that do not reach the objective are zero)."""
    emap = entries.emap if entries.emap is not None else entry_map(scp, entries.columns)
    return emap.objective_matrix(entries.delta)
