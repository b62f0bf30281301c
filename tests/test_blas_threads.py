"""cvxdp.blas_threads: one BLAS thread inside small-matrix loops, the default otherwise."""

from __future__ import annotations

import numpy as np
import pytest

import cvxdp
from cvxdp import blas_threads
from cvxdp.blas_threads import SMALL_WORK, small_blas


def _blas_threads() -> list[int]:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]


def test_small_work_runs_on_one_blas_thread_and_restores():
    before = _blas_threads()
    with small_blas(2000 * 5 * 5) as limited:
        assert limited and set(_blas_threads()) == {1}
    assert _blas_threads() == before
    with small_blas(10 * SMALL_WORK) as limited:
        assert not limited and _blas_threads() == before


def test_without_threadpoolctl_the_block_runs_unchanged(monkeypatch):
    monkeypatch.setattr(blas_threads, "threadpool_limits", None)
    with small_blas(1.0) as limited:
        assert limited is False


def test_private_john_runs_inside_the_limit(monkeypatch):
    """The private John ellipsoid (n = 200, d = 3: 1800 flops per product) asks for the limit
    with its public sizes."""
    seen = []
    real = blas_threads.small_blas

    def spy(work):
        seen.append(work)
        return real(work)

    monkeypatch.setattr("cvxdp.geometry.john.john.small_blas", spy)
    A = np.random.default_rng(0).normal(size=(200, 3))
    A /= np.linalg.norm(A, axis=1, keepdims=True)
    cvxdp.john_ellipsoid(A).solve_private(epsilon=1.0, delta=1e-6, closeness=1e-8, row_bound=1.0,
                                          rng=0)
    assert seen == [200 * 3 * 3]


def test_the_blas_libraries_are_scanned_once(monkeypatch):
    """Finding the loaded BLAS libraries reads the process's memory map (about 5 ms); a solve
    enters the limit a dozen times (l2 regression at epsilon 10: 12 scans, 0.063 s of a 0.20 s
    private solve), so the scan is done once per process and the limit reuses it."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    scans = []
    real = threadpoolctl.ThreadpoolController.__init__

    def counting(self, *args, **kwargs):
        scans.append(1)
        real(self, *args, **kwargs)

    monkeypatch.setattr(threadpoolctl.ThreadpoolController, "__init__", counting)
    for _ in range(3):
        with blas_threads.one_blas_thread() as limited:
            assert limited and set(_blas_threads()) == {1}
    assert len(scans) <= 1 + 3  # at most one scan of ours (each _blas_threads() call scans once)
