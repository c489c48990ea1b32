"""The statements of a PTX module, as the concrete interpreter needs them.

Written apart from verify's PTX reader (verify/ptx/), from the PTX ISA 8.x
(docs.nvidia.com/cuda/parallel-thread-execution): sec. 4 (syntax: statements end in
`;`, directives start with `.`, labels end in `:`, `//` and `/* */` comments), sec. 5
(state spaces, `.shared` variables with `.align` and array sizes, `.extern .shared`
arrays of unknown size, `.param` kernel parameters, byte arrays for structs), sec. 9.7
(instruction syntax: `@p`/`@!p` guards, `opcode.qualifiers`, comma-separated operands,
`[reg+imm]` addresses, `{a, b}` vectors, `p|q` predicate pairs) and sec. 11 (`.loc`,
`.file`, `.maxntid`, `.reqntid`).

`parse(text)` returns a `Module`; anything it cannot place raises `PtxSyntaxError`
with the line. Nothing is interpreted here.
"""

import re
from dataclasses import dataclass, field

# Directives that end at the end of their line rather than at a `;` (PTX ISA sec. 11).
LINE_DIRECTIVES = (
    ".loc",
    ".file",
    ".version",
    ".target",
    ".address_size",
    ".maxntid",
    ".reqntid",
    ".minnctapersm",
    ".maxnreg",
    ".maxclusterrank",
    ".reqnctapercluster",
    ".explicitcluster",
    ".noreturn",
    ".pragma",
)
TYPE_BYTES = {
    "b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2,
    "b32": 4, "u32": 4, "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4,
    "b64": 8, "u64": 8, "s64": 8, "f64": 8, "b128": 16,
}  # fmt: skip


class PtxSyntaxError(Exception):
    """A statement the interpreter's reading of PTX does not cover, with its line."""

    def __init__(self, line: int, message: str):
        super().__init__(f"PTX line {line}: {message}")
        self.line = line


@dataclass(frozen=True)
class Instruction:
    """One instruction statement: `@guard opcode operands;` at PTX line `line`."""

    line: int
    opcode: str  # as written, e.g. ld.shared.v4.u32
    operands: tuple[str, ...]  # raw operand texts, split at top-level commas
    guard: tuple[str, bool] | None  # (predicate register, negated)
    loc: tuple[int, int] | None  # (.file index, source line) of the last .loc
    outer_loc: tuple[int, int] | None  # the call site in the function being compiled
    # that the .loc's inlining chain (`inlined_at`, sec. 11.5.3) starts from

    @property
    def parts(self) -> list[str]:
        return self.opcode.split(".")


@dataclass(frozen=True)
class SharedVariable:
    name: str
    size: int  # bytes; 0 for an .extern array (dynamic shared memory)
    align: int
    extern: bool


@dataclass(frozen=True)
class Param:
    name: str
    size: int
    align: int


@dataclass
class Function:
    name: str
    entry: bool
    params: list[Param] = field(default_factory=list)
    body: list[Instruction] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)  # label -> index into body
    shared: list[SharedVariable] = field(default_factory=list)  # declared inside
    ntid: tuple[int, ...] | None = None  # .reqntid or .maxntid


@dataclass
class Module:
    functions: dict[str, Function] = field(default_factory=dict)
    shared: list[SharedVariable] = field(default_factory=list)  # module level
    files: dict[int, str] = field(default_factory=dict)


def _strip_comments(text: str) -> str:
    """Blank out comments, keeping every newline so lines keep their numbers."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text[i] == '"':
            j = text.find('"', i + 1)
            j = n if j < 0 else j + 1
            out.append(text[i:j])
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def split_operands(text: str) -> tuple[str, ...]:
    """Split at commas outside brackets and braces."""
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return tuple(parts)


_DECL = re.compile(
    r"^(?P<extern>\.extern\s+)?\.shared\s+(?:\.align\s+(?P<align>\d+)\s+)?"
    r"\.(?P<type>\w+)\s+(?P<name>[\w$.]+)(?P<dims>(?:\[\d*\])*)\s*(?:=.*)?$",
    re.S,
)
# `.ptr [.space] [.align N]` after the type says where a pointer parameter points
# and the pointee's alignment (PTX ISA sec. 5.1.6.1); it does not change the parameter.
_PARAM = re.compile(
    r"^\.param\s+(?:\.align\s+(?P<align>\d+)\s+)?\.(?P<type>\w+)\s+"
    r"(?:\.ptr\s+(?:\.(?:global|shared|const|local)\s+)?(?:\.align\s+\d+\s+)?)?"
    r"(?P<name>[\w$.]+)(?P<dims>(?:\[\d+\])*)$"
)
_GUARD = re.compile(r"^@(!?)(%[\w$.]+)\s+")


def _array_bytes(type_name: str, dims: str, line: int) -> int:
    if type_name not in TYPE_BYTES:
        raise PtxSyntaxError(line, f"expected a sized type, found .{type_name}")
    count = 1
    for d in re.findall(r"\[(\d*)\]", dims):
        count *= int(d) if d else 0
    return TYPE_BYTES[type_name] * count


def shared_variable(text: str, line: int) -> SharedVariable:
    m = _DECL.match(text)
    if not m:
        raise PtxSyntaxError(line, f"expected a .shared declaration, found {text!r}")
    align = int(m["align"]) if m["align"] else TYPE_BYTES.get(m["type"], 1)
    return SharedVariable(
        m["name"], _array_bytes(m["type"], m["dims"], line), align, bool(m["extern"])
    )


def _param(text: str, line: int) -> Param:
    m = _PARAM.match(text.strip())
    if not m:
        raise PtxSyntaxError(line, f"expected a .param declaration, found {text!r}")
    size = _array_bytes(m["type"], m["dims"], line)
    align = int(m["align"]) if m["align"] else TYPE_BYTES[m["type"]]
    return Param(m["name"], size, align)


def _statements(text: str):
    """Yield (line, kind, text): kind is 'line' (a line directive), 'label', 'open',
    'close' or 'stmt' (text up to its `;`, or an .entry/.func header up to its `)`).
    Debug `.section` blocks, which have no `;`, are skipped whole."""
    pending: list[str] = []
    start = 0
    section_depth = 0  # > 0 inside a skipped .section block; -1 before its '{'
    for number, raw in enumerate(_strip_comments(text).split("\n"), start=1):
        rest = raw.strip()
        if section_depth or (not pending and rest.startswith(".section")):
            section_depth = _section_depth(section_depth, rest)
            continue
        while rest:
            if not pending:
                if rest[0] in "{}":
                    yield number, "open" if rest[0] == "{" else "close", rest[0]
                    rest = rest[1:].strip()
                    continue
                if rest.startswith(LINE_DIRECTIVES) and not rest.startswith(".pragma"):
                    yield number, "line", rest
                    break
                label = re.match(r"^([\w$]+):(?!:)", rest)
                if label:
                    yield number, "label", label.group(1)
                    rest = rest[label.end() :].strip()
                    continue
                start = number
            pending.append(rest)
            joined = " ".join(pending)
            semi = joined.find(";")
            close = _header_close(joined)
            if close >= 0 and (semi < 0 or close < semi):
                cut = close + 1
            elif semi >= 0:
                cut = semi
            else:
                break
            yield start, "stmt", joined[:cut].strip()
            pending = []
            rest = joined[cut + (1 if cut == semi else 0) :].strip()


def _section_depth(depth: int, rest: str) -> int:
    """Brace depth after a line of a skipped .section block (-1: its '{' is to come)."""
    if depth == 0:
        depth = -1
    for ch in rest:
        if ch == "{":
            depth = 1 if depth == -1 else depth + 1
        elif ch == "}":
            depth -= 1
    return depth


def _header_close(joined: str) -> int:
    """Index of the ')' that ends an .entry/.func parameter list, or -1."""
    m = re.search(r"\.(entry|func)\b", joined)
    if not m:
        return -1
    depth, seen = 0, 0
    for i in range(m.end(), len(joined)):
        if joined[i] == "(":
            depth, seen = depth + 1, seen + 1
        elif joined[i] == ")":
            depth -= 1
            # a .func's return list comes first: the header ends with the list
            # that follows the function's name
            if depth == 0 and _name_before_list(joined, m.end(), i):
                return i
    return -1


def _name_before_list(joined: str, after: int, close: int) -> bool:
    open_at = _matching_open(joined, close)
    return bool(re.search(r"[\w$]\s*$", joined[after:open_at]))


def _matching_open(joined: str, close: int) -> int:
    depth = 0
    for i in range(close, -1, -1):
        if joined[i] == ")":
            depth += 1
        elif joined[i] == "(":
            depth -= 1
            if depth == 0:
                return i
    return 0


def parse(text: str) -> Module:
    module = Module()
    func: Function | None = None
    depth = 0  # brace depth inside the current function
    loc: tuple[int, int] | None = None
    outer: tuple[int, int] | None = None
    parents: dict[tuple[int, ...], tuple[int, ...]] = {}  # location -> its inlined_at
    for line, kind, stmt in _statements(text):
        if kind == "line":
            loc = _line_directive(module, func, stmt, loc)
            if stmt.startswith(".loc"):
                outer = _outer_location(stmt, parents)
        elif kind == "open":
            depth += 1
        elif kind == "close":
            depth -= 1
            if func is not None and depth == 0:
                func = None
        elif kind == "label":
            if func is None:
                raise PtxSyntaxError(line, f"label {stmt} outside a function")
            func.labels[stmt] = len(func.body)
        elif func is not None and depth > 0:
            _body_statement(func, stmt, line, (loc, outer))
        elif stmt:
            func = _module_statement(module, stmt, line) or func
    return module


def _outer_location(stmt: str, parents: dict[tuple[int, ...], tuple[int, ...]]):
    """Follow `.loc f l c, function_name F, inlined_at f' l' c'` back to a location
    that was not inlined. nvcc writes an inlining chain as consecutive .loc lines,
    outermost first; each inlined location remembers where it was last inlined at, so
    a later .loc that names only the innermost step still resolves to the kernel's line."""
    here = tuple(int(w) for w in stmt.replace(",", " ").split()[1:4])
    at = re.search(r"inlined_at\s+(\d+)\s+(\d+)\s+(\d+)", stmt)
    if not at:
        return here[:2]
    cur = tuple(int(g) for g in at.groups())
    parents[here] = cur
    seen = {here}
    while cur in parents and cur not in seen:
        seen.add(cur)
        cur = parents[cur]
    return cur[:2]


def _line_directive(module, func, stmt, loc):
    words = stmt.replace(",", " ").split()
    if words[0] == ".loc":
        return (int(words[1]), int(words[2]))
    if words[0] == ".file":
        path = re.search(r'"([^"]*)"', stmt)
        module.files[int(words[1])] = path.group(1) if path else words[2]
    elif (
        words[0] in (".maxntid", ".reqntid")
        and func is not None
        and (func.ntid is None or words[0] == ".reqntid")
    ):
        func.ntid = tuple(int(w) for w in words[1:])
    return loc


def _module_statement(module: Module, stmt: str, line: int) -> Function | None:
    header = re.search(r"\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w$.]+)\s*\((.*)\)", stmt, re.S)
    if header and not stmt.startswith(".extern") and not stmt.endswith(";"):
        func = Function(header.group(2), header.group(1) == "entry")
        params = [p for p in split_operands(header.group(3)) if p]
        func.params = [_param(p, line) for p in params]
        module.functions[func.name] = func
        return func
    if re.match(r"^(\.extern\s+)?\.shared\b", stmt):
        module.shared.append(shared_variable(stmt, line))
    return None


def _body_statement(func: Function, stmt: str, line: int, locs) -> None:
    if stmt.startswith((".reg", ".local", ".param", ".pragma", ".const")):
        return
    if stmt.startswith(".shared"):
        func.shared.append(shared_variable(stmt, line))
        return
    guard = None
    m = _GUARD.match(stmt)
    if m:
        guard = (m.group(2), m.group(1) == "!")
        stmt = stmt[m.end() :]
    words = stmt.split(None, 1)
    if not words or words[0].startswith("."):
        raise PtxSyntaxError(line, f"expected an instruction, found {stmt!r}")
    operands = split_operands(words[1]) if len(words) > 1 else ()
    func.body.append(Instruction(line, words[0], operands, guard, *locs))
