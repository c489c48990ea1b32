"""A spec's parse tree -> `Spec`: the lark `Transformer` that builds layouts,
accesses and checks statement by statement (`verify.spec.parser` cuts the text
into statements and collects their errors), and `parse_expr` for one expression.
Every error is a located `SpecError`.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, replace

import lark
from lark import Token, Transformer, v_args

from verify.errors import Pos, SpecError
from verify.model.dtypes import DTYPE_BYTES
from verify.model.expr import BinOp, Const, Expr, Range, Var, evaluate, free_vars
from verify.model.layout import Composed, CuteLayout, Formula, Swizzle, depth, flatten, fmt_tuple
from verify.notation import cute, triton, ttgir_types
from verify.spec.ast import (
    AccessDef,
    Buffer,
    CheckDef,
    LayoutDef,
    MappedAccessDef,
    SourceDef,
    Spec,
    UnknownLayout,
)
from verify.spec.grammar import expr_parser, token_pos
from verify.spec.names import canonical_dtype, did_you_mean, unknown_dtype_message
from verify.spec.resolve import first_var

MAX_LITERAL = 1 << 64


class FollowOn(SpecError):
    """An error caused by an earlier one (a use of a layout whose definition
    failed): not reported again."""


def _int(tok: Token) -> int:
    text = str(tok).lstrip("_")
    value = int(text, 16) if text[:2].lower() == "0x" else int(text)
    if value >= MAX_LITERAL:
        raise SpecError(
            f"integer literal {text} is too large: expected less than 2^64", token_pos(tok)
        )
    return value


_BIN = {
    "bor": "|",
    "bxor": "^",
    "band": "&",
    "shl": "<<",
    "shr": ">>",
    "add": "+",
    "sub": "-",
    "mul": "*",
    "div": "/",
    "mod": "%",
}


def _binop(op: str):
    def build(self, meta, children):
        a, b = children[0], children[-1]
        return BinOp(op, a, b, Pos(meta.line, meta.column))

    return v_args(meta=True)(build)


class ToSpec(Transformer):
    """Bottom-up: expressions first, then statements in file order."""

    def __init__(self, file: str, source: str):
        super().__init__()
        self.spec = Spec(file)
        self.source = source
        self.element_widths: list[tuple[str, int, Pos]] = []  # (notation, bits, where)
        self.failed: set[str] = set()  # layouts and accesses whose definition failed
        self.dtype_failed = False
        self.aliases: dict[str, str] = {}  # TTGIR '#name = #ttg.<...>' lines: name -> text
        self.memdesc_types: list[tuple[str, Pos]] = []  # element types memdescs name

    def encoding_text(self, tok: Token) -> str:
        """A Triton encoding's text: as written, or what its '#alias' names."""
        text = str(tok)
        if tok.type != "ENCODING_REF":
            return text
        if text not in self.aliases:
            if text in self.failed:
                raise FollowOn(f"'{text}' is not defined", token_pos(tok))
            raise SpecError(
                f"unknown encoding alias '{text}': expected one defined above, as "
                f"'{text} = #ttg.swizzled_shared<{{...}}>'"
                f"{did_you_mean(text, self.aliases)}",
                token_pos(tok),
            )
        return self.aliases[text]

    def known_layout(self, tok: Token) -> LayoutDef:
        ldef = self.spec.layouts.get(str(tok))
        if ldef is not None:
            return ldef
        if str(tok) in self.failed:
            raise FollowOn(f"layout '{tok}' is not defined", token_pos(tok))
        raise SpecError(
            f"unknown layout '{tok}': expected one defined above"
            f"{did_you_mean(str(tok), self.spec.layouts)}",
            token_pos(tok),
        )

    def num(self, children):
        return Const(_int(children[0]), token_pos(children[0]))

    def var(self, children):
        return Var(str(children[0]), token_pos(children[0]))

    def int_lit(self, children):
        return (_int(children[0]), token_pos(children[0]))

    def signed(self, children):
        value = _int(children[-1])
        return -value if len(children) == 2 else value

    def swizzle(self, children):
        tok, b, m, s = children
        try:
            return (Swizzle(b, m, s), token_pos(tok))
        except SpecError as e:
            raise SpecError(e.message, token_pos(tok)) from None

    def swizzle_call(self, children):
        (sw, _), arg = children
        return sw.apply_expr(arg)

    def layout_call(self, children):
        name, *args = children
        ldef = self.known_layout(name)
        try:
            return ldef.value(list(args))
        except SpecError as e:
            raise SpecError(e.message, token_pos(name)) from None

    @v_args(meta=True)
    def tuple(self, meta, children):
        return (tuple(c[0] for c in children), Pos(meta.line, meta.column))

    def cute_layout(self, children):
        (shape, pos), (stride, _) = children
        _check_congruent(shape, stride, pos)
        return (CuteLayout(shape, stride), pos)

    def composition(self, children):
        for term in children:
            if isinstance(term, Token):  # smem_ptr[Nb]: the only bare token term
                self.element_widths.append(
                    (str(term).split("(")[0], _pointer_bits(term), token_pos(term))
                )
        return children

    # layout builders: each gives a whole (anonymous) layout ---------------------

    def layout_ref(self, children):
        tok = children[0]
        return (self.known_layout(tok), token_pos(tok))

    def tile_to_shape(self, children):
        terms, (shape, pos), *order = children
        atom = _layout_from_terms("", terms, pos)
        function = cute.tile_to_shape(atom.function, shape, order[0][0] if order else None, pos)
        return (replace(atom, function=function), pos)

    def composition_call(self, children):
        """CuTe's composition(A, B): for two shape:stride layouts the layout CuTe
        computes (which tile_to_shape then tiles as a whole); a swizzled A keeps its
        swizzle outermost and composes its inner layout with B."""
        a, b = children
        pos = a[-1][1] if isinstance(a[-1], tuple) else token_pos(a[-1])
        outer, inner = _layout_from_terms("", a, pos), _layout_from_terms("", b, pos)
        if inner.pointer_swizzle is not None:
            raise SpecError("composition(A, B): B swizzles byte addresses; expected it as A", pos)
        function = cute.composition(outer.function, inner.function, pos)
        return (
            replace(
                outer,
                function=function,
                required_align=max(outer.required_align, inner.required_align),
            ),
            pos,
        )

    def gmma_atom(self, children):
        tok, elem = children
        swizzle, bits, layout = cute.gmma_atom(str(tok), str(elem), token_pos(tok))
        self.element_widths.append((f"{tok}<{elem}>", bits, token_pos(tok)))
        return (
            LayoutDef("", layout, token_pos(tok), swizzle, bits, cute.required_alignment(swizzle)),
            token_pos(tok),
        )

    def tma_box(self, children):
        mode, elem, (box, pos) = children
        swizzle, bits, layout = cute.tma_box(str(mode), str(elem), box, token_pos(mode))
        self.element_widths.append((f"tma box of {elem}", bits, token_pos(elem)))
        return (
            LayoutDef("", layout, token_pos(mode), swizzle, bits, cute.required_alignment(swizzle)),
            token_pos(mode),
        )

    def encoding_alias_stmt(self, children):
        head, value = children
        name = str(head).rstrip("= \t")
        if name in self.aliases:
            raise SpecError(f"encoding alias '{name}' is defined twice", token_pos(head))
        self.aliases[name] = str(value)

    def memdesc(self, children):
        """``!ttg.memdesc<64x64xf16, #shared, #smem, mutable>``: the buffer's shape,
        element type (checked against the dtype) and encoding."""
        tok = children[0]
        pos = token_pos(tok)
        shape, element, encoding = ttgir_types.read_memdesc(str(tok), self.aliases, pos)
        self.memdesc_types.append((element, pos))
        return self._encoded_layout(encoding, shape, pos)

    def triton_encoding(self, children):
        tok, (shape, _) = children
        shape = (shape,) if isinstance(shape, int) else shape
        if any(not isinstance(n, int) for n in shape):
            raise SpecError(
                f"shape of a Triton encoding: expected flat extents, found {shape}", token_pos(tok)
            )
        return self._encoded_layout(self.encoding_text(tok), shape, token_pos(tok))

    def _encoded_layout(self, text: str, shape: builtins.tuple[int, ...], pos: Pos):
        encoding = triton.parse_encoding(text, pos)
        if "elementBitWidth" in encoding.fields:
            self.element_widths.append(
                (
                    f"#ttg.{encoding.kind} with elementBitWidth = "
                    f"{encoding.fields['elementBitWidth']}",
                    encoding.fields["elementBitWidth"],
                    pos,
                )
            )
        return (
            LayoutDef(
                "",
                triton.layout(encoding, shape, pos),
                pos,
                required_align=triton.required_alignment(encoding),
            ),
            pos,
        )

    # accesses by a thread map (verify.notation.threads) ---------------------------
    # Thread maps bring Triton's lowering rules: imported by the specs that use them.

    def triton_threads(self, children):
        from verify.notation import threads

        tok, (shape, _) = children
        shape = (shape,) if isinstance(shape, int) else shape
        if any(not isinstance(n, int) for n in shape):
            raise SpecError(
                f"shape of a Triton encoding: expected flat extents, found {shape}", token_pos(tok)
            )
        return threads.TritonThreads.read(
            self.encoding_text(tok), shape, token_pos(tok), parse_expr
        )

    def cute_threads(self, children):
        from verify.notation import cute_tv

        (tv, pos), *tile = children
        return cute_tv.CuteThreads.read(tv, tile[0][0] if tile else None, pos)

    def mapped_access_stmt(self, children):
        name, instr, layout, thread_map = children
        if str(name) in self.spec.accesses:
            raise SpecError(f"access '{name}' is defined twice", token_pos(name))
        self.spec.accesses[str(name)] = MappedAccessDef(
            str(name),
            str(instr),
            str(layout),
            (),
            (),
            token_pos(name),
            instr_pos=token_pos(instr),
            layout_pos=token_pos(layout),
            threads=thread_map,
        )

    def param(self, children):
        name, lo, hi = children
        r = Range(_constant(lo), _constant(hi))
        if r.size <= 0:
            raise SpecError(
                f"range of '{name}' is empty: expected lo..hi with lo < hi, found {r}",
                token_pos(name),
            )
        return (str(name), r, token_pos(name))

    def for_clause(self, children):
        _no_duplicates(children)
        return tuple((n, r) for n, r, _ in children)

    def instr(self, children):
        return children[0]

    def expect(self, children):
        return str(children[0])

    # statements -------------------------------------------------------------

    @v_args(meta=True)
    def dtype_stmt(self, meta, children):
        name = str(children[0])
        dtype = canonical_dtype(name)
        if dtype is None:
            self.dtype_failed = True
            raise SpecError(unknown_dtype_message(name), token_pos(children[0]))
        self.spec.dtype, self.spec.dtype_pos = dtype, token_pos(children[0])

    @v_args(meta=True)
    def buffer_stmt(self, meta, children):
        opts = {}
        for kw, value in (c.children for c in children):
            opts[str(kw)] = _int(value)
        self.spec.buffer = Buffer(
            opts.get("align", 16),
            opts.get("stages", 1),
            opts.get("stage_bytes", 0),
            Pos(meta.line, meta.column),
        )

    def cute_layout_stmt(self, children):
        name, terms = children
        self._define(_layout_from_terms(str(name), terms, token_pos(name)))

    def formula_layout_stmt(self, children):
        name, *params, body = children
        _no_duplicates(params)
        ranges = tuple((n, r) for n, r, _ in params)
        coordinates = [n for n, _ in ranges]
        unknown = first_var(body, set(coordinates))
        if unknown is not None:
            raise SpecError(
                f"formula uses '{unknown.name}', expected only its coordinates "
                f"{coordinates}{did_you_mean(unknown.name, coordinates)}",
                unknown.pos if unknown.pos.line else token_pos(name),
            )
        self._define(LayoutDef(str(name), Formula(ranges, body), token_pos(name)))

    def unknown_layout_stmt(self, children):
        """``layout L = ?(R, C)``: the layout `verify synth` finds. A row-major
        stand-in resolves names; the unknown itself is kept in `unknown_layouts`."""
        name, rows, cols = children
        extents = (_int(rows), _int(cols))
        if min(extents) < 1:
            raise SpecError(
                f"unknown layout ?{extents}: expected extents of at least 1", token_pos(rows)
            )
        if self.spec.unknown_layouts:
            raise SpecError(
                "a spec may leave one layout unknown: expected a single 'layout NAME = ?(R, C)'",
                token_pos(name),
            )
        self._define(LayoutDef(str(name), CuteLayout(extents, (extents[1], 1)), token_pos(name)))
        self.spec.unknown_layouts[str(name)] = UnknownLayout(str(name), *extents, token_pos(name))

    def _define(self, ldef: LayoutDef):
        if ldef.name in self.spec.layouts:
            raise SpecError(f"layout '{ldef.name}' is defined twice", ldef.pos)
        self.spec.layouts[ldef.name] = ldef

    def weight(self, children):
        value = _int(children[0])
        if value < 1:
            raise SpecError(
                f"weight: expected a positive integer, found {value}", token_pos(children[0])
            )
        return _Weight(value)

    def access_stmt(self, children):
        name, instr, layout, *rest = children
        weight = rest.pop().value if rest and isinstance(rest[-1], _Weight) else 1
        loops = rest.pop() if rest and isinstance(rest[-1], tuple) else ()
        source = rest.pop() if rest and isinstance(rest[-1], SourceDef) else None
        if str(name) in self.spec.accesses:
            raise SpecError(f"access '{name}' is defined twice", token_pos(name))
        self.spec.accesses[str(name)] = AccessDef(
            str(name),
            str(instr),
            str(layout),
            tuple(rest),
            loops,
            token_pos(name),
            token_pos(instr),
            token_pos(layout),
            weight,
            source,
        )

    def copy_source(self, children):
        layout, *coords = children
        return SourceDef(str(layout), tuple(coords), token_pos(layout))

    @v_args(meta=True)
    def global_stmt(self, meta, children):
        _, value = children
        self.spec.global_align, self.spec.global_pos = _int(value), Pos(meta.line, meta.column)

    @v_args(meta=True)
    def check_stmt(self, meta, children):
        check, *expect = children
        self.spec.checks.append(
            CheckDef(
                **{
                    **check,
                    "expect": expect[0] if expect else None,
                    "pos": Pos(meta.line, meta.column),
                    "text": self._property_text(meta),
                }
            )
        )

    def _property_text(self, meta) -> str:
        """The property as written: the statement without 'check' and 'expect ...'."""
        words = " ".join(self.source[meta.start_pos : meta.end_pos].split())
        words = words.removeprefix("check").strip()
        return words.split(" expect ")[0] if " expect " in words else words

    def bijective(self, c):
        return {"kind": "bijective", "target": str(c[0])}

    def aligned(self, c):
        return {"kind": "aligned", "bound": _int(c[0]), "target": str(c[1])}

    def base_aligned(self, c):
        return {"kind": "base_aligned", "target": str(c[0])}

    def conflict_free(self, c):
        return {"kind": "max_ways", "bound": 1, "target": str(c[0])}

    def max_ways(self, c):
        return {
            "kind": "max_ways",
            "exact": str(c[0]) == "==",
            "bound": _int(c[1]),
            "target": str(c[2]),
        }

    def wavefronts(self, c):
        return {
            "kind": "wavefronts",
            "exact": str(c[0]) == "==",
            "bound": _int(c[1]),
            "target": str(c[2]),
        }

    def equivalent_layouts(self, c):
        return {"kind": "equivalent_layouts", "target": str(c[0]), "second": str(c[1])}

    def equivalent_exprs(self, c):
        return {"kind": "equivalent_exprs", "lhs": c[0], "rhs": c[1], "loops": c[2]}


for _name, _op in _BIN.items():
    setattr(ToSpec, _name, _binop(_op))


@dataclass(frozen=True)
class _Weight:
    """An access's ``weight N`` clause (told apart from its coordinates and loops)."""

    value: int


def _constant(e: Expr) -> int:
    if free_vars(e):
        raise SpecError(
            f"range bounds must be constant, found variable '{sorted(free_vars(e))[0]}'", e.pos
        )
    return evaluate(e, {})


def _no_duplicates(params):
    seen = set()
    for name, _, pos in params:
        if name in seen or name == "lane":
            raise SpecError(f"variable '{name}' is bound twice ('lane' is built in)", pos)
        seen.add(name)


def _check_congruent(shape, stride, pos: Pos):
    if depth(shape) > 8:
        raise SpecError(f"shape nests {depth(shape)} levels deep: expected at most 8", pos)
    same = isinstance(shape, int) == isinstance(stride, int) and (
        isinstance(shape, int) or len(shape) == len(stride)
    )
    if not same:
        raise SpecError(
            f"shape {fmt_tuple(shape)} and stride {fmt_tuple(stride)} are not congruent: "
            "expected the same nesting",
            pos,
        )
    if not isinstance(shape, int):
        for s, d in zip(shape, stride):
            _check_congruent(s, d, pos)
    if any(n <= 0 for n in flatten(shape)):
        raise SpecError(f"shape {shape}: expected every extent to be at least 1", pos)


def _pointer_bits(tok: Token) -> int:
    """N of ``smem_ptr[Nb]``."""
    return int(str(tok).split("[")[1].split("b")[0])


def element_width_errors(spec: Spec, widths: list[tuple[str, int, Pos]]) -> list[SpecError]:
    """Every notation that names an element width (nvmma elementBitWidth, a GMMA
    atom's <T>, a TMA box's T, smem_ptr[Nb]) must name the dtype's: otherwise its
    placement is computed for elements of another size. Refused where the layout
    is defined, whether or not a check uses it, and whichever statement comes first.
    (An unknown dtype is reported at the dtype statement.)"""
    if spec.dtype not in DTYPE_BYTES:
        return []
    dtype_bits = 8 * DTYPE_BYTES[spec.dtype]
    return [
        SpecError(
            f"{notation} stores {bits}-bit elements: expected {dtype_bits} "
            f"bits (dtype {spec.dtype}), found {bits}",
            pos,
        )
        for notation, bits, pos in widths
        if bits != dtype_bits
    ]


def _layout_from_terms(name: str, terms: list, pos: Pos) -> LayoutDef:
    """Build ``t0 o t1 o ... o tn`` right to left: tn is the domain.

    Terms are swizzles, shape:stride layouts, integer offsets, ``smem_ptr``
    markers and whole layouts (named ones, builders); a layout that swizzles byte
    addresses can only be the outermost term.
    """
    pointer_swizzle, pointer_bits = None, None
    ptr_at = [i for i, t in enumerate(terms) if isinstance(t, Token)]
    if ptr_at:
        i = ptr_at[0]
        if i != 1 or len(ptr_at) > 1 or not isinstance(terms[0][0], Swizzle):
            raise SpecError(
                "expected 'Sw<B,M,S> o smem_ptr[Nb] o LAYOUT' with the swizzle "
                "directly before one smem_ptr",
                token_pos(terms[i]),
            )
        pointer_swizzle = terms[0][0]
        pointer_bits = _pointer_bits(terms[1])
        terms = terms[2:]
    *outer_terms, (inner, inner_pos) = terms
    if isinstance(inner, CuteLayout):
        piece = LayoutDef(name, inner, inner_pos)
    elif isinstance(inner, LayoutDef):
        piece = inner
    else:
        raise SpecError(
            f"the right-most term of a layout must be shape:stride or a whole "
            f"layout, found {inner}",
            inner_pos,
        )
    offset = 0
    for term, tpos in reversed(outer_terms):
        if isinstance(term, int):
            offset += term
            continue
        piece = _compose(term, offset, piece, tpos)
        offset = 0
    if offset:
        raise SpecError("an offset must sit between two layouts: expected 'A o OFFSET o B'", pos)
    if pointer_swizzle is not None:
        if piece.pointer_swizzle is not None:
            raise SpecError(
                "this layout already swizzles byte addresses: expected one smem_ptr swizzle", pos
            )
        piece = replace(piece, pointer_swizzle=pointer_swizzle, pointer_bits=pointer_bits)
    return replace(piece, name=name, pos=pos)


def _compose(outer, offset: int, inner: LayoutDef, pos: Pos) -> LayoutDef:
    """outer o offset o inner, where outer is a swizzle, shape:stride or whole layout."""
    if inner.pointer_swizzle is not None:
        raise SpecError(
            "a layout that swizzles byte addresses (smem_ptr, a GMMA atom, a "
            "TMA box) must be the outermost term of a composition",
            pos,
        )
    if not isinstance(outer, LayoutDef):
        return replace(inner, function=Composed(outer, offset, inner.function))
    return LayoutDef(
        inner.name,
        Composed(outer.function, offset, inner.function),
        pos,
        outer.pointer_swizzle,
        outer.pointer_bits,
        max(outer.required_align, inner.required_align),
    )


def parse_expr(text: str, pos: Pos = Pos()) -> Expr:
    """One expression of the spec language, such as a coordinate a thread map
    generates (`verify.notation.threads`); an error is located at `pos`."""
    try:
        return ToSpec("<expr>", text).transform(expr_parser().parse(text))
    except (lark.exceptions.UnexpectedInput, lark.exceptions.VisitError) as e:
        raise SpecError(f"cannot read the expression {text!r}: {e}", pos) from None
