"""One BLAS thread for loops of small-matrix products.

A multithreaded BLAS (OpenBLAS, MKL) splits every call over its threads and synchronises them at
the end of the call.  For the loops of cvxdp's private solvers (hundreds of products of an
``n x d`` matrix with ``d`` small, then ``d x d`` factorisations) each call is a few microseconds
of arithmetic, so the synchronisation dominates, and far more so when the cores are shared with
other processes (a spinning BLAS thread waits for a core): the demo's private John ellipsoid
(``n = 2000, d = 5``, about 30 iterations of ``A' W A`` and triangular solves) took 0.9-1.9 s
with the default two threads on a loaded two-core machine against 0.11-0.13 s with one
(0.46-1.03 s against 0.008 s has been seen on a machine with more cores).

:func:`small_blas` limits BLAS to one thread for a block whose calls each do at most
``SMALL_WORK`` flops; above it the threads can pay off and the limit is not set.  The threshold
is where one call's arithmetic (``n d^2`` flops for ``A' W A``) takes about 10 ms on one core at
1 GFLOP/s (``1e7`` flops): at that size the per-call synchronisation (tens of microseconds idle,
up to a scheduler quantum, milliseconds, when oversubscribed) is a small fraction.  It needs the
optional ``threadpoolctl`` (a dependency of scikit-learn; ``pip install "cvxdp[fast]"``); without
it the block runs with the library's default threads (set ``OPENBLAS_NUM_THREADS=1`` before
starting Python for the same effect).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

try:  # optional extra: threadpoolctl
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover - exercised without the extra
    threadpool_limits = None

__all__ = ["SMALL_WORK", "small_blas", "one_blas_thread", "HAVE_THREADPOOLCTL"]

#: Flops per BLAS call below which a block runs on one BLAS thread (module doc).
SMALL_WORK = 1e7
HAVE_THREADPOOLCTL = threadpool_limits is not None


@contextlib.contextmanager
def small_blas(work: float) -> Iterator[bool]:
    """Run the block on one BLAS thread when each of its calls does ``<= SMALL_WORK`` flops
    (``work``, a public function of the sizes) and threadpoolctl is installed.  Yields whether
    the limit is in force."""
    if work > SMALL_WORK:
        yield False
        return
    with one_blas_thread() as limited:
        yield limited


@contextlib.contextmanager
def one_blas_thread() -> Iterator[bool]:
    """One BLAS thread for a block of dense factorisations (QR, SVD, eigh of a few hundred to
    a few thousand rows) run once per solve: on a shared two-core machine the default threads
    made a 1199 x 798 QR take 12 s against 0.23 s on one thread (measured).  Yields whether
    the limit is in force (False without ``threadpoolctl``)."""
    if threadpool_limits is None:
        yield False
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield True
