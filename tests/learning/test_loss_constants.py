"""The per-row loss's public constants against finite differences on the gallery's losses."""

from __future__ import annotations

import numpy as np
import pytest

from cvxdp.learning.detect import detect
from cvxdp.learning.domain import theta_bound
from tests.learning.gallery import GALLERY, data

DATA = data(n=50)


@pytest.mark.parametrize("name", sorted(GALLERY))
def test_lipschitz_smoothness_and_smoothing_gap_hold_on_the_domain(name):
    prob, spec = GALLERY[name](*DATA)
    model = detect(prob, spec)
    R, B = model.feature_bound, model.label_bound
    P = R * theta_bound(model)
    loss = model.loss
    rng = np.random.default_rng(0)
    p = rng.uniform(-P, P, 20_000)
    y = rng.uniform(-B, B, p.size) if B else np.zeros(p.size)
    step = 1e-5
    slope = (loss.values(p + step, y) - loss.values(p - step, y)) / (2 * step)
    assert np.max(np.abs(slope)) <= loss.lipschitz(P, B) * (1 + 1e-6) + 1e-9
    h = 0.05
    smooth = loss.smoothed(h) if not loss.smooth else loss
    curv = (smooth.values(p + 1e-3, y) - 2 * smooth.values(p, y)
            + smooth.values(p - 1e-3, y)) / 1e-6
    assert np.max(curv) <= smooth.smoothness(B) * (1 + 1e-4) + 1e-6
    gap = loss.values(p, y) - smooth.values(p, y)
    assert np.min(gap) >= -1e-12
    assert np.max(gap) <= (loss.smoothing_error(h) if not loss.smooth else 0.0) + 1e-12
    # the smoothed loss's slope stays within the unsmoothed bound
    s_slope = (smooth.values(p + step, y) - smooth.values(p - step, y)) / (2 * step)
    assert np.max(np.abs(s_slope)) <= loss.lipschitz(P, B) * (1 + 1e-6) + 1e-9
