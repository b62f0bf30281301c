"""``benchmarks/bench_auto.py``: a certificate's infinite bound is printed as ``inf`` (with the
status reason the certificate carries), never as ``nan``.

The SDP rows of the table printed the MWU's certified violation as ``nan``: the certificate
said ``inf`` (no test of the feasibility-only answer, the reason in ``status_reason``), and
the table's median dropped every non-finite value, so an all-``inf`` column became ``nan``.
"""

from __future__ import annotations

import importlib.util
import math
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _bench():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    path = ROOT / "benchmarks" / "bench_auto.py"
    spec = importlib.util.spec_from_file_location("bench_auto", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_infinite_certified_bounds_are_printed_as_inf():
    bench = _bench()
    rows = [{"cviol": math.inf}, {"cviol": math.inf}]
    assert bench._med(rows, "cviol") == math.inf
    # one seed finite, one infinite: the median of the two
    assert bench._med([{"cviol": 0.5}, {"cviol": math.inf}], "cviol") == math.inf
    assert bench._med([{"cviol": 0.5}, {"cviol": 0.25}, {"cviol": math.inf}], "cviol") == 0.5
    # a refused run (no value) and a missing point (nan) are still left out
    assert bench._med([{"status": "refused"}, {"cviol": math.nan}, {"cviol": 0.25}],
                      "cviol") == 0.25
    assert math.isnan(bench._med([{"status": "refused"}], "cviol"))
