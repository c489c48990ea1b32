import pytest

from verify.errors import SpecError
from verify.model.expr import BinOp, Const, Range, Var, bounds, evaluate, max_intermediate


def e(op, a, b):
    return BinOp(op, a, b)


X, Y = Var("x"), Var("y")
RANGES = {"x": Range(0, 64), "y": Range(1, 9)}


@pytest.mark.parametrize(
    "op,fn",
    [
        ("+", lambda x, y: x + y),
        ("*", lambda x, y: x * y),
        ("/", lambda x, y: x // y),
        ("%", lambda x, y: x % y),
        ("&", lambda x, y: x & y),
        ("|", lambda x, y: x | y),
        ("^", lambda x, y: x ^ y),
        ("<<", lambda x, y: x << y),
        (">>", lambda x, y: x >> y),
    ],
)
def test_evaluate_and_bounds_agree_over_the_whole_domain(op, fn):
    expr = e(op, X, Y)
    lo, hi = bounds(expr, RANGES)
    for x in range(64):
        for y in range(1, 9):
            value = evaluate(expr, {"x": x, "y": y})
            assert value == fn(x, y)
            assert lo <= value <= hi


def test_subtraction_that_may_go_negative_is_rejected_with_ranges():
    with pytest.raises(SpecError, match=r"subtraction may be negative: left side in \[0, 63\]"):
        bounds(e("-", X, Y), RANGES)


def test_subtraction_that_stays_non_negative_is_accepted():
    assert bounds(e("-", e("+", X, Const(8)), Y), RANGES) == (0, 70)


def test_division_by_a_range_containing_zero_is_rejected():
    with pytest.raises(SpecError, match="divisor of '/' may be zero"):
        bounds(e("/", Y, X), RANGES)


def test_concrete_negative_result_is_an_error_not_a_wrap():
    with pytest.raises(SpecError, match="negative"):
        evaluate(e("-", Const(1), Const(2)), {})


def test_max_intermediate_sees_inner_terms_larger_than_the_result():
    expr = e(">>", e("<<", X, Const(40)), Const(40))
    assert bounds(expr, RANGES)[1] == 63
    assert max_intermediate(expr, RANGES) == 63 << 40
