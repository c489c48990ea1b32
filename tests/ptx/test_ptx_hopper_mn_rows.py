"""An MN-major wgmma operand whose lines run past a TMA box row (issue 25): B of
specs/hopper/tma_wgmma_sw128.ptx read MN-major, its second wgmma from the box's byte
32, so n 48..63 of each k come from the next box row. Given the map's globalStrides
it is decided in the global tensor: where the tensor's rows are not exactly a box
row (128 bytes) apart the operand is no block of one matrix, REFUTED at its first
wrong element; at 128 bytes it is one in global bytes, but whether the tensor's row
goes on past the box is its extent, not read: UNKNOWN, never PROVED. Before, UNKNOWN
whatever the strides.

The oracle, written here on integers: wgmma reads (n, k) of a 128B-swizzled MN-major
operand at Swizzle<3,4,3>(start + 2 n + 128 (k % 8) + 1024 (k / 8)) (PTX ISA
"Shared memory matrix layout": 64 f16 of n a 128-byte line, 8 lines a pattern, SBO
1024 bytes); TMA put box byte x at Swizzle<3,4,3>(x) (the box at byte 0); the box's
byte b holds element (b % 128 / 2, b / 128), global byte 2 (b % 128 / 2) + stride
(b / 128). A block in order: n 2 bytes apart, k one pitch apart, at least a line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verify.ptx.check import Options, check_ptx_text
from verify.smt.solve import Status

SPECS = Path(__file__).parents[2] / "specs/hopper"
START = 32  # the second wgmma's descriptor start, bytes from the box


def swizzle(address: int) -> int:
    return address ^ (((address >> 7) & 7) << 4)


def global_of(n: int, k: int, stride: int) -> int:
    """The global byte (from the box's first element) of what wgmma reads at (n, k)."""
    box_byte = swizzle(swizzle(START + 2 * n + 128 * (k % 8) + 1024 * (k // 8)))
    return 2 * (box_byte % 128 // 2) + stride * (box_byte // 128)


def first_wrong(stride: int) -> tuple[int, int] | None:
    origin, pitch = global_of(0, 0, stride), global_of(0, 1, stride) - global_of(0, 0, stride)
    if abs(pitch) < 64 * 2:
        return 0, 1
    for n in range(64):
        for k in range(16):
            if global_of(n, k, stride) != origin + 2 * n + pitch * k:
                return n, k
    return None


def second_reader(stride: int):
    text = (SPECS / "tma_wgmma_sw128.ptx").read_text().replace(", 1, 1, 1, 0;", ", 1, 1, 1, 1;")
    tma_map = f"dataType=FLOAT16,boxDim={{64,64}},swizzle=128B,globalStrides={{{stride}}}"
    found = check_ptx_text(text, "mn.ptx", Options(tma_maps=(tma_map,)))
    first, second = [r for r in found if r.property.startswith("writer_reader")]
    assert first.status is Status.PROVED  # from byte 0: inside the box rows
    return second


@pytest.mark.parametrize("stride", [128, 256, 1024, 96, 4096 + 128])
def test_an_mn_major_read_past_a_box_row_is_the_oracles(stride):
    result = second_reader(stride)
    wrong = first_wrong(stride)
    if wrong is None:
        assert result.status is Status.UNKNOWN
        assert "reads past a box row into the next" in result.reason
        return
    assert result.status is Status.REFUTED and result.counterexample is not None
    n, k = wrong
    assert (result.counterexample.instance["row"], result.counterexample.instance["k"]) == (n, k)
    if (n, k) != (0, 1):
        assert f"global byte {global_of(n, k, stride)} from the box's first" in (
            result.counterexample.summary
        )


def test_the_oracle_refutes_every_stride_but_a_box_row():
    assert [s for s in range(16, 4096, 16) if first_wrong(s) is None] == [128]
