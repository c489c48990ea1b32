import itertools

import pytest

from verify.errors import SpecError
from verify.model.expr import Const, Var, evaluate
from verify.model.layout import Composed, CuteLayout, Swizzle, offsets, size


def colex_reference(index, shape, stride):
    """Independent CuTe semantics: flatten shape/stride, split index column-major."""

    def flat(t):
        return [t] if isinstance(t, int) else [x for s in t for x in flat(s)]

    total = 0
    for s, d in zip(flat(shape), flat(stride)):
        total += (index % s) * d
        index //= s
    return total


def swizzle_reference(x, b, m, s):
    mask = ((1 << b) - 1) << (m + max(0, s))
    return x ^ ((x & mask) >> s if s >= 0 else (x & mask) << -s)


@pytest.mark.parametrize(
    "shape,stride",
    [
        ((8, 64), (64, 1)),
        (((8, 8), 64), ((64, 512), 1)),
        ((4, (2, 3)), (1, (4, 8))),
        (12, 3),
        ((3, 5), (5, 1)),
    ],
)
def test_cute_layout_matches_colexicographic_reference_on_whole_domain(shape, stride):
    layout = CuteLayout(shape, stride)
    assert offsets(layout) == [colex_reference(i, shape, stride) for i in range(size(shape))]


@pytest.mark.parametrize("b,m,s", [(3, 3, 3), (3, 4, 3), (2, 0, 3), (1, 2, -2), (3, 0, -4)])
def test_swizzle_is_an_involution_and_matches_reference(b, m, s):
    sw = Swizzle(b, m, s)
    expr = sw.apply_expr(Var("x"))
    twice = sw.apply_expr(expr)
    for x in range(1 << 12):
        assert evaluate(expr, {"x": x}) == swizzle_reference(x, b, m, s)
        assert evaluate(twice, {"x": x}) == x


def test_worked_example_from_the_docstring():
    layout = Composed(Swizzle(3, 3, 3), 0, CuteLayout((8, 64), (64, 1)))
    assert evaluate(layout.crd2idx([Const(5), Const(3)]), {}) == 363


def test_seed_formula_equals_swizzle_on_every_coordinate():
    layout = Composed(Swizzle(3, 3, 3), 0, CuteLayout((8, 64), (64, 1)))
    offs = offsets(layout)
    for r, c in itertools.product(range(8), range(64)):
        assert offs[r + 8 * c] == 64 * r + (c ^ ((r & 7) << 3))


def test_overlapping_swizzle_fields_are_rejected():
    with pytest.raises(SpecError, match=r"expected \|S\| >= B"):
        Swizzle(3, 3, 2)


def test_diagram_marks_read_and_flipped_bits():
    lines = Swizzle(3, 3, 3).diagram().splitlines()
    assert lines[1].split() == ["Y", "Y", "Y", "Z", "Z", "Z", ".", ".", "."]
