"""Scale benchmark: the private MEB and private least squares over a Dask array read from disk.

``python benchmarks/bench_scale.py [--n 10000000] [--d 10] [--workers 2] [--chunk 1000000]
[--dir /tmp/cvxdp_scale] [--accuracy 0.5] [--persist] [--no-meb] [--john-gaussian]``

1. Writes an ``n x (d+1)`` float64 dataset to ``DIR/data.npy`` block by block (an ``.npy``
   memmap opened with ``numpy.lib.format.open_memmap``; the client never holds more than one
   block): ``d`` coordinates of points in ``[-1, 1]^d`` (mixture of a uniform cube and a dense
   Gaussian cluster) and a response ``y = x beta + noise``, with a few NaN and out-of-domain rows.
2. Starts ``distributed.LocalCluster(n_workers=W, processes=True, threads_per_worker=1)`` and
   builds a Dask array whose blocks are read by the workers from the memmap (``da.from_delayed``
   of ``np.load(mmap_mode="r")[lo:hi]``): nothing of the data passes through the client.
3. Runs ``cvxdp.least_squares(X, y).solve_private`` (ssp, one reduction) and
   ``cvxdp.min_enclosing_ball(X).solve_private`` (one reduction per GoodCenter step and per
   DP-MMEB iteration), with ``--john-gaussian`` also ``cvxdp.john_ellipsoid(X).solve_private``
   (a Gram reduction and a row-wise map per iteration) and ``cvxdp.private_gaussian(X,
   bounds=(-1, 1))`` (counts, the mean, one reduction per CoinPress round), and prints wall
   time, number of reduce rounds, throughput (rows read per second), the peak RSS of the
   client process (sampled every 10 ms) and the time of one chunk-wise pass with its
   per-chunk cost, which feeds the n = 1e9 cost model printed last (``docs/scaling.md``).
"""

from __future__ import annotations

import argparse
import os
import threading
import time

import numpy as np

#: Per task the scheduler and a worker exchange about this many bytes (task spec, key, result
#: header); measured order of magnitude of distributed's messages, used by the cost model only.
TASK_BYTES = 1000


class PeakRSS:
    """Peak resident set size of this process, sampled every ``every`` seconds (psutil)."""

    def __init__(self, every: float = 0.01) -> None:
        import psutil

        self.proc, self.every, self.peak = psutil.Process(), every, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.proc.memory_info().rss)
            time.sleep(self.every)

    def __enter__(self) -> PeakRSS:
        self.peak = self.proc.memory_info().rss
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def write_dataset(path: str, n: int, d: int, chunk: int, seed: int = 0) -> float:
    """Write the ``n x (d+1)`` dataset block by block; return seconds."""
    t0 = time.perf_counter()
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(n, d + 1))
    beta = np.linspace(1.0, -1.0, d) / np.sqrt(d)
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        rng = np.random.default_rng([seed, lo])
        m = hi - lo
        x = rng.uniform(-1, 1, (m, d))
        dense = rng.random(m) < 0.5
        x[dense] = np.clip(0.3 + 0.2 * rng.standard_normal((int(dense.sum()), d)), -1, 1)
        y = x @ beta + 0.1 * rng.standard_normal(m)
        if lo == 0:                    # a few records outside the public domain
            x[0, 0], x[1, 1], y[2] = np.nan, 40.0, np.inf
        out[lo:hi, :d], out[lo:hi, d] = x, y
    out.flush()
    del out
    return time.perf_counter() - t0


def _load(path: str, lo: int, hi: int) -> np.ndarray:
    return np.array(np.load(path, mmap_mode="r")[lo:hi])


def dask_dataset(path: str, chunk: int, persist: bool):
    """``(X, y)`` Dask arrays whose blocks the workers read from the ``.npy`` file."""
    import dask
    import dask.array as da

    n, m = np.load(path, mmap_mode="r").shape
    blocks = [da.from_delayed(dask.delayed(_load)(path, lo, min(n, lo + chunk)),
                              shape=(min(n, lo + chunk) - lo, m), dtype=np.float64)
              for lo in range(0, n, chunk)]
    data = da.concatenate(blocks, axis=0)
    if persist:
        data = data.persist()
    return data[:, :m - 1], data[:, m - 1]


def chunk_cpu_seconds(path: str, rows: int, d: int, repeat: int = 5) -> float:
    """CPU seconds of one MEB query on one block of ``rows`` rows, in this process (best of
    ``repeat``; CPU time, so it does not count waiting for a shared machine's cores)."""
    from cvxdp.dask_backend.meb import _apply_prepared, _outside_block
    from cvxdp.geometry.meb import meb_kernels

    block = np.array(np.load(path, mmap_mode="r")[:rows, :d])
    lo, hi, z = -np.ones(d), np.ones(d), np.zeros(d)
    backend = meb_kernels.pick(rows, d).name
    best = np.inf
    for _ in range(repeat):
        t0 = time.process_time()
        _apply_prepared(block, _outside_block, lo, hi, z, z, 1.0, z - 0.02, 0.25, backend)
        best = min(best, time.process_time() - t0)
    del block
    return best


def run_john_gaussian(X, res: dict, epsilon: float, delta: float, je_accuracy: float) -> None:
    """The private John ellipsoid (``accuracy=je_accuracy``) and the bounded private Gaussian
    (``bounds=(-1, 1)``) over the same Dask array; fills ``res`` (times, reduce rounds, client
    peak RSS)."""
    import cvxdp
    import cvxdp.dask_backend.gaussians as sg
    import cvxdp.dask_backend.john as sj

    d = X.shape[1]
    for mod, key in ((sj, "je"), (sg, "gauss")):
        calls = {"n": 0}
        orig = mod.block_sum

        def counted(*a, _orig=orig, _calls=calls, **k):
            _calls["n"] += 1
            return _orig(*a, **k)

        mod.block_sum = counted
        try:
            with PeakRSS() as mem:
                t0 = time.perf_counter()
                if key == "je":
                    sol = cvxdp.john_ellipsoid(X).solve_private(
                        epsilon=epsilon, delta=delta, closeness=1e-3, row_bound=float(np.sqrt(d)),
                        accuracy=je_accuracy, rng=0)
                    res["je_iterations"] = sol.iterations
                    res["je_log_volume"] = sol.value
                    res["je_selected"] = sol.info.get("selected")
                else:
                    sol = cvxdp.private_gaussian(X, epsilon=epsilon, delta=delta,
                                                 bounds=(-1.0, 1.0), rng=0)
                    res["gauss_mean_head"] = np.round(sol.mean[:3], 4).tolist()
                    res["gauss_rounds_coinpress"] = sol.info.get("covariance", {}).get("rounds")
                res[f"{key}_s"] = time.perf_counter() - t0
        finally:
            mod.block_sum = orig
        res[f"{key}_rss_mib"] = mem.peak / 2**20
        res[f"{key}_reductions"] = calls["n"]


def run(n: int, d: int, workers: int, chunk: int, directory: str, accuracy: float,
        persist: bool, epsilon: float = 1.0, delta: float = 1e-6, meb: bool = True,
        john_gaussian: bool = False, je_accuracy: float = 0.5) -> dict:
    import distributed

    import cvxdp
    from cvxdp.dask_backend.meb import DaskOutsideIndex, DaskPoints

    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "data.npy")
    t_write = write_dataset(path, n, d, chunk)
    nbytes = n * (d + 1) * 8
    print(f"wrote {n:.3g} x {d + 1} float64 ({nbytes / 2**20:.0f} MiB) to {path} in "
          f"{t_write:.1f} s")
    res: dict = {"n": n, "d": d, "workers": workers, "chunk": chunk, "blocks": -(-n // chunk)}
    res["chunk_cpu_s"] = chunk_cpu_seconds(path, min(chunk, n), d)
    with distributed.LocalCluster(n_workers=workers, processes=True, threads_per_worker=1,
                                  dashboard_address=None, memory_limit=0) as cluster, \
            distributed.Client(cluster):
        X, y = dask_dataset(path, chunk, persist)
        lo, hi = -np.ones(d), np.ones(d)
        # one chunk-wise pass of the MEB query (read, clip, translate, test, sum) and a reduce
        pts = DaskPoints(X.rechunk({1: -1}), lo, hi, np.zeros(d))
        index = DaskOutsideIndex(pts, np.zeros(d), 10.0)
        index.query(np.zeros(d), 0.5)                       # warm-up (imports on workers)
        t0 = time.perf_counter()
        for _ in range(3):
            index.query(np.full(d, 0.01), 0.5)
        res["pass_s"] = (time.perf_counter() - t0) / 3
        # latency of a reduce round on a tiny array (the per-round overhead)
        import dask.array as da
        tiny = DaskPoints(da.zeros((workers * 10, d), chunks=10), lo, hi, np.zeros(d))
        tiny_index = DaskOutsideIndex(tiny, np.zeros(d), 10.0)
        tiny_index.query(np.zeros(d), 0.5)
        t0 = time.perf_counter()
        for _ in range(10):
            tiny_index.query(np.zeros(d), 0.5)
        res["latency_s"] = (time.perf_counter() - t0) / 10

        with PeakRSS() as mem:
            t0 = time.perf_counter()
            ls = cvxdp.least_squares(X, y, row_bound=2.0).solve_private(
                epsilon=epsilon, delta=delta, rng=0)
            res["ls_s"] = time.perf_counter() - t0
        res["ls_rss_mib"] = mem.peak / 2**20
        res["ls_coef_head"] = ls.coef[:3].round(4).tolist()
        if john_gaussian:
            run_john_gaussian(X, res, epsilon, delta, je_accuracy)

        if not meb:
            res["array_mib"] = nbytes / 2**20
            return res
        import cvxdp.dask_backend.meb as smeb
        rounds = {"n": 0}
        orig = smeb.DaskPoints.reduce

        def counted(self, *a, **k):
            rounds["n"] += 1
            return orig(self, *a, **k)

        smeb.DaskPoints.reduce = counted
        try:
            with PeakRSS() as mem:
                t0 = time.perf_counter()
                sol = cvxdp.min_enclosing_ball(X).solve_private(
                    epsilon=epsilon, delta=delta, bounds=(lo, hi), rng=0, accuracy=accuracy)
                res["meb_s"] = time.perf_counter() - t0
        finally:
            smeb.DaskPoints.reduce = orig
        res["meb_rss_mib"] = mem.peak / 2**20
        res["meb_rounds"] = rounds["n"]
        res["meb_iterations"] = sol.iterations
        res["meb_radius"] = sol.ball.radius
    res["array_mib"] = nbytes / 2**20
    return res


def cost_model(res: dict, n: float = 1e9, workers: int = 100) -> dict:
    """Time and traffic of the private MEB and SSP at ``n`` rows on ``workers`` workers.

    Per reduce round every worker reads its ``n / workers`` rows once (measured cost per row of
    one worker: ``pass_s * W_measured / n_measured``, the measured pass being spread over
    ``W_measured`` workers), and every block sends ``(d + 1)`` float64 partial sums plus
    ``TASK_BYTES`` of task messages; the rounds run one after the other (each needs the previous
    noisy answer), so the time is ``rounds * (latency + rows per worker * cost per row)``.
    """
    d, chunk = res["d"], res["chunk"]
    per_row = res["pass_s"] * res["workers"] / res["n"]
    cpu_row = res["chunk_cpu_s"] / min(chunk, res["n"])
    blocks = n / chunk
    per_round_s = res["latency_s"] + (n / workers) * per_row
    gram_width = (d + 1) ** 2 + 1
    return {
        "n": n, "workers": workers, "blocks": blocks,
        "per_row_us": per_row * 1e6, "cpu_row_us": cpu_row * 1e6,
        "meb_time_cpu_s": res.get("meb_rounds", 0) * (res["latency_s"]
                                                      + (n / workers) * cpu_row),
        "meb_bytes_per_round": blocks * ((d + 2) * 8 + TASK_BYTES),
        "meb_rounds": res.get("meb_rounds", 0),
        "meb_round_s": per_round_s,
        "meb_time_s": res.get("meb_rounds", 0) * per_round_s,
        "ls_bytes": blocks * (gram_width * 8 + TASK_BYTES),
        "ls_time_s": res["latency_s"] + (n / workers) * per_row,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=1_000_000)
    ap.add_argument("--dir", default="/tmp/cvxdp_scale")
    ap.add_argument("--accuracy", type=float, default=0.5)
    ap.add_argument("--persist", action="store_true",
                    help="keep the blocks in the workers' memory after the first read")
    ap.add_argument("--no-meb", action="store_true",
                    help="only the pass timing and least squares (minutes instead of ~20)")
    ap.add_argument("--john-gaussian", action="store_true",
                    help="also the private John ellipsoid and the bounded private Gaussian")
    ap.add_argument("--je-accuracy", type=float, default=0.5)
    a = ap.parse_args()
    res = run(a.n, a.d, a.workers, a.chunk, a.dir, a.accuracy, a.persist, meb=not a.no_meb,
              john_gaussian=a.john_gaussian, je_accuracy=a.je_accuracy)
    rows = res["n"]
    print(f"\n{rows:.3g} x {res['d']} on {res['workers']} workers, {res['blocks']} blocks of "
          f"{res['chunk']:.3g} rows, persist={a.persist}; array {res['array_mib']:.0f} MiB")
    print(f"one MEB query on one block of {min(res['chunk'], rows):.3g} rows: "
          f"{res['chunk_cpu_s']:.3f} CPU s")
    print(f"one chunk-wise pass + reduce: {res['pass_s']:.3f} s "
          f"({rows / res['pass_s'] / 1e6:.1f} M rows/s); "
          f"round latency {res['latency_s'] * 1e3:.0f} ms")
    print(f"least squares (ssp): {res['ls_s']:.2f} s, {rows / res['ls_s'] / 1e6:.1f} M rows/s, "
          f"client peak RSS {res['ls_rss_mib']:.0f} MiB, coef[:3] {res['ls_coef_head']}")
    if "je_s" in res:
        print(f"John ellipsoid (private, accuracy {a.je_accuracy}): {res['je_s']:.1f} s, "
              f"{res['je_iterations']} iterations, {res['je_reductions']} reductions "
              f"(+ one row-wise map per iteration), client peak RSS {res['je_rss_mib']:.0f} MiB, "
              f"selected {res['je_selected']}, log volume {res['je_log_volume']:.4f}")
        print(f"Gaussian (bounds=(-1, 1)): {res['gauss_s']:.1f} s, {res['gauss_reductions']} "
              f"reductions, client peak RSS {res['gauss_rss_mib']:.0f} MiB, "
              f"mean[:3] {res['gauss_mean_head']}")
    if "meb_s" not in res:
        res["meb_rounds"] = 197      # accuracy 0.5 on this dataset (measured, docs/scaling.md)
    if "meb_s" in res:
        print(f"MEB (accuracy {a.accuracy}): {res['meb_s']:.1f} s, {res['meb_rounds']} reduce "
              f"rounds ({res['meb_iterations']} DP-MMEB iterations), "
              f"{res['meb_rounds'] * rows / res['meb_s'] / 1e6:.1f} M rows/s, "
              f"client peak RSS {res['meb_rss_mib']:.0f} MiB, radius {res['meb_radius']:.4f}")
    m = cost_model(res)
    print(f"\nmodel n=1e9 on 100 workers ({m['blocks']:.0f} blocks): cost {m['per_row_us']:.4f} "
          f"us/row/worker; MEB {m['meb_rounds']} rounds x {m['meb_round_s']:.2f} s = "
          f"{m['meb_time_s']:.0f} s ({m['meb_time_cpu_s']:.0f} s at the block's CPU cost "
          f"{m['cpu_row_us']:.3f} us/row), "
          f"{m['meb_bytes_per_round'] / 2**20:.2f} MiB moved per round; "
          f"SSP 1 round {m['ls_time_s']:.2f} s, {m['ls_bytes'] / 2**20:.2f} MiB moved")


if __name__ == "__main__":
    main()
