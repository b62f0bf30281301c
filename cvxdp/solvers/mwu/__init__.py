"""The noisy-oracle MWU for general models (Song, Xue & Zhang 2025, Sec. 5.2 and App. C).

:mod:`~cvxdp.solvers.mwu.solve` (the private solve of an LP / SOCP / SDP model),
:mod:`~cvxdp.solvers.mwu.mwu_form` (a model in the MWU's form),
:mod:`~cvxdp.solvers.mwu.private_scp` (noise, schedule, accounting),
:mod:`~cvxdp.solvers.mwu.mwu` (the MWU loop over a symmetric cone) and
:mod:`~cvxdp.solvers.mwu.oracles` (the oracles).  The public-part helpers they share with the
perturbation family are in :mod:`cvxdp.solvers.public_part`.
"""
