"""``kernels``: run a test once per row-loop backend of the MEB index (numba when installed)."""

import importlib.util

import pytest

from cvxdp.geometry.meb import meb_kernels

BACKENDS = ["numpy"] + (["numba"] if importlib.util.find_spec("numba") else [])


@pytest.fixture(params=BACKENDS)
def kernels(request, monkeypatch):
    """Force one backend for every pass, whatever the size (``"auto"`` would use numpy below
    ``FAST_ROWS`` rows)."""
    monkeypatch.setitem(meb_kernels._state, "choice", request.param)
    return request.param
