"""The PTX this reader keeps: functions, their parameters, shared variables and
instructions with their operands and source lines. Plain data, built by
`verify.ptx.parse` and read by the later stages."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property


@dataclass(frozen=True)
class Reg:
    name: str  # "%r12", "%tid.x"


@dataclass(frozen=True)
class Imm:
    value: int  # as written: may be negative (two's complement is applied by width)


@dataclass(frozen=True)
class FloatImm:
    text: str  # "0f3F800000"


@dataclass(frozen=True)
class Sym:
    name: str  # a variable, parameter, function or label


@dataclass(frozen=True)
class Addr:
    base: Reg | Sym | None
    offset: int = 0


@dataclass(frozen=True)
class TensorAddr:
    """``[tensor-map, {c0, c1, ...}]``: a TMA copy's tensor map and box coordinates."""

    tensor_map: Reg | Sym
    coords: tuple[Operand, ...]


@dataclass(frozen=True)
class Vec:
    items: tuple[Operand, ...]


@dataclass(frozen=True)
class Group:
    """A parenthesised operand list (a call's arguments)."""

    items: tuple[Operand, ...]


@dataclass(frozen=True)
class Sink:
    """The ``_`` operand: a result nobody reads."""


@dataclass(frozen=True)
class RegPair:
    """``%p1|%p2``: setp's predicate and its complement."""

    first: Reg
    second: Reg


@dataclass(frozen=True)
class NotReg:
    reg: Reg


Operand = Reg | Imm | FloatImm | Sym | Addr | TensorAddr | Vec | Group | Sink | RegPair | NotReg


@dataclass(frozen=True)
class Source:
    """Where an instruction comes from: the .loc chain, outermost caller last."""

    frames: tuple[tuple[str, int], ...] = ()

    @property
    def outer(self) -> tuple[str, int] | None:
        return self.frames[-1] if self.frames else None

    def __str__(self) -> str:
        where = self.outer
        return f"{where[0].rsplit('/', 1)[-1]}:{where[1]}" if where else ""


@dataclass(frozen=True)
class Instr:
    opcode: str
    operands: tuple[Operand, ...]
    line: int
    col: int = 1
    guard: tuple[str, bool] | None = None  # (predicate register, negated)
    source: Source = field(default=Source(), compare=False)

    @cached_property
    def parts(self) -> list[str]:
        """The opcode's dot-separated parts, split once (the tracer reads them at each
        step of each pass); no caller changes the list."""
        return self.opcode.split(".")

    @property
    def text(self) -> str:
        return self.opcode


@dataclass(frozen=True)
class Label:
    name: str
    line: int


@dataclass(frozen=True)
class Variable:
    """A declared variable: a parameter, a register family, a shared array."""

    space: str  # "param", "reg", "shared", ...
    name: str
    type: str = ""  # "u64", "b8", ...
    align: int | None = None
    count: int | None = None  # elements of an array; None for a scalar or []
    is_array: bool = False
    extern: bool = False
    registers: int | None = None  # %r<22> declares 22 registers
    line: int = 0

    @property
    def element_bytes(self) -> int:
        digits = "".join(c for c in self.type if c.isdigit())
        return max(1, int(digits) // 8) if digits and self.type != "pred" else 1

    @property
    def size(self) -> int | None:
        """Bytes, or None for an array of unstated size (``.extern .shared x[]``)."""
        if self.is_array and self.count is None:
            return None
        return self.element_bytes * (self.count or 1)


@dataclass
class Function:
    name: str
    entry: bool
    params: list[Variable]
    line: int
    body: list[Instr | Label] = field(default_factory=list)
    variables: list[Variable] = field(default_factory=list)
    perf: dict[str, tuple[int, ...]] = field(default_factory=dict)


@dataclass
class Module:
    file: str
    version: str = ""
    target: tuple[str, ...] = ()
    address_size: int = 64
    files: dict[int, str] = field(default_factory=dict)
    functions: list[Function] = field(default_factory=list)
    variables: list[Variable] = field(default_factory=list)

    def entries(self) -> list[Function]:
        return [f for f in self.functions if f.entry and f.body]
