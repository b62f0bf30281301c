"""Run every gallery model through ``solve_private`` and print one table (issue 22 item 7).

For each model and each epsilon (delta = 1e-6) it reports

* ``outcome``: the status, or ``R:<error>`` for a typed cvxdp refusal, or ``X:<error>`` for any
  other exception (a raw numpy / CVXPY / Python error is a finding), or ``T/O`` (time limit);
* ``gap``: the user's objective at the released point, evaluated with the TRUE data, minus the
  exact optimum, signed so that > 0 is worse, over ``max(1, |optimum|)``;
* ``viol``: the largest violation of the user's constraints (and of the variables' declared
  attributes ``nonneg`` / ``PSD`` / ``symmetric``) at the released point with the TRUE data,
  computed by evaluating the constraint expressions on the values ``solve_private`` left on the
  variables (``constraint.violation()``; nothing is written through a setter);
* ``tx``: wall time of ``solve_private`` over the exact ``problem.solve()`` of a fresh copy.

The per-run details in the output file add the violation of the public constraints alone (those
with no private parameter), ``alpha_guaranteed``, the warnings and the status reason or error.

Every run is a separate process with a time limit, so one slow or crashing model does not stop
the table.  Usage::

    python benchmarks/bench_gallery.py --quick
    python benchmarks/bench_gallery.py --eps 1e6 10 1 --out docs/gallery_table.txt
    python benchmarks/bench_gallery.py --mechanism default perturbation
"""

from __future__ import annotations

import argparse
import inspect
import json
import multiprocessing as mp
import os
import sys
import textwrap
import time
import traceback
import warnings
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gallery  # noqa: E402

DELTA = 1e-6
_ABBREV = {"PrivacySpecError": "PSE", "UnsupportedProblemError": "UPE",
           "PrivacyGuaranteeError": "PGE", "InfeasibleProblemError": "IPE",
           "BudgetError": "BE"}
_STATUS = {"optimal": "opt", "optimal_inaccurate": "opt~", "user_limit": "user_lim",
           "infeasible": "infeas", "infeasible_inaccurate": "infeas~", "unbounded": "unbnd",
           "solver_error": "solv_err", "inaccurate": "inacc"}
_CLASS = {"ConstraintPrivacy": "CP", "ScalarPrivacy": "SP", "ObjectivePrivacy": "OP",
          "ConstraintSetPrivacy": "CSP"}


def supports_mechanism() -> bool:
    """True when the general path takes ``mechanism=`` (being added in parallel)."""
    from cvxdp.solvers import dispatch

    return ("mechanism" in inspect.signature(dispatch.solve_general).parameters
            or "mechanism" in getattr(dispatch, "_OPTS", ()))


def _attribute_violation(var: Any) -> float:
    v = var.value
    if v is None:
        return float("nan")
    a = var.attributes
    out = 0.0
    if a.get("nonneg"):
        out = max(out, float(np.max(-np.asarray(v), initial=0.0)))
    if a.get("nonpos"):
        out = max(out, float(np.max(np.asarray(v), initial=0.0)))
    if a.get("symmetric") or a.get("PSD"):
        M = np.asarray(v)
        out = max(out, float(np.max(np.abs(M - M.T))))
        if a.get("PSD"):
            out = max(out, -float(np.linalg.eigvalsh((M + M.T) / 2)[0]))
    return out


def user_violation(prob: Any) -> float:
    """Largest violation of the user's constraints at the variables' current values (TRUE data).

    ``constraint.violation()`` evaluates the expressions (variables' values, parameters' values);
    nothing is written.  NaN when a variable holds no value.
    """
    if any(v.value is None for v in prob.variables()):
        return float("nan")
    worst = 0.0
    for con in prob.constraints:
        res = con.violation()
        worst = max(worst, float(np.max(np.abs(np.atleast_1d(res)), initial=0.0)))
    for var in prob.variables():
        worst = max(worst, _attribute_violation(var))
    return worst


def public_violation(prob: Any, spec: Any) -> float:
    """:func:`user_violation` over the constraints that contain no private parameter (and the
    variables' attributes): what the issue asks to hold up to solver tolerance."""
    specs = spec if isinstance(spec, (list, tuple)) else [spec]
    private = {p.id for s in specs for p in s.params}
    if any(v.value is None for v in prob.variables()):
        return float("nan")
    worst = 0.0
    for con in prob.constraints:
        if any(p.id in private for p in con.parameters()):
            continue
        res = con.violation()
        worst = max(worst, float(np.max(np.abs(np.atleast_1d(res)), initial=0.0)))
    for var in prob.variables():
        worst = max(worst, _attribute_violation(var))
    return worst


def run_one(name: str, epsilon: float, mechanism: str | None, seed: int = 0) -> dict[str, Any]:
    """One private solve of gallery model ``name``; every exception is caught and typed."""
    import cvxpy as cp

    import cvxdp

    entry = gallery.by_name(name)
    out: dict[str, Any] = {"model": name, "epsilon": epsilon, "mechanism": mechanism or "default"}
    ref, _, _ = entry.build(seed)
    t0 = time.perf_counter()
    ref.solve()
    t_exact = time.perf_counter() - t0
    f_star = ref.value
    sense = 1.0 if isinstance(ref.objective, cp.Minimize) else -1.0
    prob, spec, _ = entry.build(seed)
    kwargs: dict[str, Any] = {"epsilon": epsilon, "delta": DELTA, "private": spec, "rng": seed}
    if mechanism and mechanism != "default":
        kwargs["mechanism"] = mechanism
    caught: list[str] = []
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            sol = prob.solve_private(**kwargs)
        caught = sorted({type(w.message).__name__ for w in ws})
    except Exception as err:  # noqa: BLE001 - every failure is reported by type
        typed = isinstance(err, cvxdp.CvxdpError)
        out.update(outcome=("R:" if typed else "X:") + type(err).__name__, typed=typed,
                   error=f"{type(err).__module__}.{type(err).__name__}: {str(err)[:300]}",
                   where="" if typed else traceback.format_exc(limit=-2).strip()[-400:],
                   time_ratio=(time.perf_counter() - t0) / t_exact)
        return out
    t_priv = time.perf_counter() - t0
    f = prob.objective.value if all(v.value is not None for v in prob.variables()) else None
    gap = None
    if f is not None and f_star is not None and np.isfinite(f_star):
        gap = sense * (float(f) - float(f_star)) / max(1.0, abs(float(f_star)))
    info = getattr(sol, "info", {}) or {}
    cert = getattr(sol, "certificate", None)
    if cert is not None:
        # the certificate against the truth: the same seed again with reference=True (the
        # certificate is in canonical units: the canonical violation, the absolute gap)
        out.update(cert_gap=cert.relative_gap_bound, cert_viol=cert.violation_bound)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prob2, spec2, _ = entry.build(seed)
            again = prob2.solve_private(**{**kwargs, "private": spec2}, reference=True)
        val = again.validation
        if val is not None and val.objective_gap is not None:
            can_viol = val.metrics.get("canonical_max_violation", val.max_violation) or 0.0
            if "point_candidates" in info:
                # fit terms with private targets: the private rows are the objective's own
                # epigraph (its bound is on the objective); the constraints are the user's
                can_viol = val.max_violation or 0.0
            tol = 1e-7 * (1.0 + abs(float(val.reference_value)))
            out["cert_valid"] = bool(val.objective_gap <= cert.gap_bound + tol
                                     and can_viol <= cert.violation_bound + 1e-7)
    out.update(outcome=str(sol.status), typed=True, gap=gap, violation=user_violation(prob),
               public_violation=public_violation(prob, spec),
               time_ratio=t_priv / t_exact, t_private=t_priv, t_exact=t_exact,
               alpha=info.get("alpha_guaranteed"), warnings=",".join(caught),
               reason=str(info.get("status_reason", ""))[:200])
    return out


def _worker(q: Any, args: tuple) -> None:
    try:
        q.put(run_one(*args))
    except BaseException as err:  # noqa: BLE001 - even the builder's failure is a row
        q.put({"model": args[0], "epsilon": args[1], "mechanism": args[2] or "default",
               "outcome": "X:" + type(err).__name__, "typed": False,
               "error": f"{type(err).__name__}: {str(err)[:300]}"})


def run_isolated(name: str, epsilon: float, mechanism: str | None, timeout: float
                 ) -> dict[str, Any]:
    """:func:`run_one` in a child process with a time limit."""
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_worker, args=(q, (name, epsilon, mechanism)))
    p.start()
    try:
        res = q.get(timeout=timeout)
    except Exception:  # noqa: BLE001 - queue.Empty: the run took too long
        res = {"model": name, "epsilon": epsilon, "mechanism": mechanism or "default",
               "outcome": "T/O", "typed": True, "error": f"no answer within {timeout:g} s"}
    p.join(5)
    if p.is_alive():
        p.kill()
        p.join()
    return res


def _short(outcome: str, room: int = 14) -> str:
    if outcome[:2] in ("R:", "X:"):
        return outcome[:2] + _ABBREV.get(outcome[2:], outcome[2:])[:room]
    return _STATUS.get(outcome, outcome)


def _num(v: Any, fmt: str = "{:.1e}") -> str:
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "-"
    return fmt.format(v)


def format_table(rows: list[dict[str, Any]], mechanisms: list[str]) -> str:
    """One table, <= 100 columns: a row per (model, epsilon), a column group per mechanism
    (three or more mechanisms are printed two groups at a time, one block after another)."""
    if len(mechanisms) > 2:
        blocks = [_format_block(rows, mechanisms[i:i + 2], wide=False)
                  for i in range(0, len(mechanisms), 2)]
        return "\n\n".join(b.rsplit("\n\n", 1)[0] for b in blocks[:-1]) + "\n\n" + blocks[-1]
    return _format_block(rows, mechanisms)


def _format_block(rows: list[dict[str, Any]], mechanisms: list[str],
                  wide: bool | None = None) -> str:
    key = {(r["model"], r["epsilon"], r["mechanism"]): r for r in rows}
    models = list(dict.fromkeys(r["model"] for r in rows))
    eps = list(dict.fromkeys(r["epsilon"] for r in rows))
    # one mechanism: kind and class columns; several: a narrower group each (<= 100 columns)
    wide = len(mechanisms) == 1 if wide is None else wide
    w_out = 9 if wide else 9
    head = (f"{'model':<22}{'cls':<4}" if wide else f"{'model':<22}") + f"{'eps':>6} "
    group = (f"| {'outcome':<{w_out}}{'gap':>8}{'cgap':>8}{'viol':>8}{'cviol':>8}"
             f"{'ok':>3}{'tx':>5} ") if wide else (
        f"| {'outcome':<{w_out}}{'gap':>8}{'viol':>8}{'tx':>5} ")
    width = len(group)
    lines = [(head + "".join(group for _ in mechanisms)).rstrip()]
    if not wide:
        lines.insert(0, (" " * len(head) + "".join(f"| {m:<{width - 2}}"
                                                    for m in mechanisms)).rstrip())
    lines.append("-" * len(lines[-1]))
    for name in models:
        e = gallery.by_name(name)
        for k, ep in enumerate(eps):
            left = f"{name[:21] if k == 0 else '':<22}"
            if wide:
                left += f"{_CLASS.get(e.privacy, e.privacy) if k == 0 else '':<4}"
            left += f"{ep:>6g} "
            cells = ""
            for m in mechanisms:
                r = key.get((name, ep, m), {"outcome": "-"})
                if wide:
                    ok = {True: "y", False: "N"}.get(r.get("cert_valid"), "-")
                    cells += (f"| {_short(r['outcome'], w_out - 2):<{w_out}}"
                              f"{_num(r.get('gap'), '{:+.1e}'):>8}{_num(r.get('cert_gap')):>8}"
                              f"{_num(r.get('violation')):>8}{_num(r.get('cert_viol')):>8}"
                              f"{ok:>3}{_num(r.get('time_ratio'), '{:.0f}'):>5} ")
                    continue
                cells += (f"| {_short(r['outcome'], w_out - 2):<{w_out}}"
                          f"{_num(r.get('gap'), '{:+.1e}'):>8}{_num(r.get('violation')):>8}"
                          f"{_num(r.get('time_ratio'), '{:.0f}'):>5} ")
            lines.append((left + cells).rstrip())
    lines.append("")
    lines += textwrap.wrap(
        "outcome: opt~ = optimal_inaccurate, user_lim = user_limit; R:<err> = typed cvxdp "
                 "refusal (PSE PrivacySpec, UPE UnsupportedProblem, PGE PrivacyGuarantee, IPE "
                 "InfeasibleProblem); X:<err> = raw exception; T/O = time limit.  gap = "
                 "(f(x_priv) - f*)/max(1,|f*|), > 0 worse, TRUE data; viol = max violation of the "
                 "user's constraints, TRUE data; cgap / cviol = the certificate's relative gap "
                 "and violation bounds (canonical units); ok = the certificate holds against "
                 "the exact solve (y/N); tx = time / exact problem.solve().", 98)
    return "\n".join(lines)


def summary(rows: list[dict[str, Any]]) -> str:
    """Counts per mechanism and epsilon: refused, raw errors, gap and violation within 1e-2."""
    out = []
    mechs = list(dict.fromkeys(r["mechanism"] for r in rows))
    for m, ep in ((m, ep) for m in mechs for ep in dict.fromkeys(r["epsilon"] for r in rows)):
        rs = [r for r in rows if r["epsilon"] == ep and r["mechanism"] == m]
        ref = sum(r["outcome"].startswith("R:") for r in rs)
        raw = sum(r["outcome"].startswith("X:") for r in rs)
        to = sum(r["outcome"] == "T/O" for r in rs)
        good = sum(r.get("gap") is not None and abs(r["gap"]) <= 1e-2
                   and r.get("violation") is not None and r["violation"] <= 1e-2 for r in rs)
        label = f"{m}, " if len(mechs) > 1 else ""
        success = [r for r in rs if r["outcome"] == "optimal_inaccurate"]
        bad = sum(r.get("cert_gap") is None or r["cert_gap"] > 1e-2 or r["cert_viol"] > 1e-2
                  for r in success)
        certified = [r for r in rs if r.get("cert_valid") is not None]
        valid = sum(bool(r["cert_valid"]) for r in certified)
        infeas = sum(r["outcome"] == "infeasible" for r in rs)
        out.append(f"{label}eps={ep:g}: {len(rs)} runs, refused {ref}, raw errors {raw}, "
                   f"time-outs {to}, |gap| <= 1e-2 and viol <= 1e-2: {good}; success "
                   f"{len(success)} (uncertified {bad}); certificate valid {valid}/"
                   f"{len(certified)}; infeasible {infeas}")
    return "\n".join(out)


def details(rows: list[dict[str, Any]]) -> str:
    """The full record of every run (errors and status reasons), one line each."""
    lines = []
    for r in rows:
        extra = r.get("error") or r.get("reason") or ""
        lines.append(f"{r['model']:<23} eps={r['epsilon']:<6g} {r['mechanism']:<12} "
                     f"{r['outcome']:<22} alpha={r.get('alpha')} "
                     f"public_viol={_num(r.get('public_violation'))} "
                     f"warn={r.get('warnings', '')} "
                     f"{extra}")
        if r.get("where"):
            lines.append("    " + r["where"].replace("\n", "\n    "))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="the QUICK subset of the gallery")
    ap.add_argument("--models", nargs="*", help="run only these models")
    ap.add_argument("--eps", nargs="*", type=float, default=[1e6, 10.0, 1.0])
    ap.add_argument("--mechanism", nargs="*", default=["default"],
                    help="mechanisms to compare (needs solve_private(mechanism=))")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per run")
    ap.add_argument("--out", default="benchmarks/results/gallery_table.txt",
                    help="file for the full table and the per-run details")
    ap.add_argument("--render", help="print the table of a saved .json run and exit")
    a = ap.parse_args(argv)
    if a.render:
        with open(a.render) as fh:
            saved = json.load(fh)
        print(f"$ {saved['command']}\n")
        print(format_table(saved["rows"], saved["mechanisms"]))
        print()
        print(summary(saved["rows"]))
        return 0
    names = a.models or (list(gallery.QUICK) if a.quick else [m.name for m in gallery.models()])
    mechs = list(a.mechanism)
    if any(m != "default" for m in mechs) and not supports_mechanism():
        print("note: solve_private has no mechanism= yet; running the default only.")
        mechs = ["default"]
    rows = []
    for name in names:
        for ep in a.eps:
            for m in mechs:
                rows.append(run_isolated(name, ep, None if m == "default" else m, a.timeout))
                r = rows[-1]
                print(f"  {name:<23} eps={ep:<8g} {m:<10} {r['outcome']}", file=sys.stderr,
                      flush=True)
    table = format_table(rows, mechs)
    cmd = "python benchmarks/bench_gallery.py " + " ".join(sys.argv[1:] if argv is None
                                                             else argv)
    print(table)
    print()
    print(summary(rows))
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w") as fh:
        fh.write(f"$ {cmd}\n\n{table}\n\n{summary(rows)}\n\nPer run:\n{details(rows)}\n")
    with open(os.path.splitext(a.out)[0] + ".json", "w") as fh:
        json.dump({"command": cmd, "mechanisms": mechs, "rows": rows}, fh, indent=1,
                  default=str)
    print(f"\nfull table and per-run details: {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
