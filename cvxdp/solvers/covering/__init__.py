"""Covering programs under high-sensitivity constraint privacy (Song et al. 2025, Sec. 5.1, App. B).

:mod:`~cvxdp.solvers.covering.covering` (``covering_sdp`` / ``covering_lp`` / ``covering_socp``),
:mod:`~cvxdp.solvers.covering.covering_model` (user models with ``ConstraintSetPrivacy``),
:mod:`~cvxdp.solvers.covering.covering_private` (schedule, oracles, private scaling),
:mod:`~cvxdp.solvers.covering.dense_mwu` (the dense MWU, Alg. 3),
:mod:`~cvxdp.solvers.covering.bingham` (Bingham / von Mises--Fisher samplers) and
:mod:`~cvxdp.solvers.covering.covering_instances` (random instances).
"""
