"""Suite-wide pytest hooks."""

from importlib import metadata

_TRACED = ("numpy", "scipy", "cvxpy", "clarabel", "scs", "numba")


def pytest_report_header(config):
    """Print the numerical stack's versions at the top of every run (CI included), so that a
    failure that depends on solver or BLAS rounding can be traced to the versions that gave it."""
    found = []
    for name in _TRACED:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name} (not installed)")
    return "numerical stack: " + ", ".join(found)
