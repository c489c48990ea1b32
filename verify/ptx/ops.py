"""One PTX instruction's effect on a thread's registers (`verify.ptx.values`).

Integer arithmetic, logic, shifts, conversions, selects, comparisons, bit-field
and byte-permute ops are followed exactly where their operands are known; every
other instruction makes its destinations `Unknown`, naming the opcode, so an
address computed from them is UNKNOWN with that reason, never guessed."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from verify.model.expr import Const, Expr, free_vars, substitute
from verify.ptx import ir
from verify.ptx.values import Context, Unknown, Value

_TYPES = {
    **{f"{k}{n}": n for k in "bsu" for n in (8, 16, 32, 64)},
    "pred": 1,
}
_CMP = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs")
WARP_LANES = 32


def type_of(instr: ir.Instr) -> tuple[str, int] | None:
    """(kind 'b'/'s'/'u'/'pred', width) of the last integer type qualifier."""
    for q in reversed(instr.parts):
        if q in _TYPES:
            return (q[0] if q != "pred" else "pred", _TYPES[q])
    return None


def destinations(instr: ir.Instr) -> list[str]:
    """Registers an instruction writes: its first operand, if that is a register."""
    if not instr.operands:
        return []
    first = instr.operands[0]
    if isinstance(first, ir.Reg):
        return [first.name]
    if isinstance(first, ir.RegPair):
        return [first.first.name, first.second.name]
    if isinstance(first, ir.Vec):
        return [x.name for x in first.items if isinstance(x, ir.Reg)]
    return []


class Machine:
    """Executes instructions on a register state (name -> Value)."""

    def __init__(self, ctx: Context, special: Callable[[str], Value], symbol: Callable, param):
        self.ctx = ctx
        self.special = special  # %tid.x and friends
        self.symbol = symbol  # a variable's name -> its address
        self.param = param  # (parameter, byte offset, bits) -> the value ld.param reads

    def read(self, state: Mapping[str, Value], op: ir.Operand, width: int) -> Value:
        if isinstance(op, ir.Reg):
            if op.name in state:
                return state[op.name]
            if not op.name[1:].rstrip("0123456789") or op.name[-1:].isdigit():
                return Unknown(f"{op.name} is read before it is written")
            return self.special(op.name)
        if isinstance(op, ir.Imm):
            return self.ctx.immediate(op.value, max(width, 1))
        if isinstance(op, ir.Sym):
            return self.symbol(op.name)
        return Unknown(f"an operand this reader does not follow ({type(op).__name__})")

    def step(self, state: dict[str, Value], instr: ir.Instr) -> None:
        dests = destinations(instr)
        if not dests:
            return
        head = instr.parts[0]
        handler = _HANDLERS.get(head)
        result: Value | None = None
        if handler is not None and len(dests) == 1:
            result = handler(self, state, instr)
        elif head == "setp" and len(dests) == 2:
            p = _setp(self, state, instr)
            state[dests[0]] = p
            state[dests[1]] = p if isinstance(p, Unknown) else self.ctx.negate(p)
            return
        elif head == "mov" and isinstance(instr.operands[0], ir.Vec):
            state.update(zip(dests, _unpack(self, state, instr, len(dests))))
            return
        for d in dests:
            state[d] = result if result is not None else Unknown(f"the result of {instr.opcode}")

    def args(self, state, instr: ir.Instr, width: int, n: int) -> list[Expr] | Unknown:
        values = [self.read(state, op, width) for op in instr.operands[1 : 1 + n]]
        for v in values:
            if isinstance(v, Unknown):
                return v
        return values  # type: ignore[return-value]


def _width(instr: ir.Instr) -> tuple[str, int]:
    return type_of(instr) or ("b", 32)


def _arith(op: str):
    def run(m: Machine, state, instr: ir.Instr) -> Value:
        kind, w = _width(instr)
        if instr.parts[0] in ("mul", "mad") and "wide" in instr.parts:
            return _wide(m, state, instr, kind, w)
        a = m.args(state, instr, w, 3 if instr.parts[0] == "mad" else 2)
        if isinstance(a, Unknown):
            return a
        ctx = m.ctx
        if instr.parts[0] == "mad":
            if "hi" in instr.parts:
                return Unknown("the high half of a product")
            return ctx.wrap(ctx.op("+", ctx.op("*", a[0], a[1]), a[2]), w)
        if op == "*" and "hi" in instr.parts:
            return _high(m, a, kind, w)
        if op == "-":
            return ctx.sub(a[0], a[1], w)
        imm = instr.operands[2] if len(instr.operands) > 2 else None
        if op == "+" and isinstance(imm, ir.Imm) and imm.value < 0:
            return ctx.sub(a[0], Const(-imm.value), w)
        return ctx.wrap(ctx.op(op, a[0], a[1]), w)

    return run


def _high(m: Machine, a: list[Expr], kind: str, w: int) -> Value:
    """mul.hi: the top w bits of the 2w-bit product (division by a constant
    compiles to it); signed where both operands are provably non-negative."""
    if kind == "s":
        for v in a[:2]:
            s = m.ctx.signed(v, w)
            if isinstance(s, Unknown):
                return s
    return m.ctx.op(">>", m.ctx.op("*", a[0], a[1]), Const(w))


def _wide(m: Machine, state, instr: ir.Instr, kind: str, w: int) -> Value:
    n = 3 if instr.parts[0] == "mad" else 2
    a = m.args(state, instr, w, n)
    if isinstance(a, Unknown):
        return a
    ctx = m.ctx
    if kind == "s":
        for i in range(2):
            s = ctx.signed(a[i], w)
            if isinstance(s, Unknown):
                return s
    product = ctx.op("*", a[0], a[1])
    if n == 3:
        addend = m.read(state, instr.operands[3], 2 * w)
        if isinstance(addend, Unknown):
            return addend
        product = ctx.op("+", product, addend)
    return ctx.wrap(product, 2 * w)


def _shift(op: str):
    def run(m: Machine, state, instr: ir.Instr) -> Value:
        kind, w = _width(instr)
        a = m.args(state, instr, w, 2)
        if isinstance(a, Unknown):
            return a
        x, k = a
        if not isinstance(k, Const) or k.value >= w:
            return Unknown(f"a shift by an amount this reader cannot bound ({instr.opcode})")
        if op == ">>" and kind == "s":
            if k.value == w - 1 and m.ctx.below(x, 1 << (w - 1)):
                return Const(0)  # the sign of a non-negative value
            s = m.ctx.signed(x, w)
            if isinstance(s, Unknown):
                return s
        return m.ctx.wrap(m.ctx.op(op, x, k), w)

    return run


def _logic(op: str):
    def run(m: Machine, state, instr: ir.Instr) -> Value:
        kind, w = _width(instr)
        a = m.args(state, instr, w, 2)
        if isinstance(a, Unknown):
            return a
        return m.ctx.op(op, a[0], a[1])

    return run


def _not(m: Machine, state, instr: ir.Instr) -> Value:
    _, w = _width(instr)
    a = m.args(state, instr, w, 1)
    if isinstance(a, Unknown):
        return a
    return m.ctx.op("^", a[0], Const((1 << w) - 1))


def _mov(m: Machine, state, instr: ir.Instr) -> Value:
    _, w = _width(instr)
    src = instr.operands[1] if len(instr.operands) > 1 else None
    if isinstance(src, ir.Vec):
        return _pack(m, state, src, w)
    a = m.args(state, instr, w, 1)
    return a if isinstance(a, Unknown) else a[0]


def _pack(m: Machine, state, vec: ir.Vec, w: int) -> Value:
    """``mov.b64 d, {lo, hi}``: the parts side by side, the first lowest (PTX ISA, mov)."""
    part = w // len(vec.items)
    out: Expr = Const(0)
    for i, item in enumerate(vec.items):
        v = m.read(state, item, part)
        if isinstance(v, Unknown) or not m.ctx.below(v, 1 << part):
            return v if isinstance(v, Unknown) else Unknown("a vector part wider than its slot")
        out = m.ctx.op("+", out, m.ctx.op("<<", v, Const(i * part)))
    return out


def _unpack(m: Machine, state, instr: ir.Instr, n: int) -> list[Value]:
    """``mov.b64 {lo, hi}, s``: the parts of s, the first its lowest bits."""
    _, w = _width(instr)
    part = w // n
    a = m.args(state, instr, w, 1)
    if isinstance(a, Unknown):
        return [a] * n
    x = a[0]
    return [m.ctx.op("%", m.ctx.op(">>", x, Const(i * part)), Const(1 << part)) for i in range(n)]


def _cvt(m: Machine, state, instr: ir.Instr) -> Value:
    types = [q for q in instr.parts[1:] if q in _TYPES]
    if len(types) != 2 or any(q.startswith("f") for q in instr.parts[1:]):
        return Unknown(f"a conversion this reader does not follow ({instr.opcode})")
    (dst, src) = types
    dw, sw = _TYPES[dst], _TYPES[src]
    a = m.args(state, instr, sw, 1)
    if isinstance(a, Unknown):
        return a
    x = a[0]
    if dw > sw and src[0] == "s":
        return m.ctx.signed(x, sw)
    return m.ctx.wrap(x, min(dw, sw))


def _selp(m: Machine, state, instr: ir.Instr) -> Value:
    _, w = _width(instr)
    a = m.args(state, instr, w, 3)
    if isinstance(a, Unknown):
        return a
    return m.ctx.select(a[2], a[0], a[1])


def _setp(m: Machine, state, instr: ir.Instr) -> Value:
    cmp = next((q for q in instr.parts if q in _CMP), None)
    kind, w = _width(instr)
    if cmp is None or any(q in ("and", "or", "xor") for q in instr.parts) or kind == "pred":
        return Unknown(f"a comparison this reader does not follow ({instr.opcode})")
    if any(q.startswith("f") for q in instr.parts[1:]):
        return Unknown("a floating-point comparison")
    a = m.args(state, instr, w, 2)
    if isinstance(a, Unknown):
        return a
    x, y = a
    ctx = m.ctx
    if kind == "s" and cmp in ("lt", "le", "gt", "ge"):
        flip = Const(1 << (w - 1))  # signed order is unsigned order with the sign bit flipped
        x, y = ctx.op("^", x, flip), ctx.op("^", y, flip)
    if cmp in ("eq", "ne"):
        p = ctx.equal(x, y)
        return p if cmp == "eq" or isinstance(p, Unknown) else ctx.negate(p)
    strict = {"lt": (x, y), "lo": (x, y), "gt": (y, x), "hi": (y, x)}
    if cmp in strict:
        return ctx.less(*strict[cmp])
    # a <= b is not (b < a)
    p = ctx.less(y, x) if cmp in ("le", "ls") else ctx.less(x, y)
    return p if isinstance(p, Unknown) else ctx.negate(p)


def _pred_logic(op: str):
    def run(m: Machine, state, instr: ir.Instr) -> Value:
        a = m.args(state, instr, 1, 1 if op == "not" else 2)
        if isinstance(a, Unknown):
            return a
        if op == "not":
            return m.ctx.negate(a[0])
        return m.ctx.op(op, a[0], a[1])

    return run


def _and_or_xor(op: str):
    logic = _logic(op)
    pred = _pred_logic(op)

    def run(m: Machine, state, instr: ir.Instr) -> Value:
        return (pred if "pred" in instr.parts else logic)(m, state, instr)

    return run


def _bfe(m: Machine, state, instr: ir.Instr) -> Value:
    kind, w = _width(instr)
    a = m.args(state, instr, w, 3)
    if isinstance(a, Unknown):
        return a
    x, pos, length = a
    if not (isinstance(pos, Const) and isinstance(length, Const)):
        return Unknown("a bit-field extract at a position this reader cannot bound")
    n = length.value
    if n == 0 or pos.value + n > w:
        return Unknown(f"a bit-field extract this reader does not follow ({instr.opcode})")
    field = m.ctx.op("&", m.ctx.op(">>", x, pos), Const((1 << n) - 1))
    if kind == "s" and not m.ctx.below(field, 1 << (n - 1)):
        # sign extension: the field's top bit copied into every bit above it
        sign = m.ctx.op(">>", field, Const(n - 1))
        high = ((1 << w) - 1) ^ ((1 << n) - 1)
        return m.ctx.op("+", field, m.ctx.op("*", sign, Const(high)))
    return field


def _bfi(m: Machine, state, instr: ir.Instr) -> Value:
    _, w = _width(instr)
    a = m.args(state, instr, w, 4)
    if isinstance(a, Unknown):
        return a
    x, y, pos, length = a
    if not (isinstance(pos, Const) and isinstance(length, Const)):
        return Unknown("a bit-field insert at a position this reader cannot bound")
    mask = ((1 << length.value) - 1) << pos.value
    ctx = m.ctx
    kept = ctx.op("&", y, Const(((1 << w) - 1) & ~mask))
    inserted = ctx.op("&", ctx.op("<<", x, pos), Const(mask))
    return ctx.op("|", kept, inserted)


def _lop3(m: Machine, state, instr: ir.Instr) -> Value:
    _, w = _width(instr)
    a = m.args(state, instr, w, 4)
    if isinstance(a, Unknown):
        return a
    x, y, z, lut = a
    if not isinstance(lut, Const):
        return Unknown("lop3 with a table this reader cannot read")
    ctx, ones = m.ctx, Const((1 << w) - 1)
    out: Expr = Const(0)
    for minterm in range(8):  # bit i of the table: x = i & 4, y = i & 2, z = i & 1
        if not lut.value >> minterm & 1:
            continue
        term: Expr = ones
        for bit, v in ((4, x), (2, y), (1, z)):
            term = ctx.op("&", term, v if minterm & bit else ctx.op("^", v, ones))
        out = ctx.op("|", out, term)
    return out


def _prmt(m: Machine, state, instr: ir.Instr) -> Value:
    if len(instr.parts) > 2:
        return Unknown(f"a byte permute mode this reader does not follow ({instr.opcode})")
    a = m.args(state, instr, 32, 3)
    if isinstance(a, Unknown):
        return a
    x, y, sel = a
    if not isinstance(sel, Const):
        return Unknown("a byte permute with a selector this reader cannot read")
    ctx = m.ctx
    both = ctx.op("|", x, ctx.op("<<", y, Const(32)))
    out: Expr = Const(0)
    for i in range(4):
        nibble = sel.value >> (4 * i) & 15
        if nibble & 8:
            return Unknown("a byte permute that replicates sign bits")
        byte = ctx.op("&", ctx.op(">>", both, Const(8 * nibble)), Const(255))
        out = ctx.op("|", out, ctx.op("<<", byte, Const(8 * i)))
    return out


def _divrem(op: str):
    def run(m: Machine, state, instr: ir.Instr) -> Value:
        kind, w = _width(instr)
        a = m.args(state, instr, w, 2)
        if isinstance(a, Unknown):
            return a
        low = m.ctx.low(a[1])
        if low is None or low < 1:
            exact = m.ctx.exact_bounds(a[1])
            low = exact[0] if exact else low
        if low is None or low < 1:
            return Unknown(f"{instr.opcode} by {_maybe_zero(m.ctx, a[1])}")
        if kind == "s":
            for v in a:
                s = m.ctx.signed(v, w)
                if isinstance(s, Unknown):
                    return s
        return m.ctx.op(op, a[0], a[1])

    return run


def _maybe_zero(ctx: Context, divisor: Expr) -> str:
    """Why a divisor may be 0, for the reason of an UNKNOWN. PTX leaves a division
    by zero unspecified. A divisor of block ids only is searched for its first 0
    (Triton's ``pid % group_size_m`` divides by ``min(num_pid_m - first_pid_m, 8)``,
    0 at the first block past a grid of ``num_pid_m * num_pid_n`` blocks): a
    --grid below it decides the division; a parameter's is decided by --assume."""
    names = sorted(free_vars(divisor))
    if names and all(n.startswith("ctaid_") for n in names):
        at = ctx.first_zero(divisor, names)
        if at is not None:
            point = ", ".join(f"{n}={v}" for n, v in at.items())
            if not any(at.values()):
                return f"a value that is 0 at {point}, in every grid"
            if len(at) == 1:
                (n,) = at.values()
                return (
                    f"a value that is 0 at {point}, the first block where it is "
                    f"(--grid {n} or fewer decides it)"
                )
            return f"a value that is 0 at {point} (a --grid without that block may decide it)"
        return f"a value that may be 0 ({', '.join(names)}: --grid decides it)"
    through = f" ({', '.join(names)}: --assume decides it)" if names else ""
    return f"a value that may be 0{through}"


def _minmax(op: str):
    """``min``/``max``: the comparison `setp` makes (signed by flipping the sign
    bit), then the chosen operand's own bits, as `selp` takes them."""

    def run(m: Machine, state, instr: ir.Instr) -> Value:
        kind, w = _width(instr)
        if kind == "f" or any(q in ("relu", "xorsign", "NaN") for q in instr.parts):
            return Unknown(f"{instr.opcode}: not an integer min/max")
        a = m.args(state, instr, w, 2)
        if isinstance(a, Unknown):
            return a
        x, y = a
        if kind == "s":
            flip = Const(1 << (w - 1))
            x, y = m.ctx.op("^", x, flip), m.ctx.op("^", y, flip)
        first = m.ctx.less(x, y) if op == "min" else m.ctx.less(y, x)
        if isinstance(first, Unknown):
            return first
        return m.ctx.select(first, a[0], a[1])

    return run


def _identity(m: Machine, state, instr: ir.Instr) -> Value:
    _, w = _width(instr)
    a = m.args(state, instr, w, 1)
    return a if isinstance(a, Unknown) else a[0]


def _shfl(m: Machine, state, instr: ir.Instr) -> Value:
    """``shfl.sync.idx.b32 d, a, LANE, 31, mask``: `a` as lane LANE has it (PTX ISA,
    shfl.sync; Triton broadcasts a warp-uniform value from lane 0 this way)."""
    ops = instr.operands
    lane, clamp = (ops[2], ops[3]) if len(ops) >= 4 else (None, None)
    if "idx" not in instr.parts or not isinstance(lane, ir.Imm) or not isinstance(clamp, ir.Imm):
        return Unknown(f"the result of {instr.opcode}")
    if clamp.value != 31:
        return Unknown(f"the result of {instr.opcode} within a segment")
    a = m.args(state, instr, 32, 1)
    if isinstance(a, Unknown):
        return a
    return m.ctx.rebuild(substitute(a[0], {"lane": Const(lane.value % WARP_LANES)}))


def _ld(m: Machine, state, instr: ir.Instr) -> Value:
    if "param" in instr.parts and len(instr.operands) > 1:
        src = instr.operands[1]
        if isinstance(src, ir.Addr) and isinstance(src.base, ir.Sym):
            return m.param(src.base.name, src.offset, _width(instr)[1])
    return Unknown(f"a value loaded from memory ({instr.opcode})")


_HANDLERS: dict[str, Callable[[Machine, dict, ir.Instr], Value]] = {
    "add": _arith("+"),
    "sub": _arith("-"),
    "mul": _arith("*"),
    "mad": _arith("*"),
    "shl": _shift("<<"),
    "shr": _shift(">>"),
    "and": _and_or_xor("&"),
    "or": _and_or_xor("|"),
    "xor": _and_or_xor("^"),
    "not": _not,
    "mov": _mov,
    "cvt": _cvt,
    "cvta": _identity,
    "selp": _selp,
    "setp": _setp,
    "bfe": _bfe,
    "bfi": _bfi,
    "lop3": _lop3,
    "prmt": _prmt,
    "div": _divrem("/"),
    "rem": _divrem("%"),
    "min": _minmax("min"),
    "max": _minmax("max"),
    "ld": _ld,
    "shfl": _shfl,
}
