import ast
import pathlib

import numpy as np
import pytest
from scipy import stats

from cvxdp import BudgetError
from cvxdp.privacy import (
    PrivacyAccountant,
    PureDP,
    as_generator,
    calibrate_gaussian,
    exponential_mechanism,
    gaussian_mechanism,
)
from cvxdp.privacy.mechanisms import exponential_probabilities

ROOT = pathlib.Path(__file__).resolve().parents[2] / "cvxdp"


def test_exponential_mechanism_frequencies_chi_square():
    scores = np.array([0.0, 1.0, 2.0, 4.0, 3.5])
    eps, sens, n = 1.3, 0.7, 20000
    rng = as_generator(12345)
    draws = np.array([exponential_mechanism(scores, epsilon=eps, sensitivity=sens, rng=rng)[0]
                      for _ in range(n)])
    counts = np.bincount(draws, minlength=scores.size)
    expected = n * np.exp(eps * scores / (2 * sens)) / np.exp(eps * scores / (2 * sens)).sum()
    assert np.allclose(exponential_probabilities(scores, epsilon=eps, sensitivity=sens) * n,
                       expected)
    chi2 = stats.chisquare(counts, expected)
    assert chi2.pvalue > 1e-3


def test_exponential_mechanism_is_safe_for_huge_scores():
    idx, _ = exponential_mechanism([1e300, 0.0, -1e300], epsilon=1.0, sensitivity=1.0, rng=0)
    assert idx == 0


def test_gaussian_mechanism_noise_scale_and_determinism():
    x = np.zeros(200000)
    out, rec = gaussian_mechanism(x, sensitivity=2.0, epsilon=0.5, delta=1e-6, rng=7)
    sigma = calibrate_gaussian(epsilon=0.5, delta=1e-6, sensitivity=2.0)
    assert rec.params["sigma"] == pytest.approx(sigma)
    # std of 2e5 normals: relative standard error 1/sqrt(2n) = 0.0016; allow 5 s.e.
    assert out.std() == pytest.approx(sigma, rel=5 / np.sqrt(2 * x.size))
    again, _ = gaussian_mechanism(x, sensitivity=2.0, epsilon=0.5, delta=1e-6, rng=7)
    assert np.array_equal(out, again)


def test_mechanisms_spend_before_drawing():
    acct = PrivacyAccountant(PureDP(0.5))
    exponential_mechanism([1, 2], epsilon=0.5, sensitivity=1, accountant=acct, rng=0)
    with pytest.raises(BudgetError):
        exponential_mechanism([1, 2], epsilon=0.1, sensitivity=1, accountant=acct, rng=0)
    assert len(acct.ledger) == 1


def test_bad_inputs():
    with pytest.raises(ValueError, match="NaN"):
        gaussian_mechanism([np.nan], sensitivity=1, epsilon=1, delta=1e-6)
    with pytest.raises(ValueError, match="NaN or inf"):
        exponential_mechanism([np.inf, 0], epsilon=1, sensitivity=1)
    with pytest.raises(BudgetError, match="sensitivity must be > 0"):
        exponential_mechanism([1, 0], epsilon=1, sensitivity=0)
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        as_generator(np.random.RandomState(0))


def test_rng_helper_seeds_deterministically():
    assert as_generator(3).random() == as_generator(3).random()
    g = np.random.default_rng(1)
    assert as_generator(g) is g
    assert isinstance(as_generator(None), np.random.Generator)


@pytest.mark.parametrize("layer", ["privacy", "jordan"])
def test_pure_layers_never_import_cvxpy(layer):
    for path in (ROOT / layer).glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            assert not any(n.split(".")[0] == "cvxpy" for n in names), path


def test_float_limits_of_numpy_samplers_are_computed_and_recorded():
    # issue 21 item 6: the Gumbel sampler is not exact; its delta is computed, not hidden.
    from cvxdp.privacy.mechanisms import exponential_float_delta, sampler_float_limits

    lim = sampler_float_limits()
    # independent forms: U = 1 - 2^-53 gives -log(-log U) ~ 53 ln 2; U = 2^-53 gives -log(53 ln 2)
    assert lim["gumbel_max"] == pytest.approx(53 * np.log(2), rel=1e-15)
    assert lim["gumbel_min"] == pytest.approx(-np.log(53 * np.log(2)), rel=1e-14)
    assert lim["gumbel_tv_per_candidate"] == pytest.approx(
        2.0**-53 * (2 + (53 * np.log(2) + np.log(53 * np.log(2))) / np.e), rel=1e-12)
    assert lim["normal_max_abs"] == pytest.approx(3.6541528853610088 + np.sqrt(106 * np.log(2)))
    assert lim["normal_tail_mass"] == pytest.approx(2 * stats.norm.sf(lim["normal_max_abs"]))
    draws = np.random.default_rng(0).gumbel(size=200000)
    assert lim["gumbel_min"] <= draws.min() and draws.max() <= lim["gumbel_max"]
    _, rec = exponential_mechanism([0.0, 1.0, 2.0], epsilon=0.5, sensitivity=1.0, rng=0)
    want = (1 + np.exp(0.5)) * 3 * lim["gumbel_tv_per_candidate"]
    assert rec.params["float_delta"] == pytest.approx(want, rel=1e-12)
    assert 1e-15 < want < 1e-13
    assert exponential_float_delta(candidates=3, epsilon=0.5) == rec.params["float_delta"]


@pytest.mark.parametrize("bits,scores", [(12, [0.0, 0.0]), (12, [0.0, 2.0]),
                                         (12, [0.0, 1.0, 3.0, 3.5])])
def test_gumbel_grid_total_variation_within_the_coupling_bound(bits, scores):
    # numpy's Gumbel-max on a b-bit grid instead of 53 bits, enumerated exactly: the distance
    # of the sampled argmax law from the softmax stays below m 2^-b (2 + range / e), the bound
    # sampler_float_limits() uses at b = 53.
    n = 2**bits
    g = np.sort(-np.log(-np.log(np.arange(1, n, dtype=float) / n)))
    s = np.asarray(scores)
    m = s.size
    p = np.zeros(m)
    for i in range(m):
        logp = np.zeros(n - 1)
        for j in range(m):
            if j != i:  # j loses to i (ties go to the lower index, as np.argmax)
                c = np.searchsorted(g, s[i] - s[j] + g, side="right" if i < j else "left")
                with np.errstate(divide="ignore"):
                    logp += np.log(c / (n - 1))
        p[i] = np.exp(logp).sum() / (n - 1)
    ideal = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
    tv = 0.5 * np.abs(p - ideal).sum()
    bound = m * 2.0**-bits * (2 + (g[-1] - g[0]) / np.e)
    assert 0 < tv <= bound
    assert tv <= 0.75 * m * 2.0**-bits  # what the docs quote (measured ~0.3 m 2^-b)


def test_exponential_float_delta_at_huge_epsilon_is_capped_not_an_overflow():
    """Issue 22 gallery: epsilon=1e6 raised a raw OverflowError from math.exp(eps)."""
    from cvxdp.privacy.mechanisms import exponential_float_delta

    assert exponential_float_delta(candidates=3, epsilon=1e6) == 1.0
    assert exponential_float_delta(candidates=3, epsilon=700.0) == 1.0
    small = exponential_float_delta(candidates=3, epsilon=1.0)
    assert 0 < small < 1e-13
