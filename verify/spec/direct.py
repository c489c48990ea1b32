"""Spec statements a front end writes, read back without the parser.

A front end that generates a spec (`verify.ptx.specgen`, `verify.ttgir.specgen`)
writes each statement with a function here, which returns the statement's text
and its reader (the TTGIR's coordinates come as text, read by `_Expressions`): the
reader applies to a `Spec` exactly what `verify.spec.parser.parse_text` makes
of that text at that line -- the same objects at the same positions (lark's:
a token's line and column; a binary operation's, its left operand's first
character, its opening parenthesis when it is one), but for the expressions an
`access` is given as objects (`verify.ptx.specgen`'s): the access keeps those very
nodes, equal to the parser's and at the writer's positions. Placing a copy of every
node cost a fifth of checking a Triton kernel's PTX (its 64 accesses repeat one
traced thread index term), and kept the copies from sharing what is derived from
each node once; the positions inside a generated statement are never shown (a
generated spec that verify refuses is reported at each of its PTX instructions,
with the message alone: `verify.ptx.check`). `read` builds a whole spec
from the readers and falls back to `parse_text` of the text whenever a line has
no reader (a statement edited since, or written outside the plain forms here:
a negative literal, a name the lexer reads as a keyword, deeper nesting than the
parser allows) or a name does not resolve, so every error is still the
parser's own. tests/spec/test_direct.py compares both readings.

Parsing a generated spec with lark cost a quarter of checking a Triton kernel
from its PTX (benchmarks/results/triton_hook.md), and a quarter of checking its
TTGIR's buffers; reading it here costs a small part of that.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from importlib import resources

from verify.errors import Pos, SpecError
from verify.model.dtypes import DTYPE_BYTES
from verify.model.expr import OPS, BinOp, Const, Expr, Range, Var, kept, render, size
from verify.model.layout import CuteLayout, Formula
from verify.notation import triton
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


# The walks below are kept on each node (`verify.model.expr.kept`): a front end's
# accesses share most of their subexpressions, so each shared node is walked once.


def _depth(e: Expr) -> int:
    """Parentheses `render` nests around e's innermost leaf."""
    if isinstance(e, BinOp):
        return kept(e, "_depth", lambda n: 1 + max(_depth(n.a), _depth(n.b)))
    return 0


def plain_expr(e: Expr) -> bool:
    """`render(e)` parses back to e: literals in 0..2^64, plain names, the grammar's
    operators (nesting is bounded where the statement is written)."""
    if isinstance(e, Const):
        return 0 <= e.value < MAX_LITERAL
    if isinstance(e, Var):
        return plain_name(e.name)
    return kept(e, "_plain", lambda n: n.op in OPS and plain_expr(n.a) and plain_expr(n.b))


def _tokens(e: Expr) -> int:
    """The lexer's tokens in `render(e)`: "(", the operator and ")" of each of its
    k operations and one per leaf, of which there are k + 1, so 2 * `size` - 1."""
    return 2 * size(e) - 1


def _plain_range(r: Range) -> bool:
    return 0 <= r.lo < r.hi < MAX_LITERAL


def dtype(name: str) -> tuple[str, Reader | None]:
    text = f"dtype {name}"
    canonical = canonical_dtype(name) if plain_name(name) else None
    if canonical is None:
        return text, None

    def reader(spec: Spec, line: int):
        if spec.dtype is not None:  # one dtype: `encoded_layout` checks widths against it
            raise _Unread
        spec.dtype, spec.dtype_pos = canonical, Pos(line, 7)

    return text, reader


def buffer_align(align: int, stages: int = 1, stage_bytes: int = 0) -> tuple[str, Reader | None]:
    """``buffer align A``, or ``buffer align A stages S stage_bytes B`` when S > 1."""
    staged = f" stages {stages} stage_bytes {stage_bytes}" if stages > 1 else ""
    text = f"buffer align {align}{staged}"
    if not all(0 <= n < MAX_LITERAL for n in (align, stages, stage_bytes)):
        return text, None
    if not staged:
        stages, stage_bytes = 1, 0  # the parser's defaults for the options not written

    def reader(spec: Spec, line: int):
        spec.buffer = Buffer(align, stages, stage_bytes, Pos(line, 1))

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

    instr_col = 8 + len(name) + 3
    layout_col = instr_col + len(instruction) + 1
    source_col = len(parts[0]) + len(parts[1]) + len(") from ") + 1

    def reader(spec: Spec, line: int):
        if name in spec.accesses:
            raise _Unread
        from_def = None
        if source is not None:
            from_def = SourceDef(source[0], tuple(source[1]), Pos(line, source_col))
        spec.accesses[name] = AccessDef(
            name,
            instruction,
            layout,
            tuple(coords),
            tuple(loops),
            Pos(line, 8),
            Pos(line, instr_col),
            Pos(line, layout_col),
            1,
            from_def,
        )

    return text, reader


def written_access(
    name: str,
    instruction: str,
    layout: str,
    coords: Sequence[str],
    source: tuple[str, Sequence[str]] | None,
    loops: Sequence[tuple[str, Range]],
) -> tuple[str, Reader | None]:
    """`access`'s statement with its coordinates (and the source's) given as text,
    as `verify.ttgir.specgen` writes them; its reader reads each as the grammar's
    ``expr`` does (`_Expression`), or leaves the spec to the parser."""
    parts = [f"access {name} = {instruction} {layout}(", ", ".join(coords)]
    if source is not None:
        parts += [f") from {source[0]}(", ", ".join(source[1])]
    parts.append(")")
    if loops:
        parts.append(" for " + ", ".join(f"{v} in {r}" for v, r in loops))
    text = "".join(parts)
    names = [name, layout] + ([source[0]] if source else [])
    plain = (
        all(plain_name(n) for n in names)
        and _plain_instruction(instruction)
        and coords
        and (source is None or source[1])
        and all(plain_name(v) and v != "lane" and _plain_range(r) for v, r in loops)
        and len({v for v, _ in loops}) == len(loops)
    )
    if not plain:
        return text, None

    def reader(spec: Spec, line: int):
        if name in spec.accesses:
            raise _Unread
        instr_col = 8 + len(name) + 3
        layout_col = instr_col + len(instruction) + 1
        # access NAME = INSTR LAYOUT ( coords ) [from G ( coords )] [for v in lo .. hi, ...]
        lists = [_Expressions(coords, line, layout_col + len(layout) + 1)]
        from_def = None
        if source is not None:
            source_col = lists[0].end + len(") from ")
            lists.append(_Expressions(source[1], line, source_col + len(source[0]) + 1))
            from_def = SourceDef(source[0], lists[1].exprs, Pos(line, source_col))
        tokens = 7 + 4 * len(lists[1:]) + sum(e.tokens for e in lists) + 6 * len(loops)
        if tokens > MAX_TOKENS_PER_STATEMENT or max(e.depth for e in lists) >= MAX_NESTING:
            raise _Unread  # the parser's bounds, counted as its post-lexer counts them
        spec.accesses[name] = AccessDef(
            name,
            instruction,
            layout,
            lists[0].exprs,
            tuple(loops),
            Pos(line, 8),
            Pos(line, instr_col),
            Pos(line, layout_col),
            1,
            from_def,
        )

    return text, reader


_EXPR_TOKEN = re.compile(
    r" *(?:(?P<int>[0-9]+)(?![A-Za-z0-9_])|(?P<name>[A-Za-z][A-Za-z0-9_]*)"
    r"|(?P<op><<|>>|[-+*/%&^|()]))"
)
# grammar.lark's binary operators, loosest first; each level is left-associative.
_LEVELS = (("|",), ("^",), ("&",), ("<<", ">>"), ("+", "-"), ("*", "/", "%"))


class _Expressions:
    """Comma-separated expressions, each text written from `col` of `line` (", "
    between them), read as the grammar's ``expr`` reads them: decimal literals
    below 2^64, plain names that call nothing, the binary operators by precedence
    and parentheses. Anything else raises `_Unread`. `exprs`: the expressions;
    `tokens`: the lexer's tokens, commas included; `depth`: the deepest
    parentheses inside them; `end`: the column after the last."""

    def __init__(self, texts: Sequence[str], line: int, col: int):
        self.tokens, self.depth = len(texts) - 1, 0
        exprs = []
        for i, text in enumerate(texts):
            col += 2 if i else 0
            self._lex(text, line, col)
            e, _ = self._level(0, 0)
            if self._at != len(self._toks):
                raise _Unread
            exprs.append(e)
            col += len(text)
        self.exprs, self.end = tuple(exprs), col

    def _lex(self, text: str, line: int, col: int):
        self._toks: list[tuple[str, str, Pos]] = []
        self._at, at = 0, 0
        while at < len(text):
            m = _EXPR_TOKEN.match(text, at)
            if m is None:
                raise _Unread
            kind = m.lastgroup
            assert kind is not None, "one group matches"
            self._toks.append((kind, m[kind], Pos(line, col + m.start(kind))))
            at = m.end()
        self.tokens += len(self._toks)

    def _peek(self) -> tuple[str, str, Pos]:
        return self._toks[self._at] if self._at < len(self._toks) else ("end", "", Pos())

    def _level(self, k: int, depth: int) -> tuple[Expr, Pos]:
        """An expression of precedence level k (or tighter), and where it starts."""
        if k == len(_LEVELS):
            return self._atom(depth)
        a, start = self._level(k + 1, depth)
        while self._peek()[0] == "op" and self._peek()[1] in _LEVELS[k]:
            op = self._peek()[1]
            self._at += 1
            b, _ = self._level(k + 1, depth)
            a = BinOp(op, a, b, start)  # lark's: the first character of its left operand
        return a, start

    def _atom(self, depth: int) -> tuple[Expr, Pos]:
        kind, text, pos = self._peek()
        self._at += 1
        if kind == "int" and int(text) < MAX_LITERAL:
            return Const(int(text), pos), pos
        after = self._peek()[1]
        if kind == "name" and plain_name(text) and after != "(":
            return Var(text, pos), pos
        if kind == "op" and text == "(":
            self.depth = max(self.depth, depth + 1)
            e, _ = self._level(0, depth + 1)
            if self._peek()[1] != ")":
                raise _Unread
            self._at += 1
            return e, pos
        raise _Unread


def cute_layout(name: str, shape: int, stride: int) -> tuple[str, Reader | None]:
    """``layout NAME = SHAPE:STRIDE`` of one mode."""
    text = f"layout {name} = {shape}:{stride}"
    if not (plain_name(name) and 1 <= shape < MAX_LITERAL and 0 <= stride < MAX_LITERAL):
        return text, None

    def reader(spec: Spec, line: int):
        if name in spec.layouts:
            raise _Unread
        spec.layouts[name] = LayoutDef(name, CuteLayout(shape, stride), Pos(line, 8))

    return text, reader


# grammar.lark's TRITON_ENCODING: the lexer's one token, and the statement cutter's
# (verify.spec.parser), which skips the brackets inside it.
_ENCODING = re.compile(r"#(ttg|triton_gpu)\.[A-Za-z_]+<(?:[^<>\n]|<(?:[^<>\n]|<[^<>\n]*>)*>)*>")


def encoded_layout(name: str, encoding: str, shape: Sequence[int]) -> tuple[str, Reader | None]:
    """``layout NAME = #ttg.<encoding> shape (n0, n1, ...)``, rank 2 or more."""
    head = f"layout {name} = "
    text = f"{head}{encoding} shape ({', '.join(map(str, shape))})"
    plain = plain_name(name) and _ENCODING.fullmatch(encoding) is not None
    if not (plain and len(shape) > 1 and all(0 <= n < MAX_LITERAL for n in shape)):
        return text, None

    def reader(spec: Spec, line: int):
        if name in spec.layouts:
            raise _Unread
        pos = Pos(line, len(head) + 1)
        try:  # an encoding verify does not read: the parser reports it
            enc = triton.parse_encoding(encoding, pos)
            function = triton.layout(enc, tuple(shape), pos)
        except SpecError:
            raise _Unread from None
        width = enc.fields.get("elementBitWidth")
        if width is not None and 8 * DTYPE_BYTES.get(spec.dtype or "", 0) != width:
            raise _Unread  # the parser's element_width_errors says why
        required = triton.required_alignment(enc)
        spec.layouts[name] = LayoutDef(name, function, Pos(line, 8), required_align=required)

    return text, reader


def check_bijective(target: str) -> tuple[str, Reader | None]:
    return _check(f"bijective {target}", [target], kind="bijective", target=target)


def check_equivalent(first: str, second: str) -> tuple[str, Reader | None]:
    return _check(
        f"equivalent {first}, {second}",
        [first, second],
        kind="equivalent_layouts",
        target=first,
        second=second,
    )


def check_conflict_free(target: str) -> tuple[str, Reader | None]:
    return _check(f"conflict_free {target}", [target], kind="max_ways", target=target, bound=1)


def _check(rest: str, names: list[str], **fields) -> tuple[str, Reader | None]:
    """``check REST`` naming `names`, read as the CheckDef of `fields`."""
    text = f"check {rest}"
    if not all(plain_name(n) for n in names):
        return text, None

    def reader(spec: Spec, line: int):
        spec.checks.append(CheckDef(pos=Pos(line, 1), text=rest, **fields))

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
