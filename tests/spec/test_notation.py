"""Library notations on whole tiles against their defining formulas, and their errors.

(The same layouts are compared with pycute and Triton in tests/oracle/test_oracles.py.)
"""

import itertools
import json
import re

import pytest
from click.testing import CliRunner

from verify import offsets
from verify.api import parse_layout
from verify.cli import main
from verify.engines.runner import run_spec
from verify.errors import SpecError
from verify.smt.solve import Status
from verify.spec.parser import parse_text

BYTES = {"int8_t": 1, "half_t": 2, "tfloat32_t": 4}


def hardware_swizzle(byte: int, bits: int) -> int:
    """The TMA/wgmma swizzle on a byte offset: 16-byte chunk ^= (offset / 128) % 2^bits."""
    return byte ^ (((byte >> 7) & ((1 << bits) - 1)) << 4)


@pytest.mark.parametrize(
    "major,mode,elem",
    list(itertools.product(("K", "MN"), ("INTER", "SW32", "SW64", "SW128"), BYTES)),
)
def test_gmma_atoms_are_the_hardware_swizzle_of_a_row_major_atom(major, mode, elem):
    bits = {"INTER": 0, "SW32": 1, "SW64": 2, "SW128": 3}[mode]
    eb = BYTES[elem]
    row_bytes = 16 << bits  # one swizzle row: 16, 32, 64, 128 bytes
    width = row_bytes // eb
    shape = (8, width) if major == "K" else (width, 8)
    expected = []
    for index in range(8 * width):
        a, b = index % shape[0], index // shape[0]
        row, col = (a, b) if major == "K" else (b, a)  # MN-major: mode 0 is contiguous
        expected.append(hardware_swizzle(row * row_bytes + col * eb, bits) // eb)
    assert offsets(f"GMMA::Layout_{major}_{mode}_Atom<{elem}>") == expected


@pytest.mark.parametrize(
    "mode,span", [("SWIZZLE_32B", 32), ("SWIZZLE_64B", 64), ("CU_TENSOR_MAP_SWIZZLE_128B", 128)]
)
def test_tma_box_rows_are_swizzled_by_the_hardware_pattern(mode, span):
    inner, outer = span // 2, 16  # f16 rows filling the span
    expected = [
        hardware_swizzle((i + inner * o) * 2, span.bit_length() - 5) // 2
        for o in range(outer)
        for i in range(inner)
    ]
    assert offsets(f"tma({mode}, f16, ({inner}, {outer}))") == expected


def test_required_alignment_follows_the_swizzle_repeat():
    assert parse_layout("GMMA::Layout_K_SW128_Atom<half_t>").required_align == 1024
    assert parse_layout("tma(SWIZZLE_64B, f16, (32, 8))").required_align == 512
    assert (
        parse_layout("tile_to_shape(GMMA::Layout_MN_SW32_Atom<half_t>, (64, 64))").required_align
        == 256
    )
    assert parse_layout("Sw<3,3,3> o (8,64):(64,1)").required_align == 1


@pytest.mark.parametrize(
    "align,stage_bytes,status",
    [
        (1024, 0, Status.PROVED),
        (128, 0, Status.REFUTED),
        (1024, 8192, Status.PROVED),
        (1024, 8320, Status.REFUTED),
    ],
)
def test_base_aligned_is_implicit_and_covers_every_stage(align, stage_bytes, status):
    stages = f" stages 2 stage_bytes {stage_bytes}" if stage_bytes else ""
    spec = parse_text(
        f"dtype f16\nbuffer align {align}{stages}\n"
        "layout T = tma(SWIZZLE_128B, f16, (64, 64))\ncheck bijective T\n"
    )
    result = next(r for r in run_spec(spec) if r.property == "base_aligned T")
    assert result.status == status
    assert result.implicit


def test_tile_to_shape_orders_repeats_column_major_by_default():
    # Two 2x2 atoms stacked along mode 0 come first, then along mode 1.
    assert offsets("tile_to_shape((2,2):(1,2), (4, 4))") == [
        0,
        1,
        4,
        5,
        2,
        3,
        6,
        7,
        8,
        9,
        12,
        13,
        10,
        11,
        14,
        15,
    ]
    assert offsets("tile_to_shape((2,2):(1,2), (4, 4), (1, 0))") == [
        0,
        1,
        8,
        9,
        2,
        3,
        10,
        11,
        4,
        5,
        12,
        13,
        6,
        7,
        14,
        15,
    ]


@pytest.mark.parametrize(
    "text,message",
    [
        (
            "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0], "
            "bogus = 1}>",
            "unknown field 'bogus'",
        ),
        (
            "#ttg.swizzled_shared<{vec = 3, perPhase = 1, maxPhase = 8, order = [1, 0]}>",
            "vec: expected a power of two, found 3",
        ),
        (
            "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [2, 0]}>",
            "not a permutation",
        ),
        (
            "#ttg.swizzled_shared<{vec = 8, perPhase = 1, order = [1, 0]}>",
            "expected the field 'maxPhase'",
        ),
        (
            "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0], "
            "CTAsPerCGA = [2, 1], CTASplitNum = [1, 1], CTAOrder = [1, 0]}>",
            "splits the tensor over CTAs",
        ),
        (
            "#ttg.nvmma_shared<{swizzlingByteWidth = 0, transposed = false, elementBitWidth = 16}>",
            "expected 32, 64 or 128",
        ),
        (
            "#ttg.blocked<{sizePerThread = [1, 8]}>",
            "expected one of swizzled_shared, nvmma_shared, padded_shared, shared_linear",
        ),
    ],
)
def test_triton_encoding_errors_say_what_was_expected(text, message):
    with pytest.raises(SpecError, match=message):
        offsets(text, shape=(64, 64))


def test_cta_fields_that_split_nothing_are_accepted():
    plain = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"
    cta = plain.replace("}>", ", CTAsPerCGA = [1, 1], CTASplitNum = [1, 1], CTAOrder = [1, 0]}>")
    assert offsets(cta, shape=(16, 64)) == offsets(plain, shape=(16, 64))


def test_map_needs_a_shape_for_a_triton_encoding_and_only_for_it():
    runner = CliRunner()
    enc = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"
    missing = runner.invoke(main, ["map", enc])
    assert missing.exit_code == 2 and "needs the tensor shape" in missing.output
    extra = runner.invoke(main, ["map", "(8,8):(8,1)", "--shape", "8,8"])
    assert extra.exit_code == 2 and "only with a Triton encoding" in extra.output
    ok = runner.invoke(main, ["map", enc, "--shape", "8,64", "--json"])
    assert ok.exit_code == 0 and '"offsets": [0, 72,' in ok.output


def test_pointer_swizzled_layouts_compose_only_outermost():
    with pytest.raises(SpecError, match="must be the outermost term"):
        parse_text("layout G = GMMA::Layout_K_SW128_Atom<half_t>\nlayout X = Sw<3,3,3> o G\n")


NVMMA_16 = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>"


@pytest.mark.parametrize(
    "layout,column",
    [
        (f"{NVMMA_16} shape (8, 64)", 12),
        ("GMMA::Layout_K_SW128_Atom<half_t>", 12),
        ("tma(SWIZZLE_128B, f16, (64, 8))", 30),
        ("Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)", 24),
    ],
)
def test_an_element_width_that_differs_from_the_dtype_is_refused_where_defined(layout, column):
    # No check uses the layout: the definition alone is wrong, before or after the dtype.
    for text in (f"dtype f32\nlayout L = {layout}\n", f"layout L = {layout}\ndtype f32\n"):
        line = 2 if text.startswith("dtype") else 1
        with pytest.raises(
            SpecError,
            match=rf"t.spec:{line}:{column}: error: .*16-bit "
            r"elements.*expected 32 bits \(dtype f32\)",
        ):
            parse_text(text, "t.spec")


def test_map_refuses_a_dtype_the_layout_does_not_store():
    runner = CliRunner()
    gmma = runner.invoke(main, ["map", "GMMA::Layout_K_SW32_Atom<half_t>", "--dtype", "f32"])
    assert gmma.exit_code == 2
    assert gmma.output.startswith(
        "<layout>:1:1: error: GMMA::Layout_K_SW32_Atom<half_t> stores 16-bit elements"
    )
    nvmma = runner.invoke(main, ["map", NVMMA_16, "--shape", "8,64", "--dtype", "f32"])
    assert nvmma.exit_code == 2 and "16-bit elements" in nvmma.output
    with pytest.raises(SpecError, match="16-bit elements"):
        offsets("GMMA::Layout_K_SW32_Atom<half_t>", dtype="f32")
    assert (
        runner.invoke(
            main, ["map", "GMMA::Layout_K_SW32_Atom<half_t>", "--dtype", "bf16"]
        ).exit_code
        == 0
    )


@pytest.mark.parametrize("transposed,shape", [(False, (4, 64)), (True, (64, 4))])
def test_nvmma_shared_needs_the_8_rows_of_its_swizzle_repeat(transposed, shape):
    # Triton 3.9 aborts on these: "Illegal shared layout; expected collapsed
    # shapePerCTA to be at least [8, 64], collapsedTmaShape: [4, 64]".
    text = NVMMA_16.replace("false", str(transposed).lower())
    with pytest.raises(SpecError, match=r"expected at least 8 rows .*found 4"):
        offsets(text, shape=shape)


def test_tma_boxes_of_64_bit_elements_are_2_per_16_byte_chunk():
    # SWIZZLE_128B on f64: rows of 16 elements, chunk c of row r moves to c ^ (r % 8).
    assert offsets("tma(SWIZZLE_128B, f64, (16, 8))") == [
        16 * r + 2 * ((i // 2) ^ r) + i % 2 for r in range(8) for i in range(16)
    ]
    with pytest.raises(SpecError, match="TMA box inner extent 17 is 136 bytes"):
        offsets("tma(SWIZZLE_128B, f64, (17, 8))")
    with pytest.raises(SpecError, match="TMA box inner extent 1 is 8 bytes"):
        offsets("tma(SWIZZLE_32B, f64, (1, 8))")


def test_a_layout_call_is_in_the_unit_its_swizzle_acts_on():
    # GMMA atoms (like smem_ptr and TMA boxes) swizzle byte addresses: their call is
    # the byte offset at base 0. nvmma_shared, like every other layout, is an element
    # offset. Both are the seed article's Sw<3,3,3> placement.
    spec = parse_text(
        f"dtype f16\nbuffer align 1024\nlayout S = Sw<3,3,3> o (8,64):(64,1)\n"
        f"layout G = GMMA::Layout_K_SW128_Atom<half_t>\nlayout N = {NVMMA_16} shape (8, 64)\n"
        "check equivalent G(r, c) == 2 * S(r, c) for r in 0..8, c in 0..64\n"
        "check equivalent N(r, c) == S(r, c) for r in 0..8, c in 0..64\n"
    )
    results = [r for r in run_spec(spec) if r.property.startswith("equivalent")]
    assert [r.status for r in results] == [Status.PROVED, Status.PROVED]


@pytest.mark.parametrize(
    "layout,model",
    [
        (f"{NVMMA_16} shape (8, 64)", "offsets from the buffer start"),
        ("GMMA::Layout_K_SW128_Atom<half_t>", "is applied to absolute addresses"),
    ],
)
def test_base_alignment_counterexample_says_how_verify_models_the_swizzle(layout, model):
    spec = parse_text(f"dtype f16\nbuffer align 128\nlayout L = {layout}\ncheck bijective L\n")
    result = next(r for r in run_spec(spec) if r.property == "base_aligned L")
    assert result.status == Status.REFUTED and result.counterexample is not None
    assert model in result.counterexample.summary
    assert re.search(r"but a buffer stage can start at byte \d+$", result.counterexample.summary)


def test_map_says_the_unit_of_every_figure():
    runner = CliRunner()
    gmma = runner.invoke(
        main, ["map", "GMMA::Layout_K_SW32_Atom<half_t>", "--dtype", "f16", "--json"]
    )
    doc = json.loads(gmma.output)
    assert (doc["unit"], doc["formula_unit"]) == ("elements", "bytes at base 0")
    assert doc["byte_offsets"] == [2 * o for o in doc["offsets"]]
    text = runner.invoke(main, ["map", "GMMA::Layout_K_SW32_Atom<half_t>"]).output.splitlines()
    assert text[2].startswith(
        "formula, in bytes at base 0 (the swizzle acts on byte addresses): L(m0, m1) = "
    )
    assert text[3] == "Sw<1,4,3> on byte addresses:"
    assert text[-1].startswith("offsets, in elements: 0 16 32 48 72 ")
    plain = runner.invoke(main, ["map", "Sw<3,3,3> o (8,64):(64,1)", "--json"])
    assert (json.loads(plain.output)["unit"], json.loads(plain.output)["formula_unit"]) == (
        "elements",
        "elements",
    )
    text = runner.invoke(main, ["map", "Sw<3,3,3> o (8,64):(64,1)"]).output.splitlines()
    assert text[2].startswith("formula, in elements: L(m0, m1) = ")
    assert text[3] == "Sw<3,3,3> on element offsets:"
