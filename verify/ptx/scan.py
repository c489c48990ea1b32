"""A hand-written reader of PTX function bodies, the fast path of `verify.ptx.parse`.

Why it exists: the lark parse of a Triton kernel's PTX cost 10-14% of checking
it in the compile hook (benchmarks/results/triton_hook.md), about 5 us per token
in lark's lexer and parser, and almost every token is in a function body. PTX
bodies are one statement after another, nearly always one a line, so a regular
expression per statement reads them at a fraction of that.

It reads only what it is sure of and gives up (None) on anything else, and
`verify.ptx.parse` then parses the whole text with lark: every error message,
and every construct this reader does not know, is lark's. Where it reads a body,
it builds what the grammar's rules would (`verify.ptx.parse._Build`): the same
instructions, operands, labels, variables and ``.loc`` records, at the same
lines and columns; tests/ptx/test_ptx_scan.py checks both parses agree field
for field on every PTX file under tests/data and on randomly edited texts.
Between the tokens of one statement it takes only spaces and tabs, and newlines
among an instruction's operands (lark also takes comments anywhere, and newlines
in declarations and .loc: such a statement is left to lark).

The rest of the file (headers, parameters, global variables, the DWARF sections,
which lark's SECTION terminal skips whole) is read by `header`, as lark reads it
with each body replaced by a stand-in label, lines kept; where `header` is not
sure, `verify.ptx.parse` has lark read that text. Lark is then not loaded at all
for a kernel both read (13 ms of a process's first kernel, and its lexer's
scanners built on first use).
"""

from __future__ import annotations

import re

from verify.ptx import ir

_REG = r"%[A-Za-z_$][\w$]*(?:\.[xyzw])?(?![\w$])"
_NAME = r"[A-Za-z_$][\w$]*(?![\w$])"
_INT = r"-?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)U?(?![\w$])"
_FLOAT = r"(?:0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16})(?![\w$])"
_STRING = r'"[^"\n]*"'
_S = r"[ \t]*"
_STATE = r"\.(?:reg|shared|local|global|const|param|sreg)(?![\w$])"
_TYPE = (
    r"\.(?:b8|b16|b32|b64|b128|s8|s16|s32|s64|u8|u16|u32|u64|f16|f16x2|bf16|bf16x2|f32|f64"
    r"|pred|v2|v4|v8)(?![\w$])"
)
_LINKAGE = r"\.(?:visible|extern|weak|common)(?![\w$])"
_ATTR = rf"\.align[ \t]+{_INT}|{_TYPE}|\.ptr(?![\w$])|{_STATE}"
_VAR_NAME = rf"(?:{_NAME}|{_REG})(?:{_S}<{_S}{_INT}{_S}>)?(?:{_S}\[{_S}(?:{_INT})?{_S}\])*"
_NOT_INLINED = r"(?!inlined_at(?![\w$]))"

_GAP = re.compile(r"(?:[ \t\r\n]+|//[^\n]*|/\*(?:.|\n)*?\*/)*")
_LABEL = re.compile(r"([A-Za-z_$][\w$]*)[ \t]*:(?!:)")  # ptx.lark's LABEL
_INSTR = re.compile(
    rf"(?:@(!?)({_REG}|{_NAME})[ \t]+)?([a-z][a-z0-9_]*(?:\.[A-Za-z0-9_:]+)*)([ \t\r\n][^;/]*)?;"
)
_LOC = re.compile(
    rf"\.loc(?![\w$])[ \t]+({_INT})[ \t]+({_INT})[ \t]+({_INT})"
    rf"(?:{_S},{_S}{_NOT_INLINED}{_NAME}[ \t]+{_NOT_INLINED}{_NAME})?"
    rf"(?:{_S},{_S}inlined_at(?![\w$])[ \t]+({_INT})[ \t]+({_INT})[ \t]+({_INT}))?"
)
_PRAGMA = re.compile(rf"\.pragma[ \t]+{_STRING}(?:{_S},{_S}{_STRING})*{_S};")
_TARGETS = re.compile(rf"\.branchtargets[ \t]+{_NAME}(?:{_S},{_S}{_NAME})*{_S};")
_DECL = re.compile(
    rf"((?:{_LINKAGE}[ \t]+)*)({_STATE})((?:[ \t]+(?:{_ATTR}))*)"
    rf"[ \t]+({_VAR_NAME}(?:{_S},{_S}{_VAR_NAME})*){_S};"
)
_ONE_ATTR = re.compile(rf"\.align[ \t]+({_INT})|({_TYPE})|\.ptr(?![\w$])|{_STATE}")
_ONE_VAR = re.compile(
    rf"({_NAME}|{_REG})(?:{_S}<{_S}({_INT}){_S}>)?((?:{_S}\[{_S}(?:{_INT})?{_S}\])*)"
)
_ARRAY = re.compile(rf"\[{_S}({_INT})?{_S}\]")
_OPERAND_TOKEN = re.compile(
    rf"[ \t\r\n]*(?:({_REG})|({_FLOAT})|({_INT})|({_NAME})|([{{}}\[\](),|!+]))"
)
# The top level, as far as finding function bodies needs: comments, strings, the
# .section blocks lark skips whole (ptx.lark's SECTION), braces, '='.
_TOP = re.compile(r'//[^\n]*|/\*(?:.|\n)*?\*/|"[^"\n]*"|(?<![\w$.])\.section[^{]*\{[^}]*\}|[{}=]')
_SPACE = " \t\r\n"  # what lark skips between tokens, besides comments
_REG_ONLY = re.compile(_REG)
_KINDS = ("", "REG", "FLOAT", "INT", "NAME", "")  # _OPERAND_TOKEN's groups
MARKER = "$verify_scanned_body"  # a body's stand-in label while lark reads the rest


class _GiveUp(Exception):
    """Something this reader is not sure of: lark reads the text."""


def int_value(text: str) -> int:
    """An INT token's value, as `verify.ptx.parse._int` reads it."""
    if text.isdigit():
        return int(text, 10)
    text = text.rstrip("U")
    sign = -1 if text.startswith("-") else 1
    text = text.lstrip("-")
    if text[:2] in ("0x", "0X"):
        return sign * int(text[2:], 16)
    if text[:2] in ("0b", "0B"):
        return sign * int(text[2:], 2)
    return sign * int(text, 10)


class Loc:
    """One ``.loc FILE LINE COL[, inlined_at FILE LINE COL]``."""

    def __init__(self, key: tuple[int, int, int], inlined_at: tuple[int, int, int] | None):
        self.key, self.inlined_at = key, inlined_at


def bodies(text: str) -> list[tuple[int, int, list]] | None:
    """Each top-level function body: (start, end) of its inside (between its
    braces) and its statements (`Body`); None where this reader gives up. A
    top-level brace right after '=' opens an initializer, not a body."""
    reader = Body(text)
    found: list[tuple[int, int, list]] = []
    pos, equals, initializer = 0, -1, False
    while True:
        m = _TOP.search(text, pos)
        if m is None:
            return None if initializer else found
        token, pos = m.group(), m.end()
        if token == "=":
            equals = pos
        elif token == "{" and not initializer:
            initializer = equals >= 0 and _GAP.fullmatch(text, equals, m.start()) is not None
            if not initializer:
                statements, close = reader.read(pos)
                if statements is None:
                    return None
                found.append((pos, close, statements))
                pos = close + 1
        elif token == "}" and initializer:
            initializer = False
        elif token in ("{", "}"):
            return None  # a brace inside an initializer, or one closing nothing


class Body:
    """The statements of function bodies, as lark's ``body`` rule gives them
    (nested blocks flattened): `Loc`, `ir.Variable`, `ir.Label`, and each
    instruction as `ir.Instr`'s first five fields, a tuple: its source is made
    once, by `verify.ptx.parse._fill_body`."""

    def __init__(self, text: str):
        self.text = text
        self.operands: dict[str, ir.Operand] = {}
        self._at, self._line = 0, 1  # the line of position _at (positions only grow)

    def read(self, start: int) -> tuple[list | None, int]:
        """The statements from `start` (just inside a body's brace) to its closing
        brace, and where that is; (None, start) where this reader gives up."""
        try:
            return self._statements(start)
        except _GiveUp:
            return None, start

    def _line_col(self, pos: int) -> tuple[int, int]:
        """Lark's line and column (both from 1) of `pos`."""
        if pos < self._at:
            self._at, self._line = 0, 1
        self._line += self.text.count("\n", self._at, pos)
        self._at = pos
        return self._line, pos - self.text.rfind("\n", 0, pos)

    def _statements(self, pos: int) -> tuple[list, int]:
        text, depth, end = self.text, 0, len(self.text)
        out: list = []
        while True:
            pos = _GAP.match(text, pos).end()  # type: ignore[union-attr]  # it matches ''

            if pos >= end:
                raise _GiveUp  # the body is not closed
            c = text[pos]
            if c == "}" and depth == 0:
                return out, pos
            if c in "{}":
                depth += 1 if c == "{" else -1
                pos += 1
            elif c == ";":
                pos += 1
            else:
                pos = self._statement(pos, end, out)

    def _statement(self, pos: int, end: int, out: list) -> int:
        text = self.text
        label = _LABEL.match(text, pos, end)
        if label:
            out.append(ir.Label(label.group(1), self._line_col(pos)[0]))
            return label.end()
        if text[pos] != ".":
            m = _INSTR.match(text, pos, end)
            if m is None:
                raise _GiveUp
            out.append(self._instr(m))
            return m.end()
        m = _LOC.match(text, pos, end)
        if m:
            n = [int_value(g) if g is not None else 0 for g in m.groups()]
            inlined = (n[3], n[4], n[5]) if m.group(4) is not None else None
            out.append(Loc((n[0], n[1], n[2]), inlined))
            return m.end()
        for pattern in (_PRAGMA, _TARGETS):
            m = pattern.match(text, pos, end)
            if m:
                return m.end()
        m = _DECL.match(text, pos, end)
        if m is None:
            raise _GiveUp
        out.extend(declared(m, self._line_col(pos)[0]))
        return m.end()

    def _instr(self, m: re.Match) -> tuple:
        negated, predicate, opcode, args = m.groups()
        line, col = self._line_col(m.start(3))
        guard = (predicate, negated == "!") if predicate else None
        return (opcode, self._operands(args or ""), line, col, guard)

    def _operands(self, args: str) -> tuple[ir.Operand, ...]:
        if not args.strip(_SPACE):
            return ()
        if "{" not in args and "}" not in args and "(" not in args:
            return tuple(map(self._one, args.split(",")))  # as `_split` splits them
        pieces = None if "(" in args or "[" in args and "{" in args else _split(args)
        if pieces is None:
            return _Operands(args).all()
        return tuple(
            ir.Vec(tuple(self._one(item) for item in piece[1:-1].split(",")))
            if piece[:1] == "{"
            else self._one(piece)
            for piece in pieces
        )

    def _one(self, text: str) -> ir.Operand:
        """One operand without braces or parentheses, read once per text (spaces
        around it included: the same operand, found without stripping)."""
        found = self.operands.get(text)
        if found is None:
            bare = text.strip(_SPACE)
            found = self.operands.get(bare)
            if found is None:
                register = _REG_ONLY.fullmatch(bare) is not None  # most operands are
                found = ir.Reg(bare) if register else _Operands(bare).one_only()
                self.operands[bare] = found
            self.operands[text] = found
        return found


def _split(args: str) -> list[str] | None:
    """`args` split at the commas outside braces, each piece stripped; None where
    a brace nests in another or is not closed, or text lies beside a braced piece."""
    if "{" not in args and "}" not in args:
        return args.split(",")
    pieces: list[str] = []
    for part in args.split(","):
        if pieces and pieces[-1].count("{") > pieces[-1].count("}"):
            pieces[-1] += "," + part
        else:
            pieces.append(part)
    out = []
    for piece in pieces:
        piece = piece.strip(_SPACE)
        braces = piece.count("{")
        if braces and (braces > 1 or piece[0] != "{" or piece[-1] != "}" or piece.count("}") > 1):
            return None
        if not braces and "}" in piece:
            return None
        out.append(piece)
    return out


def declared(m: re.Match, line: int) -> list[ir.Variable]:
    """The variables of one declaration `_DECL` matched (all on `line`), as
    ``var_decl`` builds them."""
    linkage, state, attrs_text, names_text = m.groups()
    type_name, align = "", None  # the last of each, as `verify.ptx.parse._variable` keeps
    for a in _ONE_ATTR.finditer(attrs_text):
        align_text, type_text = a.group(1), a.group(2)
        if align_text is not None:
            align = int_value(align_text)
        elif type_text is not None:
            type_name = type_text[1:]
    extern = ".extern" in linkage.split()
    out = []
    for v in _ONE_VAR.finditer(names_text):
        name, regs, arrays_text = v.groups()
        arrays = [
            int_value(a.group(1)) if a.group(1) else None for a in _ARRAY.finditer(arrays_text)
        ]
        count = None
        for n in arrays:
            count = None if n is None else (count or 1) * n
        out.append(
            ir.Variable(
                state[1:],
                name,
                type_name,
                align,
                count,
                bool(arrays),
                extern,
                int_value(regs) if regs is not None else None,
                line,
            )
        )
    return out


class _Operands:
    """Operands from their text, by the grammar's ``operand`` rule."""

    def __init__(self, text: str):
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            m = _OPERAND_TOKEN.match(text, pos)
            if m is None:
                if text[pos:].strip(_SPACE):
                    raise _GiveUp
                break
            self.tokens.append((_KINDS[m.lastindex or 0], m.group(m.lastindex or 0)))
            pos = m.end()
        self.at = 0

    def all(self) -> tuple[ir.Operand, ...]:
        items = [self.operand()]
        while self._take(","):
            items.append(self.operand())
        self._done()
        return tuple(items)

    def one_only(self) -> ir.Operand:
        found = self.operand()
        self._done()
        return found

    def _done(self) -> None:
        if self.at != len(self.tokens):
            raise _GiveUp

    def _peek(self) -> tuple[str, str]:
        return self.tokens[self.at] if self.at < len(self.tokens) else ("END", "")

    def _take(self, punct: str) -> bool:
        if self._peek() == ("", punct):
            self.at += 1
            return True
        return False

    def _next(self, *kinds: str) -> str:
        kind, value = self._peek()
        if kind not in kinds:
            raise _GiveUp
        self.at += 1
        return value

    def _expect(self, punct: str) -> None:
        if not self._take(punct):
            raise _GiveUp

    def operand(self) -> ir.Operand:
        kind, value = self._peek()
        self.at += 1
        if kind == "REG":
            if self._take("|"):
                return ir.RegPair(ir.Reg(value), ir.Reg(self._next("REG")))
            return ir.Reg(value)
        if kind == "INT":
            return ir.Imm(int_value(value))
        if kind == "FLOAT":
            return ir.FloatImm(value)
        if kind == "NAME":
            return ir.Sink() if value == "_" else ir.Sym(value)
        if value == "{":
            return ir.Vec(self._items("}"))
        if value == "(":
            if self._take(")"):
                return ir.Group(())
            return ir.Group(self._items(")"))
        if value == "!":
            return ir.NotReg(ir.Reg(self._next("REG")))
        if value == "[":
            return self._bracket()
        raise _GiveUp

    def _items(self, close: str) -> tuple[ir.Operand, ...]:
        items = [self.operand()]
        while self._take(","):
            items.append(self.operand())
        self._expect(close)
        return tuple(items)

    def _bracket(self) -> ir.Operand:
        kind, value = self._peek()
        self.at += 1
        if kind == "INT":
            self._expect("]")
            return ir.Addr(None, int_value(value))
        if kind not in ("REG", "NAME"):
            raise _GiveUp
        base: ir.Reg | ir.Sym = ir.Reg(value) if kind == "REG" else ir.Sym(value)
        if self._take(","):
            self._expect("{")
            coords = self._items("}")
            self._expect("]")
            return ir.TensorAddr(base, coords)
        offset = int_value(self._next("INT")) if self._take("+") else 0
        self._expect("]")
        return ir.Addr(base, offset)


# The top level's tokens, as far as `header` reads them (ptx.lark's SECTION,
# STRING, VERSION, INT, NAME, REG, directives and punctuation); each stands alone
# (a name, number or directive runs on into no name character).
_HEAD_TOKEN = re.compile(
    rf"(\.section[^{{]*\{{[^}}]*\}})|({_STRING})|(\.[A-Za-z_][\w$]*(?![\w$]))"
    rf"|(\d+\.\d+(?![\w$.]))|({_INT})|({_NAME})|({_REG})|([(),;{{}}\[\]<>])"
)
_HEAD_KINDS = ("", "SECTION", "STRING", "DIRECTIVE", "VERSION", "INT", "NAME", "REG", "")
_INITIALIZED = re.compile(
    _DECL.pattern.removesuffix(";")
    + rf"={_S}(?:{_INT}|\{{{_S}{_INT}(?:{_S},{_S}{_INT})*{_S}\}}){_S};"
)
_LINKAGES = (".visible", ".extern", ".weak", ".common")
_STATES = (".reg", ".shared", ".local", ".global", ".const", ".param", ".sreg")
_TYPES = re.compile(_TYPE)
_PERFS = (
    *(".maxntid", ".reqntid", ".maxnreg", ".minnctapersm", ".maxnctapersm"),
    *(".reqnctapercluster", ".maxclusterrank", ".explicitcluster"),
)


def header(text: str, spans: list[tuple[int, int, list]]) -> list | None:
    """The top level's items as lark's rules give them for the text with each body
    of `spans` replaced by a stand-in label (`verify.ptx.parse._scanned`): a
    function's body is ``[Label(MARKER + k)]``; None where this reader is not sure
    (lark reads it then): a top-level declaration over several lines, a pragma, a
    directive it does not know."""
    try:
        return _Header(text, spans).items()
    except _GiveUp:
        return None


class _Header:
    """The tokens between the bodies, read one item at a time."""

    def __init__(self, text: str, spans: list[tuple[int, int, list]]):
        self.text, self.spans = text, spans
        self.pos, self.body = 0, 0  # the next token's search start; the next span
        self._at, self._line = 0, 1

    def _line_of(self, pos: int) -> int:
        self._line += self.text.count("\n", self._at, pos)
        self._at = pos
        return self._line

    def _peek(self) -> tuple[str, str, int]:
        """(kind, text, start) of the next token; ("END", "", end) after the last."""
        pos = _GAP.match(self.text, self.pos).end()  # type: ignore[union-attr]
        if pos >= len(self.text):
            return "END", "", pos
        m = _HEAD_TOKEN.match(self.text, pos)
        if m is None:
            raise _GiveUp
        return _HEAD_KINDS[m.lastindex or 0], m.group(), pos

    def _next(self, *kinds: str) -> tuple[str, int]:
        """The next token's text and line, where it is of one of `kinds` (a kind, or
        a punctuation's or a directive's own text)."""
        kind, value, start = self._peek()
        if kind not in kinds and not (kind in ("DIRECTIVE", "") and value in kinds):
            raise _GiveUp
        self.pos = start + len(value)
        return value, self._line_of(start)

    def _take(self, punct: str) -> bool:
        if self._peek()[1] == punct:
            self._next(punct)
            return True
        return False

    def items(self) -> list | None:
        out: list = []
        while True:
            kind, value, start = self._peek()
            if kind == "END":
                return out if self.body == len(self.spans) else None
            if kind == "SECTION" or value == ";":
                self.pos = start + len(value)
            elif value in (".version", ".target", ".address_size", ".file"):
                out.append(self._directive())
            elif value in _LINKAGES or value in (".entry", ".func"):
                out.append(self._function_or_declaration(start))
            elif value in _STATES:
                out.append(self._declaration(start))
            else:
                raise _GiveUp

    def _directive(self) -> tuple:
        word = self._next(".version", ".target", ".address_size", ".file")[0]
        if word == ".version":
            return ("version", self._next("VERSION")[0])
        if word == ".target":
            names = [self._next("NAME")[0]]
            while self._take(","):
                names.append(self._next("NAME")[0])
            return ("target", tuple(names))
        if word == ".address_size":
            return ("address_size", int_value(self._next("INT")[0]))
        number, path = int_value(self._next("INT")[0]), self._next("STRING")[0][1:-1]
        while self._take(","):
            self._next("INT")
        return ("file", (number, path))

    def _function_or_declaration(self, start: int):
        while self._peek()[1] in _LINKAGES:
            self._next(*_LINKAGES)
        if self._peek()[1] in _STATES:
            return self._declaration(start)
        entry = self._next(".entry", ".func")[0] == ".entry"
        if self._take("("):
            self._heads()  # the return parameters: read, not kept (as `_Build.function`)
        name, line = self._next("NAME")
        params = self._heads() if self._take("(") else []
        perf: dict[str, tuple[int, ...]] = {}
        while self._peek()[1] in (*_PERFS, ".noreturn"):
            word = self._next(*_PERFS, ".noreturn")[0]
            values: list[int] = []
            if word != ".noreturn" and self._peek()[0] == "INT":
                values.append(int_value(self._next("INT")[0]))
                while self._take(","):
                    values.append(int_value(self._next("INT")[0]))
            perf[word[1:]] = tuple(values)
        fn = ir.Function(name, entry, params, line, perf=perf)
        if self._take(";"):
            return fn
        kind, value, at = self._peek()
        if value != "{" or self.body >= len(self.spans) or self.spans[self.body][0] != at + 1:
            raise _GiveUp
        fn.body.append(ir.Label(f"{MARKER}{self.body}", self._line_of(at)))
        self.pos = self.spans[self.body][1] + 1  # past the body's closing brace
        self.body += 1
        return fn

    def _heads(self) -> list[ir.Variable]:
        """``decl_head ("," decl_head)* ")"`` (the "(" taken), or just ")"."""
        if self._take(")"):
            return []
        heads = [self._head()]
        while self._take(","):
            heads.append(self._head())
        self._next(")")
        return heads

    def _head(self) -> ir.Variable:
        """``STATE attr* var_name`` as `verify.ptx.parse._variable` builds it."""
        space = self._next(*_STATES)[0][1:]
        type_name, align = "", None
        while True:
            kind, value, _ = self._peek()
            if value == ".align":
                self._next(".align")
                align = int_value(self._next("INT")[0])
            elif kind == "DIRECTIVE" and (_TYPES.fullmatch(value) or value == ".ptr"):
                self._next(value)
                type_name = value[1:] if value != ".ptr" else type_name
            elif value in _STATES:
                self._next(value)
            else:
                break
        name, line = self._next("NAME", "REG")
        regs = None
        if self._take("<"):
            regs = int_value(self._next("INT")[0])
            self._next(">")
        arrays: list[int | None] = []
        while self._take("["):
            arrays.append(None if self._take("]") else int_value(self._next("INT")[0]))
            if arrays[-1] is not None:
                self._next("]")
        count = None
        for n in arrays:
            count = None if n is None else (count or 1) * n
        return ir.Variable(space, name, type_name, align, count, bool(arrays), False, regs, line)

    def _declaration(self, start: int) -> list[ir.Variable]:
        """A top-level declaration on one line, as a body's (`declared`), maybe with
        integers to start it (Triton's message strings), which lark reads and drops."""
        m = _DECL.match(self.text, start) or _INITIALIZED.match(self.text, start)
        if m is None:
            raise _GiveUp
        self.pos = m.end()
        return declared(m, self._line_of(start))
