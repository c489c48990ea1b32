"""`trailing_zeros` (known low zero bits, which decide when one bank search may serve
accesses placed by XOR: `verify.engines.enumeration.bank_question`) checked over
whole domains."""

from __future__ import annotations

import itertools
import random

import pytest

from verify.errors import SpecError
from verify.model.expr import OPS, BinOp, Const, Expr, Range, Var, bounds, trailing_zeros

RANGES = {"x": Range(0, 8), "y": Range(0, 6), "k": Range(4, 5)}  # k: one value
CONSTS = (0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256)


def random_tree(rng: random.Random, depth: int) -> Expr:
    if depth == 0 or rng.random() < 0.25:
        if rng.random() < 0.5:
            return Var(rng.choice(list(RANGES)))
        return Const(rng.choice(CONSTS))
    op = rng.choice(OPS)
    b = Const(rng.randrange(4)) if op in ("<<", ">>") else random_tree(rng, depth - 1)
    return BinOp(op, random_tree(rng, depth - 1), b)


def values(e: Expr):
    names = list(RANGES)
    for point in itertools.product(*(range(r.lo, r.hi) for r in RANGES.values())):
        env = dict(zip(names, point))
        yield _value(e, env)


def _value(e: Expr, env: dict[str, int]) -> int:
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Var):
        return env[e.name]
    a, b = _value(e.a, env), _value(e.b, env)
    ops = {
        "+": lambda: a + b,
        "-": lambda: a - b,
        "*": lambda: a * b,
        "/": lambda: a // b,
        "%": lambda: a % b,
        "&": lambda: a & b,
        "|": lambda: a | b,
        "^": lambda: a ^ b,
        "<<": lambda: a << b,
        ">>": lambda: a >> b,
    }
    return ops[e.op]()


def test_every_value_is_a_multiple_of_two_to_the_known_zeros():
    """2,000 random trees (fixed seed), each over all 48 points of its variables."""
    rng = random.Random(23)
    checked = aligned = 0
    for _ in range(2000):
        e = random_tree(rng, 4)
        try:
            bounds(e, RANGES)  # defined over the ranges: no negative value, no zero divisor
        except SpecError:
            continue
        zeros = trailing_zeros(e, RANGES)
        assert all(v % (1 << zeros) == 0 for v in values(e)), (e, zeros)
        checked += 1
        aligned += zeros >= 2
    assert checked > 800 and aligned > 200  # the law was tested, and not only with 0


@pytest.mark.parametrize(
    "expr, zeros",
    [
        # a PTX address of Triton's transpose: masked to words, then placed
        (BinOp("|", BinOp("&", BinOp("<<", Var("x"), Const(1)), Const(28)), Const(256)), 2),
        (BinOp("*", Const(128), Var("x")), 7),
        (BinOp("+", BinOp("*", Const(16), Var("x")), Const(8)), 3),
        (BinOp("/", BinOp("*", Const(64), Var("x")), Const(4)), 4),
        (BinOp("/", BinOp("*", Const(64), Var("x")), Const(6)), 0),
        (BinOp(">>", BinOp("<<", Var("x"), Const(3)), Var("y")), 0),
        (BinOp("<<", Var("x"), Var("k")), 4),
        (Const(0), 64),
    ],
)
def test_known_zeros_of_typical_addresses(expr, zeros):
    assert trailing_zeros(expr, RANGES) == zeros


def test_a_variable_without_a_range_is_the_error_bounds_gives():
    with pytest.raises(SpecError, match="unknown variable 'z'"):
        trailing_zeros(BinOp("+", Var("x"), Var("z")), RANGES)
