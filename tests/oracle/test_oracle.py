"""The independent oracle (oracle/): CuTe's and Triton's facts, its own laws,
and agreement with verify on every bundled spec.

The issue's examples are pinned to literal values worked out from CuTe's
definitions (verify got them wrong when the issue was filed), not to verify.
"""

import glob
import random
from typing import Any

import numpy as np
import pytest
from conftest import WORK

import verify
from oracle import (
    Answer,
    OracleRefusal,
    OracleUnavailable,
    answers,
    cute,
    facts,
    hardware,
    triton_encodings,
)
from oracle.reading import read

pycute = pytest.importorskip("pycute")


def table(text: str, name: str = "L") -> list[int]:
    """Element offsets of layout `name` of a spec, in 1-D (colexicographic) order."""
    return [int(v) for v in read(text).layouts[name].table]


# -- the examples --------------------------------------------------------------


def test_tile_to_shape_of_a_non_compact_atom_repeats_at_complements_gap():
    spec = "dtype f16\nlayout L = tile_to_shape((2,4):(1,5), (4,4))\ncheck bijective L\n"
    # ((2,4),(2,1)):((1,5),(2,4)) zipped per mode: (4,4):(1,5), offsets i + 5j.
    assert table(spec) == [i + 5 * j for j in range(4) for i in range(4)]
    assert answers(spec)["bijective L"] == Answer(True, cosize=19)


def test_tile_to_shape_of_a_padded_atom_puts_row_8_at_576():
    spec = (
        "dtype f16\nlayout L = tile_to_shape((8,64):(72,1), (16,64))\n"
        "check equivalent L(8, 0) == 576 for x in 0..1\n"
        "check equivalent L(8, 5) == 581 for x in 0..1\n"
    )
    assert all(a.holds for a in answers(spec).values())


def test_tile_to_shape_of_a_composition_is_bijective_onto_32():
    spec = (
        "dtype f32\nlayout L = tile_to_shape(composition((4,4):(4,1), (4,4):(1,4)), (8,4))\n"
        "check bijective L\n"
    )
    assert sorted(table(spec)) == list(range(32))
    assert answers(spec)["bijective L"] == Answer(True, cosize=32)


def test_formula_with_lower_bound_read_by_a_1d_index():
    spec = (
        "dtype f32\nlayout F(r in 1..3, c in 0..16) = 32 * (r / 2) + c\n"
        "access rd = ld.shared.b32 F(lane)\ncheck max_ways == 2 rd\n"
    )
    assert table(spec, "F")[:6] == [0, 32, 1, 33, 2, 34]
    assert answers(spec)["max_ways == 2 rd"] == Answer(True, max_ways=2, wavefronts=2)


# -- CuTe laws over whole small domains ------------------------------------------------


def random_layout(rng, max_size=256, extents=(1, 2, 3, 4, 8)):
    def mode(depth=0):
        if depth == 2 or rng.random() < 0.6:
            return rng.choice(extents), rng.randint(0, 40)
        subs = [mode(depth + 1) for _ in range(rng.choice([2, 3]))]
        return tuple(s for s, _ in subs), tuple(d for _, d in subs)

    while True:
        modes = [mode() for _ in range(rng.choice([1, 2, 3]))]
        shape, stride = tuple(s for s, _ in modes), tuple(d for _, d in modes)
        if cute.size(shape) <= max_size:
            return pycute.Layout(shape, stride)


def cute_text(t) -> str:
    return str(t) if isinstance(t, int) else "(" + ",".join(cute_text(x) for x in t) + ")"


def text_of(layout) -> str:
    return f"{cute_text(layout.shape)}:{cute_text(layout.stride)}"


@pytest.mark.parametrize("seed", range(40))
def test_offsets_are_pycute_crd2idx_inside_and_past_the_domain(seed):
    layout = random_layout(random.Random(seed))
    index = np.arange(2 * pycute.size(layout) + 3)
    assert list(cute.offsets(layout, index)) == [layout(int(i)) for i in index]


@pytest.mark.parametrize("seed", range(40))
def test_composition_is_function_composition(seed):
    """composition(A, B)(i) == A(B(i)) wherever CuTe defines it: B's image inside A's
    domain (past it, coalescing A may change how A extrapolates)."""
    rng = random.Random(100 + seed)
    a = random_layout(rng, extents=(2, 4, 8))
    n = rng.choice([d for d in (2, 4, 8) if d <= pycute.size(a)])
    b = pycute.Layout(n, rng.choice([d for d in (1, 2, 4) if (n - 1) * d < pycute.size(a)]))
    spec = f"dtype f16\nlayout L = composition({text_of(a)}, {text_of(b)})\n"
    try:
        mine = table(spec)
    except OracleRefusal:  # CuTe's divisibility fails: verify must refuse too
        with pytest.raises(verify.errors.SpecError):
            verify.offsets(f"composition({text_of(a)}, {text_of(b)})")
        return
    assert mine == [a(b(i)) for i in range(pycute.size(b))]


@pytest.mark.parametrize("seed", range(40))
def test_tiled_atom_restricted_to_each_tile_is_the_atom_shifted(seed):
    """tile_to_shape: the first tile is the atom; every tile is the atom plus a constant."""
    rng = random.Random(200 + seed)
    shape = (rng.choice([1, 2, 4]), rng.choice([2, 4, 8]))
    inner = rng.randint(1, 3)  # holes and padding, either mode inner
    outer = shape[0] * inner + rng.randint(0, 5)
    if rng.random() < 0.5:
        atom = pycute.Layout(shape, (inner, outer))
    else:
        atom = pycute.Layout(shape, (shape[1] * inner + rng.randint(0, 5), inner))
    reps = (rng.choice([1, 2, 3]), rng.choice([1, 2]))
    target = (atom.shape[0] * reps[0], atom.shape[1] * reps[1])
    order = rng.choice(["", ", (1,0)"])
    text = f"tile_to_shape({text_of(atom)}, {target}{order})"
    try:
        mine = read(f"layout L = {text}\n").layouts["L"]
    except OracleRefusal:  # CuTe's preconditions fail: verify must refuse too
        with pytest.raises(verify.errors.SpecError):
            verify.offsets(text)
        return
    for tile in np.ndindex(*reps):
        shift = None
        for c in np.ndindex(*atom.shape):
            full = [np.array(t * n + x) for t, n, x in zip(tile, atom.shape, c)]
            value = int(mine.elements_at(full, "test"))
            shift = value - atom(c) if shift is None else shift
            assert value == atom(c) + shift
        if tile == (0, 0):
            assert shift == 0


def test_tile_to_shape_pads_a_shape_the_atom_does_not_divide():
    spec = "dtype f16\nlayout L = tile_to_shape((2,2):(1,2), (3,2))\ncheck bijective L\n"
    assert read(spec).layouts["L"].sizes == (4, 2)
    assert answers(spec)["bijective L"] == Answer(True, cosize=8)


def test_tile_to_shape_keeps_the_swizzle_outermost():
    tiled = table("layout L = tile_to_shape(Sw<3,3,3> o (8,64):(64,1), (16,64))\n")
    swz = pycute.Swizzle(3, 3, 3)
    plain = pycute.Layout(((8, 2), 64), ((64, 512), 1))
    assert tiled == [swz(plain(i)) for i in range(1024)]


def test_equal_orders_share_a_stride_as_in_cute_compact_order():
    assert table("layout L = tile_to_shape(1:1, (2,2), (0,0))\n") == [0, 1, 1, 2]


def test_pycute_swizzle_with_zero_shift_never_returns():
    """pycute gap: Swizzle(0, M, 0) recurses (shiftr and shiftl call each other)."""
    with pytest.raises(RecursionError):
        pycute.Swizzle(0, 3, 0)(5)
    assert table("layout L = Sw<0,3,0> o 16:1\n") == list(range(16))


def test_pycute_composition_without_shape_divisibility_is_refused():
    """pycute gap: it floors 8/3 and returns six points where B has eight."""
    a, b = pycute.Layout((2, 3, 8), (30, 24, 12)), pycute.Layout(8, 2)
    assert pycute.size(pycute.composition(a, b)) == 6
    with pytest.raises(OracleRefusal, match="shape divisibility"):
        answers(
            f"dtype f16\nlayout L = composition({text_of(a)}, {text_of(b)})\ncheck bijective L\n"
        )


def test_pycute_complement_with_a_zero_extent_is_refused():
    """pycute gap: complement((2,8):(4,1)) has a mode of extent 0 instead of failing."""
    assert 0 in cute.flatten(pycute.complement(pycute.Layout((2, 8), (4, 1)), 64).shape)
    with pytest.raises(OracleRefusal, match="logical_product"):
        answers("dtype f16\nlayout L = tile_to_shape((2,8):(4,1), (4,8))\ncheck bijective L\n")


def test_pycute_logical_product_that_drops_repeats_is_refused():
    """pycute gap: logical_product((2,2):(1,4), (1,3):(1,1)) keeps 2 of the 3 repeats."""
    product = pycute.logical_product(pycute.Layout((2, 2), (1, 4)), pycute.Layout((1, 3), (1, 1)))
    assert cute.top_modes(product[1]) == [1, 2]
    with pytest.raises(OracleRefusal, match="logical_product"):
        answers("dtype f16\nlayout L = tile_to_shape((2,2):(1,4), (2,6))\ncheck bijective L\n")


def test_pycute_complement_of_overlapping_atom_is_refused():
    with pytest.raises(OracleRefusal, match="logical_product"):
        answers("dtype f16\nlayout L = tile_to_shape((2,2):(1,1), (4,4))\ncheck bijective L\n")


# -- GMMA atoms and TMA boxes ----------------------------------------------------------


@pytest.mark.parametrize(
    "atom,elem,shape,stride,align",
    [
        ("Layout_K_SW128_Atom", "half_t", (8, 64), (64, 1), 1024),
        ("Layout_K_INTER_Atom", "int8_t", (8, 16), (16, 1), 16),
        ("Layout_MN_SW64_Atom", "float", (16, 8), (1, 16), 512),
        ("Layout_MN_SW32_Atom", "bfloat16_t", (16, 8), (1, 16), 256),
    ],
)
def test_gmma_atoms_are_cutlass_bit_atoms_upcast(atom, elem, shape, stride, align):
    layout = read(f"layout L = GMMA::{atom}<{elem}>\n").layouts["L"]
    cute_layout: Any = layout.inner.cute_layout  # a pycute Layout (untyped)
    assert (cute_layout.shape, cute_layout.stride) == (shape, stride)
    assert layout.required_align == align
    assert layout.pointer is not None and layout.pointer.params[1:] == (4, 3)


def test_pointer_swizzle_value_in_expressions_is_bytes_at_base_0():
    spec = (
        "layout A = Sw<3,4,3> o smem_ptr[16b](unset) o (8,64):(64,1)\n"
        "check equivalent A(1, 0) == 144 for x in 0..1\n"
    )
    assert answers(spec)["equivalent A(1, 0) == 144 for x in 0..1"].holds


def test_tma_box_needs_rows_of_16_bytes_within_the_span():
    with pytest.raises(OracleRefusal, match="TMA box"):
        answers("layout X = tma(SWIZZLE_64B, f16, (64, 8))\ncheck base_aligned X\n")


# -- Triton ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "vec,per,most,shape",
    [
        (8, 1, 8, (16, 64)),
        (4, 2, 4, (32, 32)),
        (1, 1, 1, (8, 8)),
        (16, 4, 2, (64, 32)),
        (2, 1, 16, (16, 8)),
    ],
)
def test_swizzled_shared_is_the_readme_formula(vec, per, most, shape):
    pytest.importorskip("triton")
    text = (
        f"layout L = #ttg.swizzled_shared<{{vec = {vec}, perPhase = {per}, "
        f"maxPhase = {most}, order = [1, 0]}}> shape {shape}\n"
    )
    rows, cols = shape
    formula = [
        r * cols + (c ^ ((r // per % most) * vec % cols)) for c in range(cols) for r in range(rows)
    ]
    assert table(text) == formula


@pytest.mark.parametrize("width", [32, 64, 128])
def test_nvmma_alignment_is_tritons(width):
    pytest.importorskip("triton")
    from triton.experimental.gluon.language import NVMMASharedLayout

    _, builder = triton_encodings._builder()
    linear = builder.to_linear_layout(NVMMASharedLayout(width, 16, 2)._to_ir(builder), [64, 64])
    layout = read(
        f"layout L = #ttg.nvmma_shared<{{swizzlingByteWidth = {width}, transposed "
        f"= false, elementBitWidth = 16}}> shape (64, 64)\n"
    ).layouts["L"]
    assert layout.required_align == linear.alignment == 8 * width


def test_nvmma_element_width_must_be_the_dtypes():
    pytest.importorskip("triton")
    spec = (
        "dtype f32\nbuffer align 1024\nlayout L = #ttg.nvmma_shared<{swizzlingByteWidth = 128, "
        "transposed = false, elementBitWidth = 16}> shape (8, 64)\ncheck bijective L\n"
    )
    with pytest.raises(OracleRefusal, match="16-bit elements but dtype f32"):
        answers(spec)


def test_triton_missing_is_oracle_unavailable(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "triton._C.libtriton", None)
    triton_encodings._builder.cache_clear()
    triton_encodings.offsets.cache_clear()
    try:
        with pytest.raises(OracleUnavailable, match="triton"):
            answers(
                "layout L = #ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 2, "
                "order = [1, 0]}> shape (4, 4)\ncheck bijective L\n"
            )
    finally:
        triton_encodings._builder.cache_clear()


# -- formulas --------------------------------------------------------------------------


def random_expression(rng, depth=0) -> str:
    if depth == 3 or rng.random() < 0.3:
        return rng.choice(["x", str(rng.randint(1, 40))])
    op = rng.choice(["+", "*", "/", "%", "&", "|", "^", "<<", ">>"])
    right = (
        str(rng.randint(1, 5))
        if op in ("<<", ">>", "/", "%")
        else random_expression(rng, depth + 1)
    )
    text = f"{random_expression(rng, depth + 1)} {op} {right}"
    return f"({text})" if rng.random() < 0.3 else text


@pytest.mark.parametrize("seed", range(30))
def test_formulas_follow_c_precedence_and_floor_division(seed):
    """Python has C's precedence for these operators; '/' is floor division."""
    expr = random_expression(random.Random(300 + seed))
    mine = table(f"layout L(x in 0..16) = {expr}\n")
    assert mine == [eval(expr.replace("/", "//"), {"x": x}) for x in range(16)], expr


def test_values_past_int64_stay_exact():
    assert table("layout L(x in 0..4) = ((x + 1) << 70) >> 68\n") == [4, 8, 12, 16]


@pytest.mark.parametrize(
    "body,message",
    [
        ("x - 3", "negative"),
        ("8 / (x - x)", "division by zero"),
        ("y", "unknown variable"),
        ("M(x)", "unknown layout"),
    ],
)
def test_invalid_formulas_are_refused(body, message):
    with pytest.raises(OracleRefusal, match=message):
        answers(f"layout L(x in 0..8) = {body}\ncheck equivalent L(0) == 0 for x in 0..1\n")


def test_calls_split_a_1d_index_over_ranges_with_lower_bounds():
    spec = (
        "layout G(r in 2..4, c in 5..7) = 10 * r + c\n"
        "check equivalent G(x) == 10 * (2 + x % 2) + 5 + x / 2 for x in 0..4\n"
        "check equivalent G(3, 6) == 36 for x in 0..1\n"
    )
    assert all(a.holds for a in answers(spec).values())


# -- the bank model and instructions ---------------------------------------------------


@pytest.mark.parametrize(
    "stride,ways", [(0, 1), (1, 1), (2, 2), (4, 4), (8, 8), (16, 16), (32, 32), (33, 1)]
)
def test_word_strides(stride, ways):
    spec = (
        f"dtype f32\nlayout A = 32:{stride}\naccess rd = ld.shared.b32 A(lane)\n"
        "check conflict_free rd\n"
    )
    assert answers(spec)["conflict_free rd"] == Answer(ways == 1, ways, ways)


def test_64_bit_phases_are_half_warps_and_bytes_of_a_word_share_it():
    b64 = hardware.bank_figures(
        hardware.instruction("ld.shared.b64"), np.array([[8 * lane for lane in range(32)]])
    )
    b8 = hardware.bank_figures(hardware.instruction("ld.shared.u8"), np.array([list(range(32))]))
    assert b64 == (1, 2) and b8 == (1, 1)


def rule_l_patterns(rng: random.Random, size: int) -> list[int]:
    """Byte addresses of one warp: equal neighbours, alternating pairs, groups, one
    address, random few, strided -- cases that merge and cases that do not."""
    kind = rng.choice(["pairs", "alternate", "group", "one", "few", "stride"])
    pick = [size * rng.randint(0, 63) for _ in range(32)]
    if kind == "pairs":
        return [pick[lane // 2] for lane in range(32)]
    if kind == "alternate":
        return [pick[lane % 2] for lane in range(32)]
    if kind == "group":
        group = rng.choice([2, 4, 8, 16])
        return [pick[lane // group] for lane in range(32)]
    if kind == "one":
        return [pick[0]] * 32
    if kind == "few":
        return [rng.choice(pick[:3]) for _ in range(32)]
    stride = size * rng.choice([1, 2, 3, 4, 8, 16])
    return [stride * (lane // rng.choice([1, 2])) % 8192 for lane in range(32)]


@pytest.mark.parametrize("name", ["ld.shared.b64", "ld.shared.v2.b32", "ld.shared.v4.b32"])
def test_rule_l_wavefronts_are_verifys_hardware_wavefronts(name):
    """The oracle's rule L (oracle.merging, from docs/hardware.md) against
    verify.model.bank.hardware_wavefronts, which is tested on every H200 measurement."""
    from oracle import merging
    from verify.model.bank import hardware_wavefronts
    from verify.model.instructions import parse_instruction

    rng, instr = random.Random(name), hardware.instruction(name)
    patterns = [rule_l_patterns(rng, instr.bytes_per_lane) for _ in range(300)]
    mine = [merging.wavefronts(instr, np.array([p])) for p in patterns]
    theirs = [hardware_wavefronts(parse_instruction(name), p) for p in patterns]
    assert mine == theirs
    phase_model = [hardware.bank_figures(instr, np.array([p]))[1] for p in patterns]
    assert any(m < w for m, w in zip(mine, phase_model)), "some patterns merge"
    # Over several instances at once: the worst one's figure.
    assert merging.wavefronts(instr, np.array(patterns)) == max(theirs)


def test_rule_l_is_for_loads_only():
    spec = "dtype f32\nlayout A = 32:0\naccess {0} = {1}.shared.v4.b32 A(lane)\n"
    spec += "check conflict_free {0}\n"
    load, store = answers(spec.format("rd", "ld")), answers(spec.format("wr", "st"))
    assert load["conflict_free rd"].wavefronts == 2  # one address: quarters merge in pairs
    assert store["conflict_free wr"].wavefronts == 4


SPELLINGS = [
    "ld.shared.b32",
    "ld.shared.v4",
    "st.shared.v2.b32",
    "ld.shared.u16",
    "st.shared.b8",
    "ld.shared.b64",
    "st.shared.v4.b32",
    "ld.shared.f32",
    "ld.shared::cta.b32",
    "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
    "ldmatrix.x1",
    "ldmatrix.x2.trans",
    "stmatrix.x4",
    "stmatrix.sync.aligned.m8n8.x2.shared.b16",
    "SM75_U32x1_LDSM_N",
    "SM75_U32x4_LDSM_N",
    "SM75_U16x2_LDSM_T",
    "SM75_U16x8_LDSM_T",
    "SM90_U32x2_STSM_N",
    "SM90_U16x4_STSM_T",
    "ld.shared.v2.f16x2",
    "st.shared.b128",
]


@pytest.mark.parametrize("name", SPELLINGS)
def test_instruction_table_matches_verifys_spellings(name):
    from verify.model.instructions import parse_instruction

    theirs, mine = parse_instruction(name), hardware.instruction(name)
    assert (mine.bytes_per_lane, mine.address_lanes, mine.phase_lanes) == (
        theirs.bytes_per_address,
        theirs.address_lanes,
        theirs.phase_lanes,
    )


def test_cp_async_without_size_or_source_or_with_max_ways_is_refused():
    with pytest.raises(OracleRefusal, match="cp.async"):
        answers("dtype f16\nlayout A = 32:8\naccess c = cp.async.ca.shared.global A(lane)\n")
    with pytest.raises(OracleRefusal, match="global source"):
        answers("dtype f32\nlayout A = 32:1\naccess c = cp.async.ca.4 A(lane)\n")
    with pytest.raises(OracleRefusal, match="max_ways"):
        answers(
            "dtype f32\nlayout A = 32:1\naccess c = cp.async.ca.4 A(lane) from A(lane)\n"
            "check max_ways <= 1 c\n"
        )


# -- cp.async: rule C, rule S and bound G --------------------------------------------------


@pytest.mark.parametrize("cache,size", [("ca", 4), ("ca", 8), ("ca", 16), ("cg", 16)])
def test_rule_c_and_bound_g_match_verifys_cp_async_cost(cache, size):
    """The oracle's rule C / bound G (written from docs/hardware.md) against the
    figure verify's engines use, `verify.model.bank.copy_cost`, on random destinations and
    sources, drawn from few lines so that banks collide. (.cg's rule S, which
    `cp_async_cost` gives, is compared in tests/model/test_hw_rules.py.)"""
    from verify.model.bank import copy_cost
    from verify.model.instructions import parse_instruction

    rng = random.Random(f"{cache}{size}")
    instr = hardware.instruction(f"cp.async.{cache}.{size}")
    for _ in range(300):
        lines = rng.choice([1, 2, 4, 32])
        dst, src = (
            [size * rng.randrange(128 // size * lines) + 4096 * rng.randrange(2) for _ in range(32)]
            for _ in range(2)
        )
        if rng.random() < 0.3:
            src = [size * lane * rng.choice([1, 2, 4]) for lane in range(32)]
        mine = hardware.copy_cost(instr, np.array([dst]), np.array([src]))[0]
        ours = copy_cost(parse_instruction(f"cp.async.{cache}.{size}"), dst, src)
        assert mine == ours.wavefronts, (dst, src)


def test_rule_c_worked_examples_from_docs():
    """docs/hardware.md: 32 contiguous words cost 1, 4 and 32 from a contiguous, a
    16-byte-strided and a one-word source."""
    instr = hardware.instruction("cp.async.ca.shared.global.4")
    dst = np.array([[4 * lane for lane in range(32)]])
    for src, cost in (([4 * i for i in range(32)], 1), ([16 * i for i in range(32)], 4)):
        assert hardware.copy_cost(instr, dst, np.array([src]))[0] == cost
    assert hardware.copy_cost(instr, dst, np.zeros((1, 32), dtype=np.int64))[0] == 32


COPY_SPEC = """dtype f32
buffer align 16
layout S = (8,32):(32,1)
layout G = (8,32):(1,8)
global align {align}
access cp = {instr} S(r, lane) from G(r, lane) for r in 0..8
check conflict_free cp
check wavefronts <= 8 cp
"""


@pytest.mark.parametrize("align", [4, 16, 64])
def test_global_base_zero_stands_for_every_aligned_global_base(align):
    """README: moving every source by whole words rotates the source banks, so base 0
    stands for every aligned global base; here every base of one period is tried."""
    from oracle import spec_generator

    texts = [COPY_SPEC.format(align=align, instr="cp.async.ca.4")]
    texts += [spec_generator.copy_family(random.Random(f"bases:{n}")) for n in range(40)]
    for text in texts:
        known = facts.Facts(read(text))
        for name, access in known.spec.accesses.items():
            got = known.access(name, access.at)
            if not (got.in_bounds and got.source_in_bounds):
                continue
            if got.naturally_aligned and got.source_aligned:
                assert got.copy_wavefronts() == got.copy_wavefronts(every_global_base=True), text


def test_copy_answers_read_both_sides():
    got = answers(COPY_SPEC.format(align=16, instr="cp.async.ca.4"))
    assert got["in_bounds cp from G"].holds and got["aligned 4 cp from G"].holds
    # Column-major source: lanes read words 32 bytes apart, 8 lanes per source bank.
    assert got["conflict_free cp"] == Answer(False, wavefronts=8)
    assert got["wavefronts <= 8 cp"].holds


def test_rule_s_rounds_decide_a_chunk_copied_into_every_destination():
    """Every lane copies global chunk 0, eight lanes into each of four shared lines:
    rule S's rounds (four copies into each half of a line's sectors: four rounds of
    two halves with different swaps) give 8 a line, 32 exactly, as bound G does."""
    got = answers(
        "dtype f32\nbuffer align 128\nlayout S = (32,32):(32,1)\n"
        "access cp = cp.async.cg.16 S(lane / 8, 4 * (lane % 8)) from S(0, 0)\n"
        "check wavefronts <= 32 cp\ncheck wavefronts == 40 cp\ncheck wavefronts <= 4 cp\n"
        "check wavefronts == 32 cp\ncheck conflict_free cp\n"
    )
    assert got["wavefronts <= 32 cp"] == Answer(True, wavefronts=32)
    assert got["wavefronts == 40 cp"] == Answer(False, wavefronts=32)
    assert got["wavefronts <= 4 cp"] == Answer(False, wavefronts=32)
    assert got["wavefronts == 32 cp"] == Answer(True, wavefronts=32)
    assert got["conflict_free cp"] == Answer(False, wavefronts=32)


def test_rule_s_answers_cg_copies_at_every_global_base():
    """One line copied to a line per row: 1 wavefront at a global base on a line, up
    to 4 at a base 48 bytes past one (docs/hardware.md, rule S), so `global align`
    decides; every lane in its own line pair costs one each (32: conflict_free false)."""
    text = (
        "dtype f32\nbuffer align 128\nglobal align {align}\nlayout S = (32,32):(32,1)\n"
        "layout G = (32,32):(1024,1)\n"
        "access cp = cp.async.cg.16 S(r, 4 * (lane % 8)) from G(r, 4 * (lane % 8)) "
        "for r in 0..32\ncheck wavefronts <= 1 cp\ncheck wavefronts == 4 cp\n"
    )
    lined = answers(text.format(align=128))
    assert lined["wavefronts <= 1 cp"] == Answer(True, wavefronts=1)
    assert lined["wavefronts == 4 cp"] == Answer(False, wavefronts=1)
    shifted = answers(text.format(align=16))
    assert shifted["wavefronts <= 1 cp"] == Answer(False, wavefronts=4)
    assert shifted["wavefronts == 4 cp"] == Answer(True, wavefronts=4)
    own_lines = answers(
        "dtype f32\nlayout S = (32,32):(32,1)\n"
        "access cp = cp.async.cg.16 S(lane, 0) from S(lane, 0)\ncheck conflict_free cp\n"
    )
    assert own_lines["conflict_free cp"] == Answer(False, wavefronts=32)


# -- bases, keys, refusals -------------------------------------------------------------

POINTER_SPEC = """dtype f16
buffer align 16 stages 2 stage_bytes 2064
layout A = Sw<3,4,3> o smem_ptr[16b](unset) o (8,64):(64,1)
layout B = Sw<3,3,3> o (8,64):(64,1)
access rd = ldmatrix.x4 A(lane % 8 + 0 * (lane / 8), 8 * (lane / 8) + 32 * q) for q in 0..2
check bijective A
check equivalent A, B
check aligned 32 rd
check wavefronts <= 4 rd
"""


def test_more_bases_than_one_period_change_no_answer(monkeypatch):
    """The module doc's argument, checked: eight periods of bases answer as one does."""
    expected = answers(POINTER_SPEC)
    real = facts.period
    monkeypatch.setattr(facts, "period", lambda layouts, modulus=1: 8 * real(layouts, modulus))
    assert answers(POINTER_SPEC) == expected
    assert not expected["equivalent A, B"].holds


@pytest.mark.parametrize("seed", range(20))
def test_pointer_swizzle_commutes_with_adding_a_period(seed):
    rng = random.Random(seed)
    b, m = rng.randint(1, 3), rng.randint(0, 5)
    s = rng.choice([-1, 1]) * rng.randint(b, 4)
    touched = cute.swizzle_bits_touched(b, m, s)
    period = max(128, 1 << touched.bit_length())
    sw = cute.swizzle(b, m, s)
    x = np.arange(4 * period)
    k = rng.randint(1, 1000)
    assert np.array_equal(sw(x + k * period), sw(x) + k * period)


def test_implicit_keys_and_out_of_bounds_accesses():
    spec = (
        "dtype f16\nbuffer align 128\nlayout T = tma(SWIZZLE_128B, f16, (64, 8))\n"
        "access ok = st.shared.v4 T(8 * (lane % 8), lane / 8)\n"
        "access far = ld.shared.b32 T(lane, 8)\ncheck conflict_free far\n"
        "check aligned 32 ok\n"
    )
    got = answers(spec)
    assert set(got) == {"in_bounds ok", "aligned 32 ok", "in_bounds far", "base_aligned T"}
    assert not got["in_bounds far"].holds and not got["base_aligned T"].holds


def test_bank_checks_of_misaligned_accesses_are_refuted_without_figures():
    spec = (
        "dtype f16\nlayout A = (8,65):(65,1)\naccess rd = ldmatrix.x1 A(lane, 0)\n"
        "check conflict_free rd\n"
    )
    got = answers(spec)
    assert not got["aligned 16 rd"].holds and got["conflict_free rd"] == Answer(False)


def test_equivalent_layouts_of_different_sizes_are_refused():
    """No 1-D index pairs their elements; verify refuses the check too."""
    spec = "dtype f16\nlayout A = 8:1\nlayout B = 16:1\ncheck equivalent A, B\n"
    with pytest.raises(OracleRefusal, match="sizes 8 and 16 differ"):
        answers(spec)


@pytest.mark.parametrize(
    "text,message",
    [
        ("dtype f16\nlayout A = 8:0x40000000\naccess rd = ld.shared.b16 A(lane % 8)\n", "2\\^32"),
        ("dtype f16\nlayout A = (8,8):(8,1)\ncheck bijective B\n", "unknown layout"),
        ("dtype f16\nlayout A = (8,8):((1,2),1)\ncheck bijective A\n", "congruent"),
        ("dtype f16\nlayout A = (4096,4096):(4096,1)\ncheck bijective A\n", "limit"),
        ("dtype f16\nlayout A = 8:1\ncheck base_aligned A\n", "needs no aligned buffer"),
        ("dtype f16\nlayout A = 8:1\naccess rd = ld.shared.b16 A(lane, 0)\n", "coordinates"),
    ],
)
def test_refusals_say_why(text, message):
    with pytest.raises(OracleRefusal, match=message) as err:
        answers(text, "my.spec")
    assert err.value.message.startswith("my.spec: ")


def test_newlines_inside_parentheses_continue_a_statement():
    spec = "dtype f16\nlayout A = (8,\n  64):(64,\n 1)\ncheck bijective A\n"
    assert answers(spec)["bijective A"] == Answer(True, cosize=512)


# -- agreement with verify on every bundled spec ---------------------------------------

# (spec, property) pairs where the two are known to differ, with the reason.
KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {}


def thread_mapped_accesses(path: str) -> set[str]:
    """Accesses of a spec written 'by' a thread map (tests/spec/test_thread_maps.py
    checks those maps against Triton and pycute; the oracle leaves them out)."""
    with open(path) as f:
        return {
            line.split()[1]
            for line in f
            if line.startswith("access ") and " by " in line.split("#")[0]
        }


@pytest.mark.parametrize("path", sorted(glob.glob("specs/**/*.spec", recursive=True)))
def test_agrees_with_verify_on_bundled_specs(path):
    with open(path) as f:
        mine = answers(f.read(), path)
    for result in verify.check(path, options=WORK):
        if (path, result.property) in KNOWN_DIFFERENCES:
            continue
        if result.property.split()[-1] in thread_mapped_accesses(path):
            assert result.property not in mine  # read by Triton/pycute, not the oracle
            continue
        assert result.property in mine, f"{path}: no answer for {result.property}"
        answer = mine[result.property]
        assert answer.holds == (result.status == verify.Status.PROVED), (path, result.property)
        if result.max_ways is not None:
            assert (answer.max_ways, answer.wavefronts) == (result.max_ways, result.wavefronts)
        if result.facts.get("cosize") is not None:
            assert answer.cosize == result.facts["cosize"], (path, result.property)
