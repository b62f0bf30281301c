"""CVXPY's SCS interface with its constraint formatting written as a row permutation.

CVXPY's ``ConicSolver.format_constraints`` reorders the rows of the parameter tensor into
SCS's order (each SOC's head row before its tail rows, the exponential and power cones'
arguments interleaved, the zero cone's rows negated) by multiplying a block-diagonal
restructuring matrix ``R`` into the tensor reshaped to ``(rows, (n + 1)(p + 1))``. Every block
of ``R`` is a signed permutation (one entry ``+-1`` per row and per column), so the product is
``R``'s row permutation of the tensor; but the sparse product allocates work arrays as long as
the reshaped tensor's ``(n + 1)(p + 1)`` columns for every SOC / cone block, which costs
``O(blocks * n * p)``: 0.3-0.6 s for one SOC of 2,000 entries with a 2,000-entry parameter,
against 0.01 s for everything else in the compile.

:class:`PermutingScs` builds the same permutation from CVXPY's own spacing matrices and moves
the tensor's rows directly: the same entries (each output entry is one input entry times
``+-1``; exact zeros are dropped as the product drops them), in ``O(nnz)``. A constraint type
it does not know, or a CVXPY whose formatting code is not the one mirrored here (its source
is compared), is handed to CVXPY's own formatting.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from cvxpy.constraints import PSD, SOC, ExpCone, NonNeg, PowCone3D, PowConeND, Zero
from cvxpy.reductions.dcp2cone.cone_matrix_stuffing import ParamConeProg
from cvxpy.reductions.solvers.conic_solvers import conic_solver
from cvxpy.reductions.solvers.conic_solvers.conic_solver import ConicSolver
from cvxpy.reductions.solvers.conic_solvers.scs_conif import SCS

__all__ = ["PermutingScs", "restructuring_permutation", "mirrors_cvxpy"]

#: SHA-256 of CVXPY's ``conic_solver.py`` (CVXPY 1.9.3), whose ``format_constraints``,
#: ``as_block_diag_linear_operator`` and ``get_spacing_matrix`` :func:`restructuring_permutation`
#: mirrors
MIRRORED_SOURCE = "5f334961a6fac556bfb0f6c1cde39c8e6b7edcae60de09f1bf3974e20205b867"

#: the PSD constraint in svec form (CVXPY >= 1.9), formatted as the identity
_SVEC_PSD = getattr(conic_solver, "SvecPSD", None)
_IDENTITY_KINDS = tuple(k for k in (Zero, NonNeg, PSD, _SVEC_PSD) if k is not None)


@functools.cache
def mirrors_cvxpy() -> bool:
    """Whether the installed CVXPY's constraint formatting is the code mirrored here (its whole
    module's source, read once per process)."""
    try:
        source = Path(conic_solver.__file__).read_bytes()
    except (OSError, TypeError):  # no source (frozen install): CVXPY's own formatting
        return False
    return hashlib.sha256(source).hexdigest() == MIRRORED_SOURCE


class PermutingScs(SCS):
    """SCS's interface (data, cones, inverse) under its own name, whose
    ``format_constraints`` permutes the parameter tensor's rows (module docstring)."""

    def name(self) -> str:
        return "CVXDP_SCS"

    def supports_quad_obj(self) -> bool:
        """False: cvxdp compiles with ``use_quad_obj=False`` (the objective as cones), so the
        DPP check CVXPY runs before compiling must be its conic one. CVXPY (1.9) checks DPP in
        its quadratic-objective scope whenever the solver *could* take a quadratic objective,
        and there ``quad_form(x - y, P)`` with a parameter ``y`` in the residual is not DPP,
        although ``problem.is_dpp()`` says it is: it then substituted ``y``'s value, and a
        private target could not be traced (``tests/solvers/test_quadform_private_target.py``).
        The compiled data are the same: with ``use_quad_obj=False`` no quadratic objective was
        used either way."""
        return False

    @classmethod
    def format_constraints(cls, problem: Any, exp_cone_order: list[int]) -> Any:
        found = (restructuring_permutation(problem.constraints, exp_cone_order)
                 if mirrors_cvxpy() else None)
        if found is None or found[0].size == 0:
            return super().format_constraints(problem, exp_cone_order)
        perm, sign, product = found
        A = problem.A
        rows = perm.size
        cols, _ = np.divmod(A.shape[0] * A.shape[1], rows, dtype=np.int64)
        # CVXPY's own reshape and conversion (duplicates summed in its order), then R's rows
        reshaped = A.reshape(rows, cols, order="F").tocsr()
        moved = _permute_rows(reshaped, perm, sign, product).tocoo()
        moved.row = moved.row.astype(np.int64)
        moved.col = moved.col.astype(np.int64)
        restructured = moved.reshape(np.int64(rows) * (np.int64(problem.x.size) + 1),
                                     A.shape[1], order="F")
        return ParamConeProg(
            problem.q, problem.x, restructured, problem.variables, problem.var_id_to_col,
            problem.constraints, problem.parameters, problem.param_id_to_col, P=problem.P,
            formatted=True, lower_bounds=problem.lower_bounds,
            upper_bounds=problem.upper_bounds, lb_tensor=problem.lb_tensor,
            ub_tensor=problem.ub_tensor, dir_cones=problem.dir_cones,
        )


def restructuring_permutation(constraints: list[Any], exp_cone_order: list[int]
                              ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """CVXPY's restructuring matrix ``R`` (``ConicSolver.format_constraints``) as
    ``(perm, sign, product)``: ``R[perm[i], i] = sign[i]`` and no other entries; ``product[i]``
    says whether CVXPY applies row ``i``'s block as a sparse product (which drops zeros) rather
    than as the identity or its negative (which keep explicit zeros).

    Built block by block from the same spacing matrices as CVXPY's; None when a constraint type
    is not one of CVXPY's (then ``R`` is not known to be a permutation) or a block is not a
    signed permutation.
    """
    perms: list[np.ndarray] = []
    signs: list[np.ndarray] = []
    products: list[np.ndarray] = []
    start = 0
    for constr in constraints:
        height = sum(arg.size for arg in constr.args)
        kind = type(constr)
        if kind in _IDENTITY_KINDS:
            size = constr.size
            block_perm = np.arange(size, dtype=np.int64)
            sign = -1.0 if kind is Zero else 1.0
            perms.append(block_perm + start)
            signs.append(np.full(size, sign))
            products.append(np.zeros(size, dtype=bool))
            start += size
            continue
        mats = _spacing_blocks(constr, kind, height, exp_cone_order)
        if mats is None:
            return None
        block = sp.csc_matrix(sp.hstack(mats))
        if block.shape != (height, height) or not _signed_permutation(block):
            return None
        perms.append(block.indices.astype(np.int64) + start)
        signs.append(block.data.astype(float))
        products.append(np.ones(height, dtype=bool))
        start += height
    if not perms:
        return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=bool)
    return np.concatenate(perms), np.concatenate(signs), np.concatenate(products)


def _spacing_blocks(constr: Any, kind: type, height: int, exp_cone_order: list[int]
                    ) -> list[Any] | None:
    """The column blocks of ``R`` for one SOC / exponential / power-cone constraint, as
    CVXPY writes them."""
    spacing = ConicSolver.get_spacing_matrix
    if kind is SOC:
        if constr.axis != 0:
            return None
        x_dim = constr.args[1].shape[0] if constr.args[1].shape else 1
        n_t = constr.args[0].size
        return [spacing(shape=(height, n_t), spacing=x_dim, streak=1, num_blocks=n_t, offset=0),
                spacing(shape=(height, constr.args[1].size), spacing=1, streak=x_dim,
                        num_blocks=n_t, offset=1)]
    if kind is ExpCone:
        return [spacing(shape=(height, arg.size), spacing=len(exp_cone_order) - 1, streak=1,
                        num_blocks=arg.size, offset=exp_cone_order[i])
                for i, arg in enumerate(constr.args)]
    if kind is PowCone3D:
        return [spacing(shape=(height, arg.size), spacing=2, streak=1, num_blocks=arg.size,
                        offset=i) for i, arg in enumerate(constr.args)]
    if kind is PowConeND:
        if constr.args[0].ndim == 1:
            m, n = constr.args[0].shape[0], 1
        else:
            m, n = constr.args[0].shape
        if constr.args[1].size != n:
            return None
        mats = [spacing(shape=(height, m), spacing=0, streak=1, num_blocks=m, offset=(m + 1) * j)
                for j in range(n)]
        mats.append(spacing(shape=(height, n), spacing=m, streak=1, num_blocks=n, offset=m))
        return mats
    return None


def _signed_permutation(block: sp.csc_matrix) -> bool:
    block.sum_duplicates()
    return bool(np.all(np.diff(block.indptr) == 1)
                and np.unique(block.indices).size == block.shape[0]
                and np.all(np.abs(block.data) == 1.0))


def _permute_rows(mat: Any, perm: np.ndarray, sign: np.ndarray, product: np.ndarray) -> Any:
    """``R @ mat`` for the signed permutation ``R[perm[i], i] = sign[i]``: row ``i`` of ``mat``
    moves to row ``perm[i]`` times ``sign[i]``; in the rows where ``product[i]`` the zeros
    (explicit ones included) are dropped, as the sparse product drops them."""
    inverse = np.empty_like(perm)
    inverse[perm] = np.arange(perm.size, dtype=np.int64)
    lengths = np.diff(mat.indptr)[inverse]
    indptr = np.zeros(perm.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    # positions of the source rows' entries, in output-row order
    starts = mat.indptr[inverse].astype(np.int64)
    take = np.repeat(starts - indptr[:-1], lengths) + np.arange(indptr[-1], dtype=np.int64)
    data = mat.data[take] * np.repeat(sign[inverse], lengths)
    keep = (data != 0) | ~np.repeat(product[inverse], lengths)
    if not np.all(keep):
        row = np.repeat(np.arange(perm.size, dtype=np.int64), lengths)
        indptr = np.zeros(perm.size + 1, dtype=np.int64)
        np.cumsum(np.bincount(row[keep], minlength=perm.size), out=indptr[1:])
        data, take = data[keep], take[keep]
    # CVXPY's spacing matrices are sparse arrays, and a product with one is an array
    kind = sp.csr_array if product.any() else type(mat)
    return kind((data, mat.indices[take], indptr), shape=mat.shape)
