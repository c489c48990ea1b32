"""A concrete PTX interpreter: the shared addresses every thread of a block uses.

Ground truth for verify's symbolic PTX reader (verify/ptx/), sharing no code with it.
`run_block(ptx, kernel, block=...)` executes one kernel's PTX for every thread of one
block, one thread at a time, and records each executed shared-memory instruction
(PTX line, dynamic instance) with each thread's shared byte address, the global
source of a cp.async, and which threads had the instruction's predicate off.

Worked example (transpose, block 32x8; the H200 places static shared memory from
byte 1024, which `shared_base=1024` reproduces)::

    >>> run = run_block(ptx, "transpose_padded", block=(32, 8, 1), shared_base=1024)
    >>> acc = run.accesses[0]                 # the first shared instruction, first time
    >>> acc.opcode, acc.instance, acc.threads[33].address
    ('st.shared.f32', 0, 1160)                # 1024 + 4 * (33 * 1 + 1) for tile[1][1]

Semantics follow the PTX ISA 8.x (docs.nvidia.com/cuda/parallel-thread-execution),
chapter 9.7 "Instruction Set", by its sections' names: Integer Arithmetic (add, sub,
mul/mad .lo/.hi/.wide, mul24/mad24, div, rem, abs, neg, min, max, popc, clz, brev,
bfe, bfi, bfind), Logic and Shift (and, or, xor, not, cnot, lop3, shl, shr, shf),
Comparison and Selection (setp with .and/.or/.xor and p|q, selp), Data Movement and
Conversion (mov with vector pack/unpack, cvt, cvta, prmt's default mode, ld, st, ld.param
of scalars and struct bytes, ldmatrix, stmatrix, cp.async with cp-size, src-size and
ignore-src), Control Flow (bra, ret, exit; @p / @!p guards); chapter 10, Special
Registers (%tid, %ntid, %ctaid, %nctaid, %laneid, %warpid, %dynamic_smem_size).
Values a block's addresses do not need are unknown (None): floating point (but
conversions and comparisons of known f16/f32/f64 values, for tests like CuTe's
`beta != 0`), loads from global and shared memory, shuffles and votes, mma. An unknown
value that decides a branch, a guard of a memory instruction, or a shared address
stops the run with `PtxRunError`; an instruction it does not know raises
`PtxSyntaxError` with its line; a generic access whose address is unknown, wgmma's
descriptor reads and bulk copies are listed in `BlockRun.unresolved`, never guessed.

Threads run independently (a barrier orders memory only, and no address here reads
memory), so thread t's k-th execution of a line is instance k of that line for the
warp; a warp executes an instance together when its threads' control flow agrees,
which `SharedAccess.warps()` groups.
"""

import math
import struct
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from oracle.ptx_syntax import (
    TYPE_BYTES,
    Function,
    Instruction,
    Module,
    PtxSyntaxError,
    parse,
)

SHARED_WINDOW = 1 << 44  # where the generic address space maps shared memory (any
# value above global allocations works: cvta.shared adds it, cvta.to.shared takes it off)
FLOAT_TYPES = {"f16", "bf16", "f32", "f64", "f16x2", "bf16x2", "e4m3x2", "e5m2x2", "tf32"}
INT_TYPES = {
    t for t in TYPE_BYTES if t[0] in "bus" and t not in ("bf16", "b128")
}  # b8..b64, u8..u64, s8..s64
# Instructions whose register results addresses never need: every destination unknown.
OPAQUE = {
    "mma", "wgmma", "shfl", "vote", "activemask", "match", "redux", "fma", "rcp", "sqrt",
    "rsqrt", "ex2", "lg2", "sin", "cos", "tanh", "tex", "tld4", "suld", "isspacep",
    "testp", "copysign", "dp4a", "dp2a", "elect", "mapa", "getctarank", "fns",
}  # fmt: skip
NO_EFFECT = {
    "bar", "barrier", "membar", "fence", "cp.async.commit_group", "cp.async.wait_group",
    "cp.async.wait_all", "prefetch", "prefetchu", "griddepcontrol", "nanosleep", "trap",
    "brkpt", "pmevent", "discard", "applypriority", "createpolicy", "setmaxnreg",
}  # fmt: skip


class PtxRunError(Exception):
    """The run cannot go on: an unknown value decides control flow or an address."""

    def __init__(self, line: int, thread: int, message: str):
        super().__init__(f"PTX line {line}, thread {thread}: {message}")
        self.line = line
        self.thread = thread


@dataclass(frozen=True)
class ThreadAccess:
    thread: int  # linear index x + X * (y + Y * z)
    address: int  # shared byte address (the shared window offset __cvta_generic_to_shared gives)
    active: bool  # the guard predicate held (False: the thread skips the access)
    used: bool  # the instruction reads this thread's address (ldmatrix .x1: lanes 0-7)
    source: int | None = None  # cp.async: the global source address, if known
    src_size: int | None = None  # cp.async: bytes read from the source (the rest zero-fill)


@dataclass(frozen=True)
class SharedAccess:
    """One shared-memory instruction's `instance`-th execution, over the threads."""

    line: int  # PTX line, 1-based
    opcode: str
    instance: int
    loc: tuple[str, int] | None  # (source file, line) from the PTX's .loc
    kernel_loc: tuple[str, int] | None  # the kernel's own line the access was inlined
    # into (CuTe's copy_sm80.hpp:64 -> sgemm_sm80.cu:285), by following `inlined_at`
    # chains. Approximate: where nvcc names only the innermost step of a chain, the
    # latest chain through that location is assumed, and CuTe's loops reuse inner
    # locations (sgemm's mainloop ldmatrix at :280/:281 come out partly as :286).
    # `loc` is exact, and is what SASS line info (nvdisasm -g) gives too.
    bytes_per_thread: int  # ldmatrix/stmatrix: 16 per row address
    threads: tuple[ThreadAccess, ...]

    def warps(self) -> dict[int, tuple[ThreadAccess, ...]]:
        """Threads by warp (thread // 32): one warp instruction each."""
        out: dict[int, list[ThreadAccess]] = defaultdict(list)
        for t in self.threads:
            out[t.thread // 32].append(t)
        return {w: tuple(ts) for w, ts in out.items()}


@dataclass(frozen=True)
class Unresolved:
    """A memory access the interpreter could not place (generic address unknown, a
    bulk copy not modelled): listed, never guessed."""

    line: int
    opcode: str
    thread: int
    reason: str


@dataclass
class BlockRun:
    kernel: str
    accesses: list[SharedAccess]
    unresolved: list[Unresolved]
    shared_layout: dict[str, int]  # variable -> byte address
    steps: dict[int, int]  # thread -> instructions executed


@dataclass
class _Thread:
    index: int
    tid: tuple[int, int, int]
    regs: dict[str, int | None] = field(default_factory=dict)


def run_block(
    ptx: str | Module,
    kernel: str,
    block: tuple[int, int, int],
    params: dict[int | str, int | bytes] | None = None,
    ctaid: tuple[int, int, int] = (0, 0, 0),
    grid: tuple[int, int, int] = (1, 1, 1),
    shared_base: int = 0,
    shared_layout: dict[str, int] | None = None,
    dynamic_shared_bytes: int = 0,
    threads: list[int] | None = None,
    max_steps: int = 200_000,
) -> BlockRun:
    """Execute `kernel` (its mangled name, or a name its mangled name contains) for
    every thread of one block (or the linear indices `threads`).

    params: the kernel's .param values by index (from 0) or full name: an int (stored
    little-endian in the parameter's size) or the parameter's bytes; missing ones are
    unknown. Pointers are plain global addresses. shared_base: where static shared
    variables start (the H200 starts them at 1024); shared_layout overrides a
    variable's address; dynamic (.extern) shared memory follows the static variables,
    aligned to its declared alignment. max_steps bounds each thread's instructions.
    """
    module = ptx if isinstance(ptx, Module) else parse(ptx)
    func = _find_kernel(module, kernel)
    layout = _shared_layout(module, func, shared_base, shared_layout or {})
    env = _Env(module, func, block, grid, ctaid, layout, _param_bytes(func, params or {}))
    env.dynamic_shared_bytes = dynamic_shared_bytes
    nthreads = block[0] * block[1] * block[2]
    for t in threads if threads is not None else range(nthreads):
        x, y, z = t % block[0], (t // block[0]) % block[1], t // (block[0] * block[1])
        env.run_thread(_Thread(t, (x, y, z)), max_steps)
    return BlockRun(func.name, env.collect(), env.unresolved, layout, env.steps)


def _find_kernel(module: Module, kernel: str) -> Function:
    if kernel in module.functions:
        return module.functions[kernel]
    found = [f for n, f in module.functions.items() if f.entry and kernel in n]
    if len(found) != 1:
        names = ", ".join(n for n, f in module.functions.items() if f.entry)
        raise KeyError(f"kernel {kernel!r}: {len(found)} entries match among {names}")
    return found[0]


def _uses(func: Function, name: str) -> bool:
    return any(name in op for ins in func.body for op in ins.operands)


def _shared_layout(module, func, base, given) -> dict[str, int]:
    """Static variables the kernel names, in declaration order, each at its alignment;
    then every .extern array at the end of them (they alias: dynamic shared memory)."""
    layout: dict[str, int] = {}
    offset = base
    variables = [v for v in module.shared if _uses(func, v.name)] + func.shared
    for v in (v for v in variables if not v.extern):
        offset = -(-offset // v.align) * v.align
        layout[v.name] = given.get(v.name, offset)
        offset = layout[v.name] + v.size
    for v in (v for v in variables if v.extern):
        layout[v.name] = given.get(v.name, -(-offset // v.align) * v.align)
    return layout


def _param_bytes(func: Function, params) -> dict[str, list[int | None]]:
    out: dict[str, list[int | None]] = {}
    for i, p in enumerate(func.params):
        value = params.get(i, params.get(p.name))
        if value is None:
            out[p.name] = [None] * p.size
        elif isinstance(value, bytes):
            out[p.name] = list(value[: p.size]) + [None] * (p.size - len(value))
        else:
            out[p.name] = list((value % (1 << (8 * p.size))).to_bytes(p.size, "little"))
    return out


def _signed(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) & 1 else v


def _type_of(parts: list[str]) -> str:
    for p in reversed(parts):
        if p in TYPE_BYTES or p == "pred" or p in FLOAT_TYPES:
            return p
    return "b32"


def _bits(type_name: str) -> int:
    return 1 if type_name == "pred" else 8 * TYPE_BYTES.get(type_name, 4)


class _Env:
    def __init__(self, module, func, block, grid, ctaid, layout, params):
        self.module, self.func = module, func
        self.block, self.grid, self.ctaid = block, grid, ctaid
        self.layout, self.params = layout, params
        self.dynamic_shared_bytes = 0
        self.records: dict[tuple[int, int], list[ThreadAccess]] = defaultdict(list)
        self.unresolved: list[Unresolved] = []
        self.steps: dict[int, int] = {}
        self.by_line = {ins.line: ins for ins in func.body}

    # ---- the run ----------------------------------------------------------------
    def run_thread(self, th: _Thread, max_steps: int) -> None:
        body, pc, steps = self.func.body, 0, 0
        counts: dict[int, int] = defaultdict(int)
        while pc < len(body):
            steps += 1
            if steps > max_steps:
                raise PtxRunError(body[pc].line, th.index, f"more than {max_steps} steps")
            ins = body[pc]
            active = self._guard(th, ins)
            if active is None and not self._pure(ins):
                raise PtxRunError(ins.line, th.index, "unknown guard predicate")
            nxt = self._step(th, ins, active, counts)
            if nxt == -1:
                break
            pc = pc + 1 if nxt is None else nxt
        self.steps[th.index] = steps

    def collect(self) -> list[SharedAccess]:
        out = []
        for (line, instance), threads in sorted(self.records.items()):
            ins = self.by_line[line]
            out.append(
                SharedAccess(
                    line,
                    ins.opcode,
                    instance,
                    self._loc(ins.loc),
                    self._loc(ins.outer_loc),
                    _access_bytes(ins),
                    tuple(sorted(threads, key=lambda t: t.thread)),
                )
            )
        return out

    def _loc(self, loc: tuple[int, int] | None) -> tuple[str, int] | None:
        if loc is None:
            return None
        return (self.module.files.get(loc[0], str(loc[0])), loc[1])

    def _guard(self, th: _Thread, ins: Instruction) -> bool | None:
        if ins.guard is None:
            return True
        v = th.regs.get(ins.guard[0])
        if v is None:
            return None
        return bool(v) != ins.guard[1]

    def _pure(self, ins: Instruction) -> bool:
        """A register-only instruction: an unknown guard only makes its results unknown."""
        base = ins.parts[0]
        memory = ("ld", "st", "ldmatrix", "stmatrix", "cp", "atom", "red", "call", "mbarrier")
        return base not in ("bra", "ret", "exit", *memory)

    def _step(self, th, ins, active, counts) -> int | None:
        parts = ins.parts
        base = parts[0]
        if base == "cp" and parts[1] == "async" and len(parts) > 2 and parts[2] in ("ca", "cg"):
            _cp_async(self, th, ins, active, counts)
            return None
        if ins.opcode.startswith(tuple(NO_EFFECT)) or base in NO_EFFECT:
            return None
        if base in ("ret", "exit"):
            return -1 if active else None
        if base == "bra":
            if not active:
                return None
            target = ins.operands[0]
            if target not in self.func.labels:
                raise PtxRunError(ins.line, th.index, f"branch to unknown label {target}")
            return self.func.labels[target]
        if base in ("ld", "st", "ldmatrix", "stmatrix", "atom", "red", "ldu"):
            _memory(self, th, ins, active, counts)
            return None
        if base in ("cp", "call", "mbarrier"):  # bulk copies, calls, barrier objects
            self.unresolved.append(Unresolved(ins.line, ins.opcode, th.index, "not modelled"))
            self._set_unknown(th, ins)
            return None
        if active is False:
            return None
        if base == "wgmma" and "mma_async" in parts:
            reason = "wgmma reads shared memory through matrix descriptors: not modelled"
            self.unresolved.append(Unresolved(ins.line, ins.opcode, th.index, reason))
        if active is None or base in OPAQUE:
            self._set_unknown(th, ins)
            return None
        self._compute(th, ins)
        return None

    # ---- operands ---------------------------------------------------------------
    def _special(self, th: _Thread, name: str) -> int | None:
        axes = {"x": 0, "y": 1, "z": 2}
        reg, _, axis = name[1:].partition(".")
        linear = th.index
        if reg in ("tid", "ntid", "ctaid", "nctaid") and axis in axes:
            src = {"tid": th.tid, "ntid": self.block, "ctaid": self.ctaid, "nctaid": self.grid}
            return src[reg][axes[axis]]
        values = {
            "laneid": linear % 32,
            "warpid": linear // 32,
            "nwarpid": -(-self.block[0] * self.block[1] * self.block[2] // 32),
            "dynamic_smem_size": self.dynamic_shared_bytes,
        }
        return values.get(reg)

    def _value(self, th: _Thread, text: str, bits: int) -> int | None:
        text = text.strip()
        mask = (1 << bits) - 1
        if text.startswith("!"):
            v = self._value(th, text[1:], 1)
            return None if v is None else 1 - v
        if text.startswith("%"):
            if text in th.regs:
                v = th.regs[text]
                return None if v is None else v & mask
            special = self._special(th, text)
            if special is not None:
                return special & mask
            return None  # a register never written (or %clock, %smid): unknown
        imm = _immediate(text)
        if imm is not None:
            return imm & mask
        if text in self.layout:
            return self.layout[text] & mask
        return None  # a global symbol, a function: unknown address

    def _set(self, th: _Thread, reg: str, value: int | None, bits: int) -> None:
        if reg == "_":
            return
        th.regs[reg] = None if value is None else value & ((1 << bits) - 1)

    def _set_unknown(self, th: _Thread, ins: Instruction) -> None:
        for reg in _destinations(ins):
            th.regs[reg] = None

    # ---- arithmetic -------------------------------------------------------------
    def _compute(self, th: _Thread, ins: Instruction) -> None:
        parts = ins.parts
        base = parts[0]
        handler = _ARITH.get(base)
        if handler is None:
            raise PtxSyntaxError(ins.line, f"instruction {ins.opcode} is not interpreted")
        handler(self, th, ins, parts)

    def _read(self, th, ins, indices, bits):
        return [self._value(th, ins.operands[i], bits) for i in indices]


def _immediate(text: str) -> int | None:
    t = text.strip()
    neg = t.startswith("-")
    body = t[1:] if neg else t
    value: int | None = None
    if (body[:2] in ("0f", "0F") and len(body) == 10) or (
        body[:2] in ("0d", "0D") and len(body) == 18
    ):
        value = int(body[2:], 16)
    elif body[:2] in ("0x", "0X"):
        value = int(body[2:].rstrip("Uu"), 16)
    elif body[:2] in ("0b", "0B"):
        value = int(body[2:].rstrip("Uu"), 2)
    elif body.rstrip("Uu").isdigit():
        digits = body.rstrip("Uu")
        value = int(digits, 8) if len(digits) > 1 and digits[0] == "0" else int(digits)
    if value is None:
        return None
    return -value if neg else value


def _destinations(ins: Instruction) -> list[str]:
    if not ins.operands:
        return []
    first = ins.operands[0]
    if ins.parts[0] in ("st", "stmatrix", "red"):
        return []
    names = first.strip("{} ").replace("|", ",").split(",")
    out = [n.strip() for n in names if n.strip().startswith("%")]
    return out


def _access_bytes(ins: Instruction) -> int:
    parts = ins.parts
    if parts[0] in ("ldmatrix", "stmatrix"):
        return 16
    if parts[0] == "cp":
        return int(ins.operands[2].strip(), 0)
    vec = next((int(p[1:]) for p in parts if p in ("v2", "v4", "v8")), 1)
    return vec * TYPE_BYTES.get(_type_of(parts), 4)


def _unary(fn):
    def handler(env, th, ins, parts):
        t = _type_of(parts)
        if t in FLOAT_TYPES:
            return env._set_unknown(th, ins)
        bits = _bits(t)
        (a,) = env._read(th, ins, [1], bits)
        env._set(th, ins.operands[0], None if a is None else fn(a, bits, t), bits)

    return handler


def _binary(fn):
    def handler(env, th, ins, parts):
        t = _type_of(parts)
        if t in FLOAT_TYPES:
            return env._set_unknown(th, ins)
        bits = _bits(t)
        b_bits = 32 if parts[0] in ("shl", "shr") else bits
        a = env._value(th, ins.operands[1], bits)
        b = env._value(th, ins.operands[2], b_bits)
        result = None if a is None or b is None else fn(a, b, bits, t)
        env._set(th, ins.operands[0], result, bits)

    return handler


def _s(t: str) -> bool:
    return t.startswith("s")


def _arith(v: int, bits: int, t: str) -> int:
    return _signed(v, bits) if _s(t) else v


def _div(a, b, bits, t):
    a, b = _arith(a, bits, t), _arith(b, bits, t)
    if b == 0:
        return None
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _rem(a, b, bits, t):
    q = _div(a, b, bits, t)
    return None if q is None else _arith(a, bits, t) - q * _arith(b, bits, t)


def _shr(a, b, bits, t):
    b = min(b, bits)
    return (_signed(a, bits) >> b) if _s(t) else a >> b


def _mul(env, th, ins, parts):
    t = _type_of(parts)
    if t in FLOAT_TYPES:
        return env._set_unknown(th, ins)
    bits = _bits(t)
    a, b = env._read(th, ins, [1, 2], bits)
    mode = "wide" if "wide" in parts else "hi" if "hi" in parts else "lo"
    c = None
    if parts[0] in ("mad", "mad24"):
        c = env._value(th, ins.operands[3], 2 * bits if mode == "wide" else bits)
        if c is None:
            return env._set(th, ins.operands[0], None, bits)
    if a is None or b is None:
        return env._set(th, ins.operands[0], None, 2 * bits if mode == "wide" else bits)
    if parts[0] in ("mul24", "mad24"):
        a, b = _arith(a & 0xFFFFFF, 24, t), _arith(b & 0xFFFFFF, 24, t)
    else:
        a, b = _arith(a, bits, t), _arith(b, bits, t)
    prod = a * b
    out_bits = 2 * bits if mode == "wide" else bits
    if mode == "hi":
        prod = prod >> (48 if parts[0] in ("mul24", "mad24") else bits)
    env._set(th, ins.operands[0], prod + (c or 0), out_bits)


def _setp(env, th, ins, parts):
    cmp = parts[1]
    t = _type_of(parts)
    dests = ins.operands[0].split("|")
    bool_op = parts[2] if parts[2] in ("and", "or", "xor") else None
    bits = _bits(t)
    a, b = env._read(th, ins, [1, 2], bits)
    if t in FLOAT_TYPES and (t not in _FLOAT_CODES or a is None or b is None):
        a = b = None
    c = env._value(th, ins.operands[3], 1) if bool_op else 1
    if a is None or b is None or c is None:
        for d in dests:
            env._set(th, d.strip(), None, 1)
        return
    if cmp in ("lo", "ls", "hi", "hs"):
        t = "u" + t[1:]
        cmp = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}[cmp]
    if t in _FLOAT_CODES:
        r = _float_compare(cmp, _to_float(a, t), _to_float(b, t))
    else:
        x, y = _arith(a, bits, t), _arith(b, bits, t)
        r = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[cmp]
    env._set(th, dests[0].strip(), _combine(bool_op, int(r), c), 1)
    if len(dests) > 1:
        env._set(th, dests[1].strip(), _combine(bool_op, 1 - int(r), c), 1)


def _combine(bool_op: str | None, p: int, q: int) -> int:
    """setp's .and/.or/.xor with its predicate operand (none: the comparison alone)."""
    if bool_op == "or":
        return p | q
    if bool_op == "xor":
        return p ^ q
    return p & q


def _float_compare(cmp: str, x: float, y: float) -> bool:
    """Ordered (eq, lt, ...: false on NaN) and unordered (equ, ltu, ...: true on NaN)
    comparisons, num and nan (sec. 9.7.7.1)."""
    nan = x != x or y != y
    if cmp in ("num", "nan"):
        return nan == (cmp == "nan")
    unordered = cmp.endswith("u") and cmp not in ("u",)
    base = cmp[:-1] if unordered else cmp
    if nan:
        return unordered
    ops = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}
    return ops[base]


def _selp(env, th, ins, parts):
    t = _type_of(parts)
    bits = _bits(t)
    a, b = env._read(th, ins, [1, 2], bits)
    c = env._value(th, ins.operands[3], 1)
    env._set(th, ins.operands[0], None if c is None else (a if c else b), bits)


def _mov(env, th, ins, parts):
    t = _type_of(parts)
    bits = _bits(t)
    dst, src = ins.operands[0], ins.operands[1]
    if src.startswith("{"):  # pack: the first element is the least significant
        elems = [e.strip() for e in src.strip("{}").split(",")]
        width = bits // len(elems)
        vals = [env._value(th, e, width) for e in elems]
        packed = None
        if None not in vals:
            packed = sum(v << (width * i) for i, v in enumerate(vals))
        return env._set(th, dst, packed, bits)
    if dst.startswith("{"):  # unpack
        elems = [e.strip() for e in dst.strip("{}").split(",")]
        width = bits // len(elems)
        v = env._value(th, src, bits)
        for i, e in enumerate(elems):
            env._set(th, e, None if v is None else v >> (width * i), width)
        return
    if t in FLOAT_TYPES and _immediate(src) is None and not src.startswith("%"):
        return env._set(th, dst, None, bits)
    env._set(th, dst, env._value(th, src, bits), bits)


_FLOAT_CODES = {"f16": "e", "f32": "f", "f64": "d"}


def _to_float(bits_value: int, t: str) -> float:
    code = _FLOAT_CODES[t]
    return struct.unpack("<" + code, bits_value.to_bytes(struct.calcsize(code), "little"))[0]


def _from_float(x: float, t: str) -> int:
    code = _FLOAT_CODES[t]
    return int.from_bytes(struct.pack("<" + code, x), "little")


def _cvt(env, th, ins, parts):
    """cvt.dtype.atype (sec. 9.7.9.21): integers extend or truncate; f16/f32/f64 known
    values convert (enough for a kernel's `beta != 0` test); other floats unknown."""
    types = [p for p in parts[1:] if p in TYPE_BYTES or p in FLOAT_TYPES]
    if len(types) != 2:
        raise PtxSyntaxError(ins.line, f"expected cvt.dtype.atype, found {ins.opcode}")
    dt, st = types
    sbits, dbits = _bits(st), _bits(dt)
    v = env._value(th, ins.operands[1], sbits)
    floats = dt in FLOAT_TYPES or st in FLOAT_TYPES
    if v is None or (floats and not {dt, st} <= set(_FLOAT_CODES) | INT_TYPES):
        return env._set_unknown(th, ins)
    if not floats:
        return env._set(th, ins.operands[0], _signed(v, sbits) if _s(st) else v, dbits)
    x = _to_float(v, st) if st in _FLOAT_CODES else float(_arith(v, sbits, st))
    if dt in _FLOAT_CODES:
        return env._set(th, ins.operands[0], _from_float(x, dt), dbits)
    if x != x or x in (float("inf"), float("-inf")):
        return env._set_unknown(th, ins)
    rounding: dict[str, Callable[[float], int]] = {
        "rzi": math.trunc,
        "rmi": math.floor,
        "rpi": math.ceil,
    }
    mode = next((p for p in parts if p in rounding), None)
    value = rounding[mode](x) if mode else round(x)  # cvt.rni: to nearest even
    env._set(th, ins.operands[0], int(value), dbits)


def _cvta(env, th, ins, parts):
    bits = _bits(_type_of(parts))
    v = env._value(th, ins.operands[1], bits)
    if v is not None and "shared" in parts:
        v = v - SHARED_WINDOW if "to" in parts else v + SHARED_WINDOW
    env._set(th, ins.operands[0], v, bits)


def _bfe(env, th, ins, parts):
    t = _type_of(parts)
    bits = _bits(t)
    a = env._value(th, ins.operands[1], bits)
    pos, length = env._read(th, ins, [2, 3], 32)
    if a is None or pos is None or length is None:
        return env._set(th, ins.operands[0], None, bits)
    pos, length = pos & 0xFF, length & 0xFF
    field_ = (a >> min(pos, bits)) & ((1 << length) - 1) if length else 0
    if _s(t) and length:
        sign_at = min(pos + length - 1, bits - 1)
        sign = (a >> sign_at) & 1
        if sign:
            field_ |= ((1 << bits) - 1) ^ ((1 << min(length, bits)) - 1)
    env._set(th, ins.operands[0], field_, bits)


def _bfi(env, th, ins, parts):
    bits = _bits(_type_of(parts))
    a, b = env._read(th, ins, [1, 2], bits)
    pos, length = env._read(th, ins, [3, 4], 32)
    if None in (a, b, pos, length):
        return env._set(th, ins.operands[0], None, bits)
    pos, length = pos & 0xFF, length & 0xFF
    mask = (((1 << length) - 1) << pos) & ((1 << bits) - 1)
    env._set(th, ins.operands[0], (b & ~mask) | ((a << pos) & mask), bits)


def _lop3(env, th, ins, parts):
    a, b, c, lut = env._read(th, ins, [1, 2, 3, 4], 32)
    if None in (a, b, c, lut):
        return env._set(th, ins.operands[0], None, 32)
    out = 0
    for bit in range(32):
        idx = ((a >> bit & 1) << 2) | ((b >> bit & 1) << 1) | (c >> bit & 1)
        out |= ((lut >> idx) & 1) << bit
    env._set(th, ins.operands[0], out, 32)


def _prmt(env, th, ins, parts):
    if len(parts) > 2:  # .f4e, .b4e, .rc8, ... modes
        raise PtxSyntaxError(ins.line, f"prmt mode {parts[2]} is not interpreted")
    a, b, c = env._read(th, ins, [1, 2, 3], 32)
    if None in (a, b, c):
        return env._set(th, ins.operands[0], None, 32)
    src = a | (b << 32)
    out = 0
    for i in range(4):
        sel = (c >> (4 * i)) & 0xF
        byte = (src >> (8 * (sel & 7))) & 0xFF
        if sel & 8:  # replicate the byte's sign
            byte = 0xFF if byte & 0x80 else 0
        out |= byte << (8 * i)
    env._set(th, ins.operands[0], out, 32)


def _shf(env, th, ins, parts):
    a, b, n = env._read(th, ins, [1, 2, 3], 32)
    if None in (a, b, n):
        return env._set(th, ins.operands[0], None, 32)
    n = n & 31 if "wrap" in parts else min(n, 32)
    pair = a | (b << 32)
    out = (pair << n) >> 32 if parts[1] == "l" else pair >> n
    env._set(th, ins.operands[0], out, 32)


def _logic(fn):
    def handler(env, th, ins, parts):
        t = _type_of(parts)
        bits = _bits(t)
        a, b = env._read(th, ins, [1, 2], bits)
        env._set(th, ins.operands[0], None if a is None or b is None else fn(a, b), bits)

    return handler


def _minmax(pick):
    def fn(a, b, bits, t):
        x, y = _arith(a, bits, t), _arith(b, bits, t)
        return pick(x, y)

    return _binary(fn)


def _count(fn):
    def handler(env, th, ins, parts):
        bits = _bits(_type_of(parts))
        (a,) = env._read(th, ins, [1], bits)
        env._set(th, ins.operands[0], None if a is None else fn(a, bits), 32)

    return handler


def _bfind(a: int, bits: int) -> int:
    return a.bit_length() - 1 if a else 0xFFFFFFFF


_ARITH = {
    "add": _binary(lambda a, b, bits, t: a + b),
    "sub": _binary(lambda a, b, bits, t: a - b),
    "mul": _mul,
    "mad": _mul,
    "mul24": _mul,
    "mad24": _mul,
    "div": _binary(_div),
    "rem": _binary(_rem),
    "min": _minmax(min),
    "max": _minmax(max),
    "abs": _unary(lambda a, bits, t: abs(_arith(a, bits, t))),
    "neg": _unary(lambda a, bits, t: -a),
    "not": _unary(lambda a, bits, t: ~a),
    "cnot": _unary(lambda a, bits, t: int(a == 0)),
    "and": _logic(lambda a, b: a & b),
    "or": _logic(lambda a, b: a | b),
    "xor": _logic(lambda a, b: a ^ b),
    "shl": _binary(lambda a, b, bits, t: a << min(b, bits)),
    "shr": _binary(_shr),
    "shf": _shf,
    "setp": _setp,
    "selp": _selp,
    "mov": _mov,
    "cvt": _cvt,
    "cvta": _cvta,
    "bfe": _bfe,
    "bfi": _bfi,
    "lop3": _lop3,
    "prmt": _prmt,
    "popc": _count(lambda a, bits: bin(a).count("1")),
    "clz": _count(lambda a, bits: bits - a.bit_length()),
    "brev": _unary(lambda a, bits, t: int(format(a, f"0{bits}b")[::-1], 2)),
    "bfind": _count(_bfind),
}


# ---- memory -------------------------------------------------------------------------
def _address(env: _Env, th: _Thread, text: str, bits: int = 64) -> int | None:
    """[reg], [reg+imm], [sym], [sym+imm] (PTX ISA sec. 6.4.1)."""
    inner = text.strip()[1:-1].replace(" ", "")
    offset = 0
    for sep in ("+", "-"):
        head, found, tail = inner.partition(sep)
        if found and head:
            inner, offset = head, (int(tail, 0) if sep == "+" else -int(tail, 0))
            break
    if inner.startswith("%"):
        v = env._value(th, inner, bits)
        return None if v is None else v + offset
    if inner in env.layout:
        return env.layout[inner] + offset
    imm = _immediate(inner)
    return None if imm is None else imm + offset


def _space(parts: list[str]) -> str:
    for s in ("shared", "global", "local", "param", "const"):
        if s in parts:
            return s
    return "generic"


def _memory(self: _Env, th: _Thread, ins: Instruction, active, counts) -> None:
    parts = ins.parts
    base = parts[0]
    space = _space(parts)
    addr_op = next(op for op in ins.operands if op.strip().startswith("["))
    if base == "ld" and space == "param":
        return _load_param(self, th, ins)
    if space not in ("shared", "generic"):
        if base in ("ld", "ldu", "atom"):
            self._set_unknown(th, ins)
        return
    addr = _address(self, th, addr_op, 32 if space == "shared" else 64)
    if space == "generic":
        if addr is None or not SHARED_WINDOW <= addr < SHARED_WINDOW + (1 << 32):
            if addr is None and active:
                self.unresolved.append(
                    Unresolved(ins.line, ins.opcode, th.index, "generic address unknown")
                )
            if base not in ("st", "stmatrix", "red"):
                self._set_unknown(th, ins)
            return
        addr -= SHARED_WINDOW
    if addr is None:
        raise PtxRunError(ins.line, th.index, f"shared address {addr_op} unknown")
    used = True
    if base in ("ldmatrix", "stmatrix"):
        count = next(int(p[1:]) for p in parts if p in ("x1", "x2", "x4"))
        used = th.index % 32 < 8 * count
    _record(self, th, ins, counts, ThreadAccess(th.index, addr, bool(active), used))
    if base not in ("st", "stmatrix", "red"):
        self._set_unknown(th, ins)


def _cp_async(self: _Env, th: _Thread, ins: Instruction, active, counts) -> None:
    """cp.async.{ca,cg}.shared{::cta}.global [dst], [src], cp-size{, src-size}
    (PTX ISA sec. 9.7.9.25.3): the destination is shared, the source global."""
    dst = _address(self, th, ins.operands[0], 32)
    if dst is None:
        raise PtxRunError(ins.line, th.index, f"cp.async destination {ins.operands[0]} unknown")
    src = _address(self, th, ins.operands[1], 64)
    size = int(ins.operands[2].strip(), 0)
    # operands after cp-size: src-size, then a cache policy with .L2::cache_hint
    has_policy = "L2::cache_hint" in ins.opcode
    src_size: int | None = size
    if len(ins.operands) > 3 + has_policy:
        src_size = self._value(th, ins.operands[3], 32)
    if "ignore-src" in ins.opcode:
        src_size = None
    access = ThreadAccess(th.index, dst, bool(active), True, src, src_size)
    _record(self, th, ins, counts, access)


def _record(self: _Env, th, ins, counts, access: ThreadAccess) -> None:
    instance = counts[ins.line]
    counts[ins.line] += 1
    self.records[(ins.line, instance)].append(access)


def _load_param(self: _Env, th: _Thread, ins: Instruction) -> None:
    inner = ins.operands[1].strip()[1:-1].replace(" ", "")
    name, _, off = inner.partition("+")
    if name not in self.params:
        raise PtxRunError(ins.line, th.index, f"unknown parameter {name}")
    raw = self.params[name]
    t = _type_of(ins.parts)
    size = TYPE_BYTES.get(t, 4)
    dests = [d.strip() for d in ins.operands[0].strip("{}").split(",")]
    start = int(off, 0) if off else 0
    for i, d in enumerate(dests):
        chunk = raw[start + i * size : start + (i + 1) * size]
        known = len(chunk) == size and None not in chunk
        value = int.from_bytes(bytes(chunk), "little") if known else None
        self._set(th, d, value, 8 * size)


__all__ = [
    "BlockRun",
    "PtxRunError",
    "SharedAccess",
    "ThreadAccess",
    "Unresolved",
    "run_block",
]
