"""Every public name resolves, and `import cvxdp` attaches the entry points to CVXPY."""

import subprocess
import sys

import cvxpy as cp
import pytest

import cvxdp


@pytest.mark.parametrize("name", sorted(cvxdp._LAZY))
def test_every_lazy_export_resolves(name):
    assert getattr(cvxdp, name) is not None
    assert name in cvxdp.__all__ and name in dir(cvxdp)


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        cvxdp.nope  # noqa: B018


def test_import_attaches_solve_private_and_the_private_solve_method():
    assert callable(cp.Problem.solve_private)
    assert "private" in cp.Problem.REGISTERED_SOLVE_METHODS


def test_errors_are_value_errors_with_a_common_base():
    for err in (cvxdp.BudgetError, cvxdp.PrivacySpecError, cvxdp.UnsupportedProblemError,
                cvxdp.InfeasibleProblemError, cvxdp.PrivacyGuaranteeError):
        assert issubclass(err, ValueError) and issubclass(err, cvxdp.CvxdpError)


def test_subpackages_are_attributes_without_their_own_import():
    # trial 12: `import cvxdp; cvxdp.estimators.PrivateLinearRegression` raised AttributeError
    # until `import cvxdp.estimators`; checked in a fresh interpreter (other tests import it)
    code = ("import cvxdp\n"
            "print(cvxdp.estimators.PrivateLogisticRegression.__name__, "
            "'estimators' in dir(cvxdp), cvxdp.transform.to_scp.__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["PrivateLogisticRegression", "True", "to_scp"]
