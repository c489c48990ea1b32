"""A TMA box whose rows are not rows of one global matrix (issue 25): which global
element each byte of a box holds is the tensor map's globalStrides.

Where what wgmma reads of a box crosses an outer dimension of a box of 3 or more
dimensions, the rows are one matrix only for some strides: verify decides it from
them (`--tma-map ...,globalStrides={...}`), UNKNOWN without them, never PROVED.
Each verdict against an oracle written here on integers, sharing no code with
verify: CuTe's Swizzle<3,4,3> on byte addresses, CUTLASS's canonical K-major
128B layout, and the box's element index -> coordinates -> global byte.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verify.ptx.check import Options, check_ptx, check_ptx_text
from verify.smt.solve import Status

SPECS = Path(__file__).parents[2] / "specs/hopper"
SW128_3D = SPECS / "tma_wgmma_sw128_3d.ptx"
NONE_3D = SPECS / "tma_wgmma_none_3d.ptx"


def swizzle(address: int, bits: int) -> int:
    """CuTe's Swizzle<bits,4,3> on a byte address."""
    return address ^ (((address >> 7) & ((1 << bits) - 1)) << 4)


def global_byte(box_byte: int, box: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """The global byte (from the box's first element) of f16 box byte `box_byte`: the
    box's elements inner dimension fastest, coordinates times the strides."""
    index, coords = box_byte // 2, []
    for extent in box:
        coords.append(index % extent)
        index //= extent
    return 2 * coords[0] + sum(c * s for c, s in zip(coords[1:], strides))


def one_block(global_of, rows: int, ks: int):
    """None where element (row, k) -> global byte is one block of one matrix, K-major
    (k 2 bytes apart, rows one pitch apart, the pitch at least a row of the block),
    else the first (row, k) that is not."""
    origin = global_of(0, 0)
    pitch = global_of(1, 0) - origin
    if abs(pitch) < 2 * ks:
        return (1, 0)
    for row in range(rows):
        for k in range(ks):
            if global_of(row, k) != origin + row * pitch + 2 * k:
                return (row, k)
    return None


def sw128_oracle(box, strides, k_block: int):
    """B (64 x 16 f16, K-major) of the k_block-th wgmma of tma_wgmma_sw128_3d.ptx:
    wgmma reads (n, k) at Swizzle<3,4,3> of (n % 8) * 128 + (n / 8) * 1024 + 2 k +
    32 k_block; the box (at byte 0) put its byte x at Swizzle<3,4,3>(x)."""

    def global_of(n: int, k: int) -> int:
        read = swizzle((n % 8) * 128 + (n // 8) * 1024 + 2 * k + 32 * k_block, 3)
        box_byte = next(x for x in range(8192) if swizzle(x, 3) == read)
        return global_byte(box_byte, box, strides)

    return one_block(global_of, 64, 16)


def writer_reader(found):
    return [r for r in found if r.property.startswith("writer_reader")]


def tma_map(box, strides=None, swizzle_mode="128B") -> str:
    text = f"dataType=FLOAT16,boxDim={{{','.join(map(str, box))}}},swizzle={swizzle_mode}"
    if strides is not None:
        text += f",globalStrides={{{','.join(map(str, strides))}}}"
    return text


SWIZZLED_3D = [
    ((64, 8, 8), (128, 1024)),  # the 8-row groups one 64-row matrix: PROVED
    ((64, 4, 16), (128, 512)),  # 4-row groups, likewise
    ((64, 8, 8), (128, 1 << 20)),  # each group a matrix of its own (a batch)
    ((64, 8, 8), (1024, 128)),  # the groups interleaved: rows 1024 bytes apart
    ((64, 2, 32), (256, 128)),
    ((64, 8, 8), (16, 1024)),  # rows 16 bytes apart: they overlap
]


@pytest.mark.parametrize(("box", "strides"), SWIZZLED_3D)
def test_swizzled_3d_box_decided_from_the_strides(box, strides):
    """Before: PROVED for every one of these strides (the outer dimensions were
    taken as consecutive rows, the strides unread)."""
    found = writer_reader(check_ptx(str(SW128_3D), Options(tma_maps=(tma_map(box, strides),))))
    wants = [sw128_oracle(box, strides, k_block) for k_block in (0, 1)]
    assert [r.status for r in found] == [
        Status.PROVED if w is None else Status.REFUTED for w in wants
    ]
    for result, want in zip(found, wants):
        if want is not None:
            assert result.counterexample is not None
            assert (
                result.counterexample.instance["row"],
                result.counterexample.instance["k"],
            ) == want


def test_the_oracle_on_the_table():
    assert [sw128_oracle(b, s, 0) for b, s in SWIZZLED_3D] == [
        None,
        None,
        (8, 0),
        (8, 0),
        (2, 0),
        (1, 0),
    ]


def test_swizzled_3d_box_without_strides_is_unknown():
    found = writer_reader(check_ptx(str(SW128_3D), Options(tma_maps=(tma_map((64, 8, 8)),))))
    assert [r.status for r in found] == [Status.UNKNOWN] * 2
    assert "globalStrides" in found[0].reason and "outer dimension" in found[0].reason


def test_rows_inside_one_outer_index_need_no_strides():
    """A box whose outer dimensions past the first are 1 (a batch index) is rows one
    stride apart whatever the strides: decided by verify's runner as a 2-D box."""
    found = writer_reader(check_ptx(str(SW128_3D), Options(tma_maps=(tma_map((64, 64, 1)),))))
    assert [r.status for r in found] == [Status.PROVED] * 2


def test_a_map_of_another_rank_than_the_copy():
    """tma_wgmma_sw128.ptx copies .2d: a 3-D map cannot be its map."""
    path = SPECS / "tma_wgmma_sw128.ptx"
    found = check_ptx(str(path), Options(tma_maps=(tma_map((64, 8, 8), (128, 1024)),)))
    unknown = writer_reader(found)
    assert [r.status for r in unknown] == [Status.UNKNOWN] * 2
    assert "the copy is .2d" in unknown[0].reason
    placement = [r for r in found if r.property.startswith("placement")]
    assert [r.status for r in placement] == [Status.UNKNOWN]


# -- a swizzled descriptor reading an unswizzled box wider than its rows ------------


def none_box_sw128_read_oracle(box, strides):
    """B (64 x 16 f16, K-major) read through a 128B descriptor (SBO 1024) from an
    unswizzled box at byte 0: wgmma reads (n, k) at Swizzle<3,4,3> of (n % 8) * 128 +
    (n / 8) * 1024 + 2 k, the box holds its byte x at x (None past the box)."""
    size = 2 * box[0] * box[1] * box[2]

    def global_of(n: int, k: int) -> int:
        byte = swizzle((n % 8) * 128 + (n // 8) * 1024 + 2 * k, 3)
        assert byte < size, "the table reads inside the box"
        return global_byte(byte, box, strides)

    return one_block(global_of, 64, 16)


SWIZZLED_READS = [
    ((8, 64, 16), (1024, 16)),  # 8 k a row, 16 k-blocks; rows 1024 bytes apart
    ((8, 64, 16), (128, 16)),  # CUTLASS's strides for the box: k-blocks 16 bytes apart
]


@pytest.mark.parametrize(("box", "strides"), SWIZZLED_READS)
def test_swizzled_descriptor_over_an_unswizzled_box(box, strides):
    """Was UNKNOWN ("a swizzled descriptor reading more k than the unswizzled box
    holds in a row: not modelled"); decided now element by element, at base 0."""
    text = NONE_3D.read_text().replace("34363932672", str((1 << 62) | (64 << 32) | (1 << 16)))
    text = text.replace(".align 1024 .b8 tile[2048]", ".align 1024 .b8 tile[16384]")
    found = writer_reader(
        check_ptx_text(
            text, "none_box_sw128_read.ptx", Options(tma_maps=(tma_map(box, strides, "NONE"),))
        )
    )
    want = none_box_sw128_read_oracle(box, strides)
    assert [r.status for r in found] == [Status.PROVED if want is None else Status.REFUTED]
    if want is not None:
        cex = found[0].counterexample
        assert cex is not None and (cex.instance["row"], cex.instance["k"]) == want


# -- boxes laid end to end, paired by their copies' coordinates ----------------------

TMA_MATMUL = Path(__file__).parents[2] / "tests/data/hopper/tma_matmul.sm90.ptx"
TRITON_MAPS = (
    "dataType=FLOAT16,boxDim={64,128},swizzle=128B,param=tma_matmul_param_0",
    "dataType=FLOAT16,boxDim={64,64},swizzle=128B,param=tma_matmul_param_5",
)


@pytest.mark.parametrize(
    ("second_half", "status"),
    [
        ("shl.b32 \t%r28, %r26, 6;", Status.PROVED),  # as compiled: n + 64
        ("shl.b32 \t%r28, %r26, 5;", Status.UNKNOWN),  # n + 32
        ("mov.b32 \t%r28, 0;", Status.UNKNOWN),  # the same 64 columns twice
    ],
)
def test_boxes_end_to_end_are_paired_by_coordinates(second_half, status):
    """Triton's 128-wide MN-major B is two 64x64 boxes, one copy by warps 0 and 1 (the
    warp's bit, shifted by 6, is both the box's 8192-byte offset's and the n
    coordinate's +64). Before, any box laid after the first was taken as its
    continuation: the +32 and +0 kernels were PROVED."""
    text = TMA_MATMUL.read_text()
    assert text.count("shl.b32 \t%r28, %r26, 6;") == 1
    text = text.replace("shl.b32 \t%r28, %r26, 6;", second_half)
    found = check_ptx_text(text, "tma_matmul.ptx", Options(tma_maps=TRITON_MAPS))
    b = [r for r in found if r.property.startswith("writer_reader operand B")]
    assert {r.status for r in b} == {status}
    a = [r for r in found if r.property.startswith("writer_reader operand A")]
    assert {r.status for r in a} == {Status.PROVED}
    if status is Status.UNKNOWN:
        assert "coordinates do not prove the continuation" in b[0].reason


def test_an_mn_major_read_past_a_box_row_stays_unknown_with_strides():
    """B read MN-major from start +32 bytes of a 64-wide box: n 48..63 are the next box
    row's first elements. In global bytes that is a block (the rows 128 bytes apart,
    exactly the line), but whether the tensor's row goes on past column 63 is its
    coordinates': UNKNOWN, not PROVED, with or without globalStrides."""
    text = (SPECS / "tma_wgmma_sw128.ptx").read_text().replace(", 1, 1, 1, 0;", ", 1, 1, 1, 1;")
    for strides in (None, (128,)):
        options = Options(tma_maps=(tma_map((64, 64), strides),))
        found = writer_reader(check_ptx_text(text, "mn.ptx", options))
        assert [r.status for r in found] == [Status.PROVED, Status.UNKNOWN]


# -- k_blocks of TMA-fed operands ----------------------------------------------------


def k_blocks_of(found):
    return [r for r in found if r.property.startswith("k_blocks")]


def test_k_blocks_of_tma_fed_operands():
    """Triton's TMA matmul: each accumulator adds 4 wgmma whose A descriptors step 32
    bytes (16 k) along A's box rows and B's 2048 bytes (16 k rows of 128 bytes):
    PROVED (it had no k_blocks check: only cp.async-fed operands were blocks). With
    A's fourth k-block at +4 (chunks) instead of +6, A's K columns from 32 meet B's
    K rows from 48: REFUTED. Offsets are in each box's own coordinates."""
    text = TMA_MATMUL.read_text()
    found = k_blocks_of(check_ptx_text(text, "tma_matmul.ptx", Options(tma_maps=TRITON_MAPS)))
    assert [r.status for r in found] == [Status.PROVED] * 2
    assert text.count("add.s32 \t%r56, %r49, 6;") == 1
    wrong = text.replace("add.s32 \t%r56, %r49, 6;", "add.s32 \t%r56, %r49, 4;")
    found = k_blocks_of(check_ptx_text(wrong, "tma_matmul.ptx", Options(tma_maps=TRITON_MAPS)))
    refuted = [r for r in found if r.status is Status.REFUTED]
    assert refuted and refuted[0].counterexample is not None
    assert "multiplies A's K columns from 32 by B's K rows from 48" in (
        refuted[0].counterexample.summary
    )
