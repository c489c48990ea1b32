"""The PTX front end's fast paths give what the slow ones give.

* `values._Points`: every node's values at every point of a small domain, lists
  kept per node, against `compiled` evaluated at each point (the reference
  `exact_bounds` used) and, `checked`, against `evaluate` (the reference
  `_tabulated` used), failures included;
* `values.Context._operand`: a node's bounds from its operands' kept bounds,
  against `bounds` walking the whole tree;
* `values.Context._tabulated`: one table per (variable, range, values), against
  the table built afresh for each node, and no lookup built that `_rebuild` would
  not take (`values._may_beat`), against every lookup built;
* `values.Context.nodes`: each node's count kept, against counting its tree;

each over random expressions, and all of them together against all of them
off on every PTX sample (every result: line, property, status, figures, reason,
counterexample). And what is read once per opcode is what each instruction
reads."""

from __future__ import annotations

import os
import random

import conftest
import pytest
from test_ptx_memo import SAMPLES, SLOW, records
from test_ptx_scan import SMALL, outcome

from verify.errors import SpecError
from verify.model.expr import (
    OPS,
    BinOp,
    Const,
    Expr,
    Range,
    Var,
    bounds,
    compiled,
    evaluate,
    free_vars,
)
from verify.ptx import ir, memory, parse, scan, values
from verify.ptx.parse import read_ptx

RANGES = {"lane": Range(0, 32), "warp": Range(0, 4), "k": Range(3, 9)}


def random_expr(rng: random.Random, depth: int) -> Expr:
    if depth == 0 or rng.random() < 0.2:
        if rng.random() < 0.4:
            return Const(rng.choice([0, 1, 2, 3, 5, 8, 31, 32, 65, 1 << 20]))
        return Var(rng.choice(sorted(RANGES)))
    return BinOp(rng.choice(OPS), random_expr(rng, depth - 1), random_expr(rng, depth - 1))


def subtrees(e: Expr) -> list[Expr]:
    out, stack = [], [e]
    while stack:
        x = stack.pop()
        out.append(x)
        if isinstance(x, BinOp):
            stack += [x.a, x.b]
    return out


def reference_bounds(points: values._Points, e: Expr) -> tuple[int, int] | None:
    """What `exact_bounds` gave before `_Points`: `compiled` at each point."""
    names = list(points.columns)
    value = compiled(e)
    found = []
    for at in zip(*points.columns.values()) if names else [()]:
        try:
            found.append(value(dict(zip(names, at))))
        except SpecError:
            return None
    return (min(found), max(found)) if found else None


def reference_values(points: values._Points, e: Expr):
    """What `_tabulated` read before `_Points`: `evaluate` at each point."""
    names = list(points.columns)
    if not free_vars(e):
        return evaluate(e, {})
    return [evaluate(e, dict(zip(names, at))) for at in zip(*points.columns.values())]


def reference_interval(e: Expr, ranges) -> tuple[int, int] | None:
    try:
        return bounds(e, ranges)
    except SpecError:
        return None


@pytest.mark.parametrize("seed", range(20))
def test_points_give_compiled_values_at_every_point(seed):
    rng = random.Random(seed)
    ctx = values.Context(RANGES)
    failed = 0
    for _ in range(20):
        e = random_expr(rng, 5)
        for x in reversed(subtrees(e)):  # operands first, as the tracer builds them
            points = ctx._points(sorted(free_vars(x)))
            expected = reference_bounds(points, x)
            assert points.bounds(x) == expected, x
            failed += expected is None
    assert failed  # the failures (a zero divisor, a negative difference) are checked too


@pytest.mark.parametrize("seed", range(20))
def test_checked_points_give_evaluated_values(seed):
    rng = random.Random(seed)
    ctx = values.Context(RANGES)
    failed = 0
    for _ in range(20):
        for x in reversed(subtrees(random_expr(rng, 5))):
            points = ctx._points(sorted(free_vars(x)), checked=True)
            try:
                expected = reference_values(points, x)
            except SpecError:
                failed += 1
                with pytest.raises(SpecError):
                    points.values(x)
                continue
            assert points.values(x) == expected, x
    assert failed


def test_points_of_an_empty_range_bound_nothing():
    ctx = values.Context({"x": Range(0, 0)})
    assert ctx.exact_bounds(BinOp("+", Var("x"), Const(1))) is None


@pytest.mark.parametrize("seed", range(20))
def test_operand_bounds_are_bounds(seed):
    rng = random.Random(seed)
    ctx = values.Context(RANGES)
    for _ in range(20):
        parts = subtrees(random_expr(rng, 6))
        rng.shuffle(parts)  # some operands kept before their node, some not
        for x in parts:
            assert ctx._interval(x) == reference_interval(x, RANGES), x
        ctx.ranges["k"] = Range(rng.randrange(0, 4), rng.randrange(4, 12))
        for x in parts:  # a changed range: kept operands under the old one are not used
            assert ctx._interval(x) == reference_interval(x, ctx.ranges), x
        ctx.ranges["k"] = RANGES["k"]


@pytest.mark.parametrize("seed", range(20))
def test_one_table_per_values(seed):
    rng = random.Random(seed)
    kept, fresh = values.Context(RANGES), values.Context(RANGES)
    for _ in range(40):
        e = random_expr(rng, 4)
        if not isinstance(e, BinOp):
            continue
        fresh._tables.clear()
        assert kept._tabulated(e) == fresh._tabulated(e), e


# Seeds 0-7 in the default run, all 20 in the `exhaustive` set.
@pytest.mark.parametrize(
    "seed", [s if s < 8 else pytest.param(s, marks=pytest.mark.exhaustive) for s in range(20)]
)
def test_a_lookup_not_built_would_not_be_taken(seed, monkeypatch):
    rng = random.Random(seed)
    exprs = [random_expr(rng, 5) for _ in range(40)]
    fast = [values.Context(RANGES).rebuild(e) for e in exprs]
    monkeypatch.setattr(values, "_may_beat", lambda found, most: True)
    assert [values.Context(RANGES).rebuild(e) for e in exprs] == fast


def test_opcodes_read_once_read_as_each_instruction():
    """`ir.Instr.parts`, split once, and `memory.is_memory`, once per opcode, on every
    instruction of the samples: as the opcode split afresh."""
    for path in (p for p in SAMPLES if os.path.basename(p) not in SLOW):
        for item in read_ptx(path).functions[0].body:
            if isinstance(item, ir.Instr):
                assert item.parts == item.opcode.split(".")
                assert memory.is_memory(item) == memory._memory_opcode.__wrapped__(item.opcode)


def reference_nodes(e: Expr) -> int:
    """The nodes of `e`, counted to MAX_NODES + 1 at most, by walking it."""
    stack, count = [e], 0
    while stack and count <= values.MAX_NODES:
        x = stack.pop()
        count += 1
        if isinstance(x, BinOp):
            stack += [x.a, x.b]
    return count


@pytest.mark.parametrize("most", [4, 30, values.MAX_NODES])
def test_kept_counts_are_counts(most, monkeypatch):
    monkeypatch.setattr(values, "MAX_NODES", most)
    rng = random.Random(most)
    ctx = values.Context(RANGES)
    for _ in range(100):
        parts = subtrees(random_expr(rng, 7))
        rng.shuffle(parts)
        for x in parts:
            assert ctx.nodes(x) == reference_nodes(x), x


def test_every_sample_header_is_read_without_lark():
    """`scan.header` reads every sample's top level as lark reads it (with each body
    a stand-in label): lark is not loaded for them. (tests/ptx/test_ptx_scan.py
    checks whole modules, and edited texts, against lark's.)"""
    for path in SAMPLES:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        spans = scan.bodies(text)
        assert spans, path
        skeleton = parse._skeleton(text, spans)
        assert skeleton is not None and scan.header(text, spans) == read(skeleton), path


@pytest.mark.parametrize(
    "path",
    [SMALL, os.path.join(conftest.DATA, "ptx", "triton_softmax_sm80.ptx")],
    ids=os.path.basename,
)
def test_random_header_edits_read_as_lark_reads_them(path):
    """test_ptx_scan's random edits, put where `scan.header` reads (before the
    first body): the module or the error is lark's."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    spans = scan.bodies(text)
    assert spans
    first = spans[0][0]
    rng = random.Random(29)
    alphabet = ' \t\n;,:{}[]()<>%@!_|+-.$/*"0123456789abcfrx'
    words = [".param", ".u64", ".ptr", ".align", ".b8", ".reqntid", ".func", ".extern", "= 1"]
    for _ in range(150):
        at = rng.randrange(first)
        kind = rng.randrange(4)
        if kind == 0:
            edited = text[:at] + text[at + 1 :]
        elif kind == 1:
            edited = text[:at] + text[at] + text[at:]
        else:
            put = rng.choice(alphabet) if kind == 2 else f" {rng.choice(words)} "
            edited = text[:at] + put + text[at:]
        assert outcome(parse.parse_ptx, edited) == outcome(parse.parse_ptx_by_lark, edited), at


def read(items: list) -> list:
    """The items `parse._module` reads: lark's skipped sections (tokens) and pragmas
    (None) left out."""
    return [x for x in items if x is not None and not isinstance(x, str)]


def slow_paths(monkeypatch) -> None:
    """Every fast path of this file off: each value computed afresh."""
    tabulated = values.Context._tabulated

    def afresh(self, e):
        self._tables.clear()
        return tabulated(self, e)

    monkeypatch.setattr(values.Context, "_tabulated", afresh)
    monkeypatch.setattr(values.Context, "_operand", lambda self, e: bounds(e, self.ranges))
    monkeypatch.setattr(values._Points, "bounds", reference_bounds)
    monkeypatch.setattr(values._Points, "values", reference_values)
    monkeypatch.setattr(values.Context, "nodes", lambda self, e: reference_nodes(e))
    monkeypatch.setattr(values, "_may_beat", lambda found, most: True)


@pytest.mark.parametrize(
    "path", [p for p in SAMPLES if os.path.basename(p) not in SLOW], ids=os.path.basename
)
def test_fast_paths_change_no_result(path, monkeypatch):
    fast = records(path)
    slow_paths(monkeypatch)
    assert records(path) == fast
