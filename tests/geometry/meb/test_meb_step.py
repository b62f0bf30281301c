"""The DP-MMEB update step (issue 24): Lemma 3.2's recursion, its T, and privacy for every step."""

import dataclasses
import math

import numpy as np
import pytest

from cvxdp.errors import PrivacySpecError
from cvxdp.geometry.meb.exact import reference_ball
from cvxdp.geometry.meb.meb_private import (
    SCHEDULES,
    STEPS,
    dp_mmeb,
    lemma32_iterations,
    mmeb_constants,
)
from cvxdp.geometry.meb.meb_solve import resolve_schedule


@pytest.mark.parametrize("gamma", [0.1, 0.2, 0.35, 0.5, 0.9])
@pytest.mark.parametrize("div", [2.0, 3.0, 8.0])
def test_T_is_the_first_step_where_the_recursion_reaches_gamma(gamma, div):
    """Iterate y <- (1 - eta) y + eta^2 from y0 = 35 (independent of the closed form)."""
    eta, y, t = gamma**2 / div, 35.0, 0
    while y > gamma**2:
        y, t = (1 - eta) * y + eta**2, t + 1
    T = lemma32_iterations(gamma, eta, 35.0)
    assert T in (t, t + 1)      # the closed form rounds up; the loop may land on the boundary
    assert T < t + 2


def test_default_T_halves_the_formula_and_the_step_is_lemma_32s():
    c = mmeb_constants(SCHEDULES["practical"], 0.2, 1e-3)
    old = mmeb_constants(SCHEDULES["practical-b8"], 0.2, 1e-3)
    assert c["step"] == pytest.approx(0.02) and old["step"] == pytest.approx(0.005)
    assert (c["T"], old["T"]) == (370, 783)
    with pytest.raises(PrivacySpecError):
        lemma32_iterations(0.2, 0.05, 35.0)          # eta >= gamma^2: no fixed point below


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_noiseless_step_reaches_gamma_r_opt_from_the_worst_start_within_T(seed):
    """Alg. 2 with step gamma^2/2 at r = r_opt from ||theta0 - theta_opt||^2 = 34.9 r_opt^2:
    within T (recursion) steps the centre is within gamma r_opt (Lemma 3.2 as extended)."""
    rng = np.random.default_rng(seed)
    pts = rng.normal(size=(3000, 4)) * rng.uniform(0.5, 2.0, 4)
    ball, _, _ = reference_ball(pts)
    gamma = 0.3
    eta = gamma**2 / 2
    u = rng.normal(size=4)
    theta = ball.center + math.sqrt(34.9) * ball.radius * u / np.linalg.norm(u)
    T = lemma32_iterations(gamma, eta, 35.0)
    r = ball.radius * (1 + 1e-9)            # r >= r_opt up to the solver's tolerance
    for _ in range(T):
        out = np.linalg.norm(pts - theta, axis=1) > r
        if not out.any():
            break
        theta = theta + eta * (pts[out].mean(axis=0) - theta)
    assert np.linalg.norm(theta - ball.center) <= gamma * ball.radius * (1 + 1e-6)


class RecordingRNG:
    def __init__(self, seed):
        self.g = np.random.default_rng(seed)
        self.draws = []

    def normal(self, loc=0.0, scale=1.0, size=None):
        self.draws.append((float(scale), size))
        return self.g.normal(loc, scale, size)


@pytest.mark.parametrize("step", sorted(STEPS))
def test_every_step_spends_exactly_rho(step):
    """Privacy does not depend on the step: with each named step (and its T), the recorded
    noise gives sum sensitivity^2 / (2 sigma^2) = rho over all queries (Bun-Steinke)."""
    rng = np.random.default_rng(1)
    pts = rng.normal(size=(300, 3))
    theta0, r0, rho, gamma = np.zeros(3), 4.0, 0.7, 0.9
    sched = dataclasses.replace(resolve_schedule("practical", None, step), kappa=-1e30)
    rec = RecordingRNG(2)
    run = dp_mmeb(pts, gamma=gamma, r=0.01, theta0=theta0, r0=r0, rho=rho, beta=1e-3,
                  schedule=sched, rng=rec, trace=True)
    T = mmeb_constants(sched, gamma, 1e-3)["T"]
    assert run.iterations == T
    counts = [s for s, size in rec.draws if size is None]
    sums = [s for s, size in rec.draws if size is not None]
    g = [2 * (sched.keep * r0 + np.linalg.norm(th - theta0)) for th in run.trace[:T]]
    assert sum(1 / (2 * s**2) for s in counts) == pytest.approx(rho / 2, rel=1e-9)
    assert sum(gt**2 / (2 * s**2) for gt, s in zip(g, sums, strict=True)) == pytest.approx(
        rho / 2, rel=1e-9)


def test_unknown_step_is_refused():
    with pytest.raises(PrivacySpecError, match="unknown step"):
        resolve_schedule("practical", None, "huge")
