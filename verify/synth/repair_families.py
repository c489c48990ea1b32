"""The families a refuted bank check's layout is placed in, read from how the
layout is written (`family_of`; `verify.synth.repair` says which and searches
them): each family's parameters as written, the values each may take, the member
a choice of values builds, and how far apart two members are.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

import numpy as np

from verify.engines.enumeration import Vectorised
from verify.errors import SpecError
from verify.model.expr import Range, Var
from verify.model.layout import Formula
from verify.notation.triton import EncodedFormula
from verify.spec.ast import LayoutDef
from verify.spec.parser import parse_text
from verify.synth import families

Params = tuple[tuple[str, object], ...]


@dataclass(frozen=True)
class Candidate:
    """A member of the layout's family: its spec statement, parameters and table."""

    statement: str  # 'layout A = ...' (a formula: 'layout A(r in ..) = ...')
    params: Params
    table: Callable[[], np.ndarray | None]  # (R, C) element offsets; None if not a layout
    xor_terms: int = 0


@dataclass(frozen=True)
class Family:
    """A layout's family: its parameters as written (`here`), the values each may
    take (`axes`), and the member a choice of values builds (None when those
    values make none)."""

    name: str  # how a message names it
    here: Params
    axes: dict[str, list]
    build: Callable[[dict], Candidate | None]
    # the values that make a member without padding, for the alternative that
    # saves the footprint (the CuTe tiles: the pitch of an unpadded tile)
    unpadded: dict | None = None

    def compact(self) -> Iterator[Candidate]:
        """Members with the `unpadded` values and any others (a swizzle)."""
        if self.unpadded is None:
            return
        free = [k for k in self.axes if k not in self.unpadded]
        for values in itertools.product(*(self.axes[k] for k in free)):
            candidate = self.build({**dict(self.here), **self.unpadded, **dict(zip(free, values))})
            if candidate is not None:
                yield candidate

    def level(self, n: int) -> Iterator[Candidate]:
        """Members with exactly `n` parameters changed, the nearest values first."""
        here = dict(self.here)
        for names in itertools.combinations(self.axes, n):
            moves = [
                sorted((v for v in self.axes[k] if v != here[k]), key=partial(_step, here[k]))
                for k in names
            ]
            for values in itertools.product(*moves):
                candidate = self.build({**here, **dict(zip(names, values))})
                if candidate is not None:
                    yield candidate


@dataclass(frozen=True)
class Tile:
    """What a family reader needs: the layout's name, extents, element bytes, and
    the spec's dtype statement (candidates are parsed under it)."""

    name: str
    rows: int
    cols: int
    elem_bytes: int
    header: str


def changes(here: Params, other: Params) -> int:
    """Parameters that differ (one the other lacks counts as one)."""
    a, b = dict(here), dict(other)
    return sum(a.get(k) != b.get(k) for k in a.keys() | b.keys())


def steps(here: Params, other: Params) -> int:
    """How far the differing parameters moved: the tie-break after the footprint."""
    a, b = dict(here), dict(other)
    return sum(_step(a.get(k), b.get(k)) for k in a.keys() | b.keys() if a.get(k) != b.get(k))


def _step(a: object, b: object) -> int:
    if isinstance(a, int) and isinstance(b, int):
        return abs(a - b)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return sum(_step(x, y) for x, y in zip(a, b)) + abs(len(a) - len(b))
    added = a if isinstance(a, tuple) else b  # a swizzle added or removed: its B
    if isinstance(added, tuple) and added and isinstance(added[0], int):
        return added[0]
    return 1


def moved_parameters(here: Params, other: Params) -> frozenset[str]:
    a, b = dict(here), dict(other)
    return frozenset(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))


# --- the families -------------------------------------------------------------


def family_of(ldef: LayoutDef, text: str, tile: Tile) -> Family | None:
    """The family `ldef` (written `text`, after 'layout ') belongs to, with its members."""
    if isinstance(ldef.function, EncodedFormula):
        return _triton_family(ldef.function, tile)
    if text.startswith(f"{tile.name}("):
        return _formula_family(ldef, text, tile) if isinstance(ldef.function, Formula) else None
    rhs = re.sub(r"(?<![\w<])_(\d)", r"\1", text.split("=", 1)[1].strip())
    for reader in (_gmma_family, _tile_family, _cute_family):
        family = reader(rhs, tile)
        if family is not None:
            return family
    return None


def parsed_table(tile: Tile, statement: str) -> np.ndarray | None:
    """The (R, C) element offsets of a candidate as verify itself reads its text;
    None when it is not an R x C layout verify accepts."""
    try:
        ldef = parse_text(f"{tile.header}{statement}\n", "<suggestion>").layouts[tile.name]
        if list(ldef.function.mode_sizes) != [tile.rows, tile.cols]:
            return None
        value = ldef.value([Var("r"), Var("c")])
        ranges = {"r": Range(0, tile.rows), "c": Range(0, tile.cols)}
        r, c = families.grid(tile.rows, tile.cols)
        table = np.array(Vectorised([value], ranges)(value, {"r": r, "c": c}, r.shape), np.int64)
    except SpecError:
        return None
    if ldef.pointer_swizzle is None:
        return table
    eb = tile.elem_bytes  # a pointer swizzle answers bytes: whole elements or nothing
    return None if (table % eb).any() else table // eb


_SW = r"(?:Sw<(?P<b>\d+),(?P<m>\d+),(?P<s>-?\d+)> ?o ?)?"
_PLAIN = re.compile(_SW + r"\((?P<r>\d+), ?(?P<c>\d+)\) ?: ?\((?P<x>\d+), ?(?P<y>\d+)\)$")
_TILED = re.compile(
    r"tile_to_shape\( ?" + _SW + r"\((?P<r>\d+), ?(?P<c>\d+)\) ?: ?\((?P<x>\d+), ?(?P<y>\d+)\)"
    r" ?,(?P<rest>.*)\)$"
)
_GMMA = re.compile(r"Layout_(?P<major>K|MN)_(?P<mode>INTER|SW32|SW64|SW128)_Atom")
_GMMA_MODES = ("INTER", "SW32", "SW64", "SW128")


def _swizzle_of(m: re.Match) -> tuple[int, int, int] | None:
    return (int(m["b"]), int(m["m"]), int(m["s"])) if m["b"] and int(m["b"]) else None


def _sw_text(swizzle: tuple[int, int, int] | None) -> str:
    return "" if swizzle is None else f"Sw<{swizzle[0]},{swizzle[1]},{swizzle[2]}> o "


def _major_of(rows: int, cols: int, x: int, y: int) -> tuple[str, int] | None:
    """('row', pitch) for (R,C):(P,1), ('column', pitch) for (R,C):(1,P)."""
    if y == 1 and x >= cols:
        return "row", x
    if x == 1 and y >= rows:
        return "column", y
    return None


def _cute_family(rhs: str, tile: Tile) -> Family | None:
    """``[Sw<B,M,S> o] (R,C):(P,1)`` or ``(R,C):(1,P)``: major order, a pitch from
    the contiguous extent to 128 bytes more (or as written), a swizzle (or none)
    whose bits stay inside the tile's offsets."""
    m = _PLAIN.match(rhs)
    if m is None or (int(m["r"]), int(m["c"])) != (tile.rows, tile.cols):
        return None
    major = _major_of(tile.rows, tile.cols, int(m["x"]), int(m["y"]))
    if major is None:
        return None
    allowed = {
        kind: {*families.pitches(extent, tile.elem_bytes), *([major[1]] * (kind == major[0]))}
        for kind, extent in (("row", tile.cols), ("column", tile.rows))
    }
    plain = functools.cache(partial(_pitched, tile))

    def build(p: dict) -> Candidate | None:
        if p["pitch"] not in allowed[p["major"]]:
            return None
        table = plain(p["major"], p["pitch"])
        if not _fits(p["swizzle"], int(table.max()).bit_length()):
            return None
        stride = f"({p['pitch']},1)" if p["major"] == "row" else f"(1,{p['pitch']})"
        return Candidate(
            f"layout {tile.name} = {_sw_text(p['swizzle'])}({tile.rows},{tile.cols}):{stride}",
            tuple(p.items()),
            _swizzled(partial(np.asarray, table), p["swizzle"]),
            p["swizzle"][0] if p["swizzle"] else 0,
        )

    top = max(int(_pitched(tile, k, max(v)).max()).bit_length() for k, v in allowed.items())
    axes: dict[str, list] = {
        "major": ["row", "column"],
        "pitch": sorted(allowed["row"] | allowed["column"]),
        "swizzle": [None, *families.swizzles(max(1, top))],
    }
    here = (("major", major[0]), ("pitch", major[1]), ("swizzle", _swizzle_of(m)))
    extent = tile.cols if major[0] == "row" else tile.rows
    unpadded = {"major": major[0], "pitch": extent}
    return Family("CuTe padded or swizzled", here, axes, build, unpadded)


def _pitched(tile: Tile, major: str, pitch: int) -> np.ndarray:
    r, c = families.grid(tile.rows, tile.cols)
    return r * pitch + c if major == "row" else r + c * pitch


def _fits(swizzle: tuple[int, int, int] | None, bits: int) -> bool:
    """A swizzle whose read and written bits lie below `bits` (none always fits)."""
    return swizzle is None or swizzle[1] + abs(swizzle[2]) + swizzle[0] <= max(1, bits)


def _swizzled(
    plain: Callable[[], np.ndarray | None], swizzle: tuple[int, int, int] | None
) -> Callable[[], np.ndarray | None]:
    """The table of ``Sw o L`` from L's (computed when first asked for)."""

    def build() -> np.ndarray | None:
        table = plain()
        return table if table is None or swizzle is None else families.swizzle(table, *swizzle)

    return build


def _tile_family(rhs: str, tile: Tile) -> Family | None:
    """``tile_to_shape([Sw<B,M,S> o] (ar,ac):stride, (R, C)[, order])``: a
    power-of-two atom dividing the tile, either major, a swizzle inside the
    atom's bits; the tiling's shape and order as written. verify reads the
    swizzle as applying to the tiled offset, which is CuTe's tiling of the
    swizzled atom when the swizzle stays inside the atom's bits."""
    m = _TILED.match(rhs)
    if m is None:
        return None
    atom = (int(m["r"]), int(m["c"]))
    major = _major_of(*atom, int(m["x"]), int(m["y"]))
    if major is None or major[1] != (atom[1] if major[0] == "row" else atom[0]):
        return None
    atoms = [(ar, ac) for ar in _powers_dividing(tile.rows) for ac in _powers_dividing(tile.cols)]
    plain = functools.cache(
        lambda shape, kind: parsed_table(tile, _tiled(tile, shape, kind, m["rest"], None))
    )

    def build(p: dict) -> Candidate | None:
        (ar, ac), kind, swizzle = p["atom"], p["major"], p["swizzle"]
        if p["atom"] not in atoms or not _fits(swizzle, (ar * ac - 1).bit_length()):
            return None
        return Candidate(
            _tiled(tile, p["atom"], kind, m["rest"], swizzle),
            tuple(p.items()),
            _swizzled(partial(plain, p["atom"], kind), swizzle),
            swizzle[0] if swizzle else 0,
        )

    top = max((ar * ac - 1).bit_length() for ar, ac in atoms)
    axes: dict[str, list] = {
        "atom": atoms,
        "major": ["row", "column"],
        "swizzle": [None, *families.swizzles(max(1, top))],
    }
    here = (("atom", atom), ("major", major[0]), ("swizzle", _swizzle_of(m)))
    return Family("tile_to_shape", here, axes, build)


def _tiled(
    tile: Tile, atom: tuple[int, int], kind: str, rest: str, swizzle: tuple[int, int, int] | None
) -> str:
    ar, ac = atom
    stride = f"({ac},1)" if kind == "row" else f"(1,{ar})"
    return f"layout {tile.name} = tile_to_shape({_sw_text(swizzle)}({ar},{ac}):{stride},{rest})"


def _powers_dividing(n: int) -> list[int]:
    return [1 << k for k in range(n.bit_length()) if n % (1 << k) == 0]


def _gmma_family(rhs: str, tile: Tile) -> Family | None:
    """CuTe's GMMA atoms, bare or tiled: the other major and swizzle modes, the
    rest of the text as written."""
    m = _GMMA.search(rhs)
    if m is None:
        return None

    def build(p: dict) -> Candidate:
        mode = _GMMA_MODES[p["swizzle mode"]]
        text = f"{rhs[: m.start()]}Layout_{p['major']}_{mode}_Atom{rhs[m.end() :]}"
        statement = f"layout {tile.name} = {text}"
        return Candidate(statement, tuple(p.items()), partial(parsed_table, tile, statement))

    axes: dict[str, list] = {"major": ["K", "MN"], "swizzle mode": list(range(len(_GMMA_MODES)))}
    here = (("major", m["major"]), ("swizzle mode", _GMMA_MODES.index(m["mode"])))
    return Family("GMMA atom", here, axes, build)


def _triton_family(function: EncodedFormula, tile: Tile) -> Family | None:
    encoding, fields = function.encoding, function.encoding.fields
    if encoding.kind == "swizzled_shared":
        here = _swizzled_params(
            fields["vec"], fields["perPhase"], fields["maxPhase"], fields["order"][0]
        )
        members = families.triton_members(tile.rows, tile.cols)
        return _listed("swizzled_shared", here, tile, members, _swizzled_place)
    if encoding.kind == "nvmma_shared":
        here = _nvmma_params(fields["swizzlingByteWidth"], bool(fields["transposed"]))
        members = families.nvmma_members(tile.rows, tile.cols, tile.elem_bytes)
        return _listed("nvmma_shared", here, tile, members, _nvmma_place)
    if encoding.kind == "padded_shared":
        return _padded_family(encoding.text, encoding.fields["intervals"], tile)
    return None


def _listed(
    name: str,
    here: Params,
    tile: Tile,
    members: Iterator[families.Member],
    place: Callable[[str], Params],
) -> Family:
    """A family synthesis lists member by member, looked up by parameters."""
    by_params = {
        place(m.notation): Candidate(
            f"layout {tile.name} = {m.notation}", place(m.notation), m.build, m.xor_terms
        )
        for m in members
    }
    axes: dict[str, list] = {k: list({dict(p)[k]: 0 for p in by_params}) for k, _ in here}
    return Family(name, here, axes, lambda p: by_params.get(tuple(p.items())))


def _swizzled_params(vec: int, per_phase: int, max_phase: int, fastest: int) -> Params:
    logs = (n.bit_length() - 1 for n in (vec, per_phase, max_phase))
    return (*zip(("log2 vec", "log2 perPhase", "log2 maxPhase"), logs), ("order", fastest))


def _swizzled_place(notation: str) -> Params:
    m = re.search(r"vec = (\d+), perPhase = (\d+), maxPhase = (\d+), order = \[(\d)", notation)
    assert m is not None, f"synthesis writes swizzled_shared members whole: {notation}"
    vec, per_phase, max_phase, fastest = (int(g) for g in m.groups())
    return _swizzled_params(vec, per_phase, max_phase, fastest)


def _nvmma_params(width: int, transposed: bool) -> Params:
    return (("log2 swizzlingByteWidth", width.bit_length() - 1), ("transposed", transposed))


def _nvmma_place(notation: str) -> Params:
    m = re.search(r"swizzlingByteWidth = (\d+), transposed = (true|false)", notation)
    assert m is not None, f"synthesis writes nvmma_shared members whole: {notation}"
    return _nvmma_params(int(m[1]), m[2] == "true")


def _padded_family(text: str, pairs: list[tuple[int, int]], tile: Tile) -> Family:
    """padded_shared: each pair's interval and padding, powers of two (a padding
    up to 128 bytes), the number of pairs and the order and shape as written."""
    intervals = list(range((tile.rows * tile.cols).bit_length()))
    paddings = list(range(max(1, 128 // tile.elem_bytes).bit_length()))

    def build(p: dict) -> Candidate | None:
        option = [(1 << p[f"log2 interval {n}"], 1 << p[f"log2 padding {n}"]) for n in ns]
        if len({i for i, _ in option}) < len(option):
            return None  # Triton wants distinct intervals
        written = ", ".join(f"{i}:+{pad}" for i, pad in option)
        encoding = re.sub(r"\[[^\]]*\]", f"[{written}]", text, count=1)
        statement = f"layout {tile.name} = {encoding} shape ({tile.rows}, {tile.cols})"
        return Candidate(statement, tuple(p.items()), partial(parsed_table, tile, statement))

    ns = range(1, len(pairs) + 1)
    axes: dict[str, list] = {
        k: v
        for n in ns
        for k, v in ((f"log2 interval {n}", intervals), (f"log2 padding {n}", paddings))
    }
    here = tuple(
        (k, v)
        for n, (i, pad) in zip(ns, pairs)
        for k, v in (
            (f"log2 interval {n}", i.bit_length() - 1),
            (f"log2 padding {n}", pad.bit_length() - 1),
        )
    )
    return Family("padded_shared", here, axes, build)


def _formula_family(ldef: LayoutDef, text: str, tile: Tile) -> Family | None:
    """A formula with a padding term (a coordinate's coefficient raised by 1 to
    128 bytes' worth) or an XOR term (e) ^ (2^m * (v % 2^b)) added, or both."""
    function = ldef.function
    assert isinstance(function, Formula), "a formula family is read from a formula"
    head, expr = (part.strip() for part in text.split("=", 1))
    names = [name for name, _ in function.params]
    top = (2 * tile.rows * tile.cols).bit_length()
    pads = [(v, pad) for v in names for pad in range(1, max(2, 128 // tile.elem_bytes + 1))]
    xors = [
        (v, b, m)
        for v, extent in zip(names, (tile.rows, tile.cols))
        for b in range(1, min(5, max(1, (extent - 1).bit_length())) + 1)
        for m in range(top - b)
    ]

    def build(p: dict) -> Candidate:
        body = expr if p["padding"] is None else _raised(expr, *p["padding"])
        if p["xor"] is not None:
            v, b, m = p["xor"]
            body = f"({body}) ^ ({1 << m} * ({v} % {1 << b}))"
        statement = f"layout {head} = {body}"
        xor_terms = p["xor"][1] if p["xor"] else 0
        return Candidate(
            statement, tuple(p.items()), partial(parsed_table, tile, statement), xor_terms
        )

    axes: dict[str, list] = {"padding": [None, *pads], "xor": [None, *xors]}
    return Family("formula", (("padding", None), ("xor", None)), axes, build)


def _raised(expr: str, var: str, pad: int) -> str:
    """`expr` with `var`'s one written coefficient raised by `pad` (``64*r`` ->
    ``72*r``), or `pad`*`var` added when it has no single coefficient."""
    pattern = re.compile(rf"(?<![\w.])(\d+) ?\* ?{re.escape(var)}\b")
    found = pattern.findall(expr)
    if len(found) == 1:
        return pattern.sub(lambda m: f"{int(m[1]) + pad}*{var}", expr)
    return f"{expr} + {pad}*{var}"
