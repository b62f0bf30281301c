"""Input perturbation with a robust counterpart: the second mechanism for general models.

Release the private parameters once with noise, then solve EXACTLY (Clarabel or SCS) a robust
counterpart of the user's model built from the noisy values, tightened so that the released
point is feasible for the TRUE data: with probability ``>= 1 - beta`` (``noise="gaussian"``) or
with certainty (``noise="truncated"``, bounded noise).  Everything after the noise is
post-processing (Dwork & Roth 2014, Prop. 2.1), so a failed (infeasible) counterpart is a public
fact and is reported by status, never by an exception.

Where the counterpart is built (and why the canonical level)
------------------------------------------------------------
The counterpart is built on the canonical cone program ``A x + s = b, s in K`` of
:func:`cvxdp.transform.to_scp`, not on CVXPY expressions: CVXPY's parametric program stores the
exact linear map ``theta -> [-A | b]`` (``param_prob.A``, the tensor
:mod:`cvxdp.transform.sensitivity` already reads), so for EVERY DPP placement of the parameter (``A
@ x <= b``, ``x @ A``, ``trace(A_i @ X)``, a parameter inside ``norm(A @ x - b)``, ...) the
coefficient of each parameter entry ``theta_k`` in each canonical slack ``s_i`` is the affine
function ``v_ik(x) = sum_j T[i + m j, k] [x; 1]_j``. Both the map (``T`` restricted to the private
entries) and the noisy data (CVXPY's ``apply_parameters`` at the released values) come from
:mod:`cvxdp.transform.parametric`; this package reads no CVXPY internals itself. One code path
covers orthant, second-order and PSD rows; the noisy data ``[-A~ | b~] = T [theta~; 1]`` is computed
from the noisy parameter vector only (public parameters at their values), and the user's
``cp.Parameter`` objects are never written. The point is mapped back with
:func:`cvxdp.transform.from_scp`.

Sensitivity (what the user declared -> l2 sensitivity of the release)
--------------------------------------------------------------------
A spec declares ``Delta_p``: every entry of parameter ``p`` moves by at most ``Delta_p`` between
neighbours (all entries at once).  The mechanism releases ``theta~_k = theta_k + Delta_k
sigma_u g_k`` (``g ~ N(0, I_K)``, ``K`` = number of private entries): the scaled vector
``theta / Delta`` moves by at most 1 per entry, so its l2 sensitivity is ``sqrt(K)``, and
``sigma_u`` is calibrated for that (analytic Gaussian for (epsilon, delta), ``sqrt(K) /
sqrt(2 rho)`` for rho-zCDP).  In the parameter's own units the l2 sensitivity of parameter ``p``
is ``Delta_p sqrt(size_p)`` and of all of them ``sqrt(sum_p size_p Delta_p^2)`` (reported).

Tightening
----------
With ``w_ik(x) = Delta_k sigma_u v_ik(x)`` the true slack is ``s_i = s~_i - sum_k g_k w_ik(x)``
and ``|sum_k g_k w_ik(x)| <= ||g_{S_i}||_2 ||w_i(x)||_2`` for every ``x`` (Cauchy-Schwarz), so a
bound on the noise norm holds uniformly in ``x`` -- the dependence of the solution on the noise
does not matter.  Units: each private orthant row, and each second-order / PSD block with a
private row (its change ``d`` obeys ``||d||_2 <= ||g_{S_B}|| ||W_B(x)||_F``).  With ``B_u`` a
bound on ``||g_{S_u}||_2`` and ``tau_u >= B_u ||W_u(x)||_F`` the counterpart is

* orthant row:  ``s~_i - tau_u >= 0`` (``a~_i'x + tau <= b~_i``; ``b~_i - tau`` for private b);
* SOC block ``(t, u_Q, u_P)`` with private rows ``P``: ``(t~ - tau_u, u~_Q, w) in SOC`` and
  ``w >= ||u~_P|| + tau_u`` (the ``- tau_u`` on ``t`` only when ``t`` is private), since
  ``||u_P|| <= ||u~_P|| + ||d||`` -- the shift stays inside the norm, so epigraph forms such as
  ``quad_over_lin`` (rotated cones) stay feasible;
* PSD block ``S``: ``S~ - tau_u I >> 0`` (``||D||_op <= ||D||_F = ||svec D||_2``);
* SDP data row ``<C~, M(x)> <= b`` with ``C`` an (r, c) parameter (``trace(C @ X) <= b``),
  when ``sqrt r + sqrt c < sqrt(r c)``: ``tau_u >= sigma_u (B_op ||M_1||_* + B_u ||M - M_1||_F)``
  with ``M_1`` free and ``B_op = sqrt r + sqrt c + t`` a Gaussian spectral-norm tail (for
  ``M = X >> 0`` and ``M_1 = M`` this is ``<C~, X> + r_op tr(X) <= b``).

``noise="gaussian"``: ``B_u = sqrt(F^-1_{chi2(k_u)}(1 - beta / N))`` (``k_u = |S_u|``, ``N``
units), the exact quantile of ``||g_S||`` (``||g_S||^2`` is chi-square with ``k`` degrees of
freedom; never above the concentration bound ``sqrt k + sqrt(2 ln(N / beta))``, Boucheron,
Lugosi & Massart 2013, Thm 5.6, which is used where ``beta / N`` underflows), and a union
bound give feasibility for the true data with probability ``>= 1 - beta``.

``noise="laplace"``: ``g_k`` i.i.d. standard Laplace at scale ``sigma_u = K / epsilon`` (the
l1 sensitivity of ``theta / Delta`` is ``K``; pure epsilon-DP, Dwork, McSherry, Nissim & Smith
2006); ``B_u`` from :func:`cvxdp.privacy.laplace.laplace_norm_bound` (a union bound on ``max
|g_i|``, or Bernstein's inequality or Chernoff's bound on the truncated ``sum g_i^2``) with the
same union over units.
``noise="auto"`` (the default) takes the family with the smaller ``max_u B_u sigma_u``
(:func:`cvxdp.solvers.perturbation.noise.choose_noise`).

``noise="truncated"``: ``g`` is drawn conditioned on ``E = {||g_{S_u}|| <= B_u for all u}``
(rejection sampling; ``E`` depends on public structure only) with ``B_u`` the same quantile at
``q / N``, so ``P(not E) <= q`` and the released point is feasible for the true data
with certainty (up to the conic solver's tolerance).  Privacy of a mechanism conditioned on a
data-independent noise event of probability ``>= 1 - q``: if the untruncated one is
``(epsilon, delta_G)``-DP, the truncated one is ``(epsilon, (delta_G + e^epsilon q) / (1 - q))``
-DP (proof: ``P'(E) <= P(E) / (1 - q)`` and ``P(E) <= (1 - q) P'(E) + q`` for the neighbour).
cvxdp takes ``delta_G = delta / 2`` and ``q = (delta / 2) / (e^epsilon + delta)``, which makes
the total exactly ``delta``.  This is the bounded-support idea of Benvenuti, Bialy, Dennis &
Hale (2025) (truncated Laplace there, per entry); the Gaussian keeps the l2 geometry of a
parameter with many entries.  It needs an (epsilon, delta) budget (the truncated mechanism has
no zCDP bound: its support moves with the data).

Equality rows with private data cannot be tightened (no interior), and no private release can
satisfy them exactly for the true data (the point would reveal the data).  The counterpart keeps
each such row inside a band, ``-tau_u <= s~_i <= tau_u`` (two inequality rows), which the true
optimum satisfies on the same noise event (``|s~_i(x*)| = |g . w_i(x*)| <= tau_u``), so the
counterpart is feasible whenever the true model is; the released point violates the TRUE
equality by at most ``|s~_i| + |g . w_i(x)| <= 2 tau_u`` (w.p. ``>= 1 - beta``, or surely for
truncated noise).  The largest ``2 tau_u`` over the private equality rows is released as
``info["equality_violation_bound"]`` (canonical units; a function of the noisy release only).

References
----------
Munoz, Syed, Vassilvitskii & Vitercik, "Private optimization without constraint violations",
AISTATS 2021 (private right-hand sides, shifted b); Benvenuti, Bialy, Dennis & Hale, "Differentially
private linear programming: reduced sub-optimality and guaranteed constraint satisfaction", 2025
(truncated noise, certain feasibility); Ben-Tal, El Ghaoui & Nemirovski, Robust Optimization,
2009, Ch. 1-2 (robust counterparts of uncertain conic rows); Balle & Wang 2018, Thm 8; Bun &
Steinke 2016, Prop. 1.6.
"""


from cvxdp.solvers.perturbation.counterpart import counterpart
from cvxdp.solvers.perturbation.entries import (
    PrivateEntries,
    objective_map,
    private_entries,
    release_parameters,
    released_user_values,
)
from cvxdp.solvers.perturbation.noise import (
    _MAX_DRAWS,
    NOISES,
    PERTURBATION_THEOREM,
    TRUNCATION_REFERENCE,
    NoisePlan,
    _bounds,
    choose_noise,
    draw_noise,
    noise_plan,
)
from cvxdp.solvers.perturbation.plan import RobustPlan, robust_plan
from cvxdp.solvers.perturbation.solve import (
    FALLBACK_BETAS,
    _solve_tight,
    noisy_objective,
    noisy_program,
    solve_robust_counterpart,
)

__all__ = ["PrivateEntries", "RobustPlan", "private_entries", "robust_plan", "noise_plan",
           "NoisePlan", "release_parameters", "solve_robust_counterpart", "counterpart",
           "TRUNCATION_REFERENCE", "PERTURBATION_THEOREM", "FALLBACK_BETAS", "draw_noise",
           "noisy_program", "noisy_objective", "objective_map", "released_user_values",
           "_MAX_DRAWS", "_bounds", "_solve_tight", "NOISES", "choose_noise"]
