"""Shared-memory instructions of a trace as accesses: which allocation each
address lies in, its offset there, and the instruction verify's bank model
knows it as.

An address is modelled when it is one shared variable's address plus an
offset that does not involve any variable's address (`split_base`); a
cp.async's global source likewise is one pointer parameter plus an offset.
Everything else is a reason: an address loaded from memory, a generic pointer
this reader cannot place, an instruction not modelled yet (TMA, wgmma, atomics).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from verify.errors import SpecError
from verify.model.expr import BinOp, Const, Expr, Var, free_vars
from verify.model.instructions import parse_instruction
from verify.ptx import ir
from verify.ptx.trace import Event
from verify.ptx.values import Context, Unknown, Value

SHARED_SYMBOL = "smem_"  # prefix of the variables that stand for shared variables' addresses
POINTER = "param_"
_SPACES = ("shared", "shared::cta", "shared::cluster", "global", "local", "param", "const")
_NOT_MODELLED = {
    "wgmma": "wgmma reads its shared-memory operands itself (the Hopper issue)",
    "bulk": "a TMA/bulk copy (cp.async.bulk): the Hopper issue",
    "atom": "an atomic on shared memory: listed, its bank cost is not modelled",
    "red": "a reduction on shared memory: listed, its bank cost is not modelled",
    "cluster": "distributed shared memory (shared::cluster) is not modelled",
}


@dataclass
class Access:
    event: Event
    instruction: str  # verify's spelling: "ld.shared.v4.b32", "cp.async.cg.16"
    allocation: str | None = None
    offset: Value = field(default_factory=lambda: Unknown("not traced"))
    source_param: str | None = None
    source: Value | None = None  # a cp.async's global offset from its pointer parameter
    source_vars: set[str] | None = None  # the variables its spec's source reads
    reduced: set[str] = field(default_factory=set)  # of which reduced to 0..128 there
    reason: str = ""  # set when the access is not modelled
    # a cp.async's [src-size == copy size] (0/1): below it the copy zero-fills
    full: Value = field(default_factory=lambda: Const(1))
    # a cp.async.cg whose src-size is a register: ptxas emits LDGSTS...ZFILL, which
    # the H200 serves at twice rule S's wavefronts (`verify.ptx.check.zfill_figures`)
    zfill: bool = False
    # the src-size is 0 or the copy size (`_zero_or`): ptxas predicates the copy, so
    # `full` is a guard (a lane whose src-size is 0 copies nothing), not a zero fill
    masks: bool = False

    @property
    def bytes(self) -> int:
        return parse_instruction(self.instruction).bytes_per_address


def is_memory(instr: ir.Instr) -> bool:
    """Instructions that may touch shared memory (generic ld/st are placed later)."""
    return _memory_opcode(instr.opcode)


@lru_cache(maxsize=4096)
def _memory_opcode(opcode: str) -> bool:
    """`is_memory` by the opcode alone, which is all it reads: once per opcode, not
    at each step of each pass of the trace."""
    parts = opcode.split(".")
    head = parts[0]
    if head in ("fence", "membar", "bar", "barrier"):
        return False  # orders memory, reads and writes none
    if head in ("ldmatrix", "stmatrix") or any(q.startswith("shared") for q in parts):
        return True
    if head == "wgmma" and "mma_async" in parts:
        return True
    if head == "tcgen05" and parts[1:2] in (["mma"], ["cp"]):
        return True  # reads shared memory through descriptors (verify.ptx.hopper)
    return head in ("ld", "st") and not any(q in _SPACES for q in parts)


def split_base(e: Expr, prefix: str) -> tuple[str, Expr] | Unknown:
    """(variable, rest) when e = variable + rest with the variable's name starting
    with `prefix` and no other such variable anywhere in e."""
    terms: list[Expr] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, BinOp) and x.op == "+":
            stack += [x.b, x.a]
        else:
            terms.append(x)
    bases = [t for t in terms if isinstance(t, Var) and t.name.startswith(prefix)]
    rest = [t for t in terms if t not in bases[:1]]
    if len(bases) != 1 or any(v.startswith(prefix) for t in rest for v in free_vars(t)):
        what = "a shared variable" if prefix == SHARED_SYMBOL else "a pointer parameter"
        return Unknown(f"the address is not {what}'s address plus an offset")
    out: Expr = Const(0)
    for t in rest:
        out = t if out == Const(0) else BinOp("+", out, t)
    return bases[0].name, out


def _address(event: Event, operand: ir.Operand, ctx: Context, symbol) -> Value:
    if not isinstance(operand, ir.Addr):
        return Unknown("an address operand this reader does not read")
    if isinstance(operand.base, ir.Reg):
        base = event.state.get(operand.base.name, Unknown(f"{operand.base.name} is unset"))
    elif isinstance(operand.base, ir.Sym):
        base = symbol(operand.base.name)
    else:
        base = Const(0)
    if isinstance(base, Unknown):
        return base
    base = ctx.rebuild(base)
    return ctx.op("+", base, Const(operand.offset)) if operand.offset else base


def instruction_name(instr: ir.Instr) -> str | Unknown:
    """verify's name for a shared-memory instruction, or why it has none."""
    parts = instr.parts
    head = parts[0]
    for key, reason in _NOT_MODELLED.items():
        if key == head or key in parts or (key == "cluster" and "shared::cluster" in parts):
            return Unknown(f"not modelled: {reason}")
    if head in ("ldmatrix", "stmatrix"):
        try:
            parse_instruction(instr.opcode)
        except SpecError as e:  # a shape or type the table lacks (.m16n8, .b8): that op only
            return Unknown(f"not modelled: {e.message}")
        return instr.opcode
    if head == "cp" and parts[1:2] == ["async"]:
        cache = next((q for q in parts if q in ("ca", "cg")), None)
        size = instr.operands[2] if len(instr.operands) > 2 else None
        if cache is None or not isinstance(size, ir.Imm):
            return Unknown(f"not modelled: {instr.opcode} without a constant copy size")
        return f"cp.async.{cache}.{size.value}"
    if head in ("ld", "st"):
        vec = [q for q in parts if q in ("v2", "v4", "v8")]
        types = [q for q in parts if q[:1] in "bsuf" and q[1:].isdigit() or q in ("f16x2",)]
        if not types:
            return Unknown(f"not modelled: {instr.opcode} without a type")
        return ".".join([head, "shared", *vec, types[-1]])
    return Unknown(f"not modelled: {instr.opcode}")


def access_of(event: Event, ctx: Context, symbol) -> Access:
    instr = event.instr
    name = instruction_name(instr)
    if isinstance(name, Unknown):
        return Access(event, instr.opcode, reason=name.reason)
    head = instr.parts[0]
    operand = instr.operands[1] if head in ("ld", "ldmatrix") else instr.operands[0]
    address = _address(event, operand, ctx, symbol)
    access = Access(event, name)
    if isinstance(address, Unknown):
        access.reason = address.reason
        return access
    placed = split_base(address, SHARED_SYMBOL)
    if isinstance(placed, Unknown):
        generic = head in ("ld", "st") and "shared" not in instr.parts
        access.reason = "" if generic else placed.reason
        return access
    access.allocation, access.offset = placed
    if head == "cp":
        _source(access, event, ctx, symbol)
    return access


def _source(access: Access, event: Event, ctx: Context, symbol) -> None:
    instr = event.instr
    src = _address(event, instr.operands[1], ctx, symbol)
    if isinstance(src, Unknown):
        access.source = src
        return
    placed = split_base(src, POINTER)
    if isinstance(placed, Unknown):
        access.source = placed
        return
    access.source_param, access.source = placed
    if len(instr.operands) > 3:
        given, size = instr.operands[3], instr.operands[2]
        assert isinstance(size, ir.Imm), "instruction_name refuses a copy size that is not one"
        if isinstance(given, ir.Reg):
            value = event.state.get(given.name, Unknown(f"{given.name} is unset"))
            access.masks = _zero_or(value, size.value, ctx)
            access.zfill = "cg" in instr.parts and not access.masks
        elif isinstance(given, ir.Imm):
            value = Const(given.value)
        else:
            value = Unknown("a src-size operand this reader does not read")
        access.full = value if isinstance(value, Unknown) else ctx.equal(value, Const(size.value))


def _zero_or(value: Value, size: int, ctx: Context) -> bool:
    """The src-size is 0 or the copy size: a constant, or the size times 0/1
    predicates (Triton's mask: ``selp.b32 %r, 16, 0, %p``, maybe under another
    selp). ptxas then predicates the copy (``LDGSTS.E.BYPASS.LTC128B.128 [..],
    [..], P6``: every Triton copy in tests/data/ptx and tests/data/ttgir_ptx,
    through Triton's bundled ptxas for sm_90) instead of emitting the ZFILL form
    that costs twice (benchmarks/results/ptx_h200.md: src-size from memory, or
    ``min(16, bytes left)``)."""
    if isinstance(value, Unknown):
        return False
    if isinstance(value, Const):
        return value.value in (0, size)
    factors: list[Expr] = []
    stack: list[Expr] = [value]
    while stack:
        e = stack.pop()
        if isinstance(e, BinOp) and e.op == "*":
            stack += [e.a, e.b]
        else:
            factors.append(e)
    constants = [f for f in factors if isinstance(f, Const)]
    predicates = [f for f in factors if not isinstance(f, Const)]
    return [c.value for c in constants] == [size] and all(
        ctx.low(f) == 0 and ctx.top(f) == 1 for f in predicates
    )
