"""PTX text -> `verify.ptx.ir.Module`, by a lark grammar (ptx.lark).

PyPI's ``ptx-parser`` (0.x) was judged first: it parses instruction lines but
rejects ``.target sm_90a`` and ``.param .align 4 .b8 x[N]``, both in every nvcc
kernel of this repository's samples, so the reader has its own grammar of the
subset nvcc and Triton emit. Instructions are read generically, so one this
reader does not model parses and stays opaque; anything else outside the subset
is a `SpecError` at its line and column (``expected ..., found ...``), never a
traceback. Input is bounded before lark sees it: size and brace nesting.

Function bodies, nearly all of a kernel's tokens, are read by `verify.ptx.scan`
where it can (`_scanned`), and the rest by `scan.header` or else lark; where the
scanner is not sure of a body, lark reads the whole text (`parse_ptx_by_lark`,
the reference it is tested against).
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from verify.errors import Pos, SpecError
from verify.ptx import ir, scan
from verify.spec.grammar import cache_file

MAX_PTX_BYTES = 32 << 20
MAX_NESTING = 64
# How the grammar's terminals read in "expected ..." (the rest by their own name).
_READABLE = {
    "SEMICOLON": "';'",
    "COMMA": "','",
    "RBRACE": "'}'",
    "LBRACE": "'{'",
    "RSQB": "']'",
    "LSQB": "'['",
    "RPAR": "')'",
    "LPAR": "'('",
    "OPCODE": "an instruction",
    "REG": "a register",
    "INT": "an integer",
    "NAME": "a name",
    "LABEL": "a label",
    "STATE": "a state space (.reg, .shared, ...)",
    "TYPE": "a type (.b32, .u64, ...)",
    "$END": "the end of the input",  # lark's name for it: no terminal of the grammar
}


@lru_cache(maxsize=1)
def _parser() -> Lark:
    """The PTX parser, `_Build` applied as each rule is reduced: no parse tree is
    built and walked again (a third of parsing's CPU time on the matmul samples,
    benchmarks/results/kernel_check.md). Its analysis is cached on disk as the
    spec grammar's is (`verify.spec.grammar`)."""
    path = os.path.join(os.path.dirname(__file__), "ptx.lark")
    with open(path, encoding="utf-8") as f:
        grammar = f.read()
    return Lark(
        grammar,
        parser="lalr",
        lexer="contextual",
        maybe_placeholders=False,
        transformer=_Build(),
        cache=cache_file(grammar, "ptx") or False,
    )


_Loc = scan.Loc


def _int(token: Token) -> int:
    return scan.int_value(str(token))


@v_args(inline=True)
class _Build(Transformer):
    # -- operands ------------------------------------------------------------
    def reg(self, t):
        return ir.Reg(str(t))

    def reg_pair(self, a, b):
        return ir.RegPair(ir.Reg(str(a)), ir.Reg(str(b)))

    def not_reg(self, t):
        return ir.NotReg(ir.Reg(str(t)))

    def int_imm(self, t):
        return ir.Imm(_int(t))

    def float_imm(self, t):
        return ir.FloatImm(str(t))

    def symbol(self, t):
        return ir.Sym(str(t))

    def sink(self):
        return ir.Sink()

    def vector(self, *items):
        return ir.Vec(tuple(items))

    def vector_items(self, *items):
        return tuple(items)

    def tensor_address(self, tmap, coords):
        base = ir.Reg(str(tmap)) if str(tmap).startswith("%") else ir.Sym(str(tmap))
        return ir.TensorAddr(base, coords)

    def group(self, *items):
        return ir.Group(tuple(items))

    def reg_address(self, base, *offset):
        return ir.Addr(ir.Reg(str(base)), _int(offset[-1]) if offset else 0)

    def sym_address(self, base, *offset):
        return ir.Addr(ir.Sym(str(base)), _int(offset[-1]) if offset else 0)

    def abs_address(self, t):
        return ir.Addr(None, _int(t))

    def guard(self, *parts):
        return (str(parts[-1]), len(parts) == 2)

    # -- statements ----------------------------------------------------------
    def instr(self, *parts):
        guard = parts[0] if isinstance(parts[0], tuple) else None
        rest = parts[1:] if guard else parts
        opcode = rest[0]
        return ir.Instr(str(opcode), tuple(rest[1:]), opcode.line, opcode.column, guard)

    def label(self, t):
        return ir.Label(str(t).rstrip(": \t"), t.line)

    def loc(self, *tokens):
        ints = [_int(t) for t in tokens if t.type == "INT"]
        inlined = (ints[3], ints[4], ints[5]) if len(ints) >= 6 else None
        return _Loc((ints[0], ints[1], ints[2]), inlined)

    def body(self, *stmts):
        out = []
        for s in stmts:
            out += s if isinstance(s, list) else [s]
        return out

    def pragma(self, *strings):
        return None

    def branchtargets(self, *labels):
        return None  # a brx.idx jump table: no memory access of its own

    # -- declarations --------------------------------------------------------
    def align(self, _, n):
        return ("align", _int(n))

    def type(self, t):
        return ("type", str(t)[1:])

    def ptr(self, _):
        return ("ptr", True)

    def space(self, t):
        return ("space", str(t)[1:])

    def array(self, *n):
        return ("array", _int(n[0]) if n else None)

    def var_name(self, name, *rest):
        regs = next((_int(r) for r in rest if isinstance(r, Token)), None)
        arrays = [a[1] for a in rest if isinstance(a, tuple)]
        return (str(name), name.line, regs, arrays)

    def decl_head(self, state, *rest):
        attrs = [r for r in rest if isinstance(r, tuple) and len(r) == 2]
        return (str(state)[1:], attrs, rest[-1])

    def initializer(self, *items):
        return ("init", items)

    def var_decl(self, *parts):
        linkage = [str(p) for p in parts if isinstance(p, Token)]
        head = next(p for p in parts if isinstance(p, tuple) and len(p) == 3)
        names = [head[2]] + [p for p in parts if isinstance(p, tuple) and len(p) == 4]
        return [_variable(head, name, ".extern" in linkage) for name in names]

    def perf(self, name, *values):
        return (str(name)[1:], tuple(_int(v) for v in values))

    def params(self, *heads):
        return ("params", [_variable(h, h[2], False) for h in heads])

    def ret_params(self, *heads):
        return ("ret", [_variable(h, h[2], False) for h in heads])

    def function(self, *parts):
        tokens = [p for p in parts if isinstance(p, Token)]
        kind = next(t for t in tokens if t.type in ("ENTRY", "FUNC"))
        name = next(t for t in tokens if t.type == "NAME")
        params: list[ir.Variable] = next(
            (p[1] for p in parts if isinstance(p, tuple) and p[0] == "params"), []
        )
        perf: dict[str, tuple[int, ...]] = dict(
            p for p in parts if isinstance(p, tuple) and isinstance(p[1], tuple)
        )
        fn = ir.Function(str(name), kind.type == "ENTRY", params, name.line or 0, perf=perf)
        body = next((p for p in parts if isinstance(p, list)), None)
        if body is not None:
            _fill_body(fn, body)
        return fn

    # -- module --------------------------------------------------------------
    def version(self, t):
        return ("version", str(t))

    def target(self, *names):
        return ("target", tuple(str(n) for n in names))

    def address_size(self, t):
        return ("address_size", _int(t))

    def file(self, n, path, *_):
        return ("file", (_int(n), str(path)[1:-1]))


def _variable(head, name, extern: bool) -> ir.Variable:
    space, attrs, _ = head
    text, line, regs, arrays = name
    found = dict(attrs)
    count = None
    for n in arrays:
        count = None if n is None else (count or 1) * n
    return ir.Variable(
        space,
        text,
        found.get("type", ""),
        found.get("align"),
        count,
        bool(arrays),
        extern,
        regs,
        line,
    )


def _fill_body(fn: ir.Function, stmts: list, files: dict[int, str] | None = None) -> None:
    """Instructions and labels in order, each instruction with its .loc chain, its
    files named where `files` is given (else `_name_files` names them)."""
    parent: dict[tuple[int, int, int], tuple[int, int, int] | None] = {}
    source = ir.Source()  # the current .loc's chain: `parent` changes only at a .loc
    for s in stmts:
        if isinstance(s, _Loc):
            parent[s.key] = s.inlined_at
            frames = _frames(s, parent)
            source = ir.Source(frames if files is None else _named(frames, files))
        elif isinstance(s, ir.Variable):
            fn.variables.append(s)
        elif isinstance(s, ir.Instr):
            fn.body.append(ir.Instr(s.opcode, s.operands, s.line, s.col, s.guard, source))
        elif isinstance(s, tuple):  # an instruction as verify.ptx.scan gives it
            opcode, operands, line, col, guard = s
            fn.body.append(ir.Instr(opcode, operands, line, col, guard, source))
        elif isinstance(s, ir.Label):
            fn.body.append(s)
        elif isinstance(s, list):
            fn.variables.extend(s)


def _frames(loc: _Loc, parent: dict) -> tuple[tuple[str, int], ...]:
    """(file number, line) from the innermost frame out; `_name_files` puts the
    paths .file gives for the numbers."""
    frames = [(str(loc.key[0]), loc.key[1])]
    key = loc.inlined_at
    while key is not None and len(frames) < 64:
        frames.append((str(key[0]), key[1]))
        key = parent.get(key)
    return tuple(frames)


def _bounded(text: str, name: str) -> None:
    if len(text) > MAX_PTX_BYTES:
        raise SpecError(
            f"PTX of {len(text)} bytes: at most {MAX_PTX_BYTES} are read", Pos(1, 1), name
        )
    depth = 0
    for brace in _BRACE.finditer(text):
        if brace.group() == "}":
            depth = max(0, depth - 1)
            continue
        depth += 1
        if depth > MAX_NESTING:
            at = brace.start()
            line_start = max(0, text.rfind("\n", 0, at))
            raise SpecError(
                f"braces nested deeper than {MAX_NESTING}",
                Pos(text.count("\n", 0, at) + 1, at - line_start),
                name,
            )


_BRACE = re.compile(r"[{}]")


def _readable(terminal: str) -> str:
    """A grammar terminal as a person reads it: ``'.version'``, ``a register``."""
    if terminal in _READABLE:
        return _READABLE[terminal]
    pattern = _parser().get_terminal(terminal).pattern
    if pattern.type == "str":
        return repr(pattern.value)
    return terminal.lower().replace("_", " ")


def _error(e: UnexpectedInput, name: str, text: str) -> SpecError:
    line: int = getattr(e, "line", 0) or 0
    col: int = getattr(e, "column", 0) or 0
    expected: list[str]
    if isinstance(e, UnexpectedEOF):
        found = "the end of the input"
        expected = [str(x) for x in e.expected]
        line = text.count("\n") + 1
    elif isinstance(e, UnexpectedToken):
        found = repr(str(e.token)) if e.token.type != "$END" else "the end of the input"
        expected = sorted(str(x) for x in e.expected)
    else:
        assert isinstance(e, UnexpectedCharacters)
        at = e.pos_in_stream or 0
        found = repr(text[at : at + 12].split("\n")[0])
        expected = sorted(str(x) for x in e.allowed or ())
    words = sorted({_readable(x) for x in expected})
    wanted = ", ".join(words[:6]) + (", ..." if len(words) > 6 else "")
    return SpecError(f"expected {wanted or 'PTX'}, found {found}", Pos(line, col), name)


def parse_ptx(text: str, name: str = "<ptx>") -> ir.Module:
    """The module of PTX `text`; a located `SpecError` if it is not PTX this reads.
    Function bodies are read by `verify.ptx.scan` where it can, the rest by lark."""
    _bounded(text, name)
    items = _scanned(text)
    if items is None:
        return _module(_lark_items(text, name), name)
    return _module(items, name, named=True)


def parse_ptx_by_lark(text: str, name: str = "<ptx>") -> ir.Module:
    """`parse_ptx` with lark reading everything: the reference `verify.ptx.scan`
    is tested against (tests/ptx/test_ptx_scan.py)."""
    _bounded(text, name)
    return _module(_lark_items(text, name), name)


def _lark_items(text: str, name: str) -> list:
    try:
        return _parser().parse(text).children
    except UnexpectedInput as e:
        raise _error(e, name, text).with_source(text) from None


def _scanned(text: str) -> list | None:
    """The module's items, each function body read by `verify.ptx.scan`, the rest
    by `scan.header` or else by lark with a stand-in label for each body (lines
    kept); None where lark gives up too, and lark then reads the whole text."""
    if scan.MARKER in text:
        return None
    spans = scan.bodies(text)
    if not spans:
        return None
    items = scan.header(text, spans)
    if items is None:
        items = _skeleton(text, spans)
    if items is None:
        return None
    files = {value[0]: value[1] for key, value in _directives(items) if key == "file"}
    filled = 0
    for item in items:
        body = _stand_in(item)
        if body is not None:
            item.body = []
            _fill_body(item, spans[body][2], files)
            filled += 1
    return items if filled == len(spans) else None


def _skeleton(text: str, spans: list) -> list | None:
    """The top level's items as lark reads them, each body a stand-in label."""
    pieces, at = [], 0
    for k, (start, end, _) in enumerate(spans):
        pieces += [text[at:start], f" {scan.MARKER}{k}: ", "\n" * text.count("\n", start, end)]
        at = end
    pieces.append(text[at:])
    try:
        return _parser().parse("".join(pieces)).children
    except UnexpectedInput:
        return None


def _stand_in(item) -> int | None:
    """The number of the body a function of the skeleton stands in for, or None."""
    if not isinstance(item, ir.Function) or item.variables or len(item.body) != 1:
        return None
    label = item.body[0]
    if not isinstance(label, ir.Label) or not label.name.startswith(scan.MARKER):
        return None
    return int(label.name[len(scan.MARKER) :])


def _directives(items: list) -> list[tuple[str, tuple]]:
    """The (key, value) items: .version, .target, .address_size, .file."""
    return [item for item in items if isinstance(item, tuple)]


def _module(items: list, name: str, named: bool = False) -> ir.Module:
    """The module of the top level's `items`; `named`: its instructions' files are."""
    module = ir.Module(name)
    for item in items:
        if isinstance(item, ir.Function):
            module.functions.append(item)
        elif isinstance(item, list):
            module.variables.extend(item)
        elif isinstance(item, tuple):
            key, value = item
            if key == "file":
                module.files[value[0]] = value[1]
            else:
                setattr(module, key, value)
    if not named:
        _name_files(module)
    return module


def _name_files(module: ir.Module) -> None:
    """Replace .loc file numbers by the paths .file gives them."""
    named: dict[ir.Source, ir.Source] = {}  # many instructions share one .loc

    def name(source: ir.Source) -> ir.Source:
        found = named.get(source)
        if found is None:
            found = named[source] = ir.Source(_named(source.frames, module.files))
        return found

    for fn in module.functions:
        fn.body = [
            ir.Instr(s.opcode, s.operands, s.line, s.col, s.guard, name(s.source))
            if isinstance(s, ir.Instr)
            else s
            for s in fn.body
        ]


def _named(frames: tuple[tuple[str, int], ...], files: dict[int, str]) -> tuple:
    """.loc frames with the paths .file gives their file numbers."""
    return tuple((files.get(int(f), f"file{f}"), n) for f, n in frames)


def read_ptx(path: str) -> ir.Module:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(MAX_PTX_BYTES + 1)
    except OSError as e:
        raise SpecError(f"cannot read the PTX file: {e.strerror}", None, path) from None
    return parse_ptx(text, path)
