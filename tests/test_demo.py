"""`cvxdp demo`: every kind of model, the documented columns, sane seeded numbers."""

import pytest

from cvxdp.cli import main
from cvxdp.demo import DEMO_COLUMNS, demo_rows


@pytest.fixture(scope="module")
def rows():
    return demo_rows(seed=0)


def test_columns_and_one_row_per_kind(rows):
    assert DEMO_COLUMNS == ["problem", "size", "epsilon", "delta", "status", "exact value",
                            "private value", "quality", "time exact (s)", "time private (s)"]
    kinds = ["LP", "SDP", "covering SDP", "John ellipsoid", "enclosing ball", "least squares",
             "Gaussian"]
    assert len(rows) == len(kinds)
    for kind, row in zip(kinds, rows, strict=True):
        assert kind in row["problem"]
        assert set(DEMO_COLUMNS) <= set(row)
        assert row["epsilon"] > 0 and 0 < row["delta"] < 1
        assert row["status"] in ("optimal_inaccurate", "user_limit", "inaccurate")
        assert row["time exact (s)"] >= 0 and row["time private (s)"] > 0


def test_seeded_quality_numbers(rows):
    m = {r["problem"].split(",")[0]: r["metrics"] for r in rows}
    assert m["LP"]["max_violation"] < 0.2
    assert m["SDP"]["max_violation"] < 0.3
    assert m["covering SDP"]["cost_ratio"] < 1.5 and m["covering SDP"]["frac_covered"] > 0.85
    john = m["John ellipsoid"]
    assert john["volume_ratio"] > john["uniform_ratio"] and john["inscribed"] == 1
    assert 0.95 < m["minimum enclosing ball (DP-MEB)"]["radius_ratio"] < 1.2
    assert m["least squares (noisy sufficient statistics)"]["relative_error"] < 0.02
    g = m["Gaussian"]
    assert g["mahalanobis_mean_error"] < 0.1 and g["rel_frobenius_cov_error"] < 0.1


def test_cli_demo_prints_the_table(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    for col in DEMO_COLUMNS:
        assert col in out
    assert "minimum enclosing ball" in out


def test_plot_option_writes_pngs(tmp_path):
    pytest.importorskip("matplotlib")
    from cvxdp.plots import write_demo_plots

    paths = write_demo_plots(str(tmp_path), seed=0)
    assert [p.name for p in paths] == ["ball.png", "ellipsoid.png", "privacy_utility.png"]
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 10_000
