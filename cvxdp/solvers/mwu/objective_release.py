"""Objective privacy for general models: perturb ``c`` once and solve the perturbed program.

:func:`objective_private_solve` (Thm C.12 of Song, Xue & Zhang (2025), "Differential Privacy
for Euclidean Jordan Algebra with Applications to Private Symmetric Cone Programming"): the
private objective is released once with Gaussian noise (the one calibration,
:func:`cvxdp.privacy.mechanisms.gaussian_noise`) and the perturbed program is solved exactly
inside a public ball (a convex replacement of the paper's sphere).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.stats import norm as normal

from cvxdp.citations import (
    SCP_OBJECTIVE_PRIVACY,
)
from cvxdp.errors import (
    BudgetError,
    InfeasibleProblemError,
    PrivacySpecError,
)
from cvxdp.privacy.accountant import (
    PrivacyReport,
)
from cvxdp.privacy.budgets import ZCDP, Budget, PureDP
from cvxdp.privacy.mechanisms import (
    gaussian_noise,
)
from cvxdp.solvers.bound_propagation import propagated_box, soc_starts
from cvxdp.solvers.golden import golden_min
from cvxdp.solvers.public_part import (
    BOX_SOLVES_MAX,
    UnitDirections,
    psd_implied_box,
    public_bounds,
)
from cvxdp.transform.canon import user_columns
from cvxdp.transform.epigraph import (
    epigraph_bounds,
    epigraph_members,
    exp_hypograph_bounds,
    hypograph_cones,
    hypograph_members,
)
from cvxdp.transform.exact import solve_exact
from cvxdp.transform.scp import ConeDims, SymmetricConeProgram
from cvxdp.transform.sensitivity import objective_tensor, parameter_columns

__all__ = ["objective_private_solve"]

THM_C12 = SCP_OBJECTIVE_PRIVACY


def objective_private_solve(scp: Any, sb: Any, budget: Budget, *, rng: np.random.Generator,
                            beta: float, norm_bound: float | None, neighbouring: str
                            ) -> tuple[np.ndarray, PrivacyReport, dict[str, Any]]:
    """Objective privacy: release ``c~ = c + z`` once, then solve exactly (post-processing).

    The canonical objective ``c`` lives on the cone program's variables ``x in R^n`` (the
    orthant algebra with the identity isometry), so the EJA Gaussian mechanism is the vector
    Gaussian on the coordinates of ``c`` that can change (l2 sensitivity ``||dc||_2``), calibrated
    exactly (analytic Gaussian for (epsilon, delta), ``D / sqrt(2 rho)`` for zCDP).  The perturbed
    program ``min c~'x  s.t. A x + s = b, s in K, ||x_S||_2 <= R`` uses the convex ball of a
    public radius R instead of the paper's unit sphere (which is not convex), and only on the
    coordinates ``S`` the noise touches (``z`` is supported on ``S``): the proof of Thm C.12
    only needs ``c'x~ - c'x* = z'(x* - x~) + (c~'x~ - c~'x*) <= ||z|| (||x*_S|| + ||x~_S||)``
    with the original optimum inside the ball, so with probability ``1 - beta`` the answer is
    exactly feasible and its objective is within ``2 R ||z||_2 <= 2 R sigma (sqrt(k) +
    sqrt(2 ln(1/beta)))`` of the optimum (``k`` = number of private coordinates).  R is
    ``norm_bound`` or computed from the (public) constraints.  CVXPY's epigraph variables (of
    ``quad_form``, ``sum_squares``, norms) are not in ``S``, so they need no bound.  When the
    public constraints do not bound ``x_S`` (and no ``norm_bound`` is given) the perturbed
    program is solved without the ball -- still private (post-processing) and exactly feasible
    -- but no sub-optimality bound holds: ``alpha_guaranteed`` is None.

    References
    ----------
    Song, Xue & Zhang (2025), "Differential Privacy for Euclidean Jordan Algebra with
    Applications to Private Symmetric Cone Programming":
    Definition C.11, Theorem C.12, Corollary 4.4.
    """
    if isinstance(budget, PureDP):
        raise BudgetError("objective privacy uses the Gaussian mechanism and needs delta > 0 "
                          "(or rho=); pass epsilon= and delta=.")
    dc = np.abs(np.asarray(sb.c, dtype=float))
    supp = np.flatnonzero(dc > 0)
    if supp.size == 0 and not sb.offset > 0:
        raise PrivacySpecError("the private parameter does not enter the objective; nothing to "
                               "protect with ObjectivePrivacy (declare it where it enters).")
    n = scp.n
    R: float | None
    if supp.size == 0:
        # only the constant term is private: the point is the public problem's minimiser (no
        # noise on c, no ball), the value carries the constant through the mechanism below
        R, src, box = 0.0, "no private coefficient", None
    elif norm_bound is None:
        # only the coordinates the noise touches need a bound (see the docstring); CVXPY's
        # epigraph variables (of quad_form, sum_squares, norms) carry no private coefficient
        R, src, box = _private_coordinate_radius(scp, supp, _public_signs(scp, sb)[1])
    else:
        R, src, box = float(norm_bound), "user", None
    # The objective's constant term moves with c when the private parameter sits in it
    # (``c @ (x - 0.3)``).  The released value must come from released quantities only: take the
    # offset as a public linear function of the noisy c when the model makes it one, else noise
    # it jointly with c (one more coordinate of the Gaussian mechanism).
    w_off = _offset_from_c(scp, sb) if sb.offset > 0 else None
    noise_offset = sb.offset > 0 and w_off is None
    d_off = float(sb.offset) if noise_offset else 0.0
    D2 = float(np.sqrt(np.sum(dc**2) + d_off**2))
    # the one Gaussian calibration and record (privacy.mechanisms.gaussian_noise): the exact
    # analytic Gaussian for (epsilon, delta) (Balle & Wang 2018), D / sqrt(2 rho) for zCDP
    sigma, rec = gaussian_noise(budget, sensitivity=D2, mechanism="eja_gaussian",
                                reference=THM_C12)
    eps, dl = (None, None) if isinstance(budget, ZCDP) else (budget.epsilon, budget.delta)
    c_noisy = np.asarray(scp.c, dtype=float).copy()
    z = rng.normal(0.0, sigma, size=supp.size + int(noise_offset))
    c_noisy[supp] += z[:supp.size]
    # project onto the signs the parameters' public domains give (nonneg=/nonpos=): a weight
    # of a convex atom's epigraph variable must keep its sign, or the perturbed program is
    # unbounded; the projection is post-processing and only moves c~ towards c (c lies in
    # the set), so ||c~ - c|| and Thm C.12's bound do not grow
    lo_c, hi_c = _public_signs(scp, sb)
    c_noisy = np.clip(c_noisy, lo_c, hi_c)
    z[:supp.size] = c_noisy[supp] - np.asarray(scp.c, dtype=float)[supp]
    if sb.offset == 0:  # public constant term
        offset_noisy, offset_source = float(scp.offset), "public"
    elif noise_offset:
        offset_noisy, offset_source = float(scp.offset) + float(z[-1]), "noised"
    else:  # offset = w . c + public constant, hence offset + w . z is a function of c~
        offset_noisy = float(scp.offset) + float(w_off[supp] @ z[:supp.size])
        offset_source = "derived from the noisy c"
    # append the SOC block (R, x_S) after the existing SOC blocks (SCS order)
    d = scp.dims
    if R is not None and supp.size > 0:
        at = d.zero + d.nonneg + sum(d.soc)
        sel = sp.csr_matrix((np.ones(supp.size), (np.arange(supp.size), supp)),
                            shape=(supp.size, n))
        ball_A = sp.vstack([sp.csr_matrix((1, n)), -sel])
        A2 = sp.vstack([scp.A[:at], ball_A, scp.A[at:]], format="csc")
        b2 = np.concatenate([scp.b[:at], [R], np.zeros(supp.size), scp.b[at:]])
        dims2 = ConeDims(zero=d.zero, nonneg=d.nonneg, soc=(*d.soc, supp.size + 1), psd=d.psd)
    else:
        A2, b2, dims2 = scp.A, scp.b, d
    perturbed = SymmetricConeProgram(A=A2, b=b2, c=c_noisy, offset=offset_noisy, dims=dims2,
                                     cone=None, sign=scp.sign, exp_tail=scp.exp_tail)
    sol = solve_exact(perturbed)
    if sol.x is None:
        hint = ("that norm_bound= contains a solution" if R is not None else
                "that the variables the private objective multiplies are bounded by public "
                "constraints (or pass norm_bound=, a public bound on their Euclidean norm)")
        raise InfeasibleProblemError(
            f"the perturbed program is {sol.status} (the constraints are public here, and the "
            f"noisy objective is released, so this is public): check that the model is "
            f"feasible and {hint}.")
    k = supp.size
    # ||z_S|| <= t with probability >= 1 - beta (Gaussian concentration): Thm C.12's event
    t = sigma * (math.sqrt(k) + math.sqrt(2 * math.log(1 / beta)))
    alpha = None if R is None else 2 * R * t
    # the proof's ||x*_S - x~_S|| bounded through the released point and the public box
    # (Hoelder), often far below 2 R (a simplex: sqrt(2) against 2 sqrt(n))
    # and, on a second event ||z_S||_inf <= t_inf (a union bound over the k coordinates, its
    # own beta), by ||z_S||_inf ||x*_S - x~_S||_1; the certificate takes the smaller bound
    spans = None if box is None else _diameter_bounds(scp, supp, np.asarray(sol.x), *box)
    holder = holder_inf = None
    t_inf = sigma * float(normal.isf(beta / (2.0 * max(k, 1))))
    if spans is not None:
        d1, dinf = spans
        holder = t * math.sqrt(d1 * dinf) * (1 + 1e-9)
        holder_inf = t_inf * d1 * (1 + 1e-9)
    # on the same event, the released objective's growth cuts the l1 span (one solve)
    level = None if k == 0 else _l1_growth_bound(perturbed, supp, np.asarray(sol.x), c_noisy,
                                                 t_inf, box)
    if level is not None:
        holder_inf = level if holder_inf is None else min(holder_inf, level)
    details: dict[str, Any] = {"setting": "objective", "sigma": sigma, "l2_sensitivity": D2,
                               "noised_coordinates": int(k) + int(noise_offset),
                               "offset_source": offset_source, "norm_bound": R,
                               "norm_bound_source": src, "alpha_guaranteed": alpha,
                               "beta": beta}
    if eps is not None and R is not None:
        r = n
        sig_p = float(dc.max()) * math.sqrt(2 * r * math.log(1.25 / dl)) / eps
        details.update(paper_sigma=sig_p, sigma_ratio_paper_over_cvxdp=sig_p / sigma,
                       alpha_paper=2 * R * sig_p * (math.sqrt(n) + math.sqrt(
                           2 * math.log(1 / beta))))
    report = PrivacyReport(guarantee="dp", epsilon=eps, delta=dl, rho=rec.zcdp.rho,
                           neighbouring=neighbouring, theorem=THM_C12, records=(rec,),
                           details=details)
    value = scp.sign * float(c_noisy @ sol.x + offset_noisy)
    # the true objective at x~ differs from the released one by z'x~_S (+ the offset's share
    # w'z_S when the offset is a public linear function of c), at most t ||x~_S (+ w_S)|| on
    # the event ||z_S|| <= t; a noised offset has its own noise, not on that event: no bound
    reach = None
    if not noise_offset:
        v = np.asarray(sol.x, dtype=float)[supp]
        reach = float(np.linalg.norm(v if w_off is None else v + w_off[supp]))
    info = {"method": "objective_perturbation", "setting": "objective",
            "alpha_guaranteed": alpha, "gap_bound_holder": holder,
            "gap_bound_holder_inf": holder_inf, "value": value,
            "noisy_objective": {"c": c_noisy, "offset": offset_noisy,
                                "offset_source": offset_source},
            # public set, released data and the noise event for the certificate (popped by
            # the caller)
            "_perturbed": (perturbed, supp, R, t), "_value_reach": reach}
    return np.asarray(sol.x), report, info


def _diameter_bounds(scp: Any, supp: np.ndarray, x: np.ndarray, lo: np.ndarray,
                     hi: np.ndarray) -> tuple[float, float] | None:
    """``(D1, Dinf)`` with ``||x'_S - x~_S||_1 <= D1`` and ``||x'_S - x~_S||_inf <= Dinf`` for
    every ``x'`` in the public set, ``x~`` the released point and ``[lo, hi]`` the public box
    of ``x_S``; then ``||x'_S - x~_S||_2 <= sqrt(D1 Dinf)`` (Hoelder).

    ``Dinf = max_j max(hi_j - x~_j, x~_j - lo_j)``.  For ``D1``, each coordinate is measured
    from the end of its box nearer to ``x~_j`` (``e_j``, sign ``s_j = +1`` for ``lo``, ``-1``
    for ``hi``): ``|x'_j - x~_j| <= s_j (x'_j - e_j) + |x~_j - e_j|`` on the box, so ``D1 =
    max s'x'_S - s'e + sum |x~ - e|``, one public solve (a simplex: ``D1 = 2``, ``Dinf = 1``).
    The chord (:func:`_chords`) would tighten ``D1`` too, but ``D1`` also sets the radius of
    the level search (:func:`cvxdp.solvers.objective_certificate.sharp_objective_gap`), whose
    geometric levels are anchored at that radius: measured on the gallery's six
    objective-privacy models (epsilon 10 and 1, 3 seeds), the final certificate moved by
    -7% to +10%, median 0, so it is left as it was (docs/certificates.md, "The chord").
    None when that solve gives no bound.  Post-processing of the released point and public
    constraints."""
    xs = x[supp]
    use_lo = (xs - lo) <= (hi - xs)
    sgn = np.where(use_lo, 1.0, -1.0)
    end = np.where(use_lo, lo, hi)
    d = np.zeros(scp.n)
    d[supp] = sgn
    _, top = public_bounds(scp.A, scp.b, scp.dims, np.zeros(scp.m, dtype=bool), [d],
                           allow_unbounded=True, upper_only=True)
    if not np.isfinite(top[0]):
        return None
    d1 = float(top[0] - sgn @ end + np.sum(np.abs(xs - end)))
    dinf = float(np.max(np.maximum(hi - xs, xs - lo)))
    return max(d1, 0.0), max(dinf, 0.0)


def _chords(xs: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(slope, icpt)`` with ``|u - x~_j| <= slope_j u + icpt_j`` for ``u`` in ``[lo_j, hi_j]``
    (at least one end finite): the chord of the convex ``|u - x~_j|`` through both ends when
    both are finite (``|x~_j - lo_j|`` at ``lo_j``, ``|hi_j - x~_j|`` at ``hi_j``: the tightest
    affine bound on the interval; a constant when ``lo_j = hi_j``), else the line of slope
    ``+1`` (``-1``) through the finite lower (upper) end.  The nearer end's line, used before,
    overstates the far end by ``2 min(x~_j - lo_j, hi_j - x~_j)``."""
    from_lo = np.isfinite(lo)
    end = np.where(from_lo, lo, hi)
    slope = np.where(from_lo, 1.0, -1.0)
    both = from_lo & np.isfinite(hi)
    with np.errstate(invalid="ignore", divide="ignore"):   # read only where both are finite
        chord = (np.abs(hi - xs) - np.abs(xs - lo)) / (hi - lo)
    slope = np.where(both, np.where(hi > lo, chord, 0.0), slope)
    return slope, np.abs(xs - end) - slope * end


def _l1_growth_bound(prog: SymmetricConeProgram, supp: np.ndarray, x: np.ndarray,
                     c_noisy: np.ndarray, t_inf: float,
                     box: tuple[np.ndarray, np.ndarray] | None) -> float | None:
    """An upper bound on ``c'x~ - OPT`` on the event ``||z_S||_inf <= t_inf``, from the
    released objective's growth: one public solve, no level search.

    ``c'x~ - OPT = z'(x* - x~) - c~'(x* - x~) <= max_{x in X} [t_inf ||x_S - x~_S||_1 -
    c~'(x - x~)]`` (``c = c~ - z``, ``x*`` in the public set ``X`` of the perturbed program, its
    ball included).  Each ``|x_j - x~_j|`` is bounded by an affine function ``g_j(x_j)`` on the
    public interval ``[l_j, u_j]`` of ``x_j`` over ``X``: the chord of the convex ``|u - x~_j|``
    between the two ends when both are finite (``g_j(l_j) = |x~_j - l_j|``, ``g_j(u_j) = |u_j -
    x~_j|``, the tightest affine bound on the interval), else the line of slope ``s_j = +1``
    (finite lower end ``e_j``) or ``-1`` (finite upper end) through it: ``|x_j - x~_j| <= s_j
    (x_j - e_j) + |x~_j - e_j|``.  So the maximum is that of a linear function over ``X``,
    ``max (t_inf g'_S - c~)'x`` (``g'`` the slopes) -- finite where the released
    objective grows faster than ``t_inf`` along every unbounded direction, e.g. private weights
    on squares or norms, whose epigraph variables are bounded below only.  Never above
    ``t_inf D1`` of :func:`_diameter_bounds` (``c~'(x - x~) >= 0`` on ``X``), and it needs no
    box on the upper side.  Post-processing of the released ``c~, x~`` and public constraints;
    None when a private coordinate has no public bound on either side or the maximum is not
    finite.  Proof: docs/certificates.md, "Objective perturbation".
    """
    lo, hi = propagated_box(prog.A, prog.b, prog.dims, np.ones(prog.A.shape[0], dtype=bool),
                            cones=True)
    lo, hi = lo[supp], hi[supp]
    if box is not None:
        lo, hi = np.maximum(lo, box[0]), np.minimum(hi, box[1])
    xs = x[supp]
    if not np.all(np.isfinite(lo) | np.isfinite(hi)):
        return None
    slope, icpt = _chords(xs, lo, hi)
    direction = -np.asarray(c_noisy, dtype=float).copy()
    direction[supp] += t_inf * slope
    _, top = public_bounds(prog.A, prog.b, prog.dims, np.zeros(prog.A.shape[0], dtype=bool),
                           [direction], allow_unbounded=True, upper_only=True)
    if not np.isfinite(top[0]):
        return None
    bound = float(top[0] + c_noisy @ x + t_inf * np.sum(icpt))
    return max(bound, 0.0) * (1 + 1e-9)


def _norm_blocks(prog: SymmetricConeProgram, supp: np.ndarray, x: np.ndarray
                 ) -> Iterator[tuple[float, float, Callable[[], tuple | None]]]:
    """Cone blocks of ``prog`` that bound an affine image of the private coordinates in
    Euclidean norm by an affine function: ``(floor, fro, build)``, ``build()`` giving ``(M, g,
    p0, p, sigma)`` with ``||M x_S + g||^2 <= p0 + p'x`` on the set (``M`` of full column
    rank, ``sigma`` its smallest singular value) or None, ``floor`` a lower bound on ``P(x) -
    ||M x_S + g||^2`` at ``x`` and ``fro >= sigma`` (``||M||_F``), both before any solve
    (:func:`ball_growth_bound` builds only the blocks that can win).  Public structure and
    public solves only.

    * A second-order cone block ``s_0 >= ||s_1||`` (``s = b - A x``) whose member rows read only
      the private coordinates (``M = -A_1[:, S]``, ``g = b_1``; the perturbed program's own ball
      ``||x_S|| <= R`` is one): ``||s_1||^2 <= s_0^2 <= u0 s_0``, ``u0`` the largest ``s_0``
      over the set (one public solve, in ``build``; ``0 <= s_0 <= u0``; floor ``s_0(x)^2 -
      ||s_1(x)||^2``).
    * The same with one member row ``s_r`` that reads other columns and ``s_0 - s_r = C`` or
      ``s_0 + s_r = C`` a constant (CVXPY's rotated cone of a square, ``(1 + t, 1 - t, 2 L
      x)``): ``||s_1'||^2 <= s_0^2 - s_r^2 = C (s_0 +- s_r)``, affine (``4 t`` for a square).
    * A PSD block whose rows read only the private coordinates: ``||S||_F^2 <= lambda_max(S)
      tr S <= u0 tr S`` for ``S >= 0`` (the svec is a Frobenius isometry), ``u0`` the largest
      trace over the set (floor ``tr S(x)^2 - ||S(x)||_F^2``).
    """
    A = sp.csr_matrix(prog.A)
    n = A.shape[1]
    foreign = np.ones(n, dtype=bool)
    foreign[supp] = False
    rows = np.zeros(A.shape[0], dtype=bool)
    b = np.asarray(prog.b, dtype=float)
    s = b - A @ x   # the slacks at the point
    d = prog.dims
    # per row: does it read a column outside the private coordinates? (its pattern's count)
    pattern = A.copy()
    pattern.data = np.ones_like(pattern.data)
    reads_other = (pattern @ foreign.astype(float)) > 0

    def largest(vec: np.ndarray, const: float) -> float:   # max of const - vec'x over the set
        if not np.any(vec):
            return const
        _, top = public_bounds(prog.A, prog.b, prog.dims, rows, [-vec], allow_unbounded=True,
                               upper_only=True)
        return const + float(top[0])

    def fro(members: np.ndarray) -> float:   # ||M||_F >= ||M||_2 >= sigma_min(M)
        sub = A[members]
        return float(np.sqrt(np.sum(sub.data ** 2)))

    def image(members: np.ndarray) -> tuple[np.ndarray, float] | None:
        """``(M, sigma_min(M))`` of the members' map on the private coordinates, or None."""
        sub = -A[members][:, supp]
        if members.size < supp.size:
            return None
        if np.all(np.diff(sub.indptr) <= 1):
            # one entry per row: orthogonal columns, sigma_min = the smallest column norm
            norms = np.sqrt(np.asarray(sub.multiply(sub).sum(axis=0)).ravel())
            return (sub.toarray(), float(norms.min())) if norms.min() > 0 else None
        if supp.size > 500:    # a dense SVD of a large map: not made (an engineering limit)
            return None
        M = sub.toarray()
        sv = np.linalg.svd(M, compute_uv=False)
        return (M, float(sv[-1])) if sv[-1] > 1e-12 * max(float(sv[0]), 1e-300) else None

    start = d.zero + d.nonneg
    for size in d.soc:
        head, members = start, np.arange(start + 1, start + size)
        start += size
        mixed = members[reads_other[members]]
        if mixed.size == 0:
            def build(head=head, members=members):
                img = image(members)
                if img is None:
                    return None
                a0 = A[head].toarray().ravel()
                u0 = largest(a0, float(b[head]))
                if not (math.isfinite(u0) and u0 > 0):
                    return None
                return img[0], b[members], u0 * float(b[head]), -u0 * a0, img[1]
            yield float(s[head] ** 2 - s[members] @ s[members]), fro(members), build
        elif mixed.size == 1:
            r = int(mixed[0])
            rest = members[members != r]
            for sign in (1.0, -1.0):
                def build(head=head, r=r, rest=rest, sign=sign):
                    a0, ar = A[head].toarray().ravel(), A[r].toarray().ravel()
                    C = float(b[head] - sign * b[r])
                    if not (np.array_equal(a0, sign * ar) and C > 0):
                        return None
                    img = image(rest)
                    if img is None:
                        return None
                    # s_0^2 - s_r^2 = (s_0 - s_r)(s_0 + s_r): affine when one factor is constant
                    return (img[0], b[rest], C * float(b[head] + sign * b[r]),
                            -C * (a0 + sign * ar), img[1])
                yield float(s[head] ** 2 - s[r] ** 2 - s[rest] @ s[rest]), fro(rest), build
    for r in d.psd:
        size = r * (r + 1) // 2
        members = np.arange(start, start + size)
        jj = np.arange(r)
        diag = start + jj * r - jj * (jj - 1) // 2
        start += size
        if np.any(reads_other[members]):
            continue

        def build(members=members, diag=diag):
            img = image(members)
            if img is None:
                return None
            tr_vec = np.asarray(A[diag].sum(axis=0)).ravel()
            tr0 = float(np.sum(b[diag]))
            u0 = largest(tr_vec, tr0)
            if not (math.isfinite(u0) and u0 > 0):
                return None
            return img[0], b[members], u0 * tr0, -u0 * tr_vec, img[1]
        yield float(np.sum(s[diag]) ** 2 - s[members] @ s[members]), fro(members), build


def ball_growth_bound(prog: SymmetricConeProgram, supp: np.ndarray, x: np.ndarray,
                      c_noisy: np.ndarray, t: float, *, best: float = math.inf,
                      evaluations: int = 12) -> float | None:
    """An upper bound on ``c'x~ - OPT`` on Thm C.12's event ``||z_S||_2 <= t``, from a public
    cone block that bounds the private coordinates in a Euclidean norm: second order in ``t``
    where the released point lies on that block's boundary and the released objective grows
    away from it (the principal-eigenvector SDP ``max trace(C X)``, ``trace(X) = 1``, ``X >=
    0``; a linear objective over a ball or an ellipsoid).

    ``c'x~ - OPT <= max_{x in X} [t ||x_S - x~_S|| - c~'(x - x~)]`` (``c = c~ - z``, ``X`` the
    perturbed program's set).  Let a block give ``||M x_S + g||^2 <= P(x) = p0 + p'x`` on ``X``
    (:func:`_norm_blocks`) and ``y~ = M x~_S + g``.  Then ``||M(x_S - x~_S)||^2 = ||M x_S +
    g||^2 - 2 y~'(M x_S + g) + ||y~||^2 <= q(x) = P(x) + ||y~||^2 - 2 y~'(M x_S + g)``, affine
    in ``x``, so ``t ||x_S - x~_S|| <= t' sqrt(q(x))`` with ``t' = t / sigma_min(M)``, and
    ``t' sqrt(q) <= t'^2 / (4 kappa) + kappa q`` for every ``kappa > 0`` (AM-GM).  For every
    ``kappa``::

        c'x~ - OPT <= t'^2 / (4 kappa) + kappa (p0 + ||y~||^2 - 2 y~'g) + c~'x~
                      + max_{x in X} (kappa p - c~ - 2 kappa M'y~ on S)'x,

    one linear maximisation over ``X`` per ``kappa``: convex in ``kappa``, searched by golden
    section (12 solves) on ``log kappa`` over six decades around ``||c~_S|| / (2 ||M'y~||)``
    (the minimiser for a ball with nothing else active, where the bound is ``t^2 u0 / (2
    ||c~||)``).  Taking ``x = x~`` shows the bound is never below ``t' sqrt(P(x~) -
    ||y~||^2)``: the block with the smallest such floor is used, and none when that floor is
    ``>= best`` (a released point inside every block).  Post-processing of the released ``c~,
    x~`` and public constraints; None when no block or no finite bound.  Proof:
    docs/certificates.md, "Objective perturbation".
    """
    xs = np.asarray(x, dtype=float)[supp]
    x = np.asarray(x, dtype=float)
    c_noisy = np.asarray(c_noisy, dtype=float)
    if not t > 0 or supp.size == 0:
        return None
    rows = np.zeros(prog.A.shape[0], dtype=bool)
    # the blocks in the order of a lower bound on their floors before any solve (P(x~) is at
    # least the cheap value, t' = t / sigma >= t / ||M||_F): built, one public solve each,
    # until the next lower bound cannot beat the best floor found
    chosen = None
    blocks = [(t * math.sqrt(max(cheap, 0.0)) / fro if fro > 0 else math.inf, build)
              for cheap, fro, build in _norm_blocks(prog, supp, x)]
    for low, build in sorted(blocks, key=lambda fb: fb[0]):
        cap = best if chosen is None else min(best, chosen[0])
        if low >= cap:   # this block's floor, and every later one's, is at least low
            break
        built = build()
        if built is None:
            continue
        M, g, p0, p, sig = built
        y = M @ xs + g
        tp = t / sig
        floor = tp * math.sqrt(max(p0 + float(p @ x) - float(y @ y), 0.0))
        if floor < cap:
            chosen = (floor, M, g, p0, p, y, tp)
    if chosen is None:
        return None
    _, M, g, p0, p, y, tp = chosen
    my = M.T @ y
    cs = float(np.linalg.norm(c_noisy[supp]))
    centre = math.log(cs / (2.0 * float(np.linalg.norm(my)))) if cs > 0 and np.any(my) else \
        math.log(tp)
    const = p0 + float(y @ y) - 2.0 * float(y @ g)
    base = float(c_noisy @ x)

    def value(log_kappa: float) -> float:
        kappa = math.exp(log_kappa)
        direction = kappa * p - c_noisy
        direction[supp] -= 2.0 * kappa * my
        _, top = public_bounds(prog.A, prog.b, prog.dims, rows, [direction],
                               allow_unbounded=True, upper_only=True)
        if not np.isfinite(top[0]):
            return math.inf
        return tp * tp / (4.0 * kappa) + kappa * const + base + float(top[0])

    _, found = golden_min(value, centre - 4.0 * math.log(10.0), centre + 2.0 * math.log(10.0),
                          max(evaluations - 2, 0))
    if not math.isfinite(found):
        return None
    return max(found, 0.0) * (1 + 1e-9)


def _private_coordinate_radius(scp: Any, supp: np.ndarray, c_max: np.ndarray | None = None
                               ) -> tuple[float | None, str, tuple[np.ndarray, np.ndarray] | None]:
    """Public bound R on ``||x_S||_2`` at some optimal point, where it came from, and the
    public box ``(lo, hi)`` of ``x_S`` when the constraints alone bound it (else None).

    Per-coordinate bounds over the (public) constraints; a coordinate they leave unbounded
    that is an epigraph variable (``w_i * norm(x - p_i)``: ``t_i >= ||x - p_i||``) is bounded
    by the largest value its cone's rows take over the other variables' bounds
    (:func:`cvxdp.transform.epigraph.epigraph_bounds`: some optimal point has ``t_i`` tight);
    one that is a hypograph variable of an exponential cone (``w_k * log(u_k(x))``: ``t_k <=
    log(u_k)``) likewise, where ``c_max`` (the public sign bound of the objective's
    coefficients, :func:`_public_signs`) says its coefficient is never positive
    (:func:`cvxdp.transform.epigraph.exp_hypograph_bounds`).
    """
    n = scp.n
    no_private = np.zeros(scp.m, dtype=bool)
    lo, hi = np.full(n, -np.inf), np.full(n, np.inf)
    p_lo, p_hi = propagated_box(scp.A, scp.b, scp.dims, ~no_private, cones=True)
    if 2 * supp.size > BOX_SOLVES_MAX:
        # more than BOX_SOLVES_MAX two-sided solves: bound propagation's box (valid, exact on
        # boxes, simplices and row sums; with the cones' implied rows, epigraph variables get
        # their lower bound); the coordinates it leaves unbounded are solved for, except the
        # heads of second-order cones, which the epigraph bounds below take (trial 15's 200
        # private weights on squares: 400 solves, 2.6 s, all unbounded above)
        l_s, h_s = p_lo[supp].copy(), p_hi[supp].copy()
        open_ = ~(np.isfinite(l_s) & np.isfinite(h_s)) & ~np.isin(supp, _soc_heads(scp))
        if open_.any() and scp.dims.psd:
            # entries of a PSD block: a 2x2 minor bounds them by the diagonal ones (one solve
            # per block; max-cut's 300 off-diagonal entries took 600 SDP solves, trial 22a)
            c_lo, c_hi = psd_implied_box(scp, no_private, (p_lo, p_hi))
            l_s, h_s = np.maximum(l_s, c_lo[supp]), np.minimum(h_s, c_hi[supp])
            open_ = ~(np.isfinite(l_s) & np.isfinite(h_s)) & ~np.isin(supp, _soc_heads(scp))
        if open_.any():
            l_o, h_o = public_bounds(scp.A, scp.b, scp.dims, no_private,
                                     UnitDirections(n, supp[open_]), allow_unbounded=True)
            l_s[open_], h_s[open_] = np.maximum(l_s[open_], l_o), np.minimum(h_s[open_], h_o)
    else:
        l_s, h_s = public_bounds(scp.A, scp.b, scp.dims, no_private, UnitDirections(n, supp),
                                 allow_unbounded=True)
    lo[supp], hi[supp] = l_s, h_s
    src = "constraints"
    box = (l_s, h_s) if np.all(np.isfinite(l_s)) and np.all(np.isfinite(h_s)) else None
    if box is None:
        # bound the variables the unbounded epigraph cones read, then the epigraph variables
        d = scp.dims
        soc_start = d.zero + d.nonneg
        A = sp.csr_matrix(scp.A)
        need = set()
        tail, w_ranges = scp.exp_tail, {}
        if tail is not None and c_max is not None:
            E = sp.csr_matrix(tail.rows(n))
            cones = hypograph_cones(E, supp[~(np.isfinite(lo[supp]) & np.isfinite(hi[supp]))])
            need |= hypograph_members(E, cones)
            if 0 < 2 * len(cones) <= BOX_SOLVES_MAX:
                # the range of each cone's s_w = b_w - a_w'x over the public constraints (two
                # solves each; a simplex's interval arithmetic reaches 0, its solves do not)
                a_lo, a_hi = public_bounds(scp.A, scp.b, scp.dims, no_private,
                                           [E[3 * k + 2].toarray().ravel() for k in cones],
                                           allow_unbounded=True)
                w_ranges = {k: (tail.b[3 * k + 2] - a_hi[i], tail.b[3 * k + 2] - a_lo[i])
                            for i, k in enumerate(cones)}
        need |= epigraph_members(A, d.soc, soc_start, supp[~np.isfinite(hi[supp])])
        need -= set(int(j) for j in supp)
        need_idx = np.array(sorted(need), dtype=int)
        if need_idx.size:
            l_n, h_n = public_bounds(scp.A, scp.b, scp.dims, no_private,
                                     UnitDirections(n, need_idx), allow_unbounded=True)
            lo[need_idx], hi[need_idx] = l_n, h_n
        # CVXPY's own epigraph variables only: their coefficient's sign is DCP's (a variable
        # the user wrote, s >= ||x - p||, may carry a private coefficient of either sign)
        hi = np.where(user_columns(scp), hi,
                      epigraph_bounds(scp.A, scp.b, d.soc, soc_start, lo, hi,
                                      np.ones(scp.m, dtype=bool)))
        if tail is not None and c_max is not None:
            lo, hi = exp_hypograph_bounds(scp.A, scp.b, tail.rows(n), tail.b, lo, hi, c_max,
                                          w_ranges)
        src = "constraints and epigraph bounds"
    big = np.maximum(np.abs(lo[supp]), np.abs(hi[supp]))
    if not np.all(np.isfinite(big)):
        return None, "none (the public constraints do not bound the private coordinates)", None
    return float(np.sqrt(np.sum(big**2))) * (1 + 1e-9), src, box


def _soc_heads(scp: Any) -> np.ndarray:
    """The columns in the head rows of the second-order cone blocks (CVXPY's epigraph
    variables of norms and squares); public structure."""
    if not scp.dims.soc:
        return np.zeros(0, dtype=int)
    return np.unique(sp.csr_matrix(scp.A)[soc_starts(scp.dims)].indices)


def _public_signs(scp: Any, sb: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)`` per coordinate of ``c``: 0 where the objective tensor and the private
    parameters' sign attributes make the coordinate nonnegative (nonpositive) for every value
    of the parameters, else -inf (inf).  Structure and public constants only."""
    lo, hi = np.full(scp.n, -np.inf), np.full(scp.n, np.inf)
    pp = scp.meta.get("param_prob")
    params = [p for spec in sb.specs for p in spec.params]
    if pp is None or not any(p.is_nonneg() or p.is_nonpos() for p in params):
        return lo, hi
    Tq = sp.csr_matrix(objective_tensor(pp))
    n = Tq.shape[0] - 1  # CVXPY's variables; a lifted program's extra ones have c = 0
    lo[n:] = hi[n:] = 0.0
    pos = sp.csr_matrix((n, 0))
    neg = sp.csr_matrix((n, 0))
    for p in params:
        T = Tq[:n][:, parameter_columns(pp, p, "ObjectivePrivacy")]
        if p.is_nonneg():
            pos, neg = sp.hstack([pos, T.maximum(0)]), sp.hstack([neg, -T.minimum(0)])
        elif p.is_nonpos():
            pos, neg = sp.hstack([pos, -T.minimum(0)]), sp.hstack([neg, T.maximum(0)])
        else:  # no sign: both directions
            pos, neg = sp.hstack([pos, abs(T)]), sp.hstack([neg, abs(T)])
    c0 = np.asarray(Tq[:n][:, Tq.shape[1] - 1].toarray()).ravel()
    up = np.asarray(sp.csr_matrix(pos).sum(axis=1)).ravel()    # sum of terms that can be > 0
    down = np.asarray(sp.csr_matrix(neg).sum(axis=1)).ravel()  # ... that can be < 0
    lo[:n][(down == 0) & (c0 >= 0)] = 0.0
    hi[:n][(up == 0) & (c0 <= 0)] = 0.0
    return lo, hi


def _offset_from_c(scp: Any, sb: Any) -> np.ndarray | None:
    """``w`` with ``offset = w . c + (public)`` for every value of the private parameters, or None.

    CVXPY's objective tensor gives ``c = T_c theta + ...`` and ``offset = t_o . theta + ...`` on
    the private parameters' entries ``theta``; when ``t_o = T_c' w`` the constant term is a
    public linear function of ``c`` (e.g. ``c @ (x - 0.3)``: ``offset = -0.3 sum(c)``).  The
    tensors hold the model's structure and public constants only, so the test is public.
    """
    pp = scp.meta.get("param_prob")
    if pp is None:
        return None
    cols = np.concatenate([parameter_columns(pp, p, "ObjectivePrivacy")
                           for spec in sb.specs for p in spec.params])
    Tq = sp.csr_matrix(objective_tensor(pp))
    n = Tq.shape[0] - 1  # CVXPY's variables; a lifted program's extra ones have c = 0
    if n * cols.size > 4_000_000:  # too large for a dense solve: noise the offset instead
        return None
    Tc = Tq[:n][:, cols].toarray()
    to = Tq[n][:, cols].toarray().ravel()
    w, *_ = np.linalg.lstsq(Tc.T, to, rcond=None)
    if np.max(np.abs(Tc.T @ w - to)) > 1e-9 * max(1.0, float(np.max(np.abs(to)))):
        return None
    return np.concatenate([w, np.zeros(scp.n - n)])
