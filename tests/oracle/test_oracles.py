"""verify's layouts against implementations nobody here wrote, on whole tiles.

* pycute (CuTe's Python model, shipped in the ``nvidia-cutlass`` wheel): CuTe
  shape:stride layouts with nested modes, swizzles (both shift signs) composed
  with them, tile_to_shape (as blocked products) and composition views.
* Triton (the ``triton`` wheel): Gluon's ``to_linear_layout`` for the
  swizzled_shared and nvmma_shared encodings, which runs without a GPU.

CI installs both (.ci/run) and sets VERIFY_REQUIRE_ORACLES=1, so there a missing
oracle fails instead of skipping.
"""

import importlib
import itertools
import math
import os
import random

import pytest

from verify import offsets
from verify.errors import SpecError
from verify.model.layout import fmt_tuple


def oracle(module: str):
    if os.environ.get("VERIFY_REQUIRE_ORACLES"):
        return importlib.import_module(module)
    return pytest.importorskip(module)


# -- pycute ------------------------------------------------------------------------


def random_cute(rng: random.Random):
    """(verify text, pycute shape, pycute stride) of a random nested layout."""

    def mode(depth=0):
        if depth == 2 or rng.random() < 0.6:
            n = rng.choice([1, 2, 3, 4, 8])
            return n, rng.randint(0, 70)
        sub = [mode(depth + 1) for _ in range(rng.choice([2, 3]))]
        return tuple(s for s, _ in sub), tuple(d for _, d in sub)

    modes = [mode() for _ in range(rng.choice([1, 2, 3]))]
    while size_of([s for s, _ in modes]) > 4096:  # keep whole tiles small
        modes = [mode() for _ in range(rng.choice([1, 2, 3]))]
    shape, stride = tuple(s for s, _ in modes), tuple(d for _, d in modes)
    return f"{fmt_tuple(shape)}:{fmt_tuple(stride)}", shape, stride


@pytest.mark.parametrize("case", range(60))
def test_cute_layouts_match_pycute(case):
    pycute = oracle("pycute")
    text, shape, stride = random_cute(random.Random(case))
    theirs = pycute.Layout(shape, stride)
    assert offsets(text) == [theirs(i) for i in range(pycute.size(theirs))], text


@pytest.mark.parametrize("case", range(60))
def test_swizzled_layouts_match_pycute(case):
    pycute = oracle("pycute")
    rng = random.Random(1000 + case)
    text, shape, stride = random_cute(rng)
    b, m = rng.randint(0, 3), rng.randint(0, 4)
    s = rng.randint(max(b, 1), 5) * rng.choice([1, -1])
    off = rng.choice([0, 0, 8, 64])
    mid = f" o {off}" if off else ""
    theirs = pycute.ComposedLayout(pycute.Swizzle(b, m, s), off, pycute.Layout(shape, stride))
    assert offsets(f"Sw<{b},{m},{s}>{mid} o {text}") == [
        theirs(i) for i in range(pycute.size(theirs.layoutA))
    ], (b, m, s, text)


@pytest.mark.parametrize(
    "atom,target,order",
    [
        ("(8,64):(64,1)", (128, 64), None),
        ("(8,64):(64,1)", (64, 128), None),
        ("(8,32):(32,1)", (128, 64), (1, 0)),
        ("(64,8):(1,64)", (128, 64), None),
        ("((4,2),32):((32,128),1)", (32, 64), None),
        ("(8,64):(64,1)", (64, 128, 3), None),
        # Atoms with holes and padding: CuTe fills the holes before going past them.
        ("(2,4):(1,5)", (4, 4), None),
        ("(2,4):(1,5)", (4, 8), (1, 0)),
        ("(8,64):(72,1)", (16, 64), None),
        ("(8,64):(72,1)", (16, 128), (1, 0)),
        ("(4,8):(9,1)", (8, 16), None),
        ("(2,2):(1,4)", (4, 8, 2), (2, 0, 1)),
        ("(2,3):(3,1)", (4, 6), None),
        ("((2,2),4):((1,8),2)", (8, 8), (1, 0)),
        ("(4,2):(2,16)", (8, 4), None),
        ("8:2", (32, 2), None),
        ("8:2", (16, 4), (1, 0)),
    ],
)
def test_tile_to_shape_is_cute_blocked_product(atom, target, order):
    """tile_to_shape(A, shape) at (m, n, ...) is logical_product(A, repeats) at
    ((m % a0, n % a1, ...), (m / a0, n / a1, ...)), repeats ordered column-major
    (or by `order`)."""
    pycute = oracle("pycute")
    shape_text, stride_text = atom.split(":")
    a = pycute.Layout(eval_tuple(shape_text), eval_tuple(stride_text))
    assert offsets(_tile_text(atom, target, order)) == _tiled_offsets(pycute, a, target, order), (
        atom,
        target,
        order,
    )


@pytest.mark.parametrize("case", range(40))
def test_tile_to_shape_of_random_injective_atoms_is_cute_blocked_product(case):
    """Random injective atoms, most with holes or padding, any order: the same
    offsets as pycute, or refused where pycute's composition refuses."""
    pycute = oracle("pycute")
    rng = random.Random(5000 + case)
    rows, cols = rng.choice([1, 2, 4, 8]), rng.choice([2, 3, 4, 8])
    row_stride = cols + rng.choice([0, 1, 3, 8])
    shape, stride = (rows, cols), (row_stride, 1)
    if rng.random() < 0.5:
        shape, stride = (cols, rows), (1, row_stride)
    target = (shape[0] * rng.choice([1, 2, 4]), shape[1] * rng.choice([1, 2, 3]))
    order = rng.choice([None, (1, 0), (0, 1)])
    text = _tile_text(f"{fmt_tuple(shape)}:{fmt_tuple(stride)}", target, order)
    try:
        theirs = _tiled_offsets(pycute, pycute.Layout(shape, stride), target, order)
    except (AssertionError, PycuteLostIndices):  # no layout places the repeats: refused
        with pytest.raises(SpecError, match="CuTe cannot represent"):
            offsets(text)
        return
    assert offsets(text) == theirs, text


def test_tile_to_shape_tiles_a_composition_as_one_layout():
    """composition(A, B) of two layouts is a layout; that layout is what is tiled
    (not B, with A applied afterwards)."""
    pycute = oracle("pycute")
    for a, b, target in (
        ("(4,4):(4,1)", "(4,4):(1,4)", (8, 4)),
        ("(8,8):(8,1)", "(8,8):(1,8)", (16, 8)),
        ("(4,8):(8,1)", "(2,8):(1,4)", (4, 16)),
    ):
        atom = pycute.composition(
            pycute.Layout(*map(eval_tuple, a.split(":"))),
            pycute.Layout(*map(eval_tuple, b.split(":"))),
        )
        mine = offsets(_tile_text(f"composition({a}, {b})", target, None))
        assert mine == _tiled_offsets(pycute, atom, target, None), (a, b)
    assert sorted(offsets("tile_to_shape(composition((4,4):(4,1), (4,4):(1,4)), (8,4))")) == list(
        range(32)
    )


def test_tile_to_shape_refuses_what_cute_cannot_compose():
    """8:3 leaves holes of 2 between its elements: the complement is (3,3):(1,24),
    and repeats laid out 2 or 4 apart would have to split its extent-3 mode, which
    CuTe's composition (and pycute's) refuses; so does verify."""
    pycute = oracle("pycute")
    with pytest.raises(AssertionError):
        pycute.logical_product(pycute.Layout((8, 1), (3, 0)), pycute.Layout((4, 2), (2, 1)))
    with pytest.raises(SpecError, match="CuTe cannot represent this composition"):
        offsets("tile_to_shape(8:3, (32,2), (1,0))")


def test_tile_to_shape_refuses_an_atom_whose_modes_interleave():
    """((2,4),8):((8,16),2): the stride-8 mode starts inside the 0..15 span of the
    stride-2 mode. pycute's complement gives it extent 8 // 16 = 0 (and a product
    that divides by zero); verify refuses the atom."""
    pycute = oracle("pycute")
    atom = pycute.Layout(((2, 4), 8), ((8, 16), 2))
    assert 0 in pycute.flatten(pycute.complement(atom, 256).shape)
    with pytest.raises(SpecError, match="do not interleave"):
        offsets("tile_to_shape(((2,4),8):((8,16),2), (32,8))")


class PycuteLostIndices(Exception):
    """pycute's gap: its composition floors an extent that does not split evenly
    over a mode (CuTe's C++ asserts divisibility), returning a smaller layout."""


def test_pycute_composition_drops_indices_that_do_not_split_evenly():
    """The gap above, pinned: 4 indices into a mode of 3 give pycute a size-3
    layout; verify refuses the composition instead."""
    pycute = oracle("pycute")
    lost = pycute.composition(pycute.Layout((3, 2), (4, 24)), pycute.Layout(4, 1))
    assert pycute.size(lost) == 3
    with pytest.raises(SpecError, match="4 indices into 3"):
        offsets("composition((3,2):(4,24), 4:1)")


def _tile_text(atom: str, target, order) -> str:
    order_text = f", {fmt_tuple(order)}" if order else ""
    return f"tile_to_shape({atom}, {fmt_tuple(target)}{order_text})"


def _tiled_offsets(pycute, atom, target, order) -> list[int]:
    """pycute's logical_product of the atom (padded to the target's rank) with the
    ordered repeats, read at ((coord % extent), (coord / extent)) per mode."""
    shape = atom.shape if isinstance(atom.shape, tuple) else (atom.shape,)
    stride = atom.stride if isinstance(atom.stride, tuple) else (atom.stride,)
    extents = [pycute.size(shape[i]) if i < len(shape) else 1 for i in range(len(target))]
    reps = [t // e for t, e in zip(target, extents)]
    rank = order or tuple(range(len(reps)))
    rep_stride, scale = [0] * len(reps), 1
    for i in sorted(range(len(reps)), key=lambda i: (rank[i], i)):
        rep_stride[i], scale = scale, scale * reps[i]
    pad = len(target) - len(shape)
    block = pycute.Layout(shape + (1,) * pad, stride + (0,) * pad)
    product = pycute.logical_product(block, pycute.Layout(tuple(reps), tuple(rep_stride)))
    if pycute.size(product) != math.prod(target):
        raise PycuteLostIndices(product)
    return [
        product(
            (
                tuple(c % e for c, e in zip(coord, extents)),
                tuple(c // e for c, e in zip(coord, extents)),
            )
        )
        for coord in colex(target)
    ]


def test_composition_view_is_cute_composition():
    """FlashAttention-2's transposed V: composition(sV, (D, N):(N, 1)) (GenRowMajor)."""
    pycute = oracle("pycute")
    for n, d in ((64, 64), (64, 128), (128, 64)):
        v = pycute.Layout(((8, n // 8), (8, d // 8)), ((8 * d, d), (1, 8)))
        view = pycute.composition(v, pycute.Layout((d, n), (n, 1)))
        text = f"composition({fmt_tuple(v.shape)}:{fmt_tuple(v.stride)}, ({d},{n}):({n},1))"
        assert offsets(text) == [view(i) for i in range(n * d)]


def size_of(shape) -> int:
    return shape if isinstance(shape, int) else math.prod(size_of(s) for s in shape)


def eval_tuple(text: str):
    import ast

    return ast.literal_eval(text)


def colex(shape):
    """Coordinates of `shape` in CuTe's 1-D order (the first mode fastest)."""
    for combo in itertools.product(*(range(n) for n in reversed(shape))):
        yield tuple(reversed(combo))


# -- Triton --------------------------------------------------------------------------


def gluon_builder():
    """Gluon's IR builder, which prints and linearises encodings (skips without Triton)."""
    oracle("triton")
    from triton._C.libtriton import gluon_ir, ir

    context = ir.context()
    ir.load_dialects(context)
    builder = gluon_ir.GluonOpBuilder(context)
    builder.keep_alive = context  # the builder needs its context
    return builder


def linear_offsets(builder, layout, shape) -> tuple[list[int], int]:
    """Each coordinate's element offset (colexicographic order) by Triton's own linear
    layout of `layout` on the whole `shape`, and the layout's alignment."""
    linear = builder.to_linear_layout(layout._to_ir(builder), list(shape))
    where = {}
    for offset in range(1 << len(linear.offset_bases)):
        coord = [0] * len(shape)
        for bit, basis in enumerate(linear.offset_bases):
            if offset >> bit & 1:
                coord = [x ^ y for x, y in zip(coord, basis)]
        where[tuple(coord)] = offset
    return [where[c] for c in colex(shape)], linear.alignment


@pytest.fixture(scope="module")
def triton_layouts():
    """Offsets from Triton's own linear layouts, on whole tensors."""
    builder = gluon_builder()
    return lambda layout, shape: linear_offsets(builder, layout, shape)


SWIZZLED = [
    (vec, per, most, order, shape)
    for vec, per, most in itertools.product([1, 2, 4, 8, 16], [1, 2, 4], [1, 2, 4, 8, 16])
    for shape, order in (
        ((16, 64), [1, 0]),
        ((64, 16), [0, 1]),
        ((8, 32), [1, 0]),
        ((4, 8, 16), [2, 1, 0]),
        ((4, 8, 16), [0, 2, 1]),
    )
]


@pytest.mark.parametrize("vec,per,most,order,shape", SWIZZLED)
def test_swizzled_shared_matches_triton(triton_layouts, vec, per, most, order, shape):
    from triton.experimental.gluon.language import SwizzledSharedLayout

    text = (
        f"#ttg.swizzled_shared<{{vec = {vec}, perPhase = {per}, maxPhase = {most}, "
        f"order = {order}}}>"
    )
    theirs, _ = triton_layouts(SwizzledSharedLayout(vec, per, most, order), shape)
    assert offsets(text, shape=shape) == theirs


@pytest.mark.parametrize(
    "width,bits,transposed,shape",
    [
        (w, b, t, s)
        for w in (32, 64, 128)
        for b in (8, 16, 32)
        for t in (False, True)
        for s in ((64, 64), (128, 64), (64, 256), (256, 32))
        if s[0 if t else 1] * b >= 8 * w
    ],
)
def test_nvmma_shared_matches_triton(triton_layouts, width, bits, transposed, shape):
    from triton.experimental.gluon.language import NVMMASharedLayout

    text = (
        f"#ttg.nvmma_shared<{{swizzlingByteWidth = {width}, transposed = "
        f"{str(transposed).lower()}, elementBitWidth = {bits}}}>"
    )
    theirs, alignment = triton_layouts(NVMMASharedLayout(width, bits, 2, transposed), shape)
    assert offsets(text, shape=shape) == theirs
    from verify.api import parse_layout

    assert parse_layout(text, shape).required_align == alignment


def test_old_triton_gpu_spelling_is_the_swizzled_encoding():
    old = (
        "#triton_gpu.shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [1, 0], "
        "hasLeadingOffset = false}>"
    )
    new = "#ttg.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [1, 0]}>"
    assert offsets(old, shape=(32, 32)) == offsets(new, shape=(32, 32))
