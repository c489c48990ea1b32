"""Accesses by a thread map (``access NAME = INSTR LAYOUT by THREAD_MAP``):
Triton's distributed encodings against Triton itself on whole tiles, CuTe TV
layouts against pycute, verdicts, and located errors."""

import itertools
import sys

import pytest

from verify.engines.runner import run_spec
from verify.errors import Pos, SpecError
from verify.model.expr import Const, evaluate
from verify.model.program import Program
from verify.notation import triton_threads
from verify.smt.solve import Status
from verify.spec.parser import parse_text

BLOCKED_ROWS = (
    "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], "
    "warpsPerCTA = [4, 1], order = [1, 0]}>"
)
BLOCKED_COLUMN = (
    "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], "
    "warpsPerCTA = [1, 4], order = [0, 1]}>"
)
MMA2 = (
    "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], "
    "instrShape = [16, 8]}>"
)
MMA3 = (
    "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], "
    "instrShape = [16, 64, 16]}>"
)
SWIZZLED = (
    "#ttg.swizzled_shared<{{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}}> shape ({}, {})"
)


def spec_text(dtype, layout, instr, encoding, shape, checks=""):
    return (
        f"dtype {dtype}\nlayout A = {layout}\n"
        f"access a = {instr} A by {encoding} shape ({', '.join(map(str, shape))})\n{checks}"
    )


def access_of(text):
    spec = parse_text(text, "t.spec")
    return spec, Program(spec).access("a", spec.accesses["a"].pos)


def triton_held(encoding, shape):
    """thread (warp, lane) -> the coordinates it holds, from Triton's linear layout."""
    pytest.importorskip("triton")
    enc = triton_threads.parse_encoding(encoding)
    bases = triton_threads.triton_bases(enc, tuple(shape))
    held: dict[tuple[int, int], set[tuple[int, ...]]] = {}
    for w, lane, r in itertools.product(
        range(1 << len(bases["warp"])), range(32), range(1 << len(bases["register"]))
    ):
        coord = [0] * len(shape)
        for var, name in ((r, "register"), (lane, "lane"), (w, "warp")):
            for bit, basis in enumerate(bases[name]):
                if var >> bit & 1:
                    coord = [c ^ b for c, b in zip(coord, basis)]
        held.setdefault((w, lane), set()).add(tuple(coord))
    return held


def verify_held(access, elem_bytes, per_warp):
    """The same map from the access verify derived: each address lane's vector
    (or ldmatrix row) at every instance, located through the layout's offsets."""
    fn = access.layout.function
    shape = [r.size for r in access.coordinate_ranges]
    where = {}
    for coord in itertools.product(*(range(n) for n in shape)):
        where[evaluate_offset(fn, coord)] = coord
    loops = access.definition.loops
    held: dict[tuple[int, int | None], set] = {}
    per_address = access.instruction.bytes_per_address // elem_bytes
    for values in itertools.product(*(range(r.lo, r.hi) for _, r in loops)):
        env = dict(zip((n for n, _ in loops), values))
        for lane, coord in enumerate(access.lane_coordinates(env)):
            start = evaluate_offset(fn, coord)
            thread = (env.get("warp", 0), None if per_warp else lane)
            held.setdefault(thread, set()).update(where[start + j] for j in range(per_address))
    return held


def evaluate_offset(fn, coord):
    return evaluate(fn.crd2idx([Const(c) for c in coord]), {})


def by_warp(held):
    out: dict[tuple[int, None], set] = {}
    for (w, _), coords in held.items():
        out.setdefault((w, None), set()).update(coords)
    return out


# (dtype, shared layout, instruction, encoding, shape): the instruction is the one
# Triton's lowering gives; every (register, lane, warp) must land where Triton puts it.
WHOLE_TILES = [
    ("f16", "(64,64):(64,1)", "st.shared.v4.b32", BLOCKED_ROWS, (64, 64)),
    ("f16", "(64,64):(64,1)", "ld.shared.b16", BLOCKED_COLUMN, (64, 64)),
    (
        "f16",
        "(64,32):(1,64)",
        "ld.shared.v2.b32",
        "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [2, 2], "
        "order = [0, 1]}>",
        (64, 32),
    ),
    (
        "f32",
        "(4,8,16):(128,16,1)",
        "st.shared.v4.b32",
        "#ttg.blocked<{sizePerThread = [1, 1, 4], threadsPerWarp = [1, 8, 4], warpsPerCTA = "
        "[2, 1, 2], order = [2, 1, 0]}>",
        (4, 8, 16),
    ),
    ("f32", "(64,64):(64,1)", "st.shared.v2.b32", MMA2, (64, 64)),
    ("f16", "(64,64):(64,1)", "st.shared.b32", MMA3, (64, 64)),
    (
        "f16",
        SWIZZLED.format(128, 64),
        "ldmatrix.x4",
        f"#ttg.dot_op<{{opIdx = 0, parent = {MMA2}, kWidth = 2}}>",
        (128, 64),
    ),
    (
        "f16",
        SWIZZLED.format(64, 128),
        "ldmatrix.x4.trans",
        f"#ttg.dot_op<{{opIdx = 1, parent = {MMA2}, kWidth = 2}}>",
        (64, 128),
    ),
    (
        "i8",
        "(64,64):(64,1)",
        "ld.shared.b32",
        f"#ttg.dot_op<{{opIdx = 0, parent = {MMA2}, kWidth = 4}}>",
        (64, 64),
    ),
    (
        "f16",
        "(32,32):(32,1)",
        "ld.shared.v4.b32",
        f"#ttg.dot_op<{{opIdx = 1, parent = {BLOCKED_ROWS}}}>",
        (32, 32),
    ),
    ("f32", "_64:_1", "ld.shared.b32", f"#ttg.slice<{{dim = 1, parent = {BLOCKED_ROWS}}}>", (64,)),
    (
        "f32",
        "_32:_1",
        "ld.shared.v2.b32",
        f"#ttg.slice<{{dim = 0, parent = #ttg.dot_op<{{opIdx = 0, parent = {MMA2}, "
        "kWidth = 2}>}>",
        (32,),
    ),
]


@pytest.mark.parametrize("dtype,layout,instr,encoding,shape", WHOLE_TILES)
def test_every_register_lane_and_warp_lands_where_triton_puts_it(
    dtype, layout, instr, encoding, shape
):
    theirs = triton_held(encoding, shape)
    _, access = access_of(spec_text(dtype, layout, instr, encoding, shape))
    elem = {"f16": 2, "f32": 4, "i8": 1}[dtype]
    per_warp = access.instruction.family in ("ldmatrix", "stmatrix")
    mine = verify_held(access, elem, per_warp)
    assert mine == (by_warp(theirs) if per_warp else theirs)


@pytest.mark.parametrize("dtype,layout,instr,encoding,shape", WHOLE_TILES)
def test_linear_written_out_is_the_same_access(dtype, layout, instr, encoding, shape):
    """Triton's bases written as #ttg.linear, read without Triton, give the same
    coordinates as the encoding evaluated by Triton."""
    pytest.importorskip("triton")
    bases = triton_threads.triton_bases(triton_threads.parse_encoding(encoding), shape)
    linear = (
        f"#ttg.linear<{{register = {bases['register']}, lane = {bases['lane']}, "
        f"warp = {bases['warp']}, block = []}}>"
    )
    _, one = access_of(spec_text(dtype, layout, instr, encoding, shape))
    _, two = access_of(spec_text(dtype, layout, instr, linear, shape))
    assert one.definition.coords == two.definition.coords
    assert one.definition.loops == two.definition.loops


@pytest.mark.parametrize("seed", range(20))
def test_linear_reader_matches_triton(seed):
    """Random surjective #ttg.linear layouts: the bases read here equal those
    Triton's to_linear_layout returns for the same encoding and shape."""
    pytest.importorskip("triton")
    import random

    rng = random.Random(seed)
    shape = (1 << rng.randint(2, 5), 1 << rng.randint(2, 5))
    units = [[1 << j, 0] for j in range(shape[0].bit_length() - 1)] + [
        [0, 1 << j] for j in range(shape[1].bit_length() - 1)
    ]
    rng.shuffle(units)
    lanes, rest = units[:5], units[5:]
    split = rng.randint(0, len(rest))
    text = (
        f"#ttg.linear<{{register = {rest[:split]}, lane = {lanes}, "
        f"warp = {rest[split:]}, block = []}}>"
    )
    if len(lanes) < 5:
        with pytest.raises(SpecError, match="expected 5 bases"):
            triton_threads.parse_encoding(text)
        return
    enc = triton_threads.parse_encoding(text)
    assert triton_threads.linear_bases(enc, shape, Pos()) == triton_threads.triton_bases(enc, shape)


def test_linear_needs_no_triton(monkeypatch):
    monkeypatch.setattr(triton_threads, "_BUILDER", None)
    monkeypatch.setitem(sys.modules, "triton._C.libtriton", None)
    linear = (
        "#ttg.linear<{register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [1, 0], "
        "[2, 0], [4, 0], [8, 0]], warp = [], block = []}>"
    )
    _, access = access_of(spec_text("f16", "(16,16):(16,1)", "st.shared.v4.b32", linear, (16, 16)))
    assert access.lane_coordinates({})[:3] == [(0, 0), (0, 8), (1, 0)]
    with pytest.raises(SpecError, match=r"verify-smem\[triton\]"):
        parse_text(
            spec_text("f16", "(64,64):(64,1)", "st.shared.v4.b32", BLOCKED_ROWS, (64, 64)), "t.spec"
        )


# -- verdicts ------------------------------------------------------------------------


def verdicts(text):
    return {r.property: (r.status, r.max_ways) for r in run_spec(parse_text(text, "t.spec"), 60)}


def test_blocked_vec8_store_into_swizzled_buffer_is_conflict_free():
    got = verdicts(
        spec_text(
            "f16",
            SWIZZLED.format(64, 64),
            "st.shared.v4.b32",
            BLOCKED_ROWS,
            (64, 64),
            "check conflict_free a\n",
        )
    )
    assert got["conflict_free a"] == (Status.PROVED, 1)


def test_column_read_of_unswizzled_buffer_is_32_way():
    got = verdicts(
        spec_text(
            "f16",
            "(64,64):(64,1)",
            "ld.shared.b16",
            BLOCKED_COLUMN,
            (64, 64),
            "check max_ways == 32 a\n",
        )
    )
    assert got["max_ways == 32 a"] == (Status.PROVED, 32)


def test_dot_operand_ldmatrix_on_triton_swizzle_is_conflict_free():
    encoding = f"#ttg.dot_op<{{opIdx = 0, parent = {MMA2}, kWidth = 2}}>"
    got = verdicts(
        spec_text(
            "f16",
            SWIZZLED.format(128, 64),
            "ldmatrix.x4",
            encoding,
            (128, 64),
            "check conflict_free a\n",
        )
    )
    assert got["conflict_free a"] == (Status.PROVED, 1)


# -- located errors ------------------------------------------------------------------


@pytest.mark.parametrize(
    "encoding,message",
    [
        ("#ttg.blocky<{order = [1, 0]}>", "expected a distributed encoding"),
        (
            "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 4], warpsPerCTA = [4, 1], "
            "order = [1, 0]}>",
            "expected 32 threads in all, found 16",
        ),
        (
            "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1]}>",
            "expected the field 'order'",
        ),
        (
            "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
            "order = [1, 1]}>",
            "expected a permutation",
        ),
        (
            "#ttg.blocked<{sizePerThread = [1, 3], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
            "order = [1, 0]}>",
            "expected powers of two",
        ),
        (
            "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
            "order = [1, 0], CGALayout = [[1, 0]]}>",
            "verify models one CTA",
        ),
        (
            "#ttg.nvidia_mma<{versionMajor = 5, versionMinor = 0, warpsPerCTA = [4, 1], "
            "instrShape = [16, 8]}>",
            "expected versionMajor = 2",
        ),
        (
            "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [2, 2], "
            "instrShape = [16, 64, 16]}>",
            "multiple of 4",
        ),
        ("#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>", "aliases"),
        (f"#ttg.dot_op<{{opIdx = 1, parent = {MMA3}, kWidth = 2}}>", "expected opIdx = 0"),
        (f"#ttg.dot_op<{{opIdx = 0, parent = {MMA2}}}>", "kWidth"),
        (f"#ttg.slice<{{dim = 2, parent = {BLOCKED_ROWS}}}>", "slice dim = 2"),
        (
            "#ttg.linear<{register = [[0, 1]], lane = [[0, 2]], warp = [], block = []}>",
            "expected 5 bases",
        ),
    ],
)
def test_malformed_encodings_are_located_errors(encoding, message):
    text = spec_text("f16", "(64,64):(64,1)", "st.shared.v4.b32", encoding, (64, 64))
    with pytest.raises(SpecError, match=message) as e:
        parse_text(text, "t.spec")
    assert (e.value.pos.line, e.value.pos.col) == (3, 34)


@pytest.mark.parametrize(
    "layout,instr,encoding,shape,message",
    [
        (
            "(64,64):(64,1)",
            "st.shared.v2.b32",
            BLOCKED_ROWS,
            (64, 64),
            "largestVectorisation .* expected st.shared.v4.b32, found st.shared.v2.b32",
        ),
        ("(64,64):(64,1)", "ldmatrix.x4", BLOCKED_ROWS, (64, 64), "cannot lower this op to"),
        ("(64,64):(72,1)", "st.shared.v4.b32", BLOCKED_ROWS, (64, 64), "linear over GF\\(2\\)"),
        ("(32,64):(64,1)", "st.shared.v4.b32", BLOCKED_ROWS, (64, 64), "expected the same shape"),
        ("(64,64):(64,1)", "st.shared.v4.b32", BLOCKED_ROWS, (64, 48), "powers of two"),
        ("(64,64):(64,1)", "st.shared.v4.b32", BLOCKED_ROWS, (64,), "rank-2"),
    ],
)
def test_thread_maps_that_do_not_fit_are_located_errors(layout, instr, encoding, shape, message):
    with pytest.raises(SpecError, match=message) as e:
        parse_text(spec_text("f16", layout, instr, encoding, shape), "t.spec")
    assert e.value.pos.line == 3


def test_a_thread_map_takes_no_loops():
    text = spec_text("f16", "(64,64):(64,1)", "st.shared.v4.b32", BLOCKED_ROWS, (64, 64))
    with pytest.raises(SpecError, match="found 'for'"):
        parse_text(text.replace("(64, 64)\n", "(64, 64) for i in 0..2\n"), "t.spec")


# -- CuTe TV layouts, pycute as oracle -----------------------------------------------

# (dtype, layout, copy atom, TV layout, tile): UniversalCopy<uint128_t> as st.shared.v4
# for a (16,8) row-major thread layout with 8 values each; the LDSM/STSM TV layouts of
# an SM80_16x8x16 A operand (lanes 0-15 rows at k 0, 16-31 at k 8); LDSM x1 (threads
# 8-31 repeat rows 0-7: stride 0).
CUTE_TV = [
    ("f16", "Sw<3,3,3> o (64,64):(64,1)", "st.shared.v4.b32", "((8,16),8):((128,1),16)", (16, 64)),
    ("f16", "Sw<3,3,3> o (64,64):(64,1)", "SM75_U32x4_LDSM_N", "((16,2),8):((1,128),16)", (16, 16)),
    ("f16", "(32,64):(64,1)", "SM90_U32x4_STSM_N", "((16,2,4),8):((1,128,256),16)", (16, 64)),
    ("f16", "(8,64):(64,1)", "SM75_U32x1_LDSM_N", "((8,4),8):((1,0),8)", (8, 8)),
    ("f32", "(32,32):(32,1)", "ld.shared.b32", "((32,4),(2,4)):((1,256),(128,32))", None),
]


def pycute_coordinate(pycute, tv, tile, thread, value):
    index = pycute.Layout(*tv)(thread, value)
    return pycute.idx2crd(index, tile)


@pytest.mark.parametrize("dtype,layout,atom,tv,tile", CUTE_TV)
def test_cute_tv_lanes_are_pycute_coordinates(dtype, layout, atom, tv, tile):
    pycute = pytest.importorskip("pycute")
    from test_oracles import eval_tuple

    shape_stride = tuple(eval_tuple(part) for part in tv.split(":"))
    text = (
        f"dtype {dtype}\nlayout A = {layout}\naccess a = {atom} A by {tv}"
        + (f" tile ({', '.join(map(str, tile))})" if tile else "")
        + "\n"
    )
    _, access = access_of(text)
    extents = [r.size for r in access.coordinate_ranges]
    tile = tile or tuple(extents)
    per_thread = access.instruction.bytes_per_address // {"f16": 2, "f32": 4}[dtype]
    loops = access.definition.loops
    for values in itertools.product(*(range(r.lo, r.hi) for _, r in loops)):
        env = dict(zip((n for n, _ in loops), values))
        for lane, got in enumerate(access.lane_coordinates(env)):
            thread = lane + 32 * env.get("warp", 0)
            crd = pycute_coordinate(
                pycute, shape_stride, tile, thread, per_thread * env.get("r", 0)
            )
            want = tuple(c + t * env.get(f"s{k}", 0) for k, (c, t) in enumerate(zip(crd, tile)))
            assert got == want, (env, lane)


def test_cute_tv_verdicts_seed_tile():
    """The seed's 8-way ldmatrix on 64-wide f16 rows, and Sw<3,3,3> fixing it."""
    tv = "((16,2),8):((1,128),16) tile (16, 16)"
    for layout, ways in (("(64,64):(64,1)", 8), ("Sw<3,3,3> o (64,64):(64,1)", 1)):
        got = verdicts(
            f"dtype f16\nlayout A = {layout}\naccess a = SM75_U32x4_LDSM_N A by "
            f"{tv}\ncheck max_ways == {ways} a\n"
        )
        assert got[f"max_ways == {ways} a"] == (Status.PROVED, ways)


@pytest.mark.parametrize(
    "atom,tv,message",
    [
        ("SM75_U32x4_LDSM_N", "(32,8):(1,32)", "moves 8 consecutive elements per thread: value 1"),
        ("SM75_U32x4_LDSM_N", "(16,8):(1,16)", "whole warps of 32"),
        ("st.shared.v4.b32", "(32,8):(8,1) tile (24, 64)", "expected extents dividing"),
        (
            "st.shared.v4.b32",
            "(32,8):(8,1) tile (8, 16)",
            "reaches tile index 255: expected below 128",
        ),
        ("st.shared.v4.b32", "(32,12):(12,1)", "runs of 16 bytes"),
        ("st.shared.v4.b32", "((32,1),8):((8,1),1,2)", "congruent"),
    ],
)
def test_cute_tv_errors_are_located(atom, tv, message):
    text = f"dtype f16\nlayout A = (64,64):(64,1)\naccess a = {atom} A by {tv}\n"
    with pytest.raises(SpecError, match=message) as e:
        parse_text(text, "t.spec")
    assert e.value.pos.line == 3
