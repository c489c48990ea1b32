"""What makes checking a compiled kernel cheaper changes no answer: each shortcut
against code that does not take it (`verify.model.bank`'s plain rules,
`verify.model.expr.evaluate`)."""

import sys

import numpy as np

from verify.engines import copy_rules, plain
from verify.model import expr as expr_module
from verify.model.bank import hardware_copy_cost
from verify.model.expr import BinOp, Const, Expr, Var, evaluate
from verify.model.instructions import parse_instruction

CG = parse_instruction("cp.async.cg.shared.global.16")


def test_rule_s_costs_each_instance_as_the_bank_model_does_when_instances_repeat():
    """`copy_rules.cg_costs` costs each distinct instance once, up to moving its
    destinations or sources by a multiple of 128 bytes: instances moved so (and
    moved by less, which may change the cost) each get the plain rule S's cost."""
    rng = np.random.default_rng(23)
    dst = rng.integers(0, 48, size=(60, 32)) * 16
    src = rng.integers(0, 48, size=(60, 32)) * 16
    dst[:20] %= 128  # chunks copied twice into one line: rule S's rounds
    moves = (0, 16, 32, 64, 128, 256 + 16, 4096)
    dst = np.concatenate([dst + m for m in moves for _ in moves])
    src = np.concatenate([src + m for _ in moves for m in moves])
    costs, exact = copy_rules.cg_costs(dst, src)
    for d, s, cost in zip(dst, src, costs):
        assert cost == hardware_copy_cost(CG, list(d), list(s)).wavefronts
    assert exact.all()
    by_line = costs.reshape(len(moves), len(moves), -1)
    assert (by_line[0, 0] == by_line[4, 6]).all()  # 128 and 4096: the same instances
    assert len({tuple(c) for c in by_line.reshape(-1, 60)}) > 1  # 16 bytes may not be


def test_rule_s_of_sources_far_apart_is_the_bank_model_s(monkeypatch):
    """Sources up to 2^62 bytes apart: the lane keys rule S compares are too wide to pack
    into one int64, and are compared by rank (`copy_rules._ranks`)."""
    ranked = []
    real = copy_rules._ranks

    def counted(values):
        ranked.append(values.shape)
        return real(values)

    monkeypatch.setattr(copy_rules, "_ranks", counted)
    rng = np.random.default_rng(5)
    dst = rng.integers(0, 64, size=(50, 32)) * 16
    src = rng.integers(0, 1 << 58, size=(50, 32)) * 16
    src[:, 1::2] = src[:, ::2] + 16 * rng.integers(0, 3, size=(50, 16))  # shared lines
    dst[:, :2], src[:, 2:4] = (0, 1008), (0, ((1 << 58) - 1) * 16)  # the widest spans
    src[:25] %= 1 << 10  # and sources close together, packed as they are
    costs, _ = copy_rules.cg_costs(dst, src)
    for d, s, cost in zip(dst, src, costs):
        assert cost == hardware_copy_cost(CG, list(d), list(s)).wavefronts
    assert ranked


def test_rule_s_of_no_instance_is_empty():
    costs, exact = copy_rules.cg_costs(np.zeros((0, 32), np.int64), np.zeros((0, 32), np.int64))
    assert costs.shape == exact.shape == (0,)


def test_expressions_of_one_shape_share_code_and_keep_their_own_values():
    """`plain.function` compiles one text per shape: constants and names are its
    arguments, so two accesses that differ in them get their own values."""
    x, y = Var("x"), Var("y")
    first: list[Expr] = [BinOp("+", BinOp("*", x, Const(16)), Const(3)), BinOp("%", x, Const(5))]
    second: list[Expr] = [BinOp("+", BinOp("*", y, Const(7)), Const(1000)), BinOp("%", y, Const(3))]
    expr_module._FACTORIES.clear()
    one, two = plain.function(first), plain.function(second)
    assert len(expr_module._FACTORIES) == 1
    for v in range(20):
        assert one({"x": v}) == tuple(evaluate(e, {"x": v}) for e in first)
        assert two({"y": v}) == tuple(evaluate(e, {"y": v}) for e in second)


def test_small_domains_are_walked_in_python_only_while_numpy_is_not_imported(monkeypatch):
    """The plain path saves importing numpy (issue 23: start-up); once numpy is in,
    its path is the cheaper above the smallest domains, which alone are walked.
    Both decide alike (test_engines.py::test_small_domains_walked_in_plain_python_...)."""
    assert "numpy" in sys.modules
    assert (plain.limit(), plain.limit(bank=True)) == (
        plain.LOADED_POINTS,
        plain.LOADED_BANK_POINTS,
    )
    monkeypatch.delitem(sys.modules, "numpy")
    assert (plain.limit(), plain.limit(bank=True)) == (
        plain.PLAIN_POINTS,
        plain.PLAIN_BANK_POINTS,
    )
