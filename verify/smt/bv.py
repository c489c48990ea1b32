"""The one module that builds Z3 bit-vector terms.

(The other modules that build Z3 terms are the synthesis encodings
`verify.synth.gf2` (XOR maps) and `verify.synth.params` (a family's parameters tied
to those maps): they build Booleans and cardinality constraints only, no
bit-vectors, so they have no widths to size and nothing that can wrap.)

Everything here is unsigned: ``/`` is UDiv, ``%`` is URem, ``>>`` is LShR,
comparisons are ULT/ULE. Widths come from `verify.model.expr.max_intermediate`, plus a
margin, so no term can wrap around; `Context.num` and `Context.bits` refuse a
constant that does not fit.

Nothing outside this module applies Python operators to Z3 terms: z3 overloads
``+``, ``==``, ``<`` on them, and a signed ``<`` or a ``>>`` that is arithmetic
would silently change a query's meaning, so every operation the encodings need is
a function here (`eq`, `ne`, `add`, `ult`, ...). Only this module and the two
Boolean synthesis encodings build Z3 terms; `tests/house/test_z3_confined.py` checks the
rest of `verify` names no z3 constructor and those two name no bit-vector one.

The bank geometry (bank count, word size) is `verify.model.bank`'s: the encoding takes
its bit widths from there.
"""

from __future__ import annotations

from collections.abc import Mapping

import z3

from verify.errors import InternalError
from verify.model.bank import BANKS, WORD_BYTES
from verify.model.expr import Const, Expr, Range, Var
from verify.smt.width import MAX_WIDTH as MAX_WIDTH
from verify.smt.width import width_for as width_for

# A bank is the low BANK_BITS of a word index; a word is a byte address >> WORD_BITS.
BANK_BITS = BANKS.bit_length() - 1
WORD_BITS = WORD_BYTES.bit_length() - 1
assert BANKS == 1 << BANK_BITS and WORD_BYTES == 1 << WORD_BITS, "the encoding needs powers of two"


class Context:
    """Z3 variables of one query, all of one bit-width.

    Each Context owns a private Z3 context, so a query's answer (and its
    counterexample) does not depend on what was solved before in the process.
    """

    def __init__(self, width: int, ranges: Mapping[str, Range]):
        if width > MAX_WIDTH:
            raise ValueError(f"bit-vector width {width} exceeds {MAX_WIDTH}")
        self.width = width
        self.ranges = dict(ranges)
        self.z3 = z3.Context()
        self._vars: dict[str, z3.BitVecRef] = {}
        self._lowered: dict[tuple, tuple] = {}
        self._free: dict[int, tuple] = {}

    def var(self, name: str) -> z3.BitVecRef:
        """The Z3 variable for `name`."""
        if name not in self._vars:
            self._vars[name] = z3.BitVec(name, self.width, self.z3)
        return self._vars[name]

    def in_range(self, name: str) -> z3.BoolRef:
        r = self.ranges[name]
        v = self.var(name)
        return z3.And(z3.UGE(v, self.num(r.lo)), z3.ULT(v, self.num(r.hi)), self.z3)

    def num(self, value: int) -> z3.BitVecRef:
        """`value` as a constant of the context's width; a value that does not fit
        would silently wrap (and could turn a violation into a proof), so it is a bug."""
        if not 0 <= value < 1 << self.width:
            raise InternalError(f"constant {value} does not fit in {self.width} bits")
        return z3.BitVecVal(value, self.width, self.z3)

    def bits(self, value: int, width: int) -> z3.BitVecRef:
        if not 0 <= value < 1 << width:
            raise InternalError(f"constant {value} does not fit in {width} bits")
        return z3.BitVecVal(value, width, self.z3)

    def fresh(self, name: str, width: int) -> z3.BitVecRef:
        return z3.BitVec(name, width, self.z3)

    def fresh_bool(self, name: str) -> z3.BoolRef:
        return z3.Bool(name, self.z3)

    def at_least(self, conds: list[z3.BoolRef], k: int) -> z3.BoolRef:
        """At least k of `conds` hold: a cardinality constraint, no adder."""
        return z3.AtLeast(*conds, k) if conds else z3.BoolVal(k <= 0, self.z3)

    def all(self, conds: list[z3.BoolRef]) -> z3.BoolRef:
        return z3.And(*conds, self.z3) if conds else z3.BoolVal(True, self.z3)

    def any(self, conds: list[z3.BoolRef]) -> z3.BoolRef:
        return z3.Or(*conds, self.z3) if conds else z3.BoolVal(False, self.z3)

    def count_true(self, conds: list[z3.BoolRef], bits: int) -> z3.BitVecRef:
        """Number of true conditions, as a `bits`-wide vector (pseudo-Boolean sums)."""
        one, zero = self.bits(1, bits), self.bits(0, bits)
        return z3.Sum([z3.If(c, one, zero, self.z3) for c in conds]) if conds else zero

    def lower(self, e: Expr, fixed: Mapping[str, int] | None = None) -> z3.BitVecRef:
        """Bit-vector term for `e`; variables in `fixed` become constants.

        A subtree that uses none of the fixed variables is built once and shared:
        the bank encoding lowers one address per lane, and most of it (the
        layout's own arithmetic on loop variables) does not depend on the lane.
        """
        fixed = fixed or {}
        key = (id(e), tuple(sorted((n, v) for n, v in fixed.items() if n in self._uses(e))))
        if key not in self._lowered:
            self._lowered[key] = (e, self._lower(e, fixed))  # e kept alive: ids stay unique
        return self._lowered[key][1]

    def _lower(self, e: Expr, fixed: Mapping[str, int]) -> z3.BitVecRef:
        if isinstance(e, Const):
            return self.num(e.value)
        if isinstance(e, Var):
            if e.name in fixed:
                return self.num(fixed[e.name])
            return self.var(e.name)
        a, b = self.lower(e.a, fixed), self.lower(e.b, fixed)
        return _BINOPS[e.op](a, b)

    def _uses(self, e: Expr) -> frozenset[str]:
        """The variables of `e`, cached per node and built from the children's."""
        if id(e) not in self._free:
            if isinstance(e, Var):
                names = frozenset((e.name,))
            elif isinstance(e, Const):
                names = frozenset()
            else:
                names = self._uses(e.a) | self._uses(e.b)
            self._free[id(e)] = (e, names)
        return self._free[id(e)][1]

    def value(self, model: z3.ModelRef, name: str) -> int:
        """The model's value for a variable (0 when the model left it free)."""
        return model.eval(self.var(name), model_completion=True).as_long()


_BINOPS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": z3.UDiv,
    "%": z3.URem,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
    "<<": lambda a, b: a << b,
    ">>": z3.LShR,
}


def low_bits_zero(term: z3.BitVecRef, bits: int) -> z3.BoolRef:
    """term % 2**bits == 0."""
    if bits == 0:
        return z3.BoolVal(True, term.ctx)
    return z3.Extract(bits - 1, 0, term) == 0


def low_bits(term: z3.BitVecRef, bits: int) -> z3.BitVecRef:
    """term % 2**bits, as a `bits`-wide vector."""
    return z3.Extract(bits - 1, 0, term)


def word_of(addr: z3.BitVecRef, extra_words: int, ctx: Context) -> z3.BitVecRef:
    """Index of the word holding byte `addr`, plus `extra_words`."""
    return z3.LShR(addr, WORD_BITS) + ctx.num(extra_words)


def bank_of_word(addr: z3.BitVecRef, extra_words: int, ctx: Context) -> z3.BitVecRef:
    """Bank of the word `extra_words` after the one holding byte `addr`, BANK_BITS wide."""
    return low_bits(word_of(addr, extra_words, ctx), BANK_BITS)


def shifted_down(term: z3.BitVecRef, bits: int) -> z3.BitVecRef:
    """term / 2**bits (unsigned)."""
    return z3.LShR(term, bits)


def field(term: z3.BitVecRef, low: int, bits: int) -> z3.BitVecRef:
    """(term / 2**low) % 2**bits, as a `bits`-wide vector: a chunk's place in its
    line, a sector's in a cycle of four."""
    return z3.Extract(low + bits - 1, low, term)


def cyclic_add(a: z3.BitVecRef, b: z3.BitVecRef) -> z3.BitVecRef:
    """(a + b) modulo 2**width of a and b: the wrap is the point (rule S's sector
    reflections, u + t mod 4), unlike `add`, which must never wrap."""
    return a + b


def cyclic_sub(a: z3.BitVecRef, b: z3.BitVecRef) -> z3.BitVecRef:
    """(a - b) modulo 2**width of a and b (rule S's sector rotations, u - t mod 4)."""
    return a - b


def xor(a: z3.BitVecRef, b: z3.BitVecRef) -> z3.BitVecRef:
    return a ^ b


def eq(a, b) -> z3.BoolRef:
    return a == b


def ne(a, b) -> z3.BoolRef:
    return a != b


def add(a, b) -> z3.BitVecRef:
    """a + b; the caller's width has room for the sum (see `width_for`)."""
    return a + b


def not_(a: z3.BoolRef) -> z3.BoolRef:
    return z3.Not(a)


def implies(a: z3.BoolRef, b: z3.BoolRef) -> z3.BoolRef:
    return z3.Implies(a, b)


def ult(a, b):
    return z3.ULT(a, b)


def ule(a, b):
    return z3.ULE(a, b)


def uge(a, b):
    return z3.UGE(a, b)


def solver_for(ctx: Context) -> z3.Solver:
    return z3.SolverFor("QF_BV", ctx=ctx.z3)
