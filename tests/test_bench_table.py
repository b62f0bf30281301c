"""Issue 25 item 6: ``benchmarks/run.py --quick`` and ``cvxdp bench --quick`` print ONE table,
at most 100 characters wide, with units in the header and ratios to the reference, and nothing
the benchmark modules print or warn leaks into it."""

import importlib.util
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

# One row of each shape the benchmarks return (from a --quick --json run, rounded).
ROWS = [
    {'benchmark': 'covering', 'problem': 'covering_sdp', 'm': 200, 'dim': 4, 'eps': 1.0,
     'delta': 1e-06, 's': 20, 'T': 8, 'frac_cov': 0.9325, 'viol/s': 0.675, 'cost/OPT': 2.144,
     'ident/OPT': 1.895, 'nonpriv/OPT': 1.01, 'cov@OPT': 0.0, 't_priv': 0.005673, 't_exact':
     0.01459, 'ratio': 0.3889},
    {'benchmark': 'gaussians', 'problem': 'gaussian', 'd': 5, 'n': 50000, 'epsilon': 0.5,
     'method': 'cvxdp', 'maha_mean': 0.2377, 'rel_frob_cov': 0.2305, 'white_frob_cov': 113.1,
     'bottom': 0, 'time_s': 1.301, 'time_ratio': 458.5},
    {'benchmark': 'john', 'bench': 'john', 'problem': 'speed', 'size': 'n=1000,d=5',
     'private_s': 0.01473, 'sketched_s': 0.005336, 'iterations': 56, 'exact_s': 0.1039,
     'ratio': 7.051, 'sketched_ratio': 19.47},
    {'benchmark': 'john', 'bench': 'john', 'problem': 'utility:random', 'size': 'n=1000,d=5',
     'eps0': 1e-08, 'epsilon': 0.1, 'shape_ratio': 0.9971, 'shape_ratio_sd': 0.0001494,
     'inscribed_ratio': 0.9971, 'uniform_weights_ratio': 0.9619},
    {'benchmark': 'jordan', 'problem': 'S^r exp', 'size': 50, 'time_s': 0.0002489, 'floor':
     'eigh', 'floor_s': 0.0002063, 'ratio': 1.206},
    {'benchmark': 'jordan', 'problem': '20000 x SOC(3) normalized_exp', 'size': 60000,
     'time_s': 0.001626, 'floor': 'norm(xbar)', 'floor_s': 0.0005296, 'ratio': 3.07,
     'python_loop_s': 0.5247, 'speedup_vs_loop': 322.7},
    {'benchmark': 'jordan', 'problem': '20000 x SOC(3) build Product', 'size': 60000, 'time_s':
     0.006282},
    {'benchmark': 'meb', 'table': 'sec6', 'dataset': 'gaussian', 'rho': 0.3, 'gamma': 0.1,
     'n_paper': 197171718, 'n_run': 200000, 'scale': 'scaled', 'stop': '(ii)', 'iterations':
     881, 'dist_at_stop_over_ropt': 0.373, 'rows_per_iteration': 0.0589, 'seconds_at_paper_n':
     331.7, 'paper_seconds': 7200.0, 'paper_over_ours': 21.7, 'loops': 'numpy'},
    {'benchmark': 'meb', 'table': 'kernel', 'dataset': 'gaussian', 'n': 100000, 'gamma': 0.1,
     'iterations': 869, 'full_pass_s': 0.7305, 'index_numpy_s': 0.1847, 'index_numba_s':
     0.1547, 'speedup': 4.722, 'rows_per_iteration': 0.06211, 'loops': 'numba'},
    {'benchmark': 'meb', 'table': 'speed', 'n': 10000, 'd': 10, 'private_s': 0.1563, 'fptas_s':
     0.09512, 'exact_active_set_s': 0.1406, 'exact_socp_s': 1.387, 'socp_over_private': 8.875,
     'active_set_over_private': 0.8993, 'radius_ratio': 0.7766, 'fptas_ratio': 1.157,
     'uncovered': 267, 'uncovered_bound': 1981.0},
    {'benchmark': 'meb', 'table': 'utility', 'dataset': 'gaussian', 'n': 20000, 'model':
     'central', 'rho': 0.1, 'gamma': 0.2, 'radius_ratio': 0.7584, 'paper_radius_factor': 1.44,
     'uncovered': 755, 'uncovered_bound': 6264.0, 'seconds': 0.1394},
    {'benchmark': 'mwu', 'table': 'per_iteration', 'problem': 'SDP r=20', 'm': 100, 'iter_ms':
     0.2224, 'eigh+matvec_ms': 0.05708, 'ratio': 3.896},
    {'benchmark': 'mwu', 'table': 'utility', 'problem': 'LP 40x15', 'setting': 'constraint',
     'sensitivity': 0.001, 'epsilon': 1.0, 'max_violation': 0.05833, 'objective_gap': 0.0,
     'alpha_guaranteed': float('inf'), 'alpha_paper': 15.75, 'T': 64, 'private_s': 0.04249,
     'exact_s': 0.0006092, 'time_ratio': 69.74},
    {'benchmark': 'regression', 'problem': 'least_squares', 'n': 1000, 'd': 5, 'epsilon': 1.0,
     'delta': 1e-06, 'mechanism': 'ssp', 'r': 300, 'sigma': 6.084, 'rel_error': 0.3473,
     'rel_error_std': 0.1332, 'time_s': 0.001065, 'ratio_vs_lstsq': 3.695, 'ratio_vs_cvxpy':
     0.0921},
    {'benchmark': 'transform', 'problem': 'lp', 'size': '100x30', 'rows': 130, 'cols': 30,
     'compile_first_s': 0.0054, 'compile_cached_s': 0.001, 'to_scp_s': 0.0011,
     'to_scp_with_sens_s': 0.0025, 'from_scp_s': 0.0005, 'exact_s': 0.0025,
     'transform_vs_exact': 1.153, 'constraint_inf': 0.3},
]


def _run_module():
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "benchmarks" / "run.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_table_of_fixed_rows_fits_100_columns_with_units_and_ratios():
    from cvxdp.bench import format_bench_table

    table = format_bench_table(ROWS, width=100)
    lines = table.splitlines()
    assert max(len(line) for line in lines) <= 100
    assert "time (s)" in lines[0] and "ref (s)" in lines[0] and "time/ref" in lines[0]
    # the ratio is time / reference: covering's first row 0.005666 / 0.01456 = 0.389
    first = next(line for line in lines if line.startswith("covering_sdp m=200"))
    assert "0.389" in first.split()
    for name in {r["benchmark"] for r in ROWS}:  # every benchmark named once, on its own line
        assert sum(line.startswith(f"[{name}]") for line in lines) == 1
    # no number is cut: every result token is a whole key=value
    assert "~" not in table
    # meb's sec6 row: an extrapolated time (seconds at the paper's n) is marked, and its
    # benchmark's line says what the mark means; measured times carry no mark
    sec6 = next(line for line in lines if line.startswith("gaussian rho=0.3"))
    assert sec6.split()[3:6] == ["332*", "7.2e+03", "0.0461"]
    at = lines.index(next(x for x in lines if x.startswith("[meb]")))
    assert "time *: extrapolated to the paper's n" in " ".join(lines[at:at + 2])
    assert [x for x in lines if "*" in x] == [lines[at], sec6]  # no other time is marked


def test_module_prints_and_warnings_stay_out_of_the_table(tmp_path, monkeypatch, capsys):
    (tmp_path / "bench_noisy.py").write_text(
        "import warnings\n"
        "def main(quick):\n"
        "    print({'raw': 'dict line'})\n"
        "    warnings.warn('a leaked warning')\n"
        "    return [{'problem': 'p', 'n': 10, 'private_s': 0.5, 'exact_s': 2.0, 'err': 0.1}]\n")
    (tmp_path / "bench_argv.py").write_text("def main(argv=None):\n    return 0\n")
    (tmp_path / "bench_nomain.py").write_text("X = 1\n")
    run = _run_module()
    monkeypatch.setattr(run, "HERE", tmp_path)
    assert run.main(["--quick"]) == 0
    cap = capsys.readouterr()
    assert "raw" not in cap.out and "leaked" not in cap.out + cap.err
    assert max(len(line) for line in cap.out.splitlines()) <= 100
    row = next(line for line in cap.out.splitlines() if line.startswith("p n=10"))
    assert row.split()[2:5] == ["0.5", "2", "0.25"]
    assert "UserWarning x1" in cap.out and "bench_argv.py, bench_nomain.py" in cap.out
    # progress on stderr: each benchmark as it starts and ends
    assert "[1/3] argv: not run" in cap.err and "[2/3] noisy: 1 rows in" in cap.err
    assert "[1/3]" not in cap.out


def test_cvxdp_bench_runs_a_fresh_interpreter_with_one_blas_thread(monkeypatch):
    import cvxdp.bench

    seen = {}

    def fake_call(argv, env):
        seen.update(argv=argv, env=env)
        return 0

    monkeypatch.setattr(cvxdp.bench.subprocess, "call", fake_call)
    assert cvxdp.bench.run_benchmarks(quick=True) == 0
    assert seen["argv"][1].endswith("run.py") and seen["argv"][2:] == ["--quick"]
    assert seen["env"]["OPENBLAS_NUM_THREADS"] == "1" and seen["env"]["OMP_NUM_THREADS"] == "1"
    from cvxdp.cli import main

    assert main(["bench", "--quick", "--only", "covering", "mwu"]) == 0
    assert seen["argv"][2:] == ["--quick", "--only", "covering", "mwu"]


@pytest.mark.slow
def test_quick_run_prints_one_narrow_table_without_warnings():
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick"],
                          capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert max(len(line) for line in proc.stdout.splitlines()) <= 100
    assert "Warning:" not in proc.stdout + proc.stderr
    assert "{'" not in proc.stdout  # no raw dict lines
    assert proc.stdout.count("time (s)") == 1  # one table
