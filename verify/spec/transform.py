"""Spec text -> `Spec` (see README, "The spec language").

Parsing is LALR(1) with lark; every error becomes a `SpecError` that names the
line and column, what was expected and what was found. Input is bounded before
it reaches the parser (file size, statement length, nesting), so hostile input
fails fast instead of exhausting time, memory or the Python stack.

Every error of a file is reported, not only the first, as compilers do: the text
is cut into statements (a newline outside parentheses ends one), each statement
is parsed on its own and its first error kept, then names are resolved
(`verify.spec.resolve`). An error that only follows from an earlier one (a use
of a layout whose definition failed) is not repeated.
"""

from __future__ import annotations

import builtins
import hashlib
import os
import re
import sys
from dataclasses import dataclass, replace
from importlib import resources

import lark
from lark import Token, Transformer, v_args

from verify.errors import Pos, SpecError, SpecErrors
from verify.model.dtypes import DTYPE_BYTES
from verify.model.expr import BinOp, Const, Expr, Range, Var, evaluate, free_vars
from verify.model.layout import Composed, CuteLayout, Formula, Swizzle, depth, flatten, fmt_tuple
from verify.notation import cute, cute_tv, threads, triton, ttgir_types
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
from verify.spec.names import canonical_dtype, did_you_mean, unknown_dtype_message
from verify.spec.resolve import first_var, resolution_errors

MAX_SPEC_BYTES = 1 << 20
MAX_TOKENS_PER_STATEMENT = 512
MAX_NESTING = 32
MAX_LITERAL = 1 << 64

_FRIENDLY = {
    "NAME": "a name",
    "INT": "an integer",
    "DOTTED": "an instruction name",
    "_NL": "end of line",
    "$END": "end of file",
    "SMEM_PTR": "smem_ptr[Nb]",
    "SWIZZLE": "Sw<B,M,S>",
    "CMP": "'<=' or '=='",
    "VERDICT": "'proved' or 'refuted'",
    "_COMPOSE": "'o'",
    "MINUS": "'-'",
    "GMMA_ATOM": "Layout_K_SW128_Atom",
    "TRITON_ENCODING": "#ttg.<encoding><{...}>",
}


class _LineAwareLexer:
    """Post-lexer: newlines inside parentheses do not end a statement, and
    statements and nesting are bounded."""

    always_accept = ("_NL",)

    def process(self, stream):
        nesting, count = 0, 0
        for tok in stream:
            if tok.type in ("LPAR", "LSQB"):
                nesting += 1
                if nesting > MAX_NESTING:
                    raise SpecError(
                        f"expected at most {MAX_NESTING} nested parentheses, found more", _pos(tok)
                    )
            elif tok.type in ("RPAR", "RSQB"):
                nesting = max(0, nesting - 1)
            if tok.type == "_NL":
                if nesting:
                    continue
                count = 0
            else:
                count += 1
                if count > MAX_TOKENS_PER_STATEMENT:
                    raise SpecError(
                        f"statement too long: expected at most {MAX_TOKENS_PER_STATEMENT} tokens",
                        _pos(tok),
                    )
            yield tok


def _pos(tok) -> Pos:
    return Pos(getattr(tok, "line", 0) or 0, getattr(tok, "column", 0) or 0)


def _int(tok: Token) -> int:
    text = str(tok).lstrip("_")
    value = int(text, 16) if text[:2].lower() == "0x" else int(text)
    if value >= MAX_LITERAL:
        raise SpecError(f"integer literal {text} is too large: expected less than 2^64", _pos(tok))
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


class _ToSpec(Transformer):
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
                raise _FollowOn(f"'{text}' is not defined", _pos(tok))
            raise SpecError(
                f"unknown encoding alias '{text}': expected one defined above, as "
                f"'{text} = #ttg.swizzled_shared<{{...}}>'"
                f"{did_you_mean(text, self.aliases)}",
                _pos(tok),
            )
        return self.aliases[text]

    def known_layout(self, tok: Token) -> LayoutDef:
        ldef = self.spec.layouts.get(str(tok))
        if ldef is not None:
            return ldef
        if str(tok) in self.failed:
            raise _FollowOn(f"layout '{tok}' is not defined", _pos(tok))
        raise SpecError(
            f"unknown layout '{tok}': expected one defined above"
            f"{did_you_mean(str(tok), self.spec.layouts)}",
            _pos(tok),
        )

    def num(self, children):
        return Const(_int(children[0]), _pos(children[0]))

    def var(self, children):
        return Var(str(children[0]), _pos(children[0]))

    def int_lit(self, children):
        return (_int(children[0]), _pos(children[0]))

    def signed(self, children):
        value = _int(children[-1])
        return -value if len(children) == 2 else value

    def swizzle(self, children):
        tok, b, m, s = children
        try:
            return (Swizzle(b, m, s), _pos(tok))
        except SpecError as e:
            raise SpecError(e.message, _pos(tok)) from None

    def swizzle_call(self, children):
        (sw, _), arg = children
        return sw.apply_expr(arg)

    def layout_call(self, children):
        name, *args = children
        ldef = self.known_layout(name)
        try:
            return ldef.value(list(args))
        except SpecError as e:
            raise SpecError(e.message, _pos(name)) from None

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
                    (str(term).split("(")[0], _pointer_bits(term), _pos(term))
                )
        return children

    # layout builders: each gives a whole (anonymous) layout ---------------------

    def layout_ref(self, children):
        tok = children[0]
        return (self.known_layout(tok), _pos(tok))

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
        pos = a[-1][1] if isinstance(a[-1], tuple) else _pos(a[-1])
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
        swizzle, bits, layout = cute.gmma_atom(str(tok), str(elem), _pos(tok))
        self.element_widths.append((f"{tok}<{elem}>", bits, _pos(tok)))
        return (
            LayoutDef("", layout, _pos(tok), swizzle, bits, cute.required_alignment(swizzle)),
            _pos(tok),
        )

    def tma_box(self, children):
        mode, elem, (box, pos) = children
        swizzle, bits, layout = cute.tma_box(str(mode), str(elem), box, _pos(mode))
        self.element_widths.append((f"tma box of {elem}", bits, _pos(elem)))
        return (
            LayoutDef("", layout, _pos(mode), swizzle, bits, cute.required_alignment(swizzle)),
            _pos(mode),
        )

    def encoding_alias_stmt(self, children):
        head, value = children
        name = str(head).rstrip("= \t")
        if name in self.aliases:
            raise SpecError(f"encoding alias '{name}' is defined twice", _pos(head))
        self.aliases[name] = str(value)

    def memdesc(self, children):
        """``!ttg.memdesc<64x64xf16, #shared, #smem, mutable>``: the buffer's shape,
        element type (checked against the dtype) and encoding."""
        tok = children[0]
        pos = _pos(tok)
        shape, element, encoding = ttgir_types.read_memdesc(str(tok), self.aliases, pos)
        self.memdesc_types.append((element, pos))
        return self._encoded_layout(encoding, shape, pos)

    def triton_encoding(self, children):
        tok, (shape, _) = children
        shape = (shape,) if isinstance(shape, int) else shape
        if any(not isinstance(n, int) for n in shape):
            raise SpecError(
                f"shape of a Triton encoding: expected flat extents, found {shape}", _pos(tok)
            )
        return self._encoded_layout(self.encoding_text(tok), shape, _pos(tok))

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

    def triton_threads(self, children):
        tok, (shape, _) = children
        shape = (shape,) if isinstance(shape, int) else shape
        if any(not isinstance(n, int) for n in shape):
            raise SpecError(
                f"shape of a Triton encoding: expected flat extents, found {shape}", _pos(tok)
            )
        return threads.TritonThreads.read(self.encoding_text(tok), shape, _pos(tok), parse_expr)

    def cute_threads(self, children):
        (tv, pos), *tile = children
        return cute_tv.CuteThreads.read(tv, tile[0][0] if tile else None, pos)

    def mapped_access_stmt(self, children):
        name, instr, layout, thread_map = children
        if str(name) in self.spec.accesses:
            raise SpecError(f"access '{name}' is defined twice", _pos(name))
        self.spec.accesses[str(name)] = MappedAccessDef(
            str(name),
            str(instr),
            str(layout),
            (),
            (),
            _pos(name),
            instr_pos=_pos(instr),
            layout_pos=_pos(layout),
            threads=thread_map,
        )

    def param(self, children):
        name, lo, hi = children
        r = Range(_constant(lo), _constant(hi))
        if r.size <= 0:
            raise SpecError(
                f"range of '{name}' is empty: expected lo..hi with lo < hi, found {r}", _pos(name)
            )
        return (str(name), r, _pos(name))

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
            raise SpecError(unknown_dtype_message(name), _pos(children[0]))
        self.spec.dtype, self.spec.dtype_pos = dtype, _pos(children[0])

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
        self._define(_layout_from_terms(str(name), terms, _pos(name)))

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
                unknown.pos if unknown.pos.line else _pos(name),
            )
        self._define(LayoutDef(str(name), Formula(ranges, body), _pos(name)))

    def unknown_layout_stmt(self, children):
        """``layout L = ?(R, C)``: the layout `verify synth` finds. A row-major
        stand-in resolves names; the unknown itself is kept in `unknown_layouts`."""
        name, rows, cols = children
        extents = (_int(rows), _int(cols))
        if min(extents) < 1:
            raise SpecError(
                f"unknown layout ?{extents}: expected extents of at least 1", _pos(rows)
            )
        if self.spec.unknown_layouts:
            raise SpecError(
                "a spec may leave one layout unknown: expected a single 'layout NAME = ?(R, C)'",
                _pos(name),
            )
        self._define(LayoutDef(str(name), CuteLayout(extents, (extents[1], 1)), _pos(name)))
        self.spec.unknown_layouts[str(name)] = UnknownLayout(str(name), *extents, _pos(name))

    def _define(self, ldef: LayoutDef):
        if ldef.name in self.spec.layouts:
            raise SpecError(f"layout '{ldef.name}' is defined twice", ldef.pos)
        self.spec.layouts[ldef.name] = ldef

    def weight(self, children):
        value = _int(children[0])
        if value < 1:
            raise SpecError(
                f"weight: expected a positive integer, found {value}", _pos(children[0])
            )
        return _Weight(value)

    def access_stmt(self, children):
        name, instr, layout, *rest = children
        weight = rest.pop().value if rest and isinstance(rest[-1], _Weight) else 1
        loops = rest.pop() if rest and isinstance(rest[-1], tuple) else ()
        source = rest.pop() if rest and isinstance(rest[-1], SourceDef) else None
        if str(name) in self.spec.accesses:
            raise SpecError(f"access '{name}' is defined twice", _pos(name))
        self.spec.accesses[str(name)] = AccessDef(
            str(name),
            str(instr),
            str(layout),
            tuple(rest),
            loops,
            _pos(name),
            _pos(instr),
            _pos(layout),
            weight,
            source,
        )

    def copy_source(self, children):
        layout, *coords = children
        return SourceDef(str(layout), tuple(coords), _pos(layout))

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
    setattr(_ToSpec, _name, _binop(_op))


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


def _element_width_errors(spec: Spec, widths: list[tuple[str, int, Pos]]) -> list[SpecError]:
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
                _pos(terms[i]),
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


def _lark(start: str, **options) -> lark.Lark:
    """The grammar's LALR parser from `start`. Analysing the grammar costs about
    0.1 s of CPU on every start and loading lark's saved analysis 0.01 s
    (benchmarks/results/startup.md), so the analysis is kept in the user's cache,
    one file per grammar, lark and Python version; lark checks that key again on
    reading and analyses afresh when a file is stale, torn or unreadable."""
    grammar = resources.files("verify.spec").joinpath("grammar.lark").read_text()
    options.update(parser="lalr", start=start, propagate_positions=True, maybe_placeholders=False)
    return lark.Lark(grammar, cache=_cache_file(grammar, start) or False, **options)


def _cache_file(grammar: str, start: str) -> str | None:
    """Where the analysis of `grammar` from `start` is kept; None when the cache
    directory cannot be made (a read-only home): then it is analysed every time."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = os.path.join(base, "verify", "grammar")
    key = f"{grammar}{start}{lark.__version__}{sys.version_info[:2]}"
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return None
    return os.path.join(directory, hashlib.sha256(key.encode()).hexdigest()[:20] + ".lark")


_PARSER = None


def _parser() -> lark.Lark:
    global _PARSER
    if _PARSER is None:
        _PARSER = _lark("start", lexer="contextual", postlex=_LineAwareLexer())
    return _PARSER


_EXPR_PARSER = None


def parse_expr(text: str, pos: Pos = Pos()) -> Expr:
    """One expression of the spec language, such as a coordinate a thread map
    generates (`verify.notation.threads`); an error is located at `pos`."""
    global _EXPR_PARSER
    if _EXPR_PARSER is None:
        _EXPR_PARSER = _lark("expr")
    try:
        return _ToSpec("<expr>", text).transform(_EXPR_PARSER.parse(text))
    except (lark.exceptions.UnexpectedInput, lark.exceptions.VisitError) as e:
        raise SpecError(f"cannot read the expression {text!r}: {e}", pos) from None


# TTGIR as pasted ('#shared = ...', '#shared', '!ttg.memdesc<...>') is accepted where
# it fits but not offered in "expected ..." lists: they name the spec language's own forms.
_UNLISTED = {"ENCODING_ALIAS", "ENCODING_REF", "MEMDESC", "SHARED_MEMORY"}


def _describe_expected(expected) -> str:
    names = []
    for term in sorted(set(expected) - _UNLISTED):
        if term in _FRIENDLY:
            names.append(_FRIENDLY[term])
            continue
        try:
            pattern = _parser().get_terminal(term).pattern
            names.append(f"'{pattern.value}'" if pattern.type == "str" else term)
        except KeyError:
            names.append(term)
    names = sorted(set(names))
    return names[0] if len(names) == 1 else "one of " + ", ".join(names)


def _syntax_error(err: lark.exceptions.UnexpectedInput) -> SpecError:
    pos = Pos(getattr(err, "line", 0) or 0, getattr(err, "column", 0) or 0)
    if isinstance(err, lark.exceptions.UnexpectedCharacters):
        return SpecError(f"unexpected character {err.char!r}", pos)
    if isinstance(err, lark.exceptions.UnexpectedToken):
        tok = err.token
        found = (
            "end of line"
            if tok.type == "_NL"
            else ("end of file" if tok.type == "$END" else repr(str(tok)))
        )
        return SpecError(
            f"expected {_describe_expected(err.expected)}, found {found}"
            f"{_keyword_hint(tok, err.expected)}",
            pos,
        )
    assert isinstance(err, lark.exceptions.UnexpectedEOF), f"lark raised {type(err).__name__}"
    return SpecError(f"unexpected end of file; expected {_describe_expected(err.expected)}", pos)


def _keyword_hint(tok: Token, expected) -> str:
    """'did you mean' for a misspelt keyword: a statement, property or verdict."""
    if tok.type not in ("NAME", "DOTTED"):
        return ""
    words = []
    for term in expected:
        try:
            pattern = _parser().get_terminal(term).pattern
        except KeyError:
            continue
        if pattern.type == "str" and pattern.value.isidentifier():
            words.append(pattern.value)
        alternatives = re.fullmatch(r"\(\?:([\w|]+)\)", pattern.value)
        if pattern.type == "re" and alternatives:
            words += alternatives.group(1).split("|")
    return did_you_mean(str(tok), words)


class _FollowOn(SpecError):
    """An error caused by an earlier one (a use of a layout whose definition
    failed): not reported again."""


# Comments, and what starts with '#' but is not one: Triton encodings, and the head
# of a TTGIR alias line ('#shared =', at the start of a line).
_ALIAS_HEAD = r"(?m:^[\t ]*#[A-Za-z_][A-Za-z0-9_]*[\t ]*=)"
_COMMENT_OR_ENCODING = (
    _ALIAS_HEAD + r"|#(?:ttg|triton_gpu)\.[A-Za-z_]+<(?:[^<>\n]|"
    r"<(?:[^<>\n]|<[^<>\n]*>)*>)*>|#ttg\.shared_memory|#[^\n]*"
)
_STATEMENT_BREAKS = re.compile(_COMMENT_OR_ENCODING + r"|[()\[\]\n]")
_DEFINES = re.compile(
    r"[\t ]*(?:(?:layout|access)[\t ]+(?P<name>[A-Za-z][A-Za-z0-9_]*)|"
    r"(?P<alias>#[A-Za-z_][A-Za-z0-9_]*)[\t ]*=)"
)


def _statements(text: str):
    """(first line, offset, text) of each statement: a newline outside
    parentheses and brackets ends one, as the post-lexer reads it. Each starts at
    the beginning of its line, so columns need no shifting."""
    depth, line, start, start_line = 0, 1, 0, 1
    for m in _STATEMENT_BREAKS.finditer(text):
        c = m.group()
        if c in "([":
            depth += 1
        elif c in ")]":
            depth = max(0, depth - 1)
        elif c == "\n":
            line += 1
            if depth == 0:
                yield start_line, start, text[start : m.end()]
                start, start_line = m.end(), line
    yield start_line, start, text[start:]


def statement_texts(text: str) -> list[tuple[int, str]]:
    """(first line, text) of each statement that is not blank, as the parser cuts
    them (for tools that rewrite a spec statement by statement)."""
    return [(line, chunk) for line, _, chunk in _statements(text) if not _is_blank(chunk)]


def _is_blank(chunk: str) -> bool:
    """Only whitespace and comments (a Triton encoding is not a comment)."""
    kept = ("#ttg", "#triton_gpu")
    return not re.sub(
        _COMMENT_OR_ENCODING,
        lambda m: (
            m.group()
            if m.group().lstrip().startswith(kept) or re.fullmatch(_ALIAS_HEAD, m.group())
            else ""
        ),
        chunk,
    ).strip()


def _shift(tree: lark.Tree, lines: int, chars: int):
    """Positions of a statement parsed alone, moved to where it sits in the file."""
    for sub in tree.iter_subtrees():
        if not sub.meta.empty:
            sub.meta.line += lines
            sub.meta.end_line += lines
            sub.meta.start_pos += chars
            sub.meta.end_pos += chars
        for tok in sub.children:
            if isinstance(tok, Token) and tok.line is not None:
                assert tok.end_line is not None and tok.start_pos is not None, "lark places it"
                assert tok.end_pos is not None, "a placed token has its end"
                tok.line += lines
                tok.end_line += lines
                tok.start_pos += chars
                tok.end_pos += chars


def _shifted(error: SpecError, first_line: int, chunk: str) -> SpecError:
    """A parse error of a statement parsed alone, at its place in the file; one
    without a position (the statement ended early) points past its last character."""
    if error.pos.line:
        return SpecError(error.message, Pos(error.pos.line + first_line - 1, error.pos.col))
    lines = chunk.rstrip().split("\n")
    return SpecError(error.message, Pos(first_line + len(lines) - 1, len(lines[-1]) + 1))


def _statement_error(
    transformer: _ToSpec, first_line: int, offset: int, chunk: str
) -> SpecError | None:
    """Parse and apply one statement; its first error, if any."""
    widths = len(transformer.element_widths)
    try:
        tree = _parser().parse(chunk if chunk.endswith("\n") else chunk + "\n")
        _shift(tree, first_line - 1, offset)
        transformer.transform(tree)
        return None
    except lark.exceptions.VisitError as e:
        if not isinstance(e.orig_exc, SpecError):
            raise
        error = e.orig_exc
    except lark.exceptions.UnexpectedInput as e:
        error = _shifted(_syntax_error(e), first_line, chunk)
    except SpecError as e:  # from the post-lexer, inside the statement
        error = _shifted(e, first_line, chunk)
    del transformer.element_widths[widths:]  # a failed layout names no width
    defined = _DEFINES.match(chunk)
    if defined:
        transformer.failed.add(defined["name"] or defined["alias"])
    return error


def _check_input(text: str):
    if len(text) > MAX_SPEC_BYTES:
        raise SpecError(
            f"spec is {len(text)} characters long: expected at most {MAX_SPEC_BYTES}", Pos(1, 1)
        )
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise SpecError("expected text, found a NUL byte", Pos(line, 1))


def parse_text(text: str, file: str = "<input>") -> Spec:
    """Parse spec text and resolve its names. Raises a SpecError with file, line,
    column and the source line; a `SpecErrors` when there are several."""
    try:
        _check_input(text)
    except SpecError as e:
        raise e.located(file) from None
    transformer = _ToSpec(file, text)
    errors = []
    for first_line, offset, chunk in _statements(text):
        if _is_blank(chunk):
            continue
        error = _statement_error(transformer, first_line, offset, chunk)
        if error is not None and not isinstance(error, _FollowOn):
            errors.append(error)
    spec = transformer.spec
    errors += ttgir_types.element_type_errors(spec, transformer.memdesc_types)
    errors += _element_width_errors(spec, transformer.element_widths)
    errors += resolution_errors(spec, text, transformer.failed, transformer.dtype_failed)
    if errors:
        errors = sorted(
            (e.located(file).with_source(text) for e in errors),
            key=lambda e: (e.pos.line, e.pos.col),
        )
        raise (errors[0] if len(errors) == 1 else SpecErrors(errors)) from None
    return spec


def parse_file(path: str) -> Spec:
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_SPEC_BYTES + 1)
    except OSError as e:
        raise SpecError(f"cannot read spec: {e.strerror}", file=path) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise SpecError(
            f"expected UTF-8 text, found byte 0x{raw[e.start]:02x}",
            Pos(line, e.start - raw.rfind(b"\n", 0, e.start)),
            path,
        ) from None
    return parse_text(text, path)
