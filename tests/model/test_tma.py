"""TMA boxes (verify.model.tma) and the writer = reader proofs against wgmma reads.

The box layout is checked against the CUDA driver API's description written out
here on integers (rows of inner bytes, each 16-byte chunk's index within its span
XORed with the row's place in the pattern), sharing no code with verify's Swizzle;
the proofs run verify's own runner (check equivalent) and are checked in both
directions: the pairings CUTLASS and Triton use are PROVED, and each mismatch the
issue cites (another swizzle mode, a k-block off by one, a buffer start off the
pattern with offsets computed from it) is REFUTED at a replayed element.
"""

from __future__ import annotations

import re
from pathlib import Path

import conftest
import pytest

from verify.api import offsets
from verify.errors import SpecError
from verify.model.expr import Const, Var, add, compiled, mul
from verify.model.tma import DATA_TYPES, TensorMap, wgmma_reads_box
from verify.model.wgmma import (
    MatrixDescriptor,
    SwizzleMode,
    check_writer_reader,
    operand,
    writer_reader_spec,
)
from verify.spec.layout_text import parse_layout

F16 = "CU_TENSOR_MAP_DATA_TYPE_FLOAT16"
DATA = Path(conftest.DATA) / "hopper"


def tmap(box, swizzle="128B", dtype=F16):
    return TensorMap.encode_tiled(dtype, box, swizzle=f"CU_TENSOR_MAP_SWIZZLE_{swizzle}")


def driver_api_address(inner: int, row: int, box_inner: int, elem_bytes: int, span: int) -> int:
    """Byte offset of box element (inner, row), as the driver API describes the modes."""
    linear = row * box_inner * elem_bytes + inner * elem_bytes
    if span == 0:
        return linear
    chunks = span // 16  # chunks in one swizzle span: 2, 4 or 8
    chunk, byte = divmod(linear, 16)
    span_index, chunk_in_span = divmod(chunk, chunks)
    pattern_row = (linear // 128) % chunks
    return (span_index * chunks + (chunk_in_span ^ pattern_row)) * 16 + byte


@pytest.mark.parametrize(
    "dtype, box, swizzle",
    [
        (F16, (64, 32), "128B"),
        (F16, (32, 16), "64B"),
        (F16, (16, 24), "32B"),
        (F16, (64, 8, 4), "128B"),
        (F16, (40, 8), "NONE"),
        ("CU_TENSOR_MAP_DATA_TYPE_TFLOAT32", (32, 16), "128B"),
        ("CU_TENSOR_MAP_DATA_TYPE_UINT8", (128, 16), "128B"),
        ("CU_TENSOR_MAP_DATA_TYPE_UINT8", (64, 16), "128B"),  # a row shorter than the span
        ("CU_TENSOR_MAP_DATA_TYPE_FLOAT64", (8, 16), "64B"),
    ],
)
def test_box_layout_is_the_driver_api_s(dtype, box, swizzle):
    t = tmap(box, swizzle, dtype)
    eb = {"u8": 1, "f16": 2, "tf32": 4, "f64": 8}[t.dtype]
    span = 0 if swizzle == "NONE" else int(swizzle[:-1])
    got = offsets(t.layout_text(), t.dtype)
    want = [
        driver_api_address(i, r, box[0], eb, span) // eb
        for r in range(t.rows)
        for i in range(box[0])
    ]
    assert got == want


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: tmap((128, 8)), "at most the 128-byte swizzle span"),
        (lambda: tmap((32, 8), "32B"), "at most the 32-byte"),
        (lambda: tmap((12, 8), "NONE"), "multiple of 16 bytes"),
        (lambda: tmap((64, 257)), "each in 1..256"),
        (lambda: tmap((64, 2, 2, 2, 2, 2)), "1 to 5 extents"),
        (lambda: TensorMap.encode_tiled("FLOAT16", (64, 8)), "expected one of"),
        (lambda: TensorMap.encode_tiled(F16, (64, 8), swizzle="128B"), "expected one of"),
        (
            lambda: TensorMap.encode_tiled(F16, (64, 8), interleave="CU_TENSOR_MAP_INTERLEAVE_16B"),
            "not modelled",
        ),
        (lambda: TensorMap.encode_tiled(F16, (64, 8), elementStrides=(1, 2)), "not modelled"),
        (lambda: TensorMap.encode_tiled(F16, (8, 8, 2), globalStrides=(16,)), "expected 2"),
        (lambda: TensorMap.encode_tiled(F16, (8, 8), globalStrides=(24,)), "multiple of 16"),
    ],
)
def test_maps_the_driver_refuses_are_refused(call, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        call()


def test_every_data_type_has_a_width():
    for name in DATA_TYPES:
        assert TensorMap.encode_tiled(name, (64, 2)).bytes % 16 == 0


B128 = operand("m64n128k16", "f16", "B")


@pytest.mark.parametrize("kblock", range(4))
def test_cutlass_k_blocks_read_the_box_tma_wrote(kblock):
    """CollectiveMma's pairing: a 128B box (64 k, 128 n), descriptors 32 bytes apart."""
    desc = MatrixDescriptor(32 * kblock, 16, 1024, SwizzleMode.B128)
    report, mismatch = wgmma_reads_box(tmap((64, 128)), desc, B128, k_offset=16 * kblock)
    assert report.ok and mismatch is None


def test_a_k_block_off_by_one_is_refuted_at_its_first_element():
    desc = MatrixDescriptor(32, 16, 1024, SwizzleMode.B128)
    report, mismatch = wgmma_reads_box(tmap((64, 128)), desc, B128)
    assert not report.ok
    assert (mismatch.row, mismatch.k) == (0, 0)
    assert mismatch.written != mismatch.read


def test_a_descriptor_with_another_mode_than_the_copy_is_refuted():
    """The issue's 'reads a different swizzle mode than the copies wrote'."""
    report, mismatch = wgmma_reads_box(
        tmap((32, 128), "64B"), MatrixDescriptor(0, 16, 1024, SwizzleMode.B128), B128
    )
    assert not report.ok
    assert str(mismatch) == (
        "element (row 0, k 0) with the buffer at byte 512: written at byte 512, read from byte 576"
    )


@pytest.mark.parametrize(
    "swizzle, mode, sbo", [("64B", SwizzleMode.B64, 512), ("32B", SwizzleMode.B32, 256)]
)
def test_narrower_modes_pair_with_their_descriptors(swizzle, mode, sbo):
    inner = int(swizzle[:-1]) // 2
    desc = MatrixDescriptor(0, 16, sbo, mode)
    report, _ = wgmma_reads_box(tmap((inner, 128), swizzle), desc, B128)
    assert report.ok


@pytest.mark.parametrize("kblock", range(4))
def test_mn_major_boxes_pair_with_transposed_reads(kblock):
    """A 128B box (64 n, 64 k) read N-major: k-blocks of 16 rows, 2048 bytes apart."""
    desc = MatrixDescriptor(2048 * kblock, 0, 1024, SwizzleMode.B128)
    op = operand("m64n64k16", "f16", "B", 1)
    report, _ = wgmma_reads_box(tmap((64, 64)), desc, op, k_offset=16 * kblock)
    assert report.ok


def test_tf32_and_unswizzled_boxes():
    tf32 = TensorMap.encode_tiled(
        "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32", (32, 64), swizzle="CU_TENSOR_MAP_SWIZZLE_128B"
    )
    report, _ = wgmma_reads_box(
        tf32,
        MatrixDescriptor(32, 16, 1024, SwizzleMode.B128),
        operand("m64n64k8", "tf32", "B"),
        k_offset=8,
    )
    assert report.ok
    # Core matrices from a 3-D box (8 k, 8 rows, 16 groups): SBO 128, LBO 1024.
    plain = tmap((8, 8, 16), "NONE")
    report, _ = wgmma_reads_box(
        plain,
        MatrixDescriptor(0, 1024, 128, SwizzleMode.NONE),
        operand("m64n64k16", "f16", "B"),
        coords=("k % 8", "row + 64 * (k / 8)"),
    )
    assert report.ok


def test_tma_and_wgmma_both_swizzle_absolute_addresses():
    """At a destination 128 bytes past the pattern both XOR the same address bits (the
    model: wgmma measured so, TMA as verify's tma() term has it), so they agree; code
    computing offsets from the buffer start does not, unless the descriptor's base
    offset names the pattern row (PTX: (pattern start >> 7) & 7)."""
    desc = MatrixDescriptor(0, 16, 1024, SwizzleMode.B128)
    op = operand("m64n64k16", "f16", "B")
    assert wgmma_reads_box(tmap((64, 64)), desc, op, align=128)[0].ok
    relative = "Sw<3,3,3> o (_64,_64):(_64,_1)"  # element offsets from the buffer start
    report, mismatch = check_writer_reader(relative, "f16", desc, op, align=128)
    assert str(mismatch) == (
        "element (row 0, k 0) with the buffer at byte 128: written at byte 128, read from byte 144"
    )
    assert check_writer_reader(relative, "f16", desc, op, align=1024)[0].ok
    fixed = check_writer_reader(relative, "f16", desc, op, align=128, base_offset_from_base=True)
    assert fixed[0].ok


def test_the_spec_is_verify_spec_text_with_one_equivalence():
    text = writer_reader_spec(
        "Sw<3,4,3> o smem_ptr[16b] o (_64,_64):(_64,_1)",
        "f16",
        MatrixDescriptor(0, 16, 1024, SwizzleMode.B128),
        operand("m64n64k16", "f16", "A"),
        align=1024,
    )
    checks = [line for line in text.splitlines() if line.startswith("check ")]
    assert checks == [
        "check equivalent Written(row, k, slot) == Read(row, k, slot) "
        "for row in 0..64, k in 0..16, slot in 0..4"
    ]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"align": 24}, "power of two"),
        ({"align": 1024, "coords": ("row",)}, "takes 2 coordinates, found 1"),
        ({"align": 1024, "coords": ("row", "j")}, "expected only its coordinates"),
    ],
)
def test_bad_writer_reader_input_is_a_spec_error(kwargs, message):
    desc = MatrixDescriptor(0, 16, 1024, SwizzleMode.B128)
    with pytest.raises(SpecError, match=re.escape(message)):
        check_writer_reader(
            "(_64,_64):(_64,_1)", "f16", desc, operand("m64n64k16", "f16", "A"), **kwargs
        )
    with pytest.raises(SpecError, match="multiple of 128"):
        wgmma_reads_box(tmap((64, 64)), desc, operand("m64n64k16", "f16", "A"), align=64)


def h200_placements():
    """(span, offset, byte offsets from the destination of each box element)."""
    with open(DATA / "tma_h200.txt") as f:
        for line in f:
            if line.startswith("place "):
                span, offset, *where = map(int, line.split()[1:])
                yield span, offset, where


def placed(span: int, offset: int, absolute: bool) -> list[int]:
    """The model's byte offsets (from the destination) of a (span/2 x 64) u16 box at
    `offset` past a 4096-aligned base: verify's own tma() layout, its swizzle on the
    absolute address (absolute) or on the offset from the destination (not)."""
    inner = (span or 128) // 2
    layout = parse_layout(
        tmap((inner, 64), f"{span}B" if span else "NONE").layout_text(), dtype="f16"
    )
    index, origin = Var("i"), Const(offset if absolute else 0)
    linear = add(origin, mul(Const(2), layout.function.crd2idx(layout.function.idx2crd(index))))
    swizzle = layout.pointer_swizzle
    at = compiled(linear if swizzle is None else swizzle.apply_expr(linear))
    return [at({"i": i}) - (offset if absolute else 0) for i in range(inner * 64)]


def test_tma_places_every_element_where_the_model_says():
    """On the H200 the swizzle acts on the absolute shared address: a destination 128
    bytes past the pattern moves every chunk of the box (so a reader computing offsets
    from the destination is wrong on all of them)."""
    cases = list(h200_placements())
    assert len(cases) == 17
    for span, offset, where in cases:
        assert where == placed(span, offset, absolute=True), (span, offset)
        relative_wrong = sum(a != b for a, b in zip(where, placed(span, offset, absolute=False)))
        pattern = {0: 16, 32: 256, 64: 512, 128: 1024}[span]
        assert relative_wrong == (0 if offset % pattern == 0 else len(where)), (span, offset)


def test_h200_refuses_unaligned_destinations_and_wgmma_reads_the_box():
    with open(DATA / "tma_h200.txt") as f:
        lines = f.read().splitlines()
    faults = [line for line in lines if line.startswith("fault")]
    assert faults == [f"fault {s} 16: misaligned address" for s in (128, 64, 32, 0)]
    reads = [re.findall(r"\d+", line) for line in lines if line.startswith("wgmma")]
    assert len(reads) == 18
    measured = {(int(o), int(bo)): int(wrong) for _, o, bo, wrong, _ in reads}
    # Right with base offset 0 at every 128-aligned destination; every entry of D
    # wrong with PTX's base offset for a pattern starting there (off the pattern).
    assert all((w == 0) == (bo == 0 or o % 1024 == 0) for (o, bo), w in measured.items())
    assert sorted(w for w in measured.values() if w) == [4096] * 7
    # The proofs say the same, at every 128-aligned destination.
    box, op = tmap((64, 64)), operand("m64n64k16", "f16", "B")
    desc = MatrixDescriptor(0, 16, 1024, SwizzleMode.B128)
    assert wgmma_reads_box(box, desc, op, align=128)[0].ok
    report, mismatch = wgmma_reads_box(box, desc, op, align=128, base_offset_from_base=True)
    assert not report.ok and mismatch.base % 1024 != 0


def test_a_writer_swizzling_higher_bits_gets_a_longer_base_period():
    text = writer_reader_spec(
        "Sw<3,7,3> o smem_ptr[16b] o (_64,_64):(_64,_1)",  # reads bits 10-12
        "f16",
        MatrixDescriptor(0, 16, 1024, SwizzleMode.B128),
        operand("m64n64k16", "f16", "A"),
        align=1024,
    )
    assert text.rstrip().endswith("slot in 0..8")


def test_global_offsets_follow_the_strides():
    """Box element index i (inner fastest) of CUTLASS's unswizzled 3-D K-major box
    (8 k, 64 rows, 2 k-blocks; rows 256 bytes apart, k-blocks 16): global byte
    2 (i % 8) + 256 ((i / 8) % 64) + 16 (i / 512), written out here."""
    box = TensorMap.encode_tiled(F16, (8, 64, 2), globalStrides=(256, 16))
    for i in range(8 * 64 * 2):
        assert box.global_offset(i) == 2 * (i % 8) + 256 * ((i // 8) % 64) + 16 * (i // 512)
        assert box.coordinates(i) == (i % 8, (i // 8) % 64, i // 512)
    assert box.layout_text() == "(8,128):(1,8)"  # the shared side does not change
