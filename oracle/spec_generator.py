"""Random specs for the differential campaign (benchmarks/campaigns/differential.py).

A case is one spec, drawn from a family (FAMILIES, with the share of cases each
gets), seeded by its number. Every spec defines a layout `L` (or names the one
access `a` reads) and an access `a` with bank and alignment checks, so each case
exercises an instruction; families add their own layouts and checks:

* cute -- shape:stride layouts with nested modes, padded, zero and 2^20/2^31
  strides, element swizzles (with offsets) and pointer (byte-address) swizzles
  with both shift signs;
* formula -- formulas with XOR/AND/shifts/division over ranges that may start
  above 0, read by coordinates, by a 1-D index (`L(lane)`), and through `L(i)`
  inside other expressions;
* tile -- `tile_to_shape` of compact, padded and holed atoms (CuTe places the
  repeats by the atom's complement), swizzled, pointer-swizzled and GMMA atoms,
  in the default order, (0,1), (1,0) and 3-mode orders;
* composition -- `composition(A, B)` of two layouts, as the atom of
  `tile_to_shape` and as a view read directly (FlashAttention's transposed V);
* triton -- `#ttg.swizzled_shared` of every order (rank 2 and 3) and
  `#ttg.nvmma_shared`, read by instructions;
* equivalence -- `check equivalent A, B` between two notations of one swizzled
  tile (CuTe, nested CuTe, pointer swizzle, formula, Triton swizzled_shared,
  nvmma_shared, GMMA atoms alone and tiled, TMA boxes), equal by construction or
  perturbed to differ.
* ttgir -- TTGIR as pasted: `#name = #ttg.<...>` alias lines, `!ttg.memdesc<...>`
  types (the dtype line sometimes left to the memdesc), `#ttg.shared_linear` with
  random invertible bases, `#ttg.padded_shared` with random pairs in both printed
  forms, and the swizzled and nvmma encodings written these ways; now and then
  `check equivalent` of two writings of one encoding, or of two encodings.
* copy -- cp.async (.ca 4/8/16 bytes, .cg 16) from a global tile `G` into `L`:
  row-major, padded, column-major, swizzled and formula layouts on both sides,
  `global align`, loops, sources shifted or permuted against the destinations.

The generator knows the shapes it writes; it uses nothing of verify, so what it
produces does not depend on how verify reads notations. Specs stay small enough
to enumerate: at most 4096 coordinates, 16 loop values, 3 stages.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from math import log2, prod

INSTRUCTIONS = [
    "ld.shared.b8",
    "ld.shared.b16",
    "ld.shared.b32",
    "ld.shared.b64",
    "ld.shared.v2.b32",
    "ld.shared.v4.b32",
    "ld.shared.v2.b16",
    "st.shared.b8",
    "st.shared.b16",
    "st.shared.b32",
    "st.shared.v2.b32",
    "st.shared.v4.b32",
    "ldmatrix.x1",
    "ldmatrix.x2",
    "ldmatrix.x4",
    "ldmatrix.x1.trans",
    "ldmatrix.x4.trans",
    "stmatrix.x1",
    "stmatrix.x2.trans",
    "stmatrix.x4",
    "SM75_U32x4_LDSM_N",
    "SM90_U16x8_STSM_T",
]
DTYPE_BITS = {"b8": 8, "f16": 16, "f32": 32, "f64": 64}
# Element types by size in bytes, as each notation names them.
DTYPES = {1: ["b8", "i8"], 2: ["f16", "bf16"], 4: ["f32", "tf32"]}
GMMA_TYPES = {
    1: ["int8_t", "float_e4m3_t"],
    2: ["half_t", "bfloat16_t"],
    4: ["float", "tfloat32_t"],
}
TMA_TYPES = {1: "i8", 2: "f16", 4: "f32"}
GMMA_MODES = {0: "INTER", 1: "SW32", 2: "SW64", 3: "SW128"}
MAX_COORDINATES = 4096


@dataclass(frozen=True)
class Term:
    """A layout as written, with what an access needs to know about it."""

    text: str  # after 'layout NAME'
    sizes: tuple[int, ...]  # extent of each top-level mode
    lows: tuple[int, ...] = ()  # first value of each mode (formulas may start above 0)
    pointer: bool = False  # swizzles byte addresses

    @property
    def size(self) -> int:
        return prod(self.sizes)

    def low(self, mode: int) -> int:
        return self.lows[mode] if self.lows else 0


@dataclass
class Spec:
    """A spec under construction: its lines, in order."""

    dtype: str
    align: int = 16
    stages: int = 1
    stage_bytes: int = 0
    layouts: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    def layout(self, name: str, term: Term):
        self.layouts.append(f"layout {name}{term.text}")

    def text(self, family: str) -> str:
        buffer = f"buffer align {self.align}"
        if self.stages > 1:
            buffer += f" stages {self.stages} stage_bytes {self.stage_bytes}"
        head = [f"# family: {family}", f"dtype {self.dtype}", buffer]
        return "\n".join(head + self.layouts + self.lines) + "\n"


# -- shared pieces ---------------------------------------------------------------


def fmt(t) -> str:
    """CuTe's printed form of an integer tuple."""
    return str(t) if isinstance(t, int) else "(" + ",".join(fmt(s) for s in t) + ")"


def size_of(t) -> int:
    return t if isinstance(t, int) else prod(size_of(s) for s in t)


def cute_text(shape, stride) -> str:
    return f"{fmt(shape)}:{fmt(stride)}"


def random_swizzle(rng: random.Random, top_bit: int) -> str:
    """Sw<B,M,S> touching bits below `top_bit`, either shift sign."""
    b = rng.randint(0, 3)
    m = rng.randint(0, 4)
    s = rng.randint(max(b, 1), 4)
    while m + s + b > top_bit:
        m, s = max(0, m - 1), max(b, 1, s - 1)
        if m + max(b, 1) + b > top_bit:
            b = max(0, b - 1)
    return f"Sw<{b},{m},{s * rng.choice([1, -1])}>"


def _buffer(rng: random.Random, spec: Spec, pointer: bool, aligns=None):
    aligns = aligns or [1, 2, 4, 8, 16, 16, 32, 128, 128, 256, 1024]
    spec.align = rng.choice(aligns)
    if pointer:
        spec.align = max(spec.align, 16)
    spec.stages = rng.choice([1, 1, 1, 2, 3]) if spec.align >= 16 else 1
    if spec.stages > 1:
        spec.stage_bytes = rng.randint(1, 96) * rng.choice([1, 4, 16])


def _index_expr(rng: random.Random, loops: list[str]) -> str:
    """A random integer expression over the lane and the loop variables."""
    terms = [f"{rng.randint(0, 9)} * lane", f"lane / {rng.choice([1, 2, 4, 8])}"]
    terms += [f"{rng.randint(0, 9)} * {v}" for v in loops]
    rng.shuffle(terms)
    op = rng.choice([" + ", " + ", " ^ "])
    return "(" + op.join(terms[: rng.randint(1, len(terms))]) + ")"


def _coordinates(rng: random.Random, term: Term, loops: list[str], one_d: bool) -> list[str]:
    """The access's coordinates: one per mode (shifted to the mode's first value),
    or one 1-D index; mostly kept in range by a modulo, now and then not."""
    wrap = rng.random() < 0.9
    if one_d:
        lane_only = rng.random() < 0.3  # the plain 'L(lane)' people write
        expr = "lane" if lane_only else _index_expr(rng, loops)
        return [f"{expr} % {term.size}" if wrap and not lane_only else expr]
    coords = []
    for i, n in enumerate(term.sizes):
        expr = _index_expr(rng, loops)
        expr = f"{expr} % {n}" if wrap else expr
        coords.append(f"{term.low(i)} + {expr}" if term.low(i) else expr)
    return coords


def access_lines(rng: random.Random, name: str, term: Term, one_d: bool | None = None) -> list[str]:
    """Access `a` of layout `name` and its bank and alignment checks."""
    loops = ["q", "w"][: rng.choice([0, 1, 1, 2])]
    loop_text = ", ".join(f"{v} in 0..{rng.randint(1, 4)}" for v in loops)
    if one_d is None:
        one_d = rng.random() < 0.15
    coords = _coordinates(rng, term, loops, one_d)
    k, w = rng.randint(1, 8), rng.randint(1, 12)
    return [
        f"access a = {rng.choice(INSTRUCTIONS)} {name}({', '.join(coords)})"
        + (f" for {loop_text}" if loops else ""),
        "check conflict_free a",
        f"check max_ways <= {k} a",
        f"check max_ways == {k} a",
        f"check wavefronts <= {w} a",
        f"check wavefronts == {w} a",
        f"check aligned {rng.choice([2, 4, 8, 16])} a",
    ]


def _finish(
    rng: random.Random, spec: Spec, name: str, term: Term, family: str, one_d: bool | None = None
) -> str:
    spec.lines = [f"check bijective {name}"] + spec.lines + access_lines(rng, name, term, one_d)
    return spec.text(family)


# -- cute: shape:stride layouts and swizzles ----------------------------------------


def _mode(rng: random.Random) -> tuple:
    """(shape, stride) of one top-level mode: an extent, or a nested pair."""

    # Mostly small strides; now and then one past 2^20 or 2^31, where a too-narrow
    # bit-vector would wrap.
    def stride():
        return rng.choice(
            [
                0,
                1,
                2,
                4,
                8,
                16,
                32,
                64,
                rng.randint(0, 80),
                rng.randint(0, 80),
                rng.randint(0, 80),
                rng.choice([(1 << 20) + 4, (1 << 31) + 64]),
            ]
        )

    if rng.random() < 0.6:
        return rng.choice([1, 2, 3, 4, 8, 16]), stride()
    return (rng.choice([1, 2, 4]), rng.choice([2, 4, 8])), (stride(), stride())


def cute_family(rng: random.Random) -> str:
    dtype = rng.choice(list(DTYPE_BITS))
    modes = [_mode(rng) for _ in range(rng.choice([1, 2, 2, 2, 3]))]
    shape, stride = tuple(m[0] for m in modes), tuple(m[1] for m in modes)
    plain = cute_text(shape, stride)
    kind = rng.choice(["plain", "element", "element", "pointer"])
    sizes = tuple(size_of(s) for s in shape)
    if kind == "element":
        offset = f" o {rng.choice([8, 64, 100])}" if rng.random() < 0.1 else ""
        term = Term(f" = {random_swizzle(rng, 9)}{offset} o {plain}", sizes)
    elif kind == "pointer":
        term = Term(
            f" = {random_swizzle(rng, 10)} o smem_ptr[{DTYPE_BITS[dtype]}b](unset) o {plain}",
            sizes,
            pointer=True,
        )
    else:
        term = Term(f" = {plain}", sizes)
    spec = Spec(dtype)
    _buffer(rng, spec, term.pointer)
    spec.layout("L", term)
    if not term.pointer and rng.random() < 0.3:
        spec.layout("M", Term(f" = {random_swizzle(rng, 9)} o {plain}", sizes))
        spec.lines.append("check equivalent L, M")
    return _finish(rng, spec, "L", term, "cute")


# -- formula: expressions over ranges that may start above 0 ------------------------


def _formula(rng: random.Random) -> tuple[Term, str, dict[str, int]]:
    """(term, body, variable -> its first value) of a random 2- or 3-mode formula."""
    rows, cols = rng.choice([2, 3, 4, 8, 16]), rng.choice([4, 8, 16, 32, 64])
    rlo, clo = rng.choice([0, 0, 1, 2, 3, 8]), rng.choice([0, 0, 0, 1, 4])
    r = f"(r - {rlo})" if rlo and rng.random() < 0.5 else "r"
    c = f"(c - {clo})" if clo and rng.random() < 0.5 else "c"
    pitch = cols + rng.choice([0, 0, 0, 1, 2, 4, 8])
    mix = rng.choice(
        [
            f"({c} ^ (({r} & {rng.choice([1, 3, 7])}) << {rng.randint(0, 3)}))",
            f"({c} ^ ({r} % {rng.choice([2, 4, 8])}))",
            f"(({c} / {rng.choice([2, 4])}) ^ ({r} >> {rng.randint(0, 2)}))",
            c,
        ]
    )
    row = rng.choice([f"{pitch} * {r}", f"{pitch * 2} * ({r} / 2)"])
    params = [("r", rlo, rows), ("c", clo, cols)]
    body = f"{row} + {mix}"
    if rng.random() < 0.2:
        depth, klo = rng.choice([2, 3]), rng.choice([0, 1])
        params.append(("k", klo, depth))
        body += f" + {pitch * (rows + klo + 1)} * k"
    text = "(" + ", ".join(f"{n} in {lo}..{lo + n_}" for n, lo, n_ in params) + f") = {body}"
    term = Term(text, tuple(n for _, _, n in params), tuple(lo for _, lo, _ in params))
    return term, body, {n: lo for n, lo, _ in params}


def _at_index(body: str, term: Term, names: list[str]) -> str:
    """The body with each variable replaced by its value at 1-D index i (CuTe's
    colexicographic order, counted from each range's first value)."""
    scale, values = 1, {}
    for k, (name, n) in enumerate(zip(names, term.sizes)):
        split = "i" if scale == 1 else f"(i / {scale})"
        part = split if k == len(names) - 1 else f"({split} % {n})"
        values[name] = f"({term.low(k)} + {part})" if term.low(k) else part
        scale *= n
    return "".join(values.get(tok, tok) for tok in _tokens(body))


def _tokens(text: str) -> list[str]:
    """Identifiers and everything between them (the variables are single letters)."""
    out, word = [], ""
    for ch in text:
        if ch.isalnum() or ch == "_":
            word += ch
            continue
        out += [word, ch] if word else [ch]
        word = ""
    return out + ([word] if word else [])


def formula_family(rng: random.Random) -> str:
    term, body, lows = _formula(rng)
    spec = Spec(rng.choice(list(DTYPE_BITS)))
    _buffer(rng, spec, False)
    spec.layout("L", term)
    if rng.random() < 0.4:  # L(i) inside an expression, against L written out
        spec.lines.append(
            f"check equivalent L(i) == {_at_index(body, term, list(lows))} for i in 0..{term.size}"
        )
    if rng.random() < 0.3:  # a layout defined through L's 1-D index
        spec.layout(
            "G", Term(f"(i in 0..{term.size}) = L(i) + {rng.choice([0, 1, 64])}", (term.size,))
        )
        spec.lines.append("check bijective G")
    return _finish(rng, spec, "L", term, "formula", one_d=rng.random() < 0.5)


# -- tile: tile_to_shape over every kind of atom ------------------------------------


@dataclass(frozen=True)
class Atom:
    """A tile_to_shape atom: its CuTe shape and stride, and what is written before them."""

    shape: tuple
    stride: tuple
    prefix: str = ""  # "Sw<..> o ", "Sw<..> o smem_ptr[..](unset) o "
    name: str = ""  # a GMMA atom's name, written instead of the layout
    pointer: bool = False

    @property
    def text(self) -> str:
        return self.name or f"{self.prefix}{cute_text(self.shape, self.stride)}"

    @property
    def mode_sizes(self) -> list[int]:
        return [size_of(s) for s in self.shape]


def _holed_atom(rng: random.Random) -> tuple[tuple, tuple]:
    """A 2-mode atom with gaps between its elements, like (2,4):(1,5)."""
    a, b = rng.choice([2, 4, 8]), rng.choice([2, 4, 8])
    inner = rng.choice([1, 2])
    # A gap that divides evenly, like (2,4):(1,4), or one that does not, like (2,4):(1,5).
    outer = a * inner * rng.choice([2, 3]) if rng.random() < 0.5 else a * inner + rng.randint(1, 4)
    return ((a, b), (inner, outer)) if rng.random() < 0.5 else ((b, a), (outer, inner))


def _plain_atom(rng: random.Random) -> tuple[tuple, tuple]:
    kind = rng.choice(["compact", "compact", "padded", "holed", "holed", "nested", "1d"])
    r, c = rng.choice([2, 4, 8]), rng.choice([4, 8, 16, 32, 64])
    if kind == "compact":
        return ((r, c), (c, 1)) if rng.random() < 0.6 else ((c, r), (1, c))
    if kind == "padded":  # rows padded, like (8,64):(72,1)
        return (r, c), (c + rng.choice([1, 2, 4, 8]), 1)
    if kind == "holed":
        return _holed_atom(rng)
    if kind == "nested":
        return ((2, r), c), ((rng.choice([1, c]), 2 * c + rng.choice([0, 0, 3])), 2)
    return (c,), (rng.choice([1, 1, 2, 3]),)


def _atom(rng: random.Random, dtype: str) -> Atom:
    kind = rng.choice(["plain", "plain", "swizzled", "swizzled", "pointer", "gmma"])
    bits = DTYPE_BITS[dtype]
    if kind == "gmma" and bits <= 32:
        return _gmma_atom(rng, bits // 8)
    shape, stride = _plain_atom(rng)
    if kind == "swizzled":
        return Atom(shape, stride, f"{random_swizzle(rng, 9)} o ")
    if kind == "pointer":
        return Atom(
            shape, stride, f"{random_swizzle(rng, 10)} o smem_ptr[{bits}b](unset) o ", pointer=True
        )
    return Atom(shape, stride)


def _gmma_atom(rng: random.Random, elem_bytes: int) -> Atom:
    b = rng.randint(0, 3)
    width = (16 << b) // elem_bytes
    major = rng.choice(["K", "MN"])
    shape, stride = ((8, width), (width, 1)) if major == "K" else ((width, 8), (1, width))
    name = f"GMMA::Layout_{major}_{GMMA_MODES[b]}_Atom<{rng.choice(GMMA_TYPES[elem_bytes])}>"
    return Atom(
        shape, stride, f"Sw<{b},4,3> o smem_ptr[{8 * elem_bytes}b](unset) o ", name, pointer=True
    )


def _target(rng: random.Random, atom: Atom) -> tuple[list[int], tuple | None]:
    """(target shape, order or None) for tiling `atom`, at most MAX_COORDINATES."""
    sizes = atom.mode_sizes
    rank = max(len(sizes), rng.choice([2, 2, 2, 3]))
    while True:
        extents = [n * rng.choice([1, 2, 2, 3, 4]) for n in sizes]
        extents += [rng.choice([2, 3]) for _ in range(rank - len(sizes))]
        if prod(extents) <= MAX_COORDINATES:
            break
    choice = rng.random()
    if choice < 0.35:
        return extents, None
    order = list(range(rank))
    rng.shuffle(order)
    return extents, tuple(order)


def naive_product(atom: Atom, extents: list[int], order: tuple | None) -> tuple[tuple, tuple]:
    """The atom repeated with its repeats strided by its cosize (ordered as `order`).
    For a compact atom this is CuTe's tile_to_shape; for one with holes CuTe fills
    the holes first, so the two differ: a partner for 'equivalent' either way."""
    sizes = atom.mode_sizes + [1] * (len(extents) - len(atom.mode_sizes))
    modes = list(zip(atom.shape, atom.stride)) + [(1, 0)] * (len(extents) - len(atom.shape))
    reps = [e // n for e, n in zip(extents, sizes)]
    cosize = 1 + sum((s - 1) * d for s, d in zip(_flat(atom.shape), _flat(atom.stride)))
    order = order or tuple(range(len(extents)))
    strides, scale = [0] * len(reps), cosize
    for i in sorted(range(len(reps)), key=lambda i: (order[i], i)):
        strides[i], scale = scale, scale * reps[i]
    shape = tuple((s, r) if s != 1 else r for (s, _), r in zip(modes, reps))
    stride = tuple((d, rd) if s != 1 else rd for (s, d), rd in zip(modes, strides))
    return shape, stride


def _flat(t) -> list[int]:
    return [t] if isinstance(t, int) else [x for s in t for x in _flat(s)]


def tile_family(rng: random.Random) -> str:
    dtype = rng.choice(list(DTYPE_BITS))
    atom = _atom(rng, dtype)
    extents, order = _target(rng, atom)
    order_text = f", {fmt(order)}" if order else ""
    term = Term(
        f" = tile_to_shape({atom.text}, {fmt(tuple(extents))}{order_text})",
        tuple(extents),
        pointer=atom.pointer,
    )
    spec = Spec(dtype)
    _buffer(rng, spec, atom.pointer)
    spec.layout("L", term)
    if rng.random() < 0.35:
        shape, stride = naive_product(atom, extents, order)
        spec.layout(
            "M",
            Term(
                f" = {atom.prefix}{cute_text(shape, stride)}", tuple(extents), pointer=atom.pointer
            ),
        )
        spec.lines.append("check equivalent L, M")
    return _finish(rng, spec, "L", term, "tile")


# -- composition: CuTe's composition of two layouts -----------------------------------


def _views(rng: random.Random, rows: int, cols: int) -> list[tuple[tuple, tuple]]:
    """Layouts B whose values index a layout of rows x cols (rows fastest): the
    transposed view FlashAttention uses, its identity, and interleaved splits."""
    n = rows * cols
    return [
        ((cols, rows), (rows, 1)),
        ((rows, cols), (1, rows)),
        ((2, n // 2), (n // 2, 1)),
        ((rows, (2, cols // 2)), (1, (rows * cols // 2, rows))),
        ((n,), (1,)),
    ]


def composition_family(rng: random.Random) -> str:
    dtype = rng.choice(["f16", "f16", "b8", "f32"])
    bits = DTYPE_BITS[dtype]
    rows, cols = rng.choice([2, 4, 8]), rng.choice([4, 8, 16, 32, 64])
    inner = rng.choice(
        [
            ((rows, cols), (cols, 1)),
            ((rows, cols), (cols, 1)),
            ((rows, cols), (cols + rng.choice([1, 8]), 1)),
            ((rows, (2, cols // 2)), (cols // 2, (1, rows * cols // 2))),
        ]
    )
    swizzle = rng.choice(
        [
            "",
            "",
            f"{random_swizzle(rng, 9)} o ",
            f"{random_swizzle(rng, 10)} o smem_ptr[{bits}b](unset) o ",
        ]
    )
    a_text = f"{swizzle}{cute_text(*inner)}"
    b_shape, b_stride = rng.choice(_views(rng, rows, cols))
    b_sizes = tuple(size_of(s) for s in b_shape)
    spec = Spec(dtype)
    _buffer(rng, spec, "smem_ptr" in swizzle)
    if rng.random() < 0.5:  # a view of a tiled layout, read directly
        reps = rng.choice([(1, 2), (2, 1), (2, 2), (4, 1)])
        spec.layout(
            "A",
            Term(
                f" = tile_to_shape({a_text}, ({rows * reps[0]}, {cols * reps[1]}))",
                (rows * reps[0], cols * reps[1]),
            ),
        )
        big_rows, big_cols = rows * reps[0], cols * reps[1]
        b_shape, b_stride = rng.choice(_views(rng, big_rows, big_cols))
        b_sizes = tuple(size_of(s) for s in b_shape)
        term = Term(
            f" = composition(A, {cute_text(b_shape, b_stride)})",
            b_sizes,
            pointer="smem_ptr" in swizzle,
        )
        spec.lines.append("check bijective A")
    elif rng.random() < 0.3:  # a view of an inline layout
        term = Term(
            f" = composition({a_text}, {cute_text(b_shape, b_stride)})",
            b_sizes,
            pointer="smem_ptr" in swizzle,
        )
    else:  # the composition as the atom of tile_to_shape
        extents, order = _target(rng, Atom(b_shape, b_stride))
        order_text = f", {fmt(order)}" if order else ""
        term = Term(
            f" = tile_to_shape(composition({a_text}, {cute_text(b_shape, b_stride)}), "
            f"{fmt(tuple(extents))}{order_text})",
            tuple(extents),
            pointer="smem_ptr" in swizzle,
        )
    spec.layout("L", term)
    return _finish(rng, spec, "L", term, "composition")


# -- triton: shared encodings of every order -------------------------------------------


def _triton_shape(rng: random.Random, rank: int) -> tuple[int, ...]:
    while True:
        shape = tuple(rng.choice([2, 4, 8, 16, 32, 64]) for _ in range(rank))
        if prod(shape) <= MAX_COORDINATES and max(shape) >= 8:
            return shape


def _cta_fields(rng: random.Random, rank: int) -> str:
    """The CTA fields TTGIR prints for one CTA, now and then."""
    if rng.random() > 0.1:
        return ""
    ones = ", ".join(["1"] * rank)
    return (
        f", CTAsPerCGA = [{ones}], CTASplitNum = [{ones}], "
        f"CTAOrder = [{', '.join(str(i) for i in reversed(range(rank)))}]"
    )


def swizzled_shared(
    vec: int, per_phase: int, max_phase: int, order, shape, extra="", dialect="ttg.swizzled_shared"
) -> str:
    return (
        f" = #{dialect}<{{vec = {vec}, perPhase = {per_phase}, maxPhase = {max_phase}, "
        f"order = [{', '.join(map(str, order))}]{extra}}}> shape {fmt(tuple(shape))}"
    )


def nvmma_shared(width: int, transposed: bool, bits: int, shape) -> str:
    return (
        f" = #ttg.nvmma_shared<{{swizzlingByteWidth = {width}, transposed = "
        f"{'true' if transposed else 'false'}, elementBitWidth = {bits}}}> "
        f"shape {fmt(tuple(shape))}"
    )


def triton_family(rng: random.Random) -> str:
    elem_bytes = rng.choice([1, 2, 2, 4])
    spec = Spec(rng.choice(DTYPES[elem_bytes]))
    if rng.random() < 0.7:
        rank = rng.choice([2, 2, 3])
        shape = _triton_shape(rng, rank)
        order = list(range(rank))
        rng.shuffle(order)
        dialect = rng.choice(["ttg.swizzled_shared"] * 9 + ["triton_gpu.shared"])
        text = swizzled_shared(
            rng.choice([1, 2, 4, 8, 16]),
            rng.choice([1, 2, 4]),
            rng.choice([1, 2, 4, 8, 16]),
            order,
            shape,
            _cta_fields(rng, rank),
            dialect,
        )
        _buffer(rng, spec, False)
    else:
        width = rng.choice([32, 64, 128])
        transposed = rng.random() < 0.4
        per_row = width // elem_bytes
        while True:
            contiguous = per_row * rng.choice([1, 1, 2, 4])
            other = rng.choice([8, 16, 32, 64])
            if contiguous * other <= MAX_COORDINATES:
                break
        shape = (contiguous, other) if transposed else (other, contiguous)
        text = nvmma_shared(width, transposed, 8 * elem_bytes, shape)
        _buffer(rng, spec, False, [128, 256, 512, 1024, 1024, 1024])
    term = Term(text, tuple(shape))
    spec.layout("L", term)
    return _finish(rng, spec, "L", term, "triton")


# -- equivalence: one swizzled tile in two notations -----------------------------------


@dataclass(frozen=True)
class Tile:
    """Elements placed at offset col + C*row + R*C*block, then swizzled by `swizzle`
    (B, M, S) on element offsets; `groups` lists the dimensions in CuTe 1-D index
    order (fastest first), grouped into top-level modes."""

    rows: int
    cols: int
    blocks: int
    swizzle: tuple[int, int, int] | None
    groups: tuple[tuple[str, ...], ...]
    elem_bytes: int

    def extent(self, dim: str) -> int:
        return {"row": self.rows, "col": self.cols, "block": self.blocks}[dim]

    def stride(self, dim: str) -> int:
        return {"col": 1, "row": self.cols, "block": self.rows * self.cols}[dim]

    @property
    def mode_sizes(self) -> tuple[int, ...]:
        return tuple(prod(self.extent(d) for d in g) for g in self.groups)

    @property
    def canonical_bits(self) -> int | None:
        """b when the tile is the byte swizzle Sw<b,4,3> on 16*2^b-byte rows
        (GMMA, TMA, nvmma_shared); None otherwise."""
        b = (
            round(log2(self.cols * self.elem_bytes // 16))
            if self.cols * self.elem_bytes >= 16
            else -1
        )
        if b < 0 or self.cols * self.elem_bytes != 16 << b or b > 3:
            return None
        want = (b, 4 - round(log2(self.elem_bytes)), 3) if b else None
        return b if self.swizzle == want else None


def _mode_tuple(tile: Tile, of) -> tuple:
    return tuple(of(g[0]) if len(g) == 1 else tuple(of(d) for d in g) for g in tile.groups)


def _sw(swizzle) -> str:
    return f"Sw<{swizzle[0]},{swizzle[1]},{swizzle[2]}>"


def render_cute(tile: Tile, rng: random.Random) -> Term | None:
    shape, stride = _mode_tuple(tile, tile.extent), _mode_tuple(tile, tile.stride)
    if rng.random() < 0.3:  # the same modes flattened: another rank, same order
        shape, stride = (
            tuple(tile.extent(d) for g in tile.groups for d in g),
            tuple(tile.stride(d) for g in tile.groups for d in g),
        )
    body = cute_text(shape, stride)
    sizes = tuple(size_of(s) for s in shape)
    return Term(f" = {_sw(tile.swizzle)} o {body}" if tile.swizzle else f" = {body}", sizes)


def render_pointer(tile: Tile, rng: random.Random) -> Term | None:
    if not tile.swizzle:
        return None
    b, m, s = tile.swizzle
    body = cute_text(_mode_tuple(tile, tile.extent), _mode_tuple(tile, tile.stride))
    shift = round(log2(tile.elem_bytes))
    return Term(
        f" = Sw<{b},{m + shift},{s}> o smem_ptr[{8 * tile.elem_bytes}b](unset) o {body}",
        tile.mode_sizes,
        pointer=True,
    )


def render_formula(tile: Tile, rng: random.Random) -> Term | None:
    names = {"row": "r", "col": "c", "block": "k"}
    params, value, lows = [], {}, []
    for i, group in enumerate(tile.groups):
        if len(group) == 1:
            lo = rng.choice([0, 0, 1, 2, 5])
            name = names[group[0]]
            params.append(f"{name} in {lo}..{lo + tile.extent(group[0])}")
            lows.append(lo)
            value[group[0]] = f"({name} - {lo})" if lo else name
            continue
        params.append(f"j{i} in 0..{prod(tile.extent(d) for d in group)}")
        lows.append(0)
        scale = 1
        for k, d in enumerate(group):
            split = f"j{i}" if scale == 1 else f"(j{i} / {scale})"
            value[d] = split if k == len(group) - 1 else f"({split} % {tile.extent(d)})"
            scale *= tile.extent(d)
    offset = " + ".join(
        value[d] if tile.stride(d) == 1 else f"{tile.stride(d)} * {value[d]}"
        for g in tile.groups
        for d in g
    )
    if tile.swizzle:
        b, m, s = tile.swizzle
        if rng.random() < 0.5:
            offset = f"{_sw(tile.swizzle)}({offset})"
        else:  # the XOR written out, as people write it
            mask = ((1 << b) - 1) << (m + max(0, s))
            move = f">> {s}" if s >= 0 else f"<< {-s}"
            offset = f"({offset}) ^ ((({offset}) & {mask}) {move})"
    return Term(f"({', '.join(params)}) = {offset}", tile.mode_sizes, tuple(lows))


def render_triton(tile: Tile, rng: random.Random) -> Term | None:
    if any(len(g) != 1 for g in tile.groups) or any(
        n & (n - 1) for n in (tile.rows, tile.cols, tile.blocks)
    ):
        return None
    dims = [g[0] for g in tile.groups]
    if tile.swizzle is None:
        vec, per_phase, max_phase = rng.choice([1, 2, 4, 8]), rng.choice([1, 2]), 1
    else:
        b, m, s = tile.swizzle
        if s < 0 or (1 << (s + m)) < tile.cols:  # Triton reads rows, not columns
            return None
        vec, per_phase, max_phase = 1 << m, (1 << (s + m)) // tile.cols, 1 << b
    order = [dims.index(d) for d in ("col", "row", "block") if d in dims]
    shape = [tile.extent(d) for d in dims]
    return Term(
        swizzled_shared(vec, per_phase, max_phase, order, shape, _cta_fields(rng, len(dims))),
        tuple(shape),
    )


def render_nvmma(tile: Tile, rng: random.Random) -> Term | None:
    b = tile.canonical_bits
    if not b or tile.rows % 8 or any(n & (n - 1) for n in (tile.rows, tile.blocks)):
        return None
    wide = ("col", "block") if tile.blocks > 1 else ("col",)
    if tile.groups == (("row",), wide):
        shape, transposed = (tile.rows, tile.cols * tile.blocks), False
    elif tile.groups == (wide, ("row",)):
        shape, transposed = (tile.cols * tile.blocks, tile.rows), True
    else:
        return None
    return Term(nvmma_shared(16 << b, transposed, 8 * tile.elem_bytes, shape), shape)


def render_gmma(tile: Tile, rng: random.Random) -> Term | None:
    """A GMMA atom alone (8 rows) or tiled: K-major blocks follow one another with
    all rows each (default order), MN-major ones likewise with order (1,0)."""
    b = tile.canonical_bits
    if b is None or tile.rows % 8:
        return None
    wide = ("col", "block") if tile.blocks > 1 else ("col",)
    kind = f"{GMMA_MODES[b]}_Atom<{rng.choice(GMMA_TYPES[tile.elem_bytes])}>"
    alone = tile.rows == 8 and tile.blocks == 1
    if tile.groups == (("row",), wide):
        atom = f"GMMA::Layout_K_{kind}"
        text = (
            f" = {atom}"
            if alone and rng.random() < 0.7
            else f" = tile_to_shape({atom}, ({tile.rows}, {tile.cols * tile.blocks}))"
        )
    elif tile.groups == (wide, ("row",)):
        atom = f"GMMA::Layout_MN_{kind}"
        text = (
            f" = {atom}"
            if alone and rng.random() < 0.7
            else f" = tile_to_shape({atom}, ({tile.cols * tile.blocks}, {tile.rows}), (1,0))"
        )
    else:
        return None
    return Term(text, tile.mode_sizes, pointer=True)


def render_tma(tile: Tile, rng: random.Random) -> Term | None:
    b = tile.canonical_bits
    if not b or tile.blocks > 1 or tile.groups != (("col",), ("row",)):
        return None
    mode = rng.choice(["SWIZZLE_", "CU_TENSOR_MAP_SWIZZLE_"]) + f"{16 << b}B"
    return Term(
        f" = tma({mode}, {TMA_TYPES[tile.elem_bytes]}, ({tile.cols}, {tile.rows}))",
        tile.mode_sizes,
        pointer=True,
    )


RENDERERS = {
    "cute": render_cute,
    "pointer": render_pointer,
    "formula": render_formula,
    "triton": render_triton,
    "nvmma": render_nvmma,
    "gmma": render_gmma,
    "tma": render_tma,
}


def _random_tile(rng: random.Random) -> Tile:
    elem_bytes = rng.choice([1, 2, 2, 4])
    kind = rng.choice(["canonical", "canonical", "triton", "cute"])
    blocks = rng.choice([1, 1, 1, 2])
    if kind == "canonical":  # the GMMA/TMA/nvmma byte swizzles
        b = rng.randint(0, 3)
        cols, rows = (16 << b) // elem_bytes, rng.choice([8, 8, 16, 32])
        swizzle = (b, 4 - round(log2(elem_bytes)), 3) if b else None
    elif kind == "triton":  # Sw<log2 maxPhase, log2 vec, log2(C*perPhase/vec)>
        cols, rows = rng.choice([8, 16, 32, 64]), rng.choice([4, 8, 16, 32])
        vec, per_phase = rng.choice([1, 2, 4, 8]), rng.choice([1, 2, 4])
        max_phase = rng.choice([m for m in (1, 2, 4, 8) if vec * m <= cols])
        swizzle = (round(log2(max_phase)), round(log2(vec)), round(log2(cols * per_phase // vec)))
        swizzle = swizzle if max_phase > 1 else None
    else:
        cols, rows = rng.choice([4, 6, 8, 16, 32]), rng.choice([2, 3, 4, 8])
        b, m = rng.randint(1, 3), rng.randint(0, 3)
        swizzle = (b, m, rng.randint(b, 4) * rng.choice([1, 1, -1]))
    while rows * cols * blocks > MAX_COORDINATES:
        rows //= 2
    return Tile(rows, cols, blocks, swizzle, _groups(rng, blocks), elem_bytes)


def _groups(rng: random.Random, blocks: int) -> tuple[tuple[str, ...], ...]:
    """The dimensions in index order, adjacent ones sometimes merged into one mode.
    Row-fastest and column-fastest orders come first: the notations need them."""
    dims = ["row", "col"] + (["block"] if blocks > 1 else [])
    choice = rng.random()
    if blocks > 1 and choice < 0.5:
        return rng.choice([(("row",), ("col", "block")), (("col", "block"), ("row",))])
    if choice < 0.7:
        order = dims if rng.random() < 0.5 else ["col", "row"] + dims[2:]
    else:
        order = dims[:]
        rng.shuffle(order)
    groups: list[tuple[str, ...]] = [(order[0],)]
    for d in order[1:]:
        if rng.random() < 0.2:
            groups[-1] += (d,)
        else:
            groups.append((d,))
    return tuple(groups)


def perturbed(tile: Tile, rng: random.Random) -> Tile:
    """A tile of the same size placing some element elsewhere (usually)."""
    choice = rng.random()
    if choice < 0.4 and tile.swizzle:
        b, m, s = tile.swizzle
        return replace(
            tile,
            swizzle=rng.choice([None, (b, m, s + (1 if s > 0 else -1)), (max(1, b - 1), m, s)]),
        )
    if choice < 0.7 and len(tile.groups) > 1:
        return replace(tile, groups=tuple(reversed(tile.groups)))
    if tile.swizzle is None:
        return replace(tile, swizzle=(1, 0, max(1, round(log2(tile.cols)))))
    return replace(tile, swizzle=None)


def equivalence_family(rng: random.Random) -> str:
    tile = _random_tile(rng)
    other = perturbed(tile, rng) if rng.random() < 0.35 else tile
    first_kind, first = _render_some(tile, rng)
    second_kind, second = _render_some(other, rng, avoid=first_kind)
    spec = Spec(rng.choice(DTYPES[tile.elem_bytes]))
    # Byte and element swizzles agree only on bases aligned to the pattern: mostly so.
    _buffer(rng, spec, first.pointer or second.pointer, [16, 128, 256, 512, 1024, 1024, 1024, 1024])
    spec.layout("L", first)
    spec.layout("M", second)
    read, other_name = rng.choice([("L", "M"), ("M", "L")])
    spec.lines += ["check equivalent L, M", f"check bijective {other_name}"]
    return _finish(
        rng, spec, read, first if read == "L" else second, f"equivalence {first_kind}/{second_kind}"
    )


def _render_some(tile: Tile, rng: random.Random, avoid: str = "") -> tuple[str, Term]:
    """(notation, layout) of the tile, preferring a notation other than `avoid`
    and, half the time, a library's over the generic CuTe, pointer and formula
    spellings, which can write any tile; and half the time TMA boxes and
    nvmma_shared, which fit the fewest tiles, before the other libraries."""
    names = list(RENDERERS)
    rng.shuffle(names)
    generic_last = {n: n in ("cute", "pointer", "formula") and rng.random() < 0.5 for n in names}
    rare_first = {n: n in ("tma", "nvmma") and rng.random() < 0.5 for n in names}
    names.sort(key=lambda n: (n == avoid, generic_last[n], not rare_first[n]))
    for name in names:
        term = RENDERERS[name](tile, rng)
        if term is not None:
            return name, term
    raise AssertionError("render_cute writes every tile")


# -- copy: cp.async from a global tile into shared memory -------------------------------

COPY_INSTRUCTIONS = [
    "cp.async.ca.4",
    "cp.async.ca.shared.global.4",
    "cp.async.ca.8",
    "cp.async.ca.16",
    "cp.async.ca.shared.global.16",
    "cp.async.cg.16",
    "cp.async.cg.shared.global.16",
]


def _copy_layout(rng: random.Random, rows: int, cols: int, per: int) -> str:
    """A rows x cols tile (in elements, `per` to one copy): row-major, padded,
    column-major, element-swizzled or a formula; now and then misaligned."""
    pad = rng.choice([0, 0, per, 2 * per, 4 * per, 1])
    kind = rng.choice(["rows", "rows", "columns", "swizzle", "formula"])
    if kind == "columns":
        return f" = ({rows},{cols}):({rng.choice([1, per])},{rows + pad})"
    if kind == "swizzle":
        m, b = round(log2(per)), rng.randint(1, 3)
        return f" = Sw<{b},{m},{rng.randint(3, 5)}> o ({rows},{cols}):({cols + pad},1)"
    if kind == "formula":
        return f"(r in 0..{rows}, c in 0..{cols}) = r * {cols + pad} + (c ^ ((r % 2) * {per}))"
    return f" = ({rows},{cols}):({cols + pad},1)"


def copy_family(rng: random.Random) -> str:
    instr = rng.choice(COPY_INSTRUCTIONS)
    size = int(instr.rsplit(".", 1)[1])
    dtype = rng.choice(["b8", "f16", "f32", "f32"])
    per = size // (DTYPE_BITS.get(dtype, 32) // 8)
    k = rng.choice([1, 2, 4, 8, 8, 16, 32])  # lanes along one row
    cols = per * k * rng.choice([1, 1, 2])
    rows = max(2, 32 // k) * rng.choice([1, 2])
    spec = Spec(dtype)
    _buffer(rng, spec, False, [4, 16, 16, 128, 1024])
    spec.layout("L", Term(_copy_layout(rng, rows, cols, per), (rows, cols)))
    spec.layout("G", Term(_copy_layout(rng, rows, cols + per * rng.choice([0, k]), per), ()))
    loops = ["q", "w"][: rng.choice([0, 1, 1, 2])]
    step = {"q": f" + {max(1, 32 // k)} * q", "w": f" + {per * k} * w"}
    row = f"(lane / {k}{step['q'] if 'q' in loops else ''}) % {rows}"
    col_lane = rng.choice(["lane", "lane", f"(lane ^ (lane / {k}))"])
    col = f"({per} * ({col_lane} % {k}){step['w'] if 'w' in loops else ''}) % {cols}"
    # Halved rows or columns: two lanes read one source chunk (for .cg, where rule S
    # is not exact when both write one shared line; bound G there).
    g_row = rng.choice([row, row, f"({row} + 1) % {rows}", f"({row} * 3) % {rows}", f"{row} / 2"])
    g_col = rng.choice([col, col, f"({col} + {per}) % {cols}", f"{per} * ({col} / {2 * per})"])
    loop_text = ", ".join(f"{v} in 0..{rng.randint(1, 4)}" for v in loops)
    galign = rng.choice([None, None, 16, 32, 128, 256] + ([size] if size < 16 else []))
    if galign is not None:
        spec.layouts.append(f"global align {galign}")
    w = rng.randint(1, 40)
    spec.lines = [
        "check bijective L",
        f"access a = {instr} L({row}, {col}) from G({g_row}, {g_col})"
        + (f" for {loop_text}" if loops else ""),
        "check conflict_free a",
        f"check wavefronts <= {w} a",
        f"check wavefronts == {w} a",
        f"check wavefronts <= {rng.choice([1, 2, 4, 8, 16, 32])} a",
        f"check aligned {rng.choice([4, 8, 16, 32])} a",
    ]
    return spec.text("copy")


# -- ttgir: TTGIR as pasted -- aliases, memdesc types, linear and padded encodings ------

# MLIR element types by size in bytes, with the dtype each is.
MLIR_TYPES = {
    1: [("i8", "i8"), ("f8E4M3FN", "e4m3"), ("f8E5M2", "e5m2")],
    2: [("f16", "f16"), ("bf16", "bf16")],
    4: [("f32", "f32"), ("i32", "i32")],
}


def unit_bases(shape) -> list[list[int]]:
    """One basis per offset bit, each one bit of one dimension (d0's first)."""
    return [
        [1 << b if i == d else 0 for i in range(len(shape))]
        for d, n in enumerate(shape)
        for b in range(n.bit_length() - 1)
    ]


def linear_bases(rng: random.Random, shape) -> list[list[int]]:
    """An invertible map: the unit bases shuffled, each XORed with some earlier ones."""
    unit = unit_bases(shape)
    rng.shuffle(unit)
    bases: list[list[int]] = []
    for basis in unit:
        for earlier in bases:
            if rng.random() < 0.3:
                basis = [x ^ y for x, y in zip(basis, earlier)]
        bases.append(basis)
    return bases


def _lists(rows) -> str:
    return "[" + ", ".join("[" + ", ".join(map(str, r)) + "]" for r in rows) + "]"


def shared_linear(bases, alignment: int) -> str:
    return f"#ttg.shared_linear<{{offset = {_lists(bases)}}}, alignment = {alignment}>"


def padded_shared(pairs, body: str) -> str:
    return f"#ttg.padded_shared<[{', '.join(f'{i}:+{p}' for i, p in pairs)}] {{{body}}}>"


def _padded_text(rng: random.Random, shape) -> str:
    """Triton's printed forms: the identity as {order, shape}, else {offset, block}
    with bases that each move along one dimension (Triton's verifier requires it)."""
    pairs = [
        (1 << rng.randint(1, 11), rng.choice([1, 1, 2, 4, 8, 16]))
        for _ in range(rng.choice([1, 1, 2]))
    ]
    pairs = list({i: (i, p) for i, p in pairs}.values())
    order = list(range(len(shape)))
    rng.shuffle(order)
    if rng.random() < 0.5:
        return padded_shared(pairs, f"order = {order}, shape = {list(shape)}")
    bases = unit_bases(shape)
    rng.shuffle(bases)
    return padded_shared(pairs, f"offset = {_lists(bases)}, block = []")


def _ttgir_encoding(rng: random.Random, shape, elem_bytes: int) -> str:
    kind = rng.choice(["padded", "padded", "linear", "linear", "swizzled", "nvmma"])
    if kind == "padded":
        return _padded_text(rng, shape)
    if kind == "linear":
        return shared_linear(linear_bases(rng, shape), rng.choice([16, 16, 128, 1024]))
    order = list(range(len(shape)))
    rng.shuffle(order)
    if kind == "swizzled" or len(shape) != 2 or shape[1] * elem_bytes < 32 or shape[0] < 8:
        vec, per, most = rng.choice([1, 2, 4, 8]), rng.choice([1, 2, 4]), rng.choice([1, 4, 8])
        return swizzled_shared(vec, per, most, order, shape).split(" = ", 1)[1].split(" shape")[0]
    width = min(128, 32 << rng.randint(0, 2), shape[1] * elem_bytes)
    return nvmma_shared(width, False, 8 * elem_bytes, shape).split(" = ", 1)[1].split(" shape")[0]


def _written(rng: random.Random, spec: Spec, encoding: str, shape, mlir: str, name: str) -> str:
    """The encoding as a layout statement's right side: inline, by an #alias, or in a
    memdesc type (with an inline or aliased memory space, mutable, allocation shape)."""
    how = rng.choice(["inline", "alias", "memdesc", "memdesc", "memdesc"])
    if how != "inline" and rng.random() < 0.8:
        spec.layouts.append(f"#{name} = {encoding}")
        encoding = f"#{name}"
    if how != "memdesc":
        return f" = {encoding} shape {fmt(tuple(shape))}"
    dims = "x".join(map(str, shape))
    space = rng.choice(["#smem", "#ttg.shared_memory"])
    if space == "#smem" and "#smem = #ttg.shared_memory" not in spec.layouts:
        spec.layouts.insert(0, "#smem = #ttg.shared_memory")
    tail = rng.choice(["", ", mutable", f", mutable, {dims}"])
    return f" = !ttg.memdesc<{dims}x{mlir}, {encoding}, {space}{tail}>"


def ttgir_family(rng: random.Random) -> str:
    elem_bytes = rng.choice([1, 2, 2, 4])
    mlir, dtype = rng.choice(MLIR_TYPES[elem_bytes])
    spec = Spec(dtype)
    shape = _triton_shape(rng, rng.choice([2, 2, 2, 3]))
    encoding = _ttgir_encoding(rng, shape, elem_bytes)
    _buffer(rng, spec, False, [128, 256, 1024] if "nvmma" in encoding else None)
    term = Term(_written(rng, spec, encoding, shape, mlir, "shared"), tuple(shape))
    spec.layout("L", term)
    if rng.random() < 0.4:  # the same encoding written another way, or another one
        other = encoding if rng.random() < 0.6 else _ttgir_encoding(rng, shape, elem_bytes)
        spec.layout("M", Term(_written(rng, spec, other, shape, mlir, "other"), tuple(shape)))
        spec.lines.append("check equivalent L, M")
    text = _finish(rng, spec, "L", term, "ttgir")
    if "!ttg.memdesc" in text and rng.random() < 0.3:  # the memdesc gives the dtype
        text = text.replace(f"dtype {dtype}\n", "", 1)
    return text


# -- the families -----------------------------------------------------------------------

FAMILIES = {  # name: (share of cases, generator)
    "cute": (0.18, cute_family),
    "formula": (0.12, formula_family),
    "tile": (0.20, tile_family),
    "composition": (0.12, composition_family),
    "triton": (0.13, triton_family),
    "equivalence": (0.20, equivalence_family),
    "copy": (0.05, copy_family),
    "ttgir": (0.08, ttgir_family),
}


def random_case(rng: random.Random, only: str | None = None) -> tuple[str, str]:
    """(family, spec text) of one random case; of family `only` when it is given."""
    if only is not None:
        return only, FAMILIES[only][1](rng)
    names = list(FAMILIES)
    family = rng.choices(names, weights=[FAMILIES[n][0] for n in names])[0]
    return family, FAMILIES[family][1](rng)


def random_spec(rng: random.Random) -> str:
    return random_case(rng)[1]
