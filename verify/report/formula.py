"""A layout's offset function as a simplified formula, for people (uses sympy).

Arithmetic (+, *, floor division, remainder, shifts by constants) is handed to
sympy and simplified; bitwise operators stay as named functions ``xor``,
``and``, ``or`` around simplified arguments, since sympy has no integer bitwise
algebra. Example: ``(_8,_64):(_64,_1)`` prints as ``64*m0 + m1``.

A printed formula is never trusted: `formula` evaluates the simplified text at
the layout's points and falls back to the unsimplified expression when they
disagree. sympy's own ``Mod`` has rewritten ``Mod(8*Mod(d0, 8), 64)`` into
``8*Mod(Mod(d0, 8)**2, 8)`` (sympy 1.14), so remainders of products are
normalised here, by rules that hold for non-negative integers, before sympy's
``Mod`` sees them.
"""

from __future__ import annotations

import itertools
import math
import operator
import random
from collections.abc import Callable, Mapping
from fractions import Fraction

import sympy

from verify.model.expr import Const, Expr, Range, Var, compiled, render

_BITWISE = {"^": sympy.Function("xor"), "&": sympy.Function("and"), "|": sympy.Function("or")}
_BITWISE_OPS = {
    _BITWISE["^"]: operator.xor,
    _BITWISE["&"]: operator.and_,
    _BITWISE["|"]: operator.or_,
}

# Every point of a domain this small is checked; larger ones by a fixed sample.
EXHAUSTIVE_POINTS = 1 << 14
SAMPLED_POINTS = 4096


def to_sympy(e: Expr) -> sympy.Expr:
    if isinstance(e, Const):
        return sympy.Integer(e.value)
    if isinstance(e, Var):
        return sympy.Symbol(e.name, integer=True, nonnegative=True)
    a, b = to_sympy(e.a), to_sympy(e.b)
    if e.op in _BITWISE:
        return _BITWISE[e.op](a, b)
    if e.op == "<<":
        return a * 2**b
    if e.op == ">>":
        return sympy.floor(a / 2**b)
    return {
        "+": lambda: a + b,
        "-": lambda: a - b,
        "*": lambda: a * b,
        "/": lambda: sympy.floor(a / b),
        "%": lambda: _mod(a, b),
    }[e.op]()


def _mod(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    """a mod b for non-negative integers, with the remainder of a multiple and of
    a remainder taken here (both exact), so that sympy's Mod never sees a product
    with a Mod factor, the case it gets wrong."""
    if not (b.is_Integer and b > 0):
        return sympy.Mod(a, b)
    coefficient, rest = a.as_coeff_Mul()
    if coefficient.is_Integer and coefficient > 1 and b % coefficient == 0:
        # (c*x) mod (c*k) == c * (x mod k)
        return coefficient * _mod(rest, b // coefficient)
    if isinstance(a, sympy.Mod) and a.args[1].is_Integer:
        inner, modulus = a.args
        if modulus % b == 0:  # (x mod m) mod b == x mod b when b divides m
            return _mod(inner, b)
        if b % modulus == 0:  # x mod m < m <= b already
            return a
    return sympy.Mod(a, b)


def formula(e: Expr, domain: list[tuple[str, Range]]) -> str:
    """Simplified text of `e` over `domain` (one range per variable), e.g.
    '64*m0 + m1'; the unsimplified expression wherever the simplified one does not
    give `e`'s value at every checked point of the domain."""
    simplified = sympy.simplify(to_sympy(e))
    if _agrees(simplified, e, domain):
        return str(simplified)
    return render(e)


def _agrees(simplified: sympy.Expr, e: Expr, domain: list[tuple[str, Range]]) -> bool:
    try:
        candidate = _evaluator(simplified)
    except _Unsupported:
        return False
    truth = compiled(e)
    for point in _points(domain):
        try:
            if candidate(point) != truth(point):
                return False
        except (_Unsupported, ZeroDivisionError):
            return False
    return True


def _points(domain: list[tuple[str, Range]]):
    """Every point of a small domain; else its corners and a fixed random sample."""
    names = [n for n, _ in domain]
    ranges = [r for _, r in domain]
    if math.prod(r.size for r in ranges) <= EXHAUSTIVE_POINTS:
        for values in itertools.product(*(range(r.lo, r.hi) for r in ranges)):
            yield dict(zip(names, values))
        return
    for corner in itertools.product(*((r.lo, r.hi - 1) for r in ranges)):
        yield dict(zip(names, corner))
    rng = random.Random(0)
    for _ in range(SAMPLED_POINTS):
        yield {n: rng.randrange(r.lo, r.hi) for n, r in domain}


class _Unsupported(Exception):
    """A sympy construct this evaluator does not know, or a bitwise operation on a
    non-integer: the simplified formula cannot be vouched for."""


Evaluator = Callable[[Mapping[str, int]], "int | Fraction"]


def _evaluator(s: sympy.Expr) -> Evaluator:
    """Exact evaluation of a simplified formula (Fractions, never floats: a float
    quotient can round up to the next integer and hide a wrong floor)."""
    if s.is_Integer:
        value = int(s)
        return lambda env: value
    if s.is_Rational:
        fraction = Fraction(int(s.p), int(s.q))
        return lambda env: fraction
    if s.is_Symbol:
        name = s.name
        return lambda env: env[name]
    args = [_evaluator(a) for a in s.args]
    if isinstance(s, sympy.Add):
        return lambda env: sum(f(env) for f in args)
    if isinstance(s, sympy.Mul):
        return lambda env: math.prod(f(env) for f in args)
    if isinstance(s, sympy.Pow) and s.exp.is_Integer:
        base, exponent = args[0], int(s.exp)
        return lambda env: Fraction(base(env)) ** exponent
    if isinstance(s, sympy.floor):
        return lambda env: math.floor(args[0](env))
    if isinstance(s, sympy.Mod):
        return lambda env: args[0](env) % args[1](env)
    if s.func in _BITWISE_OPS:
        op = _BITWISE_OPS[s.func]
        return lambda env: op(_integer(args[0](env)), _integer(args[1](env)))
    raise _Unsupported(type(s).__name__)


def _integer(value) -> int:
    if isinstance(value, Fraction):
        if value.denominator != 1:
            raise _Unsupported("a bitwise operation on a fraction")
        return value.numerator
    return value
