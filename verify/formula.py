"""A layout's offset function as a simplified formula, for people (uses sympy).

Arithmetic (+, *, floor division, remainder, shifts by constants) is handed to
sympy and simplified; bitwise operators stay as named functions ``xor``,
``and``, ``or`` around simplified arguments, since sympy has no integer bitwise
algebra. Example: ``(_8,_64):(_64,_1)`` prints as ``64*m0 + m1``.
"""
from __future__ import annotations

import sympy

from verify.expr import Const, Expr, Var

_BITWISE = {"^": sympy.Function("xor"), "&": sympy.Function("and"), "|": sympy.Function("or")}


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
    return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
            "/": lambda: sympy.floor(a / b), "%": lambda: sympy.Mod(a, b)}[e.op]()


def formula(e: Expr) -> str:
    """Simplified text of `e`, e.g. '64*m0 + m1'."""
    return str(sympy.simplify(to_sympy(e)))
