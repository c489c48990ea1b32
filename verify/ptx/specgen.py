"""The accesses of one shared allocation as a verify spec.

Addresses are bytes, so the spec's element is ``u8`` and each access reads a
formula layout over the allocation's bytes whose domain ends where the access
would run past the allocation (``layout M16(a in 0..SIZE - 15) = a`` for a
16-byte access): the implicit in_bounds check is then "every byte it touches
lies in the allocation". The allocation's declared alignment is the spec's
``buffer align``, so bank figures hold for every base the alignment allows.

A cp.async's global source is its offset from the pointer parameter it reads,
in a layout ``G<k>`` that holds every value, under ``global align N``. Its
lane-independent terms shift every lane's source by one amount U; rule C and
rule S read sources only modulo 128 bytes and through which of them share a
128-byte line, and both are functions of (base + U) mod 128 alone. A term that
is a polynomial in its variables repeats modulo 128 when any one variable moves
by 128, so each variable found only in such terms ranges over 0..128 here:
every residue U can take is taken, and no other."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from verify.model.expr import BinOp, Const, Expr, Range, Var, bounds, free_vars, substitute
from verify.ptx.memory import Access
from verify.ptx.values import Unknown
from verify.spec import direct
from verify.spec.ast import Spec
from verify.spec.parser import MAX_TOKENS_PER_STATEMENT

_TOKEN = re.compile(r"\w+|[^\s\w]")  # counts at least the spec lexer's tokens
RESIDUES = 128  # bytes: the period of a global source's banks and lines
MAX_SOURCE_RANGE = 1 << 12  # a per-lane source variable wider than this needs an assumption


@dataclass
class SharedSpec:
    allocation: str
    label: str  # the PTX variable's name
    lines: list[str] = field(default_factory=list)
    origin: dict[int, tuple[Access, str]] = field(default_factory=dict)  # line -> access, name
    names: dict[str, Access] = field(default_factory=dict)
    # line -> (its text, how `verify.spec.direct` reads it without the parser)
    readers: dict[int, tuple[str, direct.Reader]] = field(default_factory=dict)

    def add(
        self,
        text: str,
        access: Access | None = None,
        name: str = "",
        reader: direct.Reader | None = None,
    ) -> None:
        self.lines.append(text)
        if access is not None:
            self.origin[len(self.lines)] = (access, name)
        if reader is not None:
            self.readers[len(self.lines)] = (text, reader)

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def read(self, file: str, lines: list[str] | None = None) -> Spec:
        """The spec as `verify.spec.parser.parse_text` reads its text (or `lines`,
        this spec's lines edited: a line changed since is read by the parser)."""
        return direct.read(self.lines if lines is None else lines, self.readers, file)


def _terms(e: Expr) -> list[Expr]:
    out, stack = [], [e]
    while stack:
        x = stack.pop()
        if isinstance(x, BinOp) and x.op == "+":
            stack += [x.b, x.a]
        else:
            out.append(x)
    return out


def _polynomial(e: Expr) -> bool:
    if isinstance(e, BinOp):
        return e.op in ("+", "*") and _polynomial(e.a) and _polynomial(e.b)
    return True


def _multiple(e: Expr, k: int) -> bool:
    """e is provably a multiple of k: a product with such a factor, a shift by
    at least log2 k, or a sum of such."""
    if isinstance(e, Const):
        return e.value % k == 0
    if isinstance(e, BinOp) and e.op == "*":
        return _multiple(e.a, k) or _multiple(e.b, k)
    if isinstance(e, BinOp) and e.op == "+":
        return _multiple(e.a, k) and _multiple(e.b, k)
    if isinstance(e, BinOp) and e.op == "<<" and isinstance(e.b, Const):
        # x << s is x * 2^s for any integer x (a block's pid_n, however derived)
        return (1 << e.b.value) % k == 0 or _multiple(e.a, k)
    return False


def _expanded(e: Expr) -> Expr:
    """`e` with every product by a constant (and shift by one) spread over the sum
    it multiplies, so each term of a source is a term of its own: Triton's
    ``((pid_m * 128 + row) * stride + col) * 2`` has ``pid_m * 128 * stride * 2``,
    a multiple of 128 bytes whatever the block, apart from the lane's terms."""
    if not isinstance(e, BinOp):
        return e
    a, b = _expanded(e.a), _expanded(e.b)
    factor: Expr | None = None
    if e.op == "<<" and isinstance(b, Const) and b.value <= 64:
        x, factor = a, Const(1 << b.value)
    elif e.op == "*" and isinstance(b, Const):
        x, factor = a, b
    elif e.op == "*" and isinstance(a, Const):
        x, factor = b, a
    if factor is not None and isinstance(x, BinOp) and x.op == "+":
        return BinOp("+", _expanded(BinOp("*", x.a, factor)), _expanded(BinOp("*", x.b, factor)))
    return BinOp(e.op, a, b)


def _sum(terms: list[Expr]) -> Expr:
    out: Expr = Const(0)
    for t in terms:
        out = t if out == Const(0) else BinOp("+", out, t)
    return out


def source_expr(
    access: Access, ranges: dict[str, Range], shared_vars: set[str]
) -> tuple[Expr, dict[str, Range]] | Unknown:
    """(source offset, the ranges of its own variables) per the module doc."""
    src = access.source
    assert src is not None, "only a cp.async has a source"
    if isinstance(src, Unknown):
        return Unknown(f"its global source: {src.reason}")
    src = _expanded(src)
    lane_terms = [t for t in _terms(src) if "lane" in free_vars(t)]
    # a lane-independent term that is a multiple of 128 moves no source's residue
    uniform = [t for t in _terms(src) if "lane" not in free_vars(t) and not _multiple(t, RESIDUES)]
    lane_vars = {v for t in lane_terms for v in free_vars(t)}
    for v in sorted(lane_vars - {"lane"}):
        if ranges[v].size > MAX_SOURCE_RANGE:
            return Unknown(
                f"its global source's per-lane offset depends on {v} "
                f"(--assume {v}=VALUE decides it)"
            )
    own: dict[str, Range] = {}
    renamed: dict[str, Expr] = {}
    if all(_polynomial(t) for t in uniform):
        for v in sorted({v for t in uniform for v in free_vars(t)} - lane_vars):
            if v in shared_vars and ranges[v].size <= RESIDUES:
                continue  # the same variable as the destination's, already a full period
            renamed[v] = Var(f"g_{v}")
            own[f"g_{v}"] = Range(0, min(RESIDUES, ranges[v].size))
    access.source_vars = {v for t in lane_terms + uniform for v in free_vars(t)}
    access.reduced = set(renamed)
    expr = substitute(_sum(lane_terms + uniform), renamed)
    return expr, own


def build(
    allocation: str,
    label: str,
    align: int,
    size: int | None,
    accesses: list[Access],
    ranges: dict[str, Range],
    global_align: int,
) -> tuple[SharedSpec, list[tuple[Access, str]]]:
    """The spec of one allocation, and the accesses it could not write (with why)."""
    spec = SharedSpec(allocation, label)
    spec.add(f"# verify ptx: shared variable {label}")
    spec.add(*_statement(direct.dtype("u8")))
    spec.add(*_statement(direct.buffer_align(align)))
    if any(a.source is not None for a in accesses):
        spec.add(*_statement(direct.global_align(global_align)))
    refused: list[tuple[Access, str]] = []
    widths: dict[int, str] = {}
    extent = size
    if extent is None:  # dynamic memory of unstated size: as far as any access reaches
        extent = max(bounds(a.offset, ranges)[1] + a.bytes for a in accesses)  # type: ignore[arg-type]
    for k, access in enumerate(accesses):
        offset = access.offset
        assert not isinstance(offset, Unknown), "only placed accesses reach specgen"
        variables = free_vars(offset) - {"lane"}
        own: dict[str, Range] = {}
        source: tuple[str, list[Expr]] | None = None
        if access.source is not None:
            found = source_expr(access, ranges, variables)
            if isinstance(found, Unknown):
                refused.append((access, found.reason))
                continue
            src, own = found
            all_ranges = {**ranges, **own}
            top = bounds(src, all_ranges)[1]
            text, reader = direct.identity_layout(f"G{k}", "a", Range(0, top + 1))
            spec.add(text, access, f"G{k}", reader)
            source = (f"G{k}", [src])
            variables |= free_vars(src) - {"lane"}
        n = access.bytes
        if n not in widths:
            widths[n] = f"M{n}"
            spec.add(
                *_statement(direct.identity_layout(f"M{n}", "a", Range(0, max(1, extent - n + 1))))
            )
        loops = [(v, ({**ranges, **own})[v]) for v in sorted(variables)]
        name = f"a{k}"
        line, reader = direct.access(name, access.instruction, widths[n], [offset], source, loops)
        if len(_TOKEN.findall(line)) > MAX_TOKENS_PER_STATEMENT:
            refused.append((access, "its address is longer than a spec statement may be"))
            continue
        spec.names[name] = access
        spec.add(line, access, name, reader)
        text, reader = direct.check_conflict_free(name)
        spec.add(text, access, name, reader)
    return spec, refused


def _statement(written: tuple[str, direct.Reader | None]):
    """`SharedSpec.add`'s arguments for a statement of no access."""
    text, reader = written
    return text, None, "", reader
