"""``cvxdp.estimators.PrivateLogisticRegression`` against diffprivlib and the trivial answer.

Same data, same public bounds, same epsilon: features in the public box ``[-3, 3]^d`` (values
outside clipped into it); cvxdp gets ``bounds_X=(-3, 3)``, diffprivlib's
``LogisticRegression`` the implied row bound ``data_norm = 3 sqrt(d)``; both ``C = 1`` with an
intercept.  cvxdp runs with delta = 1e-6 (its default) and diffprivlib is pure epsilon-DP, so
the comparison favours cvxdp by that delta; the trivial answer is the majority class of the
training labels (itself not private: an upper bound on what a free answer gets).

* ``breast_cancer``: scikit-learn's dataset (569 rows, 30 features), standardised (the scaler
  is fitted on the whole data set, for both methods alike: a benchmark convenience, not a
  private step) and split 70/30;
* ``synthetic``: ``make_classification`` (20,000 rows, 10 features, 2 informative classes,
  seed 0) standardised likewise.

Printed: median test accuracy over the seeds (10 by default) per method and epsilon, and the
median fit time.  diffprivlib is not a dependency of cvxdp: ``pip install 'cvxdp[peers]'``.

Usage: ``python benchmarks/bench_logistic_estimator.py [--seeds 10]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench_erm_peers import _diffprivlib_logistic  # noqa: E402

from cvxdp.estimators import PrivateLogisticRegression  # noqa: E402

EPSILONS = (0.1, 1.0, 10.0)


def datasets() -> dict[str, tuple[np.ndarray, ...]]:
    from sklearn.datasets import load_breast_cancer, make_classification  # optional extra
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    out = {}
    X, y = load_breast_cancer(return_X_y=True)
    X = np.clip(StandardScaler().fit_transform(X), -3, 3)
    out["breast_cancer"] = tuple(train_test_split(X, y, test_size=0.3, random_state=0))
    X, y = make_classification(n_samples=20_000, n_features=10, n_informative=5,
                               random_state=0)
    X = np.clip(StandardScaler().fit_transform(X), -3, 3)
    out["synthetic"] = tuple(train_test_split(X, y, test_size=0.3, random_state=0))
    return out


def run(seeds: int) -> list[dict]:
    dpl = _diffprivlib_logistic()
    rows = []
    for name, (Xtr, Xte, ytr, yte) in datasets().items():
        d = Xtr.shape[1]
        majority = float(max(np.mean(yte == 1), np.mean(yte == 0)))
        for eps in EPSILONS:
            acc = {"cvxdp": [], "diffprivlib": []}
            tim = {"cvxdp": [], "diffprivlib": []}
            for s in range(seeds):
                t = time.perf_counter()
                clf = PrivateLogisticRegression(epsilon=eps, bounds_X=(-3, 3),
                                                random_state=s).fit(Xtr, ytr)
                tim["cvxdp"].append(time.perf_counter() - t)
                acc["cvxdp"].append(clf.score(Xte, yte))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t = time.perf_counter()
                    ref = dpl(epsilon=eps, data_norm=3 * np.sqrt(d), C=1.0,
                              random_state=s).fit(Xtr, ytr)
                    tim["diffprivlib"].append(time.perf_counter() - t)
                acc["diffprivlib"].append(ref.score(Xte, yte))
            rows.append({"data": name, "eps": eps, "majority": majority,
                         **{f"{k}_acc": float(np.median(v)) for k, v in acc.items()},
                         **{f"{k}_s": float(np.median(v)) for k, v in tim.items()}})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    args = ap.parse_args()
    rows = run(args.seeds)
    print(f"median test accuracy over {args.seeds} seeds (delta 1e-6 for cvxdp, pure DP "
          "for diffprivlib)")
    print(f"{'data':14s} {'eps':>5s} {'cvxdp':>7s} {'diffprivlib':>11s} {'majority':>8s} "
          f"{'cvxdp s':>8s} {'dpl s':>7s}")
    for r in rows:
        print(f"{r['data']:14s} {r['eps']:5g} {r['cvxdp_acc']:7.3f} {r['diffprivlib_acc']:11.3f} "
              f"{r['majority']:8.3f} {r['cvxdp_s']:8.3f} {r['diffprivlib_s']:7.3f}")


if __name__ == "__main__":
    main()
