"""How an expression depends on one variable: through the variable modulo what.

A TMA copy in a loop of unknown trip count has an iteration variable of 2^20 values,
but its shared address reads it only through a stage index, ``(it0 + 1) & 1``: every
iteration of one parity gives the same address. `period(e, name)` finds such a p
from the expression's shape, so that `e` is decided at every value of the variable
by evaluating it at p of them (``lo .. lo + p``, one per residue class).

The claim is exact, for every value of every other variable and in the integer
semantics `verify.model.expr.compiled` evaluates with (Python's: ``&`` and ``%`` of a
negative number are its two's-complement bits and floor remainder). Each subexpression
gets one of four shapes, with respect to the variable ``v``:

* periodic, p: ``e(x) == e(y)`` whenever ``x = y (mod p)``; p = 1 where e does not
  read v. Any operator keeps it: the lcm of its operands' periods.
* polynomial: built from v and v-free terms by ``+ - *`` and ``<<`` by a v-free
  amount (a product by 2^k). Then ``x = y (mod m)`` gives ``e(x) = e(y) (mod m)``
  for every m, so ``e % c`` has period |c| (c a nonzero constant).
* two-adic: also ``& | ^`` of such terms. Bit i of the result reads bits 0..i of
  the operands only, so ``x = y (mod 2^k)`` gives ``e(x) = e(y) (mod 2^k)``: ``e & c``
  has period 2^bit_length(c) (c a constant, non-negative), ``e % 2^k`` 2^k.
* anything else (a quotient, a right shift of v, v in a shift amount): no period.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from verify.model.expr import BinOp, Const, Expr, Var, free_vars

_POLYNOMIAL = "polynomial"
_TWO_ADIC = "two-adic"
# A shape: a period (int), _POLYNOMIAL, _TWO_ADIC, or None (no period known).
Shape = int | str | None


def period(e: Expr, name: str) -> int | None:
    """The period p in `name` that `e` is proved to have (module doc), or None."""
    shape = _shape(e, name, {})
    return shape if isinstance(shape, int) else None


def joint_period(exprs: Iterable[Expr], name: str) -> int | None:
    """One period of every expression of `exprs` in `name` (the lcm), or None."""
    found = 1
    for e in exprs:
        p = period(e, name)
        if p is None:
            return None
        found = math.lcm(found, p)
    return found


def _shape(e: Expr, name: str, memo: dict[int, Shape]) -> Shape:
    """`e`'s shape in `name`, each shared subtree once (`memo` by node id)."""
    if name not in free_vars(e):
        return 1
    if isinstance(e, Var):
        return _POLYNOMIAL
    assert isinstance(e, BinOp), "a constant reads no variable"
    if id(e) not in memo:
        memo[id(e)] = _combined(e, _shape(e.a, name, memo), _shape(e.b, name, memo))
    return memo[id(e)]


def _combined(e: BinOp, a: Shape, b: Shape) -> Shape:
    if isinstance(a, int) and isinstance(b, int):
        return math.lcm(a, b)  # a function of two periodic operands, point by point
    if e.op in ("&", "%") and isinstance(e.b, Const) and a in (_POLYNOMIAL, _TWO_ADIC):
        return _masked(e.op, e.b.value, a)
    if e.op == "&" and isinstance(e.a, Const) and b in (_POLYNOMIAL, _TWO_ADIC):
        return _masked(e.op, e.a.value, b)
    if e.op == "<<" and b == 1:
        return a if a in (_POLYNOMIAL, _TWO_ADIC) else None  # a product by 2^b
    if e.op in ("+", "-", "*"):
        return _weakest(a, b)
    if e.op in ("&", "|", "^"):
        return _TWO_ADIC if _weakest(a, b) is not None else None
    return None


def _masked(op: str, c: int, a: Shape) -> int | None:
    """The period of ``a & c`` or ``a % c`` for a constant c."""
    if op == "&":
        return 1 << c.bit_length() if c >= 0 else None
    if c == 0:
        return None
    if a == _POLYNOMIAL:
        return abs(c)
    power = c > 0 and not c & (c - 1)
    return c if power else None


def _weakest(a: Shape, b: Shape) -> Shape:
    """The shape of ``a + b`` (``- *``): the weaker of the two, a v-free operand (1)
    counting as a constant polynomial; None where one is periodic but reads v."""
    shapes = {_POLYNOMIAL if s == 1 else s for s in (a, b)}
    if shapes <= {_POLYNOMIAL}:
        return _POLYNOMIAL
    if shapes <= {_POLYNOMIAL, _TWO_ADIC}:
        return _TWO_ADIC
    return None
