"""verify map's formula: simplified by sympy, but never printed unless it gives
the layout's own value at the checked points."""

import sympy
from click.testing import CliRunner

from verify import api
from verify.cli import main
from verify.model.expr import BinOp, Const, Range, Var, compiled, render
from verify.model.layout import coordinate_vars
from verify.report.formula import _BITWISE, _evaluator, formula, to_sympy

ISSUE_ENCODING = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"


def layout_formula(text, shape=None):
    ldef = api.parse_layout(text, shape)
    domain = coordinate_vars(ldef.function)
    return formula(ldef.value([Var(n) for n, _ in domain]), domain), ldef, domain


def test_the_issue_encoding_prints_a_formula_that_matches_every_offset():
    text, ldef, domain = layout_formula(ISSUE_ENCODING, (64, 64))
    assert text == "64*d0 + xor(d1, 8*(Mod(d0, 8)))"
    simplified = _evaluator(sympy.simplify(to_sympy(ldef.value([Var(n) for n, _ in domain]))))
    offsets = api.offsets(ldef)
    assert [simplified({"d0": i % 64, "d1": i // 64}) for i in range(4096)] == offsets


def test_a_remainder_of_a_multiple_of_a_remainder_is_exact():
    # ((d0 % 8) * 8) % 64: sympy's Mod alone squares the inner remainder.
    e = BinOp("%", BinOp("*", BinOp("%", Var("d0"), Const(8)), Const(8)), Const(64))
    evaluate = _evaluator(to_sympy(e))
    assert all(evaluate({"d0": d}) == (d % 8) * 8 % 64 for d in range(256))


def test_a_formula_that_disagrees_with_the_layout_falls_back_to_the_plain_expression(monkeypatch):
    e = BinOp("+", BinOp("*", Var("r"), Const(64)), Var("c"))
    domain = [("r", Range(0, 8)), ("c", Range(0, 64))]
    monkeypatch.setattr(sympy, "simplify", lambda s: s + 1)  # a wrong simplification
    assert formula(e, domain) == render(e) == "((r * 64) + c)"


def test_large_domains_are_checked_by_a_sample_and_still_fall_back(monkeypatch):
    e = BinOp("^", Var("x"), BinOp("%", Var("y"), Const(8)))
    domain = [("x", Range(0, 1 << 12)), ("y", Range(0, 1 << 12))]
    assert formula(e, domain) == "xor(x, Mod(y, 8))"
    # and(x, Mod(y, 8)) equals xor(x, Mod(y, 8)) only where their bits never meet.
    wrong = _BITWISE["&"](*to_sympy(e).args)
    monkeypatch.setattr(sympy, "simplify", lambda s: wrong)
    assert formula(e, domain) == render(e)


def test_printed_formulas_of_every_triton_swizzle_match_their_offsets():
    for vec, per, most in [(8, 1, 8), (4, 2, 4), (16, 4, 2), (1, 1, 1), (8, 2, 4)]:
        enc = (
            f"#ttg.swizzled_shared<{{vec = {vec}, perPhase = {per}, maxPhase = {most}, "
            "order = [1, 0]}>"
        )
        text, ldef, domain = layout_formula(enc, (32, 64))
        value = ldef.value([Var(n) for n, _ in domain])
        truth = compiled(value)
        if text != render(value):
            simplified = _evaluator(sympy.simplify(to_sympy(value)))
            assert all(
                simplified({"d0": a, "d1": b}) == truth({"d0": a, "d1": b})
                for a in range(32)
                for b in range(64)
            ), enc


def test_map_command_prints_the_checked_formula():
    out = CliRunner().invoke(main, ["map", ISSUE_ENCODING, "--shape", "64,64"]).output
    assert "L(d0, d1) = 64*d0 + xor(d1, 8*(Mod(d0, 8)))" in out
