"""Spec text -> what it means: buffer, element type, layouts, accesses, checks.

Overview
--------
Walks the raw lark tree statement by statement, in file order (a layout or an
expression may only call layouts defined above it; an access or check may name
any layout or access of the spec). Layout terms are read by CuTe's rules
(`oracle.cute`), Triton encodings by Triton (`oracle.triton_encodings`),
expressions by `oracle.formulas`.

Worked example
--------------
``layout T = tile_to_shape(Sw<3,3,3> o (8,64):(64,1), (64,64))`` reads the atom
as outer Sw<3,3,3> over inner (8,64):(64,1); CuTe tiles a ComposedLayout by
tiling its inner layout and keeping the outer, so T is Sw<3,3,3> over
((8,8),64):((64,512),1).

The math
--------
``t_0 o t_1 o ... o t_n``: t_n supplies the domain; right to left, an integer
adds an offset, any other term is applied to the value so far (``A(off +
B(c))``). ``Sw<..> o smem_ptr[Nb] o L`` -- a swizzle right before one smem_ptr,
at the far left -- swizzles absolute byte addresses of elements N bits wide.
``composition(A, B)`` of two plain CuTe layouts is pycute's composition;
otherwise CuTe composes B with A's inner layout, keeping A's outer terms, and
where A's inner is not CuTe it is plain function composition A(B(c)).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from lark import Token, Tree

from oracle import cute, hardware, memdesc, triton_encodings
from oracle.errors import OracleRefusal
from oracle.formulas import compile_expr, constant, integer, leaf, swizzle_params, where
from oracle.layouts import LIMIT, Inner, Layout, PointerSwizzle, cute_outer
from oracle.syntax import parse

Loops = list[tuple[str, int, int]]


@dataclass
class Access:
    name: str
    instruction: hardware.Instruction
    layout_name: str
    coords: list  # compiled coordinate expressions over lane and loops
    loops: Loops
    at: str
    # cp.async's global side, 'from G(coords)': the global tile's layout name and
    # the compiled coordinates of each lane in it; None for any other access.
    source_layout: str | None = None
    source_coords: list = field(default_factory=list)
    load: bool = False  # an ld.shared (rule L may merge its phases; `merging`)


@dataclass
class Check:
    kind: str  # the property tree's name (bijective, max_ways, ...)
    text: str  # the property as verify's runner names it
    target: str = ""
    second: str = ""
    bound: int = 0
    exact: bool = False
    sides: tuple = ()  # compiled (lhs, rhs) of equivalent_exprs
    loops: Loops = field(default_factory=list)
    at: str = ""


@dataclass
class Spec:
    dtype: str | None = None
    align: int = 16
    stages: int = 1
    stage_bytes: int = 0
    global_align: int = 16  # 'global align N': the global tile starts at a multiple of N
    layouts: dict[str, Layout] = field(default_factory=dict)
    accesses: dict[str, Access] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)
    # Accesses written 'by' a thread map (a Triton distributed encoding or a CuTe
    # TV layout): Triton and pycute define those maps, and tests/spec/test_thread_maps.py
    # compares verify's reading with them on whole tiles. The oracle does not read
    # them, so it answers no check of these accesses.
    unread_accesses: set[str] = field(default_factory=set)
    # TTGIR alias lines: '#name' -> the attribute's text; and where each memdesc
    # type names its element type (the dtype must agree, or comes from the first).
    aliases: dict[str, str] = field(default_factory=dict)
    memdesc_types: list[tuple[str, str]] = field(default_factory=list)


class Scope:
    """Names an expression may use: its variables and the layouts defined so far."""

    def __init__(self, layouts: dict[str, Layout], variables=()):
        self.layouts, self.variables = layouts, set(variables)

    def has_variable(self, name: str) -> bool:
        return name in self.variables

    def layout(self, name: str, at: str) -> Layout:
        if name not in self.layouts:
            raise OracleRefusal(f"{at}: unknown layout '{name}' (expected one defined above)")
        return self.layouts[name]


def read(text: str) -> Spec:
    """The meaning of a spec's text (see module doc)."""
    spec = Spec()
    for statement in parse(text).children:
        if isinstance(statement, Tree):
            _STATEMENTS[statement.data](spec, statement, text)
    _memdesc_dtype(spec)
    return spec


def _memdesc_dtype(spec: Spec):
    """A spec without a dtype line takes its first memdesc's element type; every
    memdesc must store the dtype (see `memdesc`)."""
    if spec.dtype is None and spec.memdesc_types:
        spec.dtype = spec.memdesc_types[0][0]
    for element, at in spec.memdesc_types:
        if element != spec.dtype:
            raise OracleRefusal(f"{at}: memdesc of {element}, but the dtype is {spec.dtype}")


# -- statements ----------------------------------------------------------------------


def _dtype(spec: Spec, tree: Tree, text: str):
    spec.dtype = str(tree.children[0])


def _buffer(spec: Spec, tree: Tree, text: str):
    options = {str(kw): integer(leaf(value)) for kw, value in (o.children for o in tree.children)}
    spec.align = options.get("align", 16)
    spec.stages = options.get("stages", 1)
    spec.stage_bytes = options.get("stage_bytes", 0)
    if spec.align < 1 or spec.align & (spec.align - 1):
        raise OracleRefusal(f"{where(tree)}: buffer align {spec.align} is not a power of two")
    if spec.stages < 1 or (spec.stages > 1 and spec.stage_bytes < 1):
        raise OracleRefusal(
            f"{where(tree)}: stages need stages >= 1 and, for several, stage_bytes >= 1"
        )


def _define(spec: Spec, name: Token, layout: Layout):
    if str(name) in spec.layouts:
        raise OracleRefusal(f"{where(name)}: layout '{name}' is defined twice")
    spec.layouts[str(name)] = layout


def _cute_layout_stmt(spec: Spec, tree: Tree, text: str):
    name, terms = tree.children
    _define(spec, leaf(name), read_composition(terms, spec))


def _formula_layout_stmt(spec: Spec, tree: Tree, text: str):
    name, *params, body = tree.children
    ranges = read_ranges(params, spec)
    scope = Scope(spec.layouts, [n for n, _, _ in ranges])
    _define(spec, leaf(name), formula_layout(ranges, compile_expr(body, scope), where(name)))


def _access_stmt(spec: Spec, tree: Tree, text: str):
    name, instr, layout, *rest = tree.children
    loops = []
    if rest and isinstance(rest[-1], Tree) and rest[-1].data == "for_clause":
        loops = read_ranges(rest.pop().children, spec)
    source = None
    if rest and isinstance(rest[-1], Tree) and rest[-1].data == "copy_source":
        source = rest.pop()
    if str(name) in spec.accesses:
        raise OracleRefusal(f"{where(name)}: access '{name}' is defined twice")
    scope = Scope(spec.layouts, ["lane"] + [n for n, _, _ in loops])
    instruction = hardware.instruction(str(instr.children[0]))
    access = Access(
        str(name),
        instruction,
        str(layout),
        [compile_expr(c, scope) for c in rest],
        loops,
        where(name),
        load=str(instr.children[0]).split(".")[0] == "ld",
    )
    if (source is None) != (not instruction.copy):
        raise OracleRefusal(
            f"{where(name)}: a cp.async names its global source ('from G(...)'), "
            "and only a cp.async does"
        )
    if source is not None:
        g, *coords = source.children
        access.source_layout = str(g)
        access.source_coords = [compile_expr(c, scope) for c in coords]
    spec.accesses[str(name)] = access


def _mapped_access_stmt(spec: Spec, tree: Tree, text: str):
    name, thread_map = tree.children[0], tree.children[-1]
    if isinstance(thread_map, Tree) and isinstance(thread_map.children[0], Token):
        _encoding_text(thread_map.children[0], spec)  # an '#alias' must be defined
    if str(name) in spec.accesses or str(name) in spec.unread_accesses:
        raise OracleRefusal(f"{where(name)}: access '{name}' is defined twice")
    spec.unread_accesses.add(str(name))


def _global_stmt(spec: Spec, tree: Tree, text: str):
    """``global align N``: every cp.async's global tile starts at a multiple of N
    (a power of two; each copy's size must divide it, checked by the facts)."""
    spec.global_align = integer(leaf(tree.children[-1]))
    if spec.global_align < 1 or spec.global_align & (spec.global_align - 1):
        raise OracleRefusal(
            f"{where(tree)}: global align {spec.global_align} is not a power of two"
        )


def _check_stmt(spec: Spec, tree: Tree, text: str):
    prop = tree.children[0]
    words = " ".join(text[tree.meta.start_pos : tree.meta.end_pos].split())
    words = words.removeprefix("check").strip()
    check = Check(
        prop.data, words.split(" expect ")[0] if " expect " in words else words, at=where(tree)
    )
    kids = prop.children
    if prop.data == "equivalent_exprs":
        lhs, rhs, loops = kids
        check.loops = read_ranges(loops.children, spec)
        scope = Scope(spec.layouts, [n for n, _, _ in check.loops])
        check.sides = (compile_expr(lhs, scope), compile_expr(rhs, scope))
    elif prop.data == "equivalent_layouts":
        check.target, check.second = str(kids[0]), str(kids[1])
    else:
        check.target = str(kids[-1])
        if prop.data in ("max_ways", "wavefronts"):
            check.exact, check.bound = str(kids[0]) == "==", integer(leaf(kids[1]))
        elif prop.data == "aligned":
            check.bound = integer(leaf(kids[0]))
    spec.checks.append(check)


def _encoding_alias_stmt(spec: Spec, tree: Tree, text: str):
    """``#name = #ttg.<...>`` (or ``= #ttg.shared_memory``): MLIR's attribute alias."""
    head, value = tree.children
    name = memdesc.alias_name(str(head))
    if name in spec.aliases:
        raise OracleRefusal(f"{where(head)}: alias '{name}' is defined twice")
    spec.aliases[name] = str(value)


def _encoding_text(tok: Token, spec: Spec) -> str:
    """A Triton encoding as written, or what its '#alias' names."""
    if tok.type != "ENCODING_REF":
        return str(tok)
    return memdesc.resolve(str(tok), spec.aliases, where(tok))


_STATEMENTS = {
    "dtype_stmt": _dtype,
    "buffer_stmt": _buffer,
    "encoding_alias_stmt": _encoding_alias_stmt,
    "cute_layout_stmt": _cute_layout_stmt,
    "formula_layout_stmt": _formula_layout_stmt,
    "access_stmt": _access_stmt,
    "mapped_access_stmt": _mapped_access_stmt,
    "check_stmt": _check_stmt,
    "global_stmt": _global_stmt,
}


def read_ranges(params, spec: Spec) -> Loops:
    """``v in lo..hi, ...``: distinct names, not 'lane', non-empty constant ranges."""
    out, seen = [], set()
    for p in params:
        name, lo, hi = p.children
        lo, hi = constant(lo, Scope(spec.layouts)), constant(hi, Scope(spec.layouts))
        if str(name) in seen or str(name) == "lane" or lo >= hi:
            raise OracleRefusal(
                f"{where(name)}: '{name}' is bound twice, is 'lane', or its "
                f"range {lo}..{hi} is empty"
            )
        seen.add(str(name))
        out.append((str(name), lo, hi))
    return out


def formula_layout(ranges: Loops, body, at: str) -> Layout:
    """A formula's table over its domain, coordinates colexicographic with lower bounds."""
    sizes = [hi - lo for _, lo, hi in ranges]
    total = int(np.prod(sizes, dtype=object))
    if total > LIMIT.value:
        raise OracleRefusal(
            f"{at}: the formula's domain has {total} points, more than the limit {LIMIT.value}"
        )
    index, env, scale = np.arange(total, dtype=np.int64), {}, 1
    for (name, lo, _), n in zip(ranges, sizes):
        env[name] = lo + (index // scale) % n
        scale *= n
    values = np.broadcast_to(body(env), (total,))
    inner = Inner(
        tuple(lo for _, lo, _ in ranges), tuple(sizes), None, np.asarray(values), f"formula at {at}"
    )
    return Layout(inner)


# -- layout terms ----------------------------------------------------------------------


def int_tuple(tree):
    """An int_tuple node as nested Python tuples of ints."""
    if isinstance(tree, Tree) and tree.data == "int_lit":
        return integer(leaf(tree.children[0]))
    return tuple(int_tuple(c) for c in tree.children)


def read_composition(tree: Tree, spec: Spec) -> Layout:
    """A ``composition`` node: ``t_0 o ... o t_n`` (see module doc)."""
    terms = [_term(t, spec) for t in tree.children]
    pointer = None
    kinds = [k for k, _ in terms]
    if "ptr" in kinds:
        if kinds.index("ptr") != 1 or kinds.count("ptr") > 1 or kinds[0] != "swizzle":
            raise OracleRefusal(f"{where(tree)}: expected 'Sw<B,M,S> o smem_ptr[Nb] o LAYOUT'")
        params, element_bytes = terms[0][1], terms[1][1]
        assert isinstance(params, tuple) and isinstance(element_bytes, int), "see _term"
        pointer = PointerSwizzle(params, element_bytes)
        terms = terms[2:]
    *outers, (kind, inner) = terms
    if kind == "cute":
        layout = Layout(Inner.of_cute(inner))
    elif kind == "layout":
        assert isinstance(inner, Layout), "_term's layouts are Layouts"
        layout = inner
    else:
        raise OracleRefusal(f"{where(tree)}: the right-most term must be a layout")
    layout = _apply_outers(layout, outers, where(tree))
    if pointer is not None:
        if layout.pointer is not None:
            raise OracleRefusal(f"{where(tree)}: two pointer swizzles")
        layout = Layout(
            layout.inner, layout.outers, pointer, layout.required_align, layout.named_bytes
        )
    return layout


def _apply_outers(layout: Layout, outers: list, at: str) -> Layout:
    offset = 0
    for kind, value in reversed(outers):
        if kind == "int":
            offset += value
            continue
        if kind == "swizzle":
            layout = layout.then(offset, cute.swizzle(*value))
        elif kind == "cute":
            layout = layout.then(offset, cute_outer(value))
        elif kind == "layout":
            layout = layout.under(offset, value)
        else:
            raise OracleRefusal(f"{at}: smem_ptr must follow the left-most swizzle")
        offset = 0
    if offset:
        raise OracleRefusal(f"{at}: an offset must sit between two layouts ('A o OFFSET o B')")
    return layout


def _term(tree, spec: Spec) -> tuple[str, object]:
    if isinstance(tree, Token):  # SMEM_PTR, e.g. smem_ptr[16b](unset)
        bits = int(str(tree).split("[")[1].split("b")[0])
        if bits < 8 or bits % 8:
            raise OracleRefusal(f"{where(tree)}: smem_ptr[{bits}b]: expected whole bytes")
        return "ptr", bits // 8
    kind = tree.data
    if kind == "swizzle":
        params = swizzle_params(tree)
        cute.swizzle(*params)  # refuses invalid parameters here
        return "swizzle", params
    if kind == "cute_layout":
        return "cute", cute.make_layout(int_tuple(tree.children[0]), int_tuple(tree.children[1]))
    if kind == "int_lit":
        return "int", integer(tree.children[0])
    return "layout", _BUILDERS[kind](tree, spec)


# -- whole layouts ------------------------------------------------------------------


def _layout_ref(tree: Tree, spec: Spec) -> Layout:
    return Scope(spec.layouts).layout(str(tree.children[0]), where(tree.children[0]))


def _tile_to_shape(tree: Tree, spec: Spec) -> Layout:
    atom_tree, shape, *order = tree.children
    atom = read_composition(atom_tree, spec)
    if atom.inner.cute_layout is None:
        raise OracleRefusal(
            f"{where(tree)}: tile_to_shape of a layout whose inner layout is "
            "not a CuTe layout (a formula or Triton encoding) is not CuTe"
        )
    tiled = cute.tile_to_shape(
        atom.inner.cute_layout, int_tuple(shape), int_tuple(order[0]) if order else None
    )
    return Layout(
        Inner.of_cute(tiled), atom.outers, atom.pointer, atom.required_align, atom.named_bytes
    )


def _composition_call(tree: Tree, spec: Spec) -> Layout:
    a, b = (read_composition(t, spec) for t in tree.children)
    if a.inner.cute_layout is not None and b.is_plain_cute:
        inner = cute.compose(a.inner.cute_layout, b.inner.cute_layout)
        return Layout(
            Inner.of_cute(inner),
            a.outers,
            a.pointer,
            max(a.required_align, b.required_align),
            a.named_bytes or b.named_bytes,
        )
    return b.under(0, a)


def _gmma_atom(tree: Tree, spec: Spec) -> Layout:
    tok, elem = tree.children
    major, mode = str(tok).removeprefix("GMMA::").split("_")[1:3]
    bits = _type_bits(leaf(elem), (8, 16, 32))
    b, layout = cute.gmma_atom(major, mode, bits)
    return Layout(
        Inner.of_cute(layout),
        (),
        PointerSwizzle((b, 4, 3), bits // 8),
        cute.byte_swizzle_alignment(b),
    )


def _tma_box(tree: Tree, spec: Spec) -> Layout:
    mode, elem, box = tree.children
    spans = {f"{p}SWIZZLE_{n}B": n for n in (32, 64, 128) for p in ("", "CU_TENSOR_MAP_")}
    if str(mode) not in spans:
        raise OracleRefusal(
            f"{where(mode)}: TMA swizzle mode {mode}: expected SWIZZLE_32B, "
            "SWIZZLE_64B or SWIZZLE_128B"
        )
    extents = int_tuple(box)
    if (
        isinstance(extents, int)
        or len(extents) != 2
        or not all(isinstance(x, int) for x in extents)
    ):
        raise OracleRefusal(f"{where(mode)}: TMA box: expected (inner, outer)")
    bits, span = _type_bits(leaf(elem), (8, 16, 32, 64)), spans[str(mode)]
    shape, stride = hardware.tma_box(span, bits, *extents)
    b = span.bit_length() - 5
    return Layout(
        Inner.of_cute(cute.make_layout(shape, stride)),
        (),
        PointerSwizzle((b, 4, 3), bits // 8),
        cute.byte_swizzle_alignment(b),
    )


def _triton_encoding(tree: Tree, spec: Spec) -> Layout:
    tok, shape = tree.children
    assert isinstance(tok, Token), "the grammar's TRITON_ENCODING or ENCODING_REF"
    extents = int_tuple(shape)
    extents = (extents,) if isinstance(extents, int) else extents
    return _encoded(_encoding_text(tok, spec), extents, where(tok))


def _memdesc(tree: Tree, spec: Spec) -> Layout:
    """``!ttg.memdesc<64x64xf16, #shared, #smem, mutable>``: its encoding on its shape."""
    tok = tree.children[0]
    shape, element, encoding = memdesc.read(str(tok), spec.aliases, where(tok))
    spec.memdesc_types.append((element, where(tok)))
    return _encoded(encoding, shape, where(tok))


def _encoded(text: str, extents: tuple, at: str) -> Layout:
    kind, fields = triton_encodings.parse(text)
    args = triton_encodings.validate(kind, fields, extents)
    if int(np.prod(extents)) > LIMIT.value:
        raise OracleRefusal(f"{at}: {kind} shape {extents} is beyond the limit")
    table = triton_encodings.offsets(args, tuple(extents))
    inner = Inner((0,) * len(extents), tuple(extents), None, table, f"{kind} {extents}")
    named = fields["elementBitWidth"] // 8 if kind == "nvmma_shared" else None
    return Layout(inner, (), None, triton_encodings.required_alignment(kind, fields), named)


def _type_bits(tok: Token, allowed) -> int:
    bits = hardware.TYPE_BITS.get(str(tok))
    if bits is None or bits not in allowed:
        raise OracleRefusal(f"{where(tok)}: element type '{tok}' is not one of {allowed} bits")
    return bits


_BUILDERS = {
    "layout_ref": _layout_ref,
    "tile_to_shape": _tile_to_shape,
    "composition_call": _composition_call,
    "gmma_atom": _gmma_atom,
    "tma_box": _tma_box,
    "triton_encoding": _triton_encoding,
    "memdesc": _memdesc,
}
