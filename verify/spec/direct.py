"""Spec statements a front end writes, read back without the parser.

A front end that generates a spec (`verify.ptx.specgen`) writes each statement
with a function here, which returns the statement's text and its reader: the
reader applies to a `Spec` exactly what `verify.spec.parser.parse_text` makes
of that text at that line -- the same objects at the same positions (lark's:
a token's line and column; a binary operation's, its left operand's first
character, its opening parenthesis when it is one). `read` builds a whole spec
from the readers and falls back to `parse_text` of the text whenever a line has
no reader (a statement edited since, or written outside the plain forms here:
a negative literal, a name the lexer reads as a keyword, deeper nesting than the
parser allows) or a name does not resolve, so every error is still the
parser's own. tests/spec/test_direct.py compares both readings.

Parsing a generated spec with lark cost a quarter of checking a Triton kernel
from its PTX (benchmarks/results/triton_hook.md); reading it here costs a small
part of that.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from importlib import resources

from verify.errors import Pos
from verify.model.expr import OPS, BinOp, Const, Expr, Range, Var, render
from verify.model.layout import Formula
from verify.spec.ast import AccessDef, Buffer, CheckDef, LayoutDef, SourceDef, Spec
from verify.spec.grammar import MAX_NESTING, MAX_TOKENS_PER_STATEMENT
from verify.spec.names import canonical_dtype

# A reader applies one statement to the spec, given the statement's line number.
Reader = Callable[[Spec, int], None]

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")  # grammar.lark's NAME
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_:]+)+")  # its DOTTED
_OTHER_TERMINALS = re.compile(r"(GMMA::)?Layout_(K|MN)_(INTER|SW32|SW64|SW128)_Atom|Swizzle|Sw")
MAX_LITERAL = 1 << 64  # verify.spec.transform's
MAX_SPEC_BYTES = 1 << 20  # verify.spec.parser's

_KEYWORDS: set[str] = set()


def keywords() -> set[str]:
    """The grammar's literal words ("for", "in", "o", ...): never read as a NAME."""
    if not _KEYWORDS:
        grammar = resources.files("verify.spec").joinpath("grammar.lark").read_text()
        _KEYWORDS.update(re.findall(r'"([A-Za-z_][A-Za-z0-9_]*)"', grammar))
        _KEYWORDS.update(("proved", "refuted"))  # VERDICT's alternatives
    return _KEYWORDS


def plain_name(name: str) -> bool:
    """The lexer reads `name` as a NAME in any statement."""
    return (
        _NAME.fullmatch(name) is not None
        and name not in keywords()
        and _OTHER_TERMINALS.fullmatch(name) is None
    )


def _plain_instruction(text: str) -> bool:
    return _DOTTED.fullmatch(text) is not None or plain_name(text)


def _depth(e: Expr) -> int:
    """Parentheses `render` nests around e's innermost leaf."""
    if isinstance(e, BinOp):
        return 1 + max(_depth(e.a), _depth(e.b))
    return 0


def plain_expr(e: Expr) -> bool:
    """`render(e)` parses back to e: literals in 0..2^64, plain names, the grammar's
    operators (nesting is bounded where the statement is written)."""
    if isinstance(e, Const):
        return 0 <= e.value < MAX_LITERAL
    if isinstance(e, Var):
        return plain_name(e.name)
    return e.op in OPS and plain_expr(e.a) and plain_expr(e.b)


def _tokens(e: Expr) -> int:
    """The lexer's tokens in `render(e)`."""
    if isinstance(e, BinOp):
        return 3 + _tokens(e.a) + _tokens(e.b)
    return 1


def _plain_range(r: Range) -> bool:
    return 0 <= r.lo < r.hi < MAX_LITERAL


def placed(e: Expr, line: int, col: int) -> tuple[Expr, int]:
    """`e` with the positions the parser gives `render(e)` written from `col` of
    `line`, and the column after it."""
    if isinstance(e, Const):
        return Const(e.value, Pos(line, col)), col + len(str(e.value))
    if isinstance(e, Var):
        return Var(e.name, Pos(line, col)), col + len(e.name)
    a, after_a = placed(e.a, line, col + 1)
    b, after_b = placed(e.b, line, after_a + len(e.op) + 2)
    return BinOp(e.op, a, b, Pos(line, col + 1)), after_b + 1


def dtype(name: str) -> tuple[str, Reader | None]:
    text = f"dtype {name}"
    canonical = canonical_dtype(name) if plain_name(name) else None
    if canonical is None:
        return text, None

    def reader(spec: Spec, line: int):
        spec.dtype, spec.dtype_pos = canonical, Pos(line, 7)

    return text, reader


def buffer_align(align: int) -> tuple[str, Reader | None]:
    text = f"buffer align {align}"
    if not 0 <= align < MAX_LITERAL:
        return text, None

    def reader(spec: Spec, line: int):
        spec.buffer = Buffer(align, 1, 0, Pos(line, 1))

    return text, reader


def global_align(align: int) -> tuple[str, Reader | None]:
    text = f"global align {align}"
    if not 0 <= align < MAX_LITERAL:
        return text, None

    def reader(spec: Spec, line: int):
        spec.global_align, spec.global_pos = align, Pos(line, 1)

    return text, reader


def identity_layout(name: str, coordinate: str, extent: Range) -> tuple[str, Reader | None]:
    """``layout NAME(a in LO..HI) = a``."""
    head = f"layout {name}({coordinate} in {extent}) = "
    text = head + coordinate
    if not (plain_name(name) and plain_name(coordinate) and coordinate != "lane"):
        return text, None
    if not _plain_range(extent):
        return text, None

    def reader(spec: Spec, line: int):
        if name in spec.layouts:
            raise _Unread
        body = Var(coordinate, Pos(line, len(head) + 1))
        function = Formula(((coordinate, extent),), body)
        spec.layouts[name] = LayoutDef(name, function, Pos(line, 8))

    return text, reader


def access(
    name: str,
    instruction: str,
    layout: str,
    coords: Sequence[Expr],
    source: tuple[str, Sequence[Expr]] | None,
    loops: Sequence[tuple[str, Range]],
) -> tuple[str, Reader | None]:
    """``access NAME = INSTR LAYOUT(coords) [from G(coords)] [for v in lo..hi, ...]``."""
    parts = [f"access {name} = {instruction} {layout}(", ", ".join(render(c) for c in coords)]
    if source is not None:
        parts += [f") from {source[0]}(", ", ".join(render(c) for c in source[1])]
    parts.append(")")
    if loops:
        parts.append(" for " + ", ".join(f"{v} in {r}" for v, r in loops))
    text = "".join(parts)
    names = [name, layout] + ([source[0]] if source else [])
    exprs = list(coords) + (list(source[1]) if source else [])
    plain = (
        all(plain_name(n) for n in names)
        and _plain_instruction(instruction)
        and coords
        and (source is None or source[1])
        and all(plain_expr(e) and 1 + _depth(e) <= MAX_NESTING for e in exprs)
        and all(plain_name(v) and v != "lane" and _plain_range(r) for v, r in loops)
        and len({v for v, _ in loops}) == len(loops)
    )
    if plain:
        # access NAME = INSTR LAYOUT ( coords ) [from G ( coords )] [for v in lo .. hi, ...]
        tokens = 7 + sum(_tokens(e) for e in exprs) + len(exprs) - 1
        tokens += 3 if source is not None else 0
        tokens += 6 * len(loops) if loops else 0
        plain = tokens <= MAX_TOKENS_PER_STATEMENT
    if not plain:
        return text, None

    def reader(spec: Spec, line: int):
        if name in spec.accesses:
            raise _Unread
        instr_col = 8 + len(name) + 3
        layout_col = instr_col + len(instruction) + 1
        read, col = _placed_list(coords, line, layout_col + len(layout) + 1)
        from_def = None
        if source is not None:
            source_col = col + len(") from ")
            read_source, col = _placed_list(source[1], line, source_col + len(source[0]) + 1)
            from_def = SourceDef(source[0], tuple(read_source), Pos(line, source_col))
        spec.accesses[name] = AccessDef(
            name,
            instruction,
            layout,
            tuple(read),
            tuple(loops),
            Pos(line, 8),
            Pos(line, instr_col),
            Pos(line, layout_col),
            1,
            from_def,
        )

    return text, reader


def _placed_list(exprs: Sequence[Expr], line: int, col: int) -> tuple[list[Expr], int]:
    """Comma-separated expressions from `col`; the column after the last."""
    out = []
    for i, e in enumerate(exprs):
        if i:
            col += 2  # ", "
        e, col = placed(e, line, col)
        out.append(e)
    return out, col


def check_conflict_free(target: str) -> tuple[str, Reader | None]:
    text = f"check conflict_free {target}"
    if not plain_name(target):
        return text, None

    def reader(spec: Spec, line: int):
        spec.checks.append(
            CheckDef(
                kind="max_ways",
                pos=Pos(line, 1),
                target=target,
                bound=1,
                text=f"conflict_free {target}",
            )
        )

    return text, reader


class _Unread(Exception):
    """A statement the readers cannot apply: the parser reads the spec."""


_ALIGN = re.compile(r"(buffer|global) align (\d+)")


def read(lines: Sequence[str], readers: dict[int, tuple[str, Reader]], file: str) -> Spec:
    """The spec of `lines` (one statement each) as `parse_text` reads it: each line
    by its reader (``readers[line] = (the text the reader was written for, reader)``),
    comments and blank lines skipped, ``buffer align N`` and ``global align N``
    read as they stand; any other line, or an unresolved name, and the parser
    reads the whole text."""
    from verify.spec.parser import parse_text
    from verify.spec.resolve import resolution_errors

    text = "\n".join(lines) + "\n"
    spec = Spec(file)
    try:
        if len(text) > MAX_SPEC_BYTES or "\x00" in text or len(text.split("\n")) != len(lines) + 1:
            raise _Unread
        for number, line in enumerate(lines, 1):
            if not line.strip() or line == "#" or line.startswith("# "):
                continue
            written = readers.get(number)
            if written is not None and written[0] == line:
                written[1](spec, number)
                continue
            align = _ALIGN.fullmatch(line)
            if align is None:
                raise _Unread
            kind = buffer_align if align[1] == "buffer" else global_align
            reader = kind(int(align[2]))[1]
            if reader is None:
                raise _Unread
            reader(spec, number)
        if resolution_errors(spec, text, set(), False):
            raise _Unread
    except _Unread:
        return parse_text(text, file)
    return spec
