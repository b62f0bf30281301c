"""A 2-worker, process-based ``distributed.LocalCluster`` for the Dask tests (issue 24)."""

import pytest


@pytest.fixture(scope="module")
def dask_client():
    """A client on ``LocalCluster(n_workers=2, processes=True, threads_per_worker=1)``, made once
    per test module; every Dask computation in the module runs on it (it is the default)."""
    distributed = pytest.importorskip("distributed")
    pytest.importorskip("dask.array")
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=":0", memory_limit="1GiB") as cluster, \
            distributed.Client(cluster) as client:
        yield client
