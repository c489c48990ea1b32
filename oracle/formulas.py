"""Expressions of the spec (formula bodies, access coordinates, `equivalent` sides)
compiled from the raw parse tree into closures over numpy arrays.

Overview
--------
`compile_expr(tree, scope)` returns ``f(env) -> array`` where ``env`` maps each
variable to an integer array; arrays broadcast, so a whole domain (every lane,
loop value, coordinate) is evaluated in one call. The grammar already encodes C
precedence (``|`` < ``^`` < ``&`` < shifts < ``+ -`` < ``* / %``), so the tree's
shape is the evaluation order.

Worked example
--------------
``32 * (r / 2) + c`` with r = [1, 2], c = [[0], [1]] (broadcast)::

    r / 2       = [0, 1]          (floor)
    32 * ...    = [0, 32]
    ... + c     = [[0, 32], [1, 33]]

The math
--------
Values are non-negative integers: ``/`` and ``%`` floor, ``>>`` is unsigned. A
subtraction that is negative anywhere it is evaluated makes the spec invalid
(`OracleRefusal`, naming line and column); so does a division by zero. Arrays are
int64 while every operand stays below 2^62 and an operation cannot leave that
range; past it the operands become Python integers (numpy object arrays), so no
value ever wraps. ``Sw<B,M,S>(e)`` is CuTe's swizzle; ``L(args)`` asks the
`scope` for layout L's value (elements, or bytes at base 0 for a pointer swizzle).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Protocol

import numpy as np
from lark import Token, Tree

from oracle import cute
from oracle.errors import OracleRefusal

MAX_SHIFT = 4096
MAX_LITERAL = 1 << 64

Compiled = Callable[[dict], np.ndarray]

_OPS = {
    "bor": operator.or_,
    "bxor": operator.xor,
    "band": operator.and_,
    "shl": operator.lshift,
    "shr": operator.rshift,
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": operator.floordiv,
    "mod": operator.mod,
}


class Callee(Protocol):
    """A layout an expression can call."""

    def value_at(self, args: list[np.ndarray], at: str) -> np.ndarray: ...


class Scope(Protocol):
    """What an expression may name: variables, and layouts defined above."""

    def has_variable(self, name: str) -> bool: ...

    def layout(self, name: str, at: str) -> Callee: ...


def where(tree) -> str:
    meta = getattr(tree, "meta", None)
    line = getattr(tree, "line", None) or getattr(meta, "line", None)
    column = getattr(tree, "column", None) or getattr(meta, "column", None)
    return f"line {line}, column {column}" if line else "somewhere"


def leaf(node: Tree | Token) -> Token:
    """A child the grammar makes a token (lark types every child as a tree or token)."""
    assert isinstance(node, Token), f"expected a token, found the subtree {node}"
    return node


def integer(tok: Token) -> int:
    """An INT or STATIC_INT literal (``_8``, ``0x40``), bounded like verify's grammar
    intends (below 2^64)."""
    text = str(tok).lstrip("_")
    value = int(text, 16) if text[:2].lower() == "0x" else int(text)
    if value >= MAX_LITERAL:
        raise OracleRefusal(f"{where(tok)}: integer {text} is 2^64 or more")
    return value


def _largest(a: np.ndarray) -> int:
    return int(np.max(a))


def _may_overflow(op: str, a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype == object or b.dtype == object:
        return False
    if op == "add":
        return _largest(a) + _largest(b) >= cute.INT64_SAFE
    if op == "mul":
        return _largest(a) * _largest(b) >= cute.INT64_SAFE
    if op == "shl":
        return _largest(a) << _largest(b) >= cute.INT64_SAFE
    return op == "shr" and _largest(b) >= 63


def scaled(a: np.ndarray, k: int) -> np.ndarray:
    """a * k without int64 wrap-around (Python integers past 2^62)."""
    if a.dtype != object and _largest(a) * k >= cute.INT64_SAFE:
        a = a.astype(object)
    return a * k


def narrow(a: np.ndarray) -> np.ndarray:
    """Back to int64 when an object array's values fit (indexing needs it)."""
    if a.dtype == object and _largest(a) < cute.INT64_SAFE:
        return a.astype(np.int64)
    return a


def _binary(op: str, left: Compiled, right: Compiled, at: str) -> Compiled:
    fn = _OPS[op]

    def apply(env):
        a, b = left(env), right(env)
        if op in ("div", "mod") and np.any(b == 0):
            raise OracleRefusal(f"{at}: division by zero")
        if op in ("shl", "shr") and _largest(b) > MAX_SHIFT:
            raise OracleRefusal(f"{at}: shift by more than {MAX_SHIFT}")
        if _may_overflow(op, a, b):
            a, b = a.astype(object), b.astype(object)
        result = fn(a, b)
        if op == "sub" and np.min(result) < 0:
            raise OracleRefusal(
                f"{at}: the subtraction is negative (values are non-negative integers)"
            )
        return result

    return apply


def compile_expr(tree, scope: Scope) -> Compiled:
    """Closure evaluating expression `tree` (see module doc)."""
    if isinstance(tree, Token):
        raise OracleRefusal(f"{where(tree)}: unexpected token {tree!r} in an expression")
    kind = tree.data
    if kind == "num":
        value = np.asarray(integer(tree.children[0]), dtype=object)
        value = narrow(value)
        return lambda env: value
    if kind == "var":
        return _variable(tree.children[0], scope)
    if kind in _OPS:
        left, right = tree.children[0], tree.children[-1]
        return _binary(kind, compile_expr(left, scope), compile_expr(right, scope), where(tree))
    if kind == "swizzle_call":
        sw = cute.swizzle(*swizzle_params(tree.children[0]))
        arg = compile_expr(tree.children[1], scope)
        return lambda env: sw(arg(env))
    if kind == "layout_call":
        return _layout_call(tree, scope)
    raise OracleRefusal(f"{where(tree)}: the oracle does not read '{kind}' in an expression")


def _variable(tok: Token, scope: Scope) -> Compiled:
    name = str(tok)
    if not scope.has_variable(name):
        raise OracleRefusal(f"{where(tok)}: unknown variable '{name}'")
    return lambda env: env[name]


def _layout_call(tree: Tree, scope: Scope) -> Compiled:
    name, *arg_trees = tree.children
    args = [compile_expr(a, scope) for a in arg_trees]
    at = f"{where(name)}: {name}(...)"
    callee = scope.layout(str(name), at)
    return lambda env: callee.value_at([a(env) for a in args], at)


def swizzle_params(tree: Tree) -> tuple[int, int, int]:
    """(B, M, S) of a ``swizzle`` node; its first child is the Sw/Swizzle token."""
    values = []
    for signed in tree.children[1:]:
        *minus, tok = signed.children
        values.append(-integer(leaf(tok)) if minus else integer(leaf(tok)))
    b, m, s = values  # the grammar's three parameters
    return b, m, s


class _NoVariables:
    """The scope of a range bound: layouts, but no variables."""

    def __init__(self, outer: Scope):
        self.outer = outer

    def has_variable(self, name: str) -> bool:
        return False

    def layout(self, name: str, at: str) -> Callee:
        return self.outer.layout(name, at)


def constant(tree, scope: Scope) -> int:
    """A range bound: an expression without variables."""
    return int(compile_expr(tree, _NoVariables(scope))({}))
