"""Integer expressions over named, ranged variables.

Every address function in verify -- a CuTe layout, a swizzle, a formula typed by
the user, a lane's coordinate -- is lowered to this one small tree. It has two
interpreters that must agree:

* `evaluate` on Python integers (used for replay, `verify map`, brute force);
* `verify.smt.bv.lower` on Z3 bit-vectors (used for proofs).

Semantics: all values are non-negative integers. ``/`` and ``%`` are floor
division and remainder, ``>>`` is an unsigned shift. `bounds` proves, by interval
arithmetic over the variables' ranges, that no subexpression can be negative and
how many bits the largest one needs; the bit-vector width is chosen from it, so
the unsigned bit-vector operations are exact (no wrap-around).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from verify.errors import Pos, SpecError

OPS = ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>")

# Shift amounts beyond this are certainly a typo and would blow up widths.
MAX_SHIFT = 64


class _Node:
    """Nodes are immutable, so what is derived from one alone (its free variables,
    its generated evaluator) is kept in its ``__dict__`` under a ``_``-name: no
    field, so equality, hashing and repr are as before; pickling leaves it out."""

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}


@dataclass(frozen=True)
class Const(_Node):
    value: int
    pos: Pos = field(default=Pos(), compare=False)


@dataclass(frozen=True)
class Var(_Node):
    name: str
    pos: Pos = field(default=Pos(), compare=False)


@dataclass(frozen=True)
class BinOp(_Node):
    op: str
    a: Expr
    b: Expr
    pos: Pos = field(default=Pos(), compare=False)

    def __hash__(self) -> int:
        """The dataclass's own hash, ``hash((op, a, b))``, kept: each operand keeps
        its own, so hashing a tree costs one step, not a walk (the PTX tracer keys
        its tables by value)."""
        found = self.__dict__.get("_hash")
        if found is None:
            found = self.__dict__["_hash"] = hash((self.op, self.a, self.b))
        return found


Expr = Const | Var | BinOp


@dataclass(frozen=True)
class Range:
    """Half-open integer range [lo, hi), as written ``lo..hi`` in specs."""

    lo: int
    hi: int

    @property
    def size(self) -> int:
        return self.hi - self.lo

    def __str__(self) -> str:
        return f"{self.lo}..{self.hi}"


def add(a: Expr, b: Expr) -> Expr:
    if isinstance(a, Const) and a.value == 0:
        return b
    if isinstance(b, Const) and b.value == 0:
        return a
    return BinOp("+", a, b)


def mul(a: Expr, b: Expr) -> Expr:
    for x, y in ((a, b), (b, a)):
        if isinstance(x, Const) and x.value == 1:
            return y
        if isinstance(x, Const) and x.value == 0:
            return Const(0)
    return BinOp("*", a, b)


def free_vars(e: Expr) -> set[str]:
    """The variables of `e` (a new set each call: callers may change it)."""
    return set(_free(e))


def free_vars_within(e: Expr, names: set[str] | frozenset[str]) -> bool:
    """Every variable of `e` is in `names` (no new set: the variables are kept)."""
    return _free(e) <= names


_NO_VARS: frozenset[str] = frozenset()


def _free(e: Expr) -> frozenset[str]:
    """`free_vars`, kept on each node (shared subtrees are walked once)."""
    if isinstance(e, Const):
        return _NO_VARS
    found = e.__dict__.get("_free")
    if found is None:
        if isinstance(e, Var):
            found = frozenset((e.name,))
        else:
            found = _free(e.a) | _free(e.b)
        e.__dict__["_free"] = found
    return found


def shape(e: Expr) -> int:
    """A number naming e's structure (operators, constants, variable names; not
    positions): two nodes have one number only if they are equal trees, so what is
    derived from a tree's structure alone can be kept by it across the many trees
    that repeat one subexpression (as one node, or as copies at other positions). Kept
    on each node; numbers are never reused, so a forgotten table only costs misses."""
    found = e.__dict__.get("_shape")
    if found is None:
        if isinstance(e, Const):
            parts: tuple = ("c", type(e.value), e.value)
        elif isinstance(e, Var):
            parts = ("v", e.name)
        else:
            parts = (e.op, shape(e.a), shape(e.b))
        found = _SHAPES.get(parts)
        if found is None:
            if len(_SHAPES) >= _MAX_KEPT:
                _SHAPES.clear()
            found = _SHAPES[parts] = next(_NUMBERS)
        e.__dict__["_shape"] = found
    return found


# Structure -> its number (`shape`); tables derived by shape hold at most _MAX_KEPT.
_SHAPES: dict[tuple, int] = {}
_NUMBERS = itertools.count()
_MAX_KEPT = 1 << 16  # such a table holds some 20 MB at most


def kept(e: BinOp, name: str, derive: Callable[[BinOp], object]):
    """``derive(e)``, a function of e's structure alone, kept on the node under
    `name` (a ``_``-name: see `_Node`), so a shared subtree is derived once."""
    found = e.__dict__.get(name)
    if found is None:
        found = e.__dict__[name] = derive(e)
    return found


def size(e: Expr) -> int:
    """Nodes in `e` as a tree (a shared subtree counted at each use)."""
    if not isinstance(e, BinOp):
        return 1
    return kept(e, "_size", lambda n: 1 + size(n.a) + size(n.b))


def substitute(e: Expr, env: Mapping[str, Expr]) -> Expr:
    """Replace variables by expressions (capture is impossible: no binders)."""
    if isinstance(e, Var):
        return env.get(e.name, e)
    if isinstance(e, BinOp):
        a, b = substitute(e.a, env), substitute(e.b, env)
        if a is e.a and b is e.b:  # nothing replaced below: `e` itself, as for a leaf
            return e
        return BinOp(e.op, a, b, e.pos)
    return e


# The operators on Python integers (numpy's arrays take the same ones: the
# enumeration engine evaluates with this table too).
CONCRETE_OPS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.floordiv,
    "%": operator.mod,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "<<": operator.lshift,
    ">>": operator.rshift,
}


def _apply(op: str, x: int, y: int, pos: Pos) -> int:
    if op in ("/", "%") and y == 0:
        raise SpecError(f"division by zero in '{op}'", pos)
    if op in ("<<", ">>") and y > MAX_SHIFT:
        raise SpecError(f"shift amount {y} is larger than {MAX_SHIFT}", pos)
    r = CONCRETE_OPS[op](x, y)
    if r < 0:
        raise SpecError(
            f"expression is negative ({x} {op} {y} = {r}); "
            "addresses and coordinates must be non-negative",
            pos,
        )
    return r


def evaluate(e: Expr, env: Mapping[str, int]) -> int:
    """Concrete value of `e` under `env` (every free variable must be bound)."""
    if isinstance(e, BinOp):
        # A node evaluated again and again (a table of its values, every lane) gets
        # straight-line Python generated for it: same values, same errors.
        fn = e.__dict__.get("_evaluate")
        if fn is not None:
            return fn(env)
        seen = e.__dict__.get("_evaluations", 0) + 1
        if seen >= GENERATE_AFTER:
            fn = e.__dict__["_evaluate"] = _generated(e, checked=True)
            return fn(env)
        e.__dict__["_evaluations"] = seen
    return _evaluate_tree(e, env)


# Evaluations of one node by walking it before `evaluate` generates code for it.
GENERATE_AFTER = 3


def _evaluate_tree(e: Expr, env: Mapping[str, int]) -> int:
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Var):
        try:
            return env[e.name]
        except KeyError:
            raise SpecError(f"unknown variable '{e.name}'", e.pos) from None
    return _apply(e.op, _evaluate_tree(e.a, env), _evaluate_tree(e.b, env), e.pos)


def compiled(e: Expr) -> Callable[[Mapping[str, int]], int]:
    """`evaluate` prepared once for many environments (the brute-force oracle
    evaluates one address millions of times); same values, same errors."""
    if not isinstance(e, BinOp):
        return _closures(e)
    fn = e.__dict__.get("_compiled")
    if fn is None:
        fn = e.__dict__["_compiled"] = _generated(e, checked=False, calls=True)
    return fn


def _closures(e: Expr) -> Callable[[Mapping[str, int]], int]:
    """`compiled` as nested closures: the reference the generated code falls back on."""
    if isinstance(e, Const):
        value = e.value
        return lambda env: value
    if isinstance(e, Var):
        name = e.name

        def variable(env):
            try:
                return env[name]
            except KeyError:
                return evaluate(e, env)  # raises the located "unknown variable"

        return variable
    a, b, op, pos = _closures(e.a), _closures(e.b), e.op, e.pos
    fn = CONCRETE_OPS[op]
    if op in ("+", "*", "&", "|", "^"):  # cannot fail on non-negative operands
        return lambda env: fn(a(env), b(env))
    return lambda env: _apply(op, a(env), b(env), pos)


# Python source of a generated evaluator -> its factory (shapes repeat across nodes).
_FACTORIES: dict[str, Callable] = {}
_MAX_FACTORIES = 4096
_UNCHECKED = ("+", "*", "&", "|", "^")
_PYTHON_OPS = {"/": "//"}  # the rest are written as Python writes them


class _NotGenerated(Exception):
    """A constant that is not a plain int: such a tree is walked instead."""


def _generated(e: BinOp, checked: bool, calls: bool = False) -> Callable[[Mapping[str, int]], int]:
    """Straight-line Python for `e`, one local per distinct subexpression, in the
    order the tree walk takes them, so the first failure is the same one: each check
    is `_apply`'s, and a failing one calls `_apply` itself to raise its error. A
    missing variable falls back to the tree walk (`checked`: `_evaluate_tree`, else
    `_closures`) for the located error. `checked` checks every result for a
    negative value as `evaluate` does; else only the operators `compiled` checks.
    With `calls` (`compiled`'s), a large subtree of a shape compiled before is a
    call to that shape's function (`_subcall`)."""
    if checked:
        slow = lambda env: _evaluate_tree(e, env)  # noqa: E731
    else:
        slow = lambda env: _closures(e)(env)  # noqa: E731
    try:
        source, cells = _source(e, checked, calls)
    except _NotGenerated:
        return slow if checked else _closures(e)
    return generated_factory(source, "<verify.model.expr>")(slow, _apply, SpecError, *cells)


# A subtree of at least this many nodes, of a shape another tree's code computed
# before, is computed by a call to that shape's own function: a kernel's accesses
# share most of their address (transpose's 64 differ in a constant or two), and
# each new tree's code is then written for its few nodes of its own. The function
# was generated from another copy, at other positions: a failure inside it makes the
# tree fall back to its own walk, which raises the error at its own position.
SUBCALL_NODES = 8
_SEEN: set[int] = set()  # shapes of the subtrees `compiled`'s code has computed
_FLAT: dict[int, Callable] = {}  # shape -> its function without calls


def _subcall(node: BinOp, root: BinOp) -> Callable | None:
    """The function computing `node` inside `root`'s code, if it is called."""
    if node is root or size(node) < SUBCALL_NODES:
        return None
    key = shape(node)
    if key not in _SEEN:
        if len(_SEEN) >= _MAX_KEPT:
            _SEEN.clear()
        _SEEN.add(key)
        return None
    fn = _FLAT.get(key)
    if fn is None:
        if len(_FLAT) >= _MAX_FACTORIES:
            _FLAT.clear()
        fn = _FLAT[key] = _generated(node, checked=False)
    return fn


def generated_factory(source: str, filename: str) -> Callable:
    """The function `factory` that the generated Python `source` defines, compiled
    once per distinct text (shapes repeat across nodes and specs; the cache is
    bounded). `verify.engines.plain` compiles its walks here too."""
    factory = _FACTORIES.get(source)
    if factory is None:
        if len(_FACTORIES) >= _MAX_FACTORIES:
            _FACTORIES.clear()
        scope: dict = {}
        exec(compile(source, filename, "exec"), scope)
        factory = _FACTORIES[source] = scope["factory"]
    return factory


def _source(e: BinOp, checked: bool, calls: bool) -> tuple[str, list]:
    """The factory's text and its arguments after the first three: constants, names,
    positions and called functions are arguments, so trees of one shape share one
    compiled text."""
    lines: list[str] = []
    names: dict[object, str] = {}  # a variable's name or a subexpression's id -> its local
    cells: list = []
    stack: list[Expr | None] = [e]  # None: the node below it has its operands named
    caught = "KeyError"
    while stack:
        node = stack.pop()
        if node is None:
            _emit(stack.pop(), names, cells, lines, checked)
        elif isinstance(node, BinOp):
            if id(node) in names:
                continue
            called = _subcall(node, e) if calls else None
            if called is None:
                stack += (node, None, node.b, node.a)
                continue
            names[id(node)] = f"t{len(names)}"
            lines.append(f"t{len(names) - 1} = c{len(cells)}(env)")
            cells.append(called)
            caught = "(KeyError, _located)"  # a call's failure: the walk's own error
        elif isinstance(node, Var) and node.name not in names:
            names[node.name] = f"v{len(names)}"
            lines.append(f"v{len(names) - 1} = env[c{len(cells)}]")
            cells.append(node.name)
    body = "\n            ".join(lines)
    parameters = "".join([f", c{k}" for k in range(len(cells))])
    source = f"""def factory(slow, _apply, _located{parameters}):
    def generated(env):
        try:
            {body}
        except {caught}:
            return slow(env)
        return {names[id(e)]}
    return generated
"""
    return source, cells


def _emit(node, names: dict[object, str], cells: list, lines: list[str], checked: bool):
    """The lines of one subexpression whose operands have their locals."""
    x, y, op = _operand(node.a, names, cells), _operand(node.b, names, cells), node.op
    local = names[id(node)] = f"t{len(names)}"
    cells.append(node.pos)
    if not checked and op in _UNCHECKED:  # cannot fail: no check, no call to write
        lines.append(f"{local} = {x} {op} {y}")
        return
    call = f"_apply({op!r}, {x}, {y}, c{len(cells) - 1})"
    if op in ("/", "%"):
        lines.append(f"if {y} == 0: {call}")
    if op in ("<<", ">>"):
        lines.append(f"if {y} > {MAX_SHIFT}: {call}")
    lines.append(f"{local} = {x} {_PYTHON_OPS.get(op, op)} {y}")
    lines.append(f"if {local} < 0: {call}")


def _operand(e: Expr, names: dict[object, str], cells: list) -> str:
    if isinstance(e, Const):
        if type(e.value) is not int:
            raise _NotGenerated
        cells.append(e.value)
        return f"c{len(cells) - 1}"
    return names[e.name if isinstance(e, Var) else id(e)]


def _interval(op: str, a: tuple[int, int], b: tuple[int, int], pos: Pos) -> tuple[int, int]:
    (alo, ahi), (blo, bhi) = a, b
    if op == "+":
        return alo + blo, ahi + bhi
    if op == "-":
        if alo - bhi < 0:
            raise SpecError(
                f"subtraction may be negative: left side in [{alo}, {ahi}], right side in "
                f"[{blo}, {bhi}]; addresses and coordinates must be non-negative",
                pos,
            )
        return alo - bhi, ahi - blo
    if op == "*":
        return alo * blo, ahi * bhi
    if op in ("/", "%") and blo == 0:
        raise SpecError(f"divisor of '{op}' may be zero (range [{blo}, {bhi}])", pos)
    if op == "/":
        return alo // bhi, ahi // blo
    if op == "%":
        return 0, min(ahi, bhi - 1)
    if op == "&":
        return 0, min(ahi, bhi)
    if op in ("|", "^"):
        return 0, (1 << max(ahi, bhi).bit_length()) - 1
    if bhi > MAX_SHIFT:
        raise SpecError(f"shift amount may reach {bhi}; at most {MAX_SHIFT} is allowed", pos)
    if op == "<<":
        return alo << blo, ahi << bhi
    return alo >> bhi, ahi >> blo


def bounds(e: Expr, ranges: Mapping[str, Range]) -> tuple[int, int]:
    """Inclusive [min, max] that `e` can take; raises SpecError if it may go negative.

    Postcondition: every subexpression of `e` lies in [0, max of its own bound],
    so a bit-vector of `width_for` bits evaluates `e` without overflow.
    """
    if isinstance(e, BinOp):
        return _bounds_and_top(e, _ranges_key(e, ranges), ranges)[0]
    return _leaf_bounds(e, ranges)


def _leaf_bounds(e: Const | Var, ranges: Mapping[str, Range]) -> tuple[int, int]:
    if isinstance(e, Const):
        return e.value, e.value
    r = ranges.get(e.name)
    if r is None:
        raise SpecError(f"unknown variable '{e.name}'", e.pos)
    return r.lo, r.hi - 1


# The most trailing zero bits `trailing_zeros` claims: a value of 0 has every bit
# clear, and no address or coordinate needs more than this to be aligned.
MAX_ZEROS = 64


def trailing_zeros(e: Expr, ranges: Mapping[str, Range]) -> int:
    """A k such that every value `e` takes over `ranges` is a multiple of 2^k (at
    most MAX_ZEROS): known low zero bits, from constants and from what each operator
    keeps of its operands' (a variable of more than one value keeps none); 0 is
    always a correct answer. `verify.engines.enumeration.bank_question` reads it to
    know that the lane-independent part of an address is aligned.

    Raises SpecError where `bounds` would (a variable without a range, a shift
    past MAX_SHIFT, a division by a range holding 0).
    """
    if isinstance(e, Const):
        return _zeros(e.value)
    if isinstance(e, Var):
        r = ranges.get(e.name)
        if r is None:
            raise SpecError(f"unknown variable '{e.name}'", e.pos)
        return _zeros(r.lo) if r.size == 1 else 0
    a = trailing_zeros(e.a, ranges)
    if e.op in ("*", "<<", ">>", "/"):
        return _scaled_zeros(e, a, ranges)
    b = trailing_zeros(e.b, ranges)
    if e.op == "&":  # a bit of a & b is set only where both have it
        return max(a, b)
    # + - | ^ keep the zeros both have; a % b = a - (a / b) * b likewise
    return min(a, b)


def _scaled_zeros(e: BinOp, a: int, ranges: Mapping[str, Range]) -> int:
    """`trailing_zeros` of a product, a shift or a division, its left side's `a`."""
    if e.op == "*":
        return min(MAX_ZEROS, a + trailing_zeros(e.b, ranges))
    lo, hi = bounds(e.b, ranges)
    if e.op == "<<":
        return min(MAX_ZEROS, a + lo)
    if e.op == ">>":
        return max(0, a - hi)
    # floor division keeps zeros only when it divides by one power of two
    exact = lo == hi and lo > 0 and lo & (lo - 1) == 0
    return max(0, a - (lo.bit_length() - 1)) if exact else 0


def _zeros(value: int) -> int:
    return min(MAX_ZEROS, (value & -value).bit_length() - 1) if value else MAX_ZEROS


def max_intermediate(e: Expr, ranges: Mapping[str, Range]) -> int:
    """Largest value any subexpression of `e` can take (for choosing a width)."""
    if isinstance(e, BinOp):
        return _bounds_and_top(e, _ranges_key(e, ranges), ranges)[1]
    return _leaf_bounds(e, ranges)[1]


def _bounds_and_top(e: Expr, key: int, ranges: Mapping[str, Range]) -> tuple[tuple[int, int], int]:
    """`bounds` of `e` and the largest upper bound of its subexpressions, in one walk
    (calling `bounds` at every node re-walked each subtree once per ancestor).

    Both are functions of e's shape and the ranges alone, so what a subtree gave
    under ranges `key` (`_ranges_key`) is kept by its `shape`: a kernel's accesses
    repeat most of their address (one thread index term in 64 accesses), and each is
    bounded once. Only answers are kept: a subtree that raises is walked again, and
    raises at its own position."""
    if not isinstance(e, BinOp):
        interval = _leaf_bounds(e, ranges)
        return interval, interval[1]
    memo = (shape(e), key)
    found = _BOUNDED.get(memo)
    if found is not None:
        return found
    (a, top_a), (b, top_b) = _bounds_and_top(e.a, key, ranges), _bounds_and_top(e.b, key, ranges)
    interval = _interval(e.op, a, b, e.pos)
    found = interval, max(interval[1], top_a, top_b)
    if len(_BOUNDED) >= _MAX_KEPT:
        _BOUNDED.clear()
    _BOUNDED[memo] = found
    return found


# (shape, ranges key) -> (interval, top) of `_bounds_and_top`; bounded as `_SHAPES`.
_BOUNDED: dict[tuple[int, int], tuple[tuple[int, int], int]] = {}
_RANGES: dict[tuple, int] = {}


def _ranges_key(e: BinOp, ranges: Mapping[str, Range]) -> int:
    """One number per distinct ranges of e's variables, never reused (a variable
    without a range stands alone in it: bounding raises, and nothing is kept)."""
    names = kept(e, "_names", lambda n: tuple(sorted(_free(n))))
    items = tuple((n, r.lo, r.hi) if (r := ranges.get(n)) is not None else (n,) for n in names)
    found = _RANGES.get(items)
    if found is None:
        if len(_RANGES) >= _MAX_KEPT:
            _RANGES.clear()
        found = _RANGES[items] = next(_NUMBERS)
    return found


def render(e: Expr) -> str:
    """Fully parenthesised text, readable back by the spec parser."""
    if isinstance(e, Const):
        return str(e.value)
    if isinstance(e, Var):
        return e.name
    # kept: a front end renders shared subtrees often
    return kept(e, "_text", lambda n: f"({render(n.a)} {n.op} {render(n.b)})")
