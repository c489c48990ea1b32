"""Counterexamples that explain (verify.engines.explain): each sentence is computed from
the colliding lanes' addresses and the layout's swizzle (suggestions:
tests/synth/test_suggest.py)."""

import verify
from verify.report.text import result_json

ROWS_OF_256 = """dtype f16
buffer align 128
layout A = {layout}
access rd = ldmatrix.x4 A(lane % 8, 32 * k + 8 * (lane / 8)) for k in 0..8
check conflict_free rd{expect}
"""

ROWS_OF_64 = """dtype f16
buffer align 128
layout A = {layout}
access rd = ldmatrix.x1 A(lane, 8 * q) for q in 0..8
check conflict_free rd
"""


def refuted(text: str):
    report = verify.check_text(text, name="t.spec")
    return next(r for r in report if r.status.value == "refuted")


def sentences(result, label: str) -> str:
    return " ".join(t for kind, t in result.counterexample.explanation if kind == label)


def test_a_swizzle_that_does_not_read_the_differing_bit_is_named_with_the_bit():
    r = refuted(ROWS_OF_256.format(layout="Sw<3,3,3> o (8,256):(256,1)", expect=""))
    why = sentences(r, "why")
    assert "lanes 0 and 2 at (0, 0) and (2, 0) need words 1024 bytes apart" in why
    assert "Sw<3,3,3> reads element bits 6-8 (byte bits 7-9)" in why
    assert "differ only in element bit 9 (byte bit 10): it reads none of them" in why
    assert "also reads element bit 9" in sentences(r, "fix")


def test_a_plain_tile_is_told_which_bits_collide_and_how_to_separate_them():
    r = refuted(ROWS_OF_64.format(layout="(8,64):(64,1)"))
    assert "no swizzle: their addresses differ only in byte bit 7" in sentences(r, "why")
    assert "XOR byte bits 7-9 into byte bits 4-6" in sentences(r, "fix")
    assert (
        "pad mode 0's stride of 128 bytes (a multiple of 128) by 16 bytes: 64 -> 72"
        in sentences(r, "fix")
    )


def test_a_swizzle_that_writes_above_the_bank_bits_is_named():
    r = refuted(ROWS_OF_64.format(layout="Sw<1,6,-1> o (8,64):(64,1)"))
    assert "it writes none of byte bits 4-6, the bits that pick a 16-byte" in sentences(r, "why")
    assert "writes byte bits 4-6" in sentences(r, "fix")


def test_a_triton_encoding_is_explained_as_the_cute_swizzle_it_equals():
    text = ROWS_OF_64.format(
        layout="#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 4, "
        "order = [1, 0]}> shape (32, 64)"
    )
    r = refuted(text)
    assert "CuTe's Sw<2,3,3>" in sentences(r, "why")
    assert "tile_to_shape" not in sentences(r, "fix")


def test_misalignment_by_a_swizzle_inside_the_vector_is_explained():
    r = refuted(ROWS_OF_64.format(layout="Sw<3,2,3> o (8,64):(64,1)"))
    assert r.property == "aligned 16 rd"
    assert "XORs into element bits 2-4 (byte bits 3-5), inside the 16 bytes" in sentences(r, "why")
    assert "lowest written bit is byte bit 4 or above" in sentences(r, "fix")


def test_misalignment_by_a_stride_names_the_mode_and_a_stride_that_works():
    r = refuted(ROWS_OF_64.format(layout="(8,64):(65,1)"))
    assert "mode 0 of (8,64):(65,1) steps 65 elements = 130 bytes" in sentences(r, "why")
    assert "(for example 72)" in sentences(r, "fix")


def test_a_padded_tile_that_still_collides_is_explained_without_another_padding():
    padded = refuted(ROWS_OF_64.format(layout="(8,64):(80,1)"))
    assert padded.property == "conflict_free rd"
    assert "differ only in byte bits 7, 9" in sentences(padded, "why")
    assert "pad" not in sentences(padded, "fix")


def test_the_text_report_labels_each_part():
    text = str(refuted(ROWS_OF_64.format(layout="(8,64):(64,1)")))
    assert "\n    why: lanes 0 and 1" in text
    assert "\n    fix: XOR byte bits 7-9" in text
    assert max(len(line) for line in text.splitlines() if "why" in line or "fix" in line) <= 100


def test_a_pointer_swizzle_that_moves_no_bit_is_not_explained_as_one():
    """Sw<0,4,3> on bytes (an INTER GMMA atom): the explanation must not crash on its
    empty masks (it raised IndexError and took the verdict with it); it says why the
    lanes collide and names no swizzle."""
    r = refuted(
        "dtype i8\nbuffer align 1024\n"
        "layout L = tile_to_shape(GMMA::Layout_MN_INTER_Atom<int8_t>, (32, 32), (1,0))\n"
        "access rd = ld.shared.v2.b16 L((4 * lane) % 32, (2 * lane) % 32)\n"
        "check conflict_free rd\n"
    )
    assert r.max_ways == 4
    assert "multiple of the 128-byte bank period" in sentences(r, "why")
    assert "Sw<0" not in sentences(r, "why")


def overlap(text: str):
    r = refuted(text)
    assert r.property.startswith("bijective")
    return r


def test_an_overlap_in_a_shape_stride_layout_names_the_modes_and_the_stride_that_separates():
    r = overlap("dtype f32\nlayout A = (5,4):(4,12)\ncheck bijective A\n")
    why = sentences(r, "why")
    assert "from (0, 1) to (3, 0) in (5,4):(4,12)" in why
    assert "mode 0 moves +3 steps of stride 4 = +12" in why
    assert "mode 1 moves -1 step of stride 12 = -12, +0 in all: the same offset" in why
    assert "a stride of mode 1 of at least 17" in sentences(r, "fix")
    fixed = verify.check_text("dtype f32\nlayout A = (5,4):(4,17)\ncheck bijective A\n")
    assert fixed.ok


def test_an_overlap_in_nested_modes_names_the_sub_modes():
    r = overlap("dtype f16\nlayout A = ((2,4),8):((1,16),4)\ncheck bijective A\n")
    why = sentences(r, "why")
    assert "mode 0.1 moves +1 step of stride 16 = +16" in why
    assert "mode 1 moves -4 steps of stride 4 = -16" in why
    assert "a stride of mode 0.1 of at least 30" in sentences(r, "fix")


def test_a_broadcast_mode_is_named():
    r = overlap("dtype f16\nlayout A = (8,4):(1,0)\ncheck bijective A\n")
    assert "mode 1 moves +1 step of stride 0" in sentences(r, "why")
    assert "a nonzero stride for mode 1: with stride 0 its 4 coordinates" in sentences(r, "fix")


def test_a_swizzle_is_cleared_and_the_inner_layout_blamed():
    for layout, name, unit in (
        ("Sw<3,3,3> o (8,64):(32,1)", "Sw<3,3,3> is a bijection on offsets", "element 32"),
        (
            "Sw<3,4,3> o smem_ptr[16b](unset) o (8,64):(32,1)",
            "Sw<3,4,3> on byte addresses is a bijection",
            "byte 64",
        ),
    ):
        r = overlap(f"dtype f16\nbuffer align 128\nlayout A = {layout}\ncheck bijective A\n")
        why = sentences(r, "why")
        assert name in why
        assert f"before it both are at {unit}, the collision is in (8,64):(32,1)" in why
        assert "mode 0 moves +1 step of stride 32 = +32" in why
        assert "a stride of mode 0 of at least 64" in sentences(r, "fix")


def test_stages_that_start_inside_each_other_are_told_the_stage_bytes_they_need():
    r = overlap(
        "dtype f16\nbuffer align 128 stages 2 stage_bytes 256\n"
        "layout A = Sw<3,3,3> o (8,32):(32,1)\ncheck bijective A\n"
    )
    assert "stage 1 starts 256 bytes after stage 0 but the layout spans 512 bytes" in sentences(
        r, "why"
    )
    assert "stage_bytes of at least 512 (it is 256)" in sentences(r, "fix")


def test_a_formula_overlap_names_the_formula_and_the_coordinates():
    r = overlap("dtype f16\nlayout F(r in 0..8, c in 0..8) = 8*r + (c & 3)\ncheck bijective F\n")
    why = sentences(r, "why")
    assert "the formula ((8 * r) + (c & 3)) gives (r, c) = (0, 0) and (0, 4) the same offset" in why
    assert "stride" not in why
    explanation = result_json(r)["counterexample"]["explanation"]
    assert {"label": "why", "text": why} in explanation
