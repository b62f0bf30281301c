"""How user-facing text cites the papers: authors, year and title (never a file name).

One constant per paper; a message, report or status reason adds the algorithm or theorem.
Developers' docstrings may still name the plain-text file beside each digest in
``../shared/papers``.
"""

from __future__ import annotations

__all__ = ["SYMMETRIC_CONE_PROGRAMMING", "cite"]

#: 002: the Euclidean Jordan algebra Gaussian mechanism and private symmetric cone programs
SYMMETRIC_CONE_PROGRAMMING = (
    "Song, Xue & Zhang (2025), Differential Privacy for Euclidean Jordan Algebra with "
    "Applications to Private Symmetric Cone Programming")


def cite(paper: str, where: str) -> str:
    """``"<authors (year), title>, <where>"``, e.g. ``cite(SYMMETRIC_CONE_PROGRAMMING,
    "Alg. 1, Thm C.9")``."""
    return f"{paper}, {where}"
