"""Layout of cvxdp.privacy (issue 25 item 8): no import circle between accountant and gdp."""

from __future__ import annotations

import ast
from pathlib import Path

import cvxdp.privacy.accountant as accountant
import cvxdp.privacy.gdp as gdp


def _imports(module) -> set[str]:
    """Every module a file imports, at top level or inside a function."""
    tree = ast.parse(Path(module.__file__).read_text())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_accountant_and_gdp_do_not_import_each_other():
    a, g = _imports(accountant), _imports(gdp)
    assert not ("cvxdp.privacy.gdp" in a and "cvxdp.privacy.accountant" in g)
    # the shared piece (the mu-GDP curve) lives in a module that imports neither
    import cvxdp.privacy.gdp_curve as curve

    assert not {"cvxdp.privacy.gdp", "cvxdp.privacy.accountant"} & _imports(curve)
    # the accountant composes through cvxdp.privacy.composition, which reads the same curve
    import cvxdp.privacy.composition as composition

    assert "cvxdp.privacy.gdp" not in _imports(composition)
    assert composition.gdp_epsilon is curve.gdp_epsilon is gdp.gdp_epsilon
