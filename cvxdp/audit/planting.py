"""Planted bugs inside a solver, for the end-to-end audits (:mod:`cvxdp.audit.solver_cases`).

An end-to-end audit is only evidence if it can fail: each solver case runs next to a twin with a
bug planted *inside the solver's own call*, which the audit must catch.  Two kinds, both scoped
to one call and restored afterwards (nothing in the solver modules is edited):

* :func:`field_from_true_data` -- one released field (the objective value, the mean) is
  recomputed from the TRUE data after the solver built its answer: the class of leak where a
  released number is evaluated on the private data instead of the noisy release (for example
  ``problem.value`` left at the true objective).  The released point is unchanged, so the leak
  shows only in that field.  The outputs on neighbouring datasets become perfectly separable,
  which a few hundred runs catch at any claimed epsilon below ~3.
* :class:`ScaledNoise` -- a :class:`numpy.random.Generator` whose noise draws (Gaussian,
  Laplace, the K-norm radius) are scaled by ``factor`` (0.5: the noise halved), passed as the
  solver's ``rng=``: every such draw of this call is too small.  A halved Gaussian at
  epsilon = 1 moves the true epsilon from 1 to 2.15 (delta = 1e-5); seeing that takes 10^5
  runs or more (docs/audit.md), so these twins are slow cases.

References
----------
M. Jagielski, J. Ullman, A. Oprea, "Auditing Differentially Private Machine Learning: How Private
is Private SGD?", NeurIPS 2020 (planted canaries as positive controls of an audit).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

__all__ = ["PlantNotReachedError", "ScaledNoise", "field_from_true_data"]


class PlantNotReachedError(RuntimeError):
    """The planted bug never ran: the solver no longer builds its answer where the plant is.

    A planted twin that the solver bypasses would be audited as if it were honest and its
    "catch" would test nothing, so the plant refuses to pass silently.
    """


@contextmanager
def field_from_true_data(module: str, cls_name: str, field: str,
                         compute: Callable[[Any], Any]) -> Iterator[None]:
    """Within the block, answers of class ``module.cls_name`` carry ``field = compute(answer)``.

    Parameters
    ----------
    module : str
        The module where the solver looks the class up by name
        (``cvxdp.solvers.perturbation.certified``).
    cls_name : str
        The solution class the solver constructs there (``PrivateSolution``).
    field : str
        The released field to overwrite (``"value"``, ``"mean"``).
    compute : callable
        ``compute(answer) -> new value``, computed from the TRUE data of the run (the closure
        holds them) and the released point.

    Raises
    ------
    PlantNotReachedError
        When no answer of that class was built inside the block.
    """
    mod = importlib.import_module(module)
    original = getattr(mod, cls_name)
    built: list[int] = []

    class Planted(original):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            setattr(self, field, compute(self))
            built.append(1)

    Planted.__name__ = Planted.__qualname__ = original.__name__
    setattr(mod, cls_name, Planted)
    try:
        yield
    finally:
        setattr(mod, cls_name, original)
    if not built:
        raise PlantNotReachedError(
            f"{module}.{cls_name} was not constructed in the planted call: the solver builds "
            "its answer elsewhere now; move the plant there.")


class ScaledNoise(np.random.Generator):
    """A generator whose noise draws are ``factor`` times their correct size: the Gaussian
    (``normal``, ``standard_normal``, ``multivariate_normal``), ``laplace`` and ``gamma`` (the
    radius of a K-norm draw); everything else (uniforms, integers, the exponential mechanism's
    Gumbel draws) is the ordinary PCG64 stream.

    Pass it as ``rng=`` to a solver: only that call is under-noised.
    """

    def __init__(self, seed: Any, factor: float) -> None:
        super().__init__(np.random.PCG64(seed))
        self.factor = float(factor)

    def standard_normal(self, *args: Any, **kwargs: Any) -> Any:
        return self.factor * super().standard_normal(*args, **kwargs)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        return super().normal(loc, self.factor * np.asarray(scale, dtype=float), size)

    def multivariate_normal(self, mean: Any, cov: Any, *args: Any, **kwargs: Any) -> Any:
        cov = (self.factor ** 2) * np.asarray(cov, dtype=float)
        return super().multivariate_normal(mean, cov, *args, **kwargs)

    def laplace(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        return super().laplace(loc, self.factor * np.asarray(scale, dtype=float), size)

    def gamma(self, shape: Any, scale: Any = 1.0, size: Any = None) -> Any:
        # the radius of a K-norm draw (Hardt & Talwar 2010): gamma(d + 1, 1 / epsilon)
        return super().gamma(shape, self.factor * np.asarray(scale, dtype=float), size)
