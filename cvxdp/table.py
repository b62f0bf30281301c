"""Plain-text tables for the command line (``cvxdp demo``, ``cvxdp audit``, the benchmarks)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["format_table"]


def _cell(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "" if v is None else str(v)


def format_table(rows: list[dict], columns: Sequence[str]) -> str:
    """Plain-text table of ``rows`` (dicts) in the given column order."""
    body = [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(b[i]) for b in body)) if body else len(c)
              for i, c in enumerate(columns)]
    line = "  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))
    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line, sep] + ["  ".join(b[i].ljust(w) for i, w in enumerate(widths))
                                    for b in body])
