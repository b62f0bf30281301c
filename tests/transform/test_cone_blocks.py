"""``ConeDims.blocks()``: the blocks of K in SCS's row order, the one walk the solvers share
(the robust counterpart's and the public part's block walks give the same rows)."""

from __future__ import annotations

import pytest

from cvxdp.transform.scp import ConeBlock, ConeDims

DIMS = [ConeDims(), ConeDims(zero=2), ConeDims(nonneg=3, soc=(3, 4)),
        ConeDims(zero=1, nonneg=2, soc=(2,), psd=(1, 3)), ConeDims(psd=(2, 2))]


def test_blocks_by_hand():
    blocks = ConeDims(zero=1, nonneg=2, soc=(3,), psd=(2,)).blocks()
    assert blocks == [ConeBlock("zero", 0, 1, 0), ConeBlock("nonneg", 1, 2, 0),
                      ConeBlock("soc", 3, 3, 3), ConeBlock("psd", 6, 3, 2)]


@pytest.mark.parametrize("dims", DIMS)
def test_blocks_tile_the_rows(dims):
    blocks = dims.blocks()
    assert [b.start for b in blocks[1:]] == [b.start + b.size for b in blocks[:-1]]
    assert blocks[-1].start + blocks[-1].size == dims.rows
