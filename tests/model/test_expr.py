import pickle
import random
from functools import partial

import pytest

from verify.errors import Pos, SpecError
from verify.model.expr import (
    GENERATE_AFTER,
    OPS,
    SUBCALL_NODES,
    BinOp,
    Const,
    Range,
    Var,
    _closures,
    _evaluate_tree,
    _interval,
    bounds,
    compiled,
    evaluate,
    free_vars,
    max_intermediate,
    render,
    shape,
    size,
)


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


# The generated evaluators (`evaluate` of a node seen often, `compiled`) against the
# tree walks they replace: same value or the same error (type, message, position).


def _outcome(fn, env):
    try:
        return ("value", fn(env))
    except SpecError as err:
        return ("SpecError", str(err), err.pos)
    except (ValueError, ZeroDivisionError) as err:
        return (type(err).__name__, str(err))


def _random_tree(rng, depth, shared):
    if depth == 0 or rng.random() < 0.2:
        pick = rng.random()
        if pick < 0.15 and shared:
            return rng.choice(shared)
        if pick < 0.55:
            return Var(rng.choice("xyz"), Pos(rng.randint(1, 99), 1))
        return Const(rng.choice([0, 1, 2, 3, 5, 8, 64, 65, -1]))
    op = rng.choice(OPS)
    node = BinOp(
        op,
        _random_tree(rng, depth - 1, shared),
        _random_tree(rng, depth - 1, shared),
        Pos(rng.randint(1, 99), rng.randint(1, 40)),
    )
    shared.append(node)
    return node


def test_generated_evaluators_match_the_tree_walks_value_and_error():
    rng = random.Random(23)
    envs = [
        {"x": x, "y": y, "z": z} for x in (0, 1, 7, 64) for y in (0, 2, 65) for z in (-3, 5)
    ] + [{"x": 3}, {"y": 1, "z": 2}, {}]
    for _ in range(400):
        tree = _random_tree(rng, rng.randint(1, 5), [])
        walk = _closures(tree)
        fast = compiled(tree)
        for env in envs:
            assert _outcome(fast, env) == _outcome(walk, env), render(tree)
            want = _outcome(partial(_evaluate_tree, tree), env)
            for _ in range(GENERATE_AFTER + 1):  # walked first, then generated
                assert _outcome(partial(evaluate, tree), env) == want, render(tree)


def test_a_shared_subtree_is_evaluated_once_and_gives_the_same_value():
    inner = e("*", X, Const(3))
    tree = e("+", e("-", inner, Y), inner)
    env = {"x": 5, "y": 2}
    assert compiled(tree)(env) == 28
    assert [evaluate(tree, env) for _ in range(GENERATE_AFTER + 2)] == [28] * (GENERATE_AFTER + 2)


def test_an_unknown_variable_is_located_by_the_generated_code_too():
    tree = e("+", X, Var("w", Pos(3, 7)))
    for fn in [compiled(tree)] + [lambda env: evaluate(tree, env)] * (GENERATE_AFTER + 1):
        with pytest.raises(SpecError, match="unknown variable 'w'") as err:
            fn({"x": 1})
        assert err.value.pos == Pos(3, 7)


def test_free_vars_is_a_new_set_each_call():
    tree = e("+", X, e("*", Y, X))
    first = free_vars(tree)
    first.add("changed")
    assert free_vars(tree) == {"x", "y"}


def test_nodes_pickle_and_compare_without_what_was_kept_on_them():
    tree = e("+", X, e("*", Y, Const(2)))
    for _ in range(GENERATE_AFTER + 1):
        evaluate(tree, {"x": 1, "y": 2})
    compiled(tree)
    free_vars(tree)
    back = pickle.loads(pickle.dumps(tree))
    assert not [k for k in vars(back) if k.startswith("_")]  # before hash() keeps one
    assert back == tree and hash(back) == hash(tree) and repr(back) == repr(tree)
    assert evaluate(back, {"x": 1, "y": 2}) == 5


def test_bounds_kept_on_a_node_follow_the_ranges_they_are_asked_under():
    tree = e("+", e("*", X, Const(2)), Y)
    assert bounds(tree, RANGES) == (1, 134)
    assert bounds(tree, RANGES) == (1, 134)
    ranges = dict(RANGES, y=Range(4, 5))
    assert bounds(tree, ranges) == (4, 130)
    assert max_intermediate(tree, ranges) == 130
    ranges["x"] = Range(0, 1000)  # the same dict, changed: asked again, not kept
    assert bounds(tree, ranges) == (4, 2002)
    assert max_intermediate(tree, ranges) == 2002
    with pytest.raises(SpecError, match="unknown variable 'y'"):
        bounds(tree, {"x": Range(0, 4)})
    with pytest.raises(SpecError, match="subtraction may be negative"):
        bounds(e("-", tree, X), ranges)


# Bounds kept by shape (`verify.model.expr.shape`): a kernel's accesses repeat one
# subexpression many times, as one node or as copies, and each is bounded once. The
# reference walks every node with no table; copies must give its values, and its
# errors at their own positions.


def _moved(tree, rng, keep):
    """`tree` rebuilt at other positions; with `keep`, its shape is taken from
    `tree` (kept on the copy before any walk of it)."""
    if isinstance(tree, Var):
        return Var(tree.name, Pos(rng.randint(100, 199), 1))
    if isinstance(tree, Const):
        return Const(tree.value, Pos(rng.randint(100, 199), 1))
    copy = BinOp(
        tree.op, _moved(tree.a, rng, keep), _moved(tree.b, rng, keep), Pos(rng.randint(100, 199), 2)
    )
    if keep:
        copy.__dict__["_shape"] = shape(tree)
    return copy


def _walked_bounds(tree, ranges):
    if isinstance(tree, Const):
        return tree.value, tree.value
    if isinstance(tree, Var):
        if tree.name not in ranges:
            raise SpecError(f"unknown variable '{tree.name}'", tree.pos)
        return ranges[tree.name].lo, ranges[tree.name].hi - 1
    return _interval(
        tree.op, _walked_bounds(tree.a, ranges), _walked_bounds(tree.b, ranges), tree.pos
    )


def _bounds_outcome(fn, tree, ranges):
    try:
        return ("value", fn(tree, ranges))
    except SpecError as err:
        return ("SpecError", str(err), err.pos)


def test_bounds_kept_by_shape_give_each_copy_its_own_values_and_errors():
    rng = random.Random(7)
    range_sets = [
        {"x": Range(0, 8), "y": Range(1, 4), "z": Range(2, 3)},
        {"x": Range(0, 65), "y": Range(0, 2), "z": Range(0, 70)},
        {"x": Range(5, 6), "z": Range(1, 9)},
    ]
    for _ in range(300):
        tree = _random_tree(rng, rng.randint(1, 5), [])
        if not isinstance(tree, BinOp) or any(
            isinstance(c, Const) and c.value < 0 for c in _nodes(tree)
        ):
            continue
        copies = [tree, _moved(tree, rng, True), _moved(tree, rng, False)]
        for ranges in rng.sample(range_sets, len(range_sets)):
            for copy in rng.sample(copies, len(copies)):
                want = _bounds_outcome(_walked_bounds, copy, ranges)
                assert _bounds_outcome(bounds, copy, ranges) == want, render(copy)
                if want[0] == "value":
                    assert max_intermediate(copy, ranges) >= want[1][1]


def _nodes(tree):
    yield tree
    if isinstance(tree, BinOp):
        yield from _nodes(tree.a)
        yield from _nodes(tree.b)


def test_shape_names_equal_trees_alike_and_unequal_trees_apart():
    rng = random.Random(11)
    trees = [_random_tree(rng, rng.randint(0, 4), []) for _ in range(400)]
    trees += [_moved(t, rng, rng.random() < 0.5) for t in trees[:100]]
    trees += [Const(True), Const(1), Var("x"), Var("x", Pos(3, 3))]
    for a in trees:
        for b in trees[:120] + trees[-4:]:
            assert (shape(a) == shape(b)) == (a == b and type(_value(a)) is type(_value(b))), (
                render(a),
                render(b),
            )


def _value(tree):
    return tree.value if isinstance(tree, Const) else None


def test_compiled_trees_calling_a_shared_subtree_keep_their_own_values_and_errors():
    """`compiled` computes a large subtree of a shape compiled before by a call to
    that shape's function (generated from another copy): each tree still gives its
    own walk's value, or its error at its own position."""
    rng = random.Random(5)
    envs = [
        {"x": x, "y": y, "z": z} for x in (0, 1, 7, 64) for y in (0, 2, 65) for z in (-3, 5)
    ] + [{"x": 3}, {"y": 1, "z": 2}]
    tried = 0
    while tried < 60:
        inner = _random_tree(rng, 5, [])
        if size(inner) < SUBCALL_NODES:
            continue
        tried += 1
        for k in range(4):
            part = _moved(inner, rng, keep=k % 2 == 0) if k else inner
            tree = BinOp(rng.choice(OPS), part, _random_tree(rng, 2, []), Pos(200 + k, 1))
            fast, walk = compiled(tree), _closures(tree)
            for env in envs:
                assert _outcome(fast, env) == _outcome(walk, env), render(tree)


def test_a_trees_kept_hash_is_the_dataclass_hash_of_its_fields():
    """`BinOp.__hash__` keeps ``hash((op, a, b))``: equal trees (at any positions,
    built apart) hash alike, and the value is what the dataclass would compute."""
    rng = random.Random(3)
    for _ in range(200):
        tree = _random_tree(rng, rng.randint(1, 5), [])
        if not isinstance(tree, BinOp):
            continue
        copy = _moved(tree, rng, keep=False)
        assert copy == tree and hash(copy) == hash(tree)
        assert hash(tree) == hash((tree.op, tree.a, tree.b))
        back = pickle.loads(pickle.dumps(tree))
        assert "_hash" not in vars(back) and hash(back) == hash(tree)
