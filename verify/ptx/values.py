"""Register values of one thread: verify's integer expressions (`verify.model.expr`)
over ranged variables, with PTX's fixed-width arithmetic made exact.

Every PTX integer op works modulo 2^w; an expression of verify is a non-negative
integer without wrap. So each op's result is written plainly where interval
bounds prove it stays below 2^w (the common case: thread indices, offsets), and
with an explicit ``% 2^w`` otherwise, so the value is always the hardware's. A
signed op (``shr.s32``, ``mul.wide.s32``, ``setp.lt.s32``) reads its operand as
the bit pattern it is: where the operand is provably below 2^(w-1) it is the
unsigned op; comparisons flip the sign bit. Predicates are 0/1 expressions
(`Pred`), so ``selp`` is ``p * a + (1 - p) * b`` and a value merged from two
branches is the same sum over the branch conditions: exact, and evaluable by the
same code as everything else. What no expression can say is `Unknown`, with the
reason.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from verify.errors import SpecError
from verify.model.expr import (
    CONCRETE_OPS,
    MAX_SHIFT,
    BinOp,
    Const,
    Expr,
    Range,
    Var,
    bounds,
    compiled,
    free_vars,
)
from verify.model.expr import _interval as interval  # `bounds` of one node

MAX_NODES = 4000  # a value larger than this is Unknown: no address needs it
MAX_TABLE = 64  # a subexpression of one variable with at most this many values is tabulated
# a value over at most this many points (lanes x warps x blocks) is bounded exactly
MAX_POINTS = 1 << 14
MAX_SEARCH = 1 << 16  # points searched for where a divisor is 0
MAX_KEPT = 1 << 10  # `_Points` keeps each node's values over at most this many points


@dataclass(frozen=True)
class Unknown:
    reason: str


Value = Expr | Unknown


class Context:
    """The ranges of the variables the values are written over, and the
    arithmetic that keeps them exact under those ranges."""

    def __init__(self, ranges: Mapping[str, Range]):
        self.ranges = dict(ranges)
        self._exact = _ByValue()
        self._mixed = _ByValue()
        # `_kept` results: every access's address is rebuilt, and addresses share
        # most of their subexpressions; the tracer bounds one value again and again
        self._rebuilt: dict[int, tuple] = {}
        self._intervals: dict[int, tuple] = {}
        self._tables: dict[tuple, object] = {}  # `_tabulated`'s, by its values
        self._domains: dict[tuple, _Points] = {}  # `exact_bounds`' evaluations
        self._nodes: dict[int, tuple[BinOp, int]] = {}  # `nodes`' counts

    def _kept(self, memo: dict[int, tuple], e: BinOp, compute: Callable[[BinOp], object]):
        """``compute(e)``, a function of `e` and the ranges of its variables alone,
        kept in `memo` by the node's identity and those ranges."""
        seen = self._seen(memo, e)
        if seen is not _MISSING:
            return seen
        names = tuple(sorted(free_vars(e)))
        ranges = tuple(map(self.ranges.get, names))
        out = compute(e)
        memo[id(e)] = (e, names, ranges, out)  # `e` kept: its id is not reused
        return out

    def nodes(self, e: Expr) -> int:
        """The nodes of `e` (shared subtrees count each time), counted to MAX_NODES + 1
        at most; each node's count kept: a value is built from counted ones, and
        every wrap counts its whole tree."""
        stack: list[tuple[Expr, bool]] = [(e, False)]
        while stack:
            x, ready = stack.pop()
            if not isinstance(x, BinOp) or id(x) in self._nodes and self._nodes[id(x)][0] is x:
                continue
            if not ready:
                stack += [(x, True), (x.b, False), (x.a, False)]
                continue
            # a sum of counts each capped, capped: the count capped
            count = 1 + self._counted(x.a) + self._counted(x.b)
            self._nodes[id(x)] = (x, min(count, MAX_NODES + 1))  # `x` kept: its id stays
        return self._counted(e)

    def _counted(self, e: Expr) -> int:
        return self._nodes[id(e)][1] if isinstance(e, BinOp) else 1

    def _seen(self, memo: dict[int, tuple], e: Expr) -> object:
        """What `_kept` keeps for `e` under the current ranges, else _MISSING."""
        seen = memo.get(id(e))
        if seen is not None and seen[0] is e and tuple(map(self.ranges.get, seen[1])) == seen[2]:
            return seen[3]
        return _MISSING

    def _interval(self, e: Expr) -> tuple[int, int] | None:
        """`bounds` of `e` under the ranges, None where it raises."""
        if isinstance(e, BinOp):
            return self._kept(self._intervals, e, self._bounds)
        return self._bounds(e)

    def _bounds(self, e: Expr) -> tuple[int, int] | None:
        try:
            if isinstance(e, BinOp):
                return interval(e.op, self._operand(e.a), self._operand(e.b), e.pos)
            return bounds(e, self.ranges)
        except SpecError:
            return None

    def _operand(self, e: Expr) -> tuple[int, int]:
        """`bounds` of an operand, kept ones as kept: a value is built from values
        already bounded, so its bounds are one step from theirs. Not kept: walked."""
        seen = self._seen(self._intervals, e) if isinstance(e, BinOp) else _MISSING
        if seen is _MISSING:
            return bounds(e, self.ranges)
        if seen is None:
            raise SpecError("bounds that were not provable")
        return seen  # type: ignore[return-value]

    def top(self, e: Expr) -> int | None:
        """The largest value `e` takes, or None if its bounds are not provable."""
        interval = self._interval(e)
        return None if interval is None else interval[1]

    def low(self, e: Expr) -> int | None:
        interval = self._interval(e)
        return None if interval is None else interval[0]

    def below(self, e: Expr, limit: int) -> bool:
        top = self.top(e)
        if top is not None and top < limit:
            return True
        exact = self.exact_bounds(e)
        if exact is not None:
            return exact[1] < limit
        mixed = self.mixed_bounds(e)
        return mixed is not None and mixed[1] < limit

    def mixed_bounds(self, e: Expr) -> tuple[int, int] | None:
        """Interval bounds of `e` where every largest subexpression over at most
        MAX_POINTS points is first bounded exactly (`exact_bounds`): Triton's
        ``pid_m * 128 | tid / 8`` reads the block and the thread, too many points
        together, but its ``pid_m`` (a subtraction interval bounds lose) reads only
        the block."""
        if e in self._mixed:
            return self._mixed.get(e)
        fresh: dict[str, Range] = {}
        reduced = self._reduced(e, fresh)
        try:
            out: tuple[int, int] | None = bounds(reduced, {**self.ranges, **fresh})
        except SpecError:
            out = None
        self._mixed.put(e, out)
        return out

    def _reduced(self, e: Expr, fresh: dict[str, Range]) -> Expr:
        if not isinstance(e, BinOp):
            return e
        exact = self.exact_bounds(e)
        if exact is not None:
            name = f"_exact{len(fresh)}"
            fresh[name] = Range(exact[0], exact[1] + 1)
            return Var(name)
        return BinOp(e.op, self._reduced(e.a, fresh), self._reduced(e.b, fresh))

    def exact_bounds(self, e: Expr) -> tuple[int, int] | None:
        """(least, largest) value of `e` by evaluating it at every point, where its
        variables take at most MAX_POINTS values together (the block's ids under
        --grid and fixed parameters): interval bounds lose what a subtraction
        cancels (``ctaid - ctaid / 8 * 8`` is below 8, not below 2^32)."""
        names = sorted(free_vars(e))
        points = 1
        for name in names:
            r = self.ranges.get(name)
            if r is None:
                return None
            points *= r.size
        if points > MAX_POINTS:
            return None
        if e not in self._exact:
            self._exact.put(e, self._points(names).bounds(e))
        return self._exact.get(e)

    def _points(self, names: list[str], checked: bool = False) -> _Points:
        """The points of `names` under their ranges, one `_Points` for each such
        domain: a value is built from values already bounded over it."""
        key = (checked, *((n, self.ranges[n].lo, self.ranges[n].hi) for n in names))
        found = self._domains.get(key)
        if found is None:
            found = self._domains[key] = _Points(names, self.ranges, checked)
        return found

    def first_zero(
        self, e: Expr, names: list[str], limit: int = MAX_SEARCH
    ) -> dict[str, int] | None:
        """The first point (in the order of `names`, the first fastest) of the first
        `limit` where `e` is 0, by evaluation; None if none is found there."""
        value = compiled(e)
        domains = [range(self.ranges[n].lo, self.ranges[n].hi) for n in names]
        for at in itertools.islice(_points(domains), limit):
            env = dict(zip(names, at))
            try:
                if value(env) == 0:
                    return {n: env[n] for n in names}
            except SpecError:
                return None
        return None

    # -- construction with simplification -------------------------------------

    def op(self, op: str, a: Expr, b: Expr) -> Expr:
        if isinstance(a, Const) and isinstance(b, Const):
            folded = _fold(op, a.value, b.value)
            if folded is not None:
                return Const(folded)
        simpler = self._simplify(op, a, b)
        return simpler if simpler is not None else BinOp(op, a, b)

    def _simplify(self, op: str, a: Expr, b: Expr) -> Expr | None:
        zero_a = isinstance(a, Const) and a.value == 0
        zero_b = isinstance(b, Const) and b.value == 0
        one_b = isinstance(b, Const) and b.value == 1
        if op in ("+", "|", "^") and zero_a:
            return b
        if op in ("+", "-", "|", "^", "<<", ">>") and zero_b:
            return a
        if op in ("*", "&") and (zero_a or zero_b):
            return Const(0)
        if op == "*" and isinstance(a, Const) and a.value == 1:
            return b
        if op in ("*", "/") and one_b:
            return a
        if op == "+" and isinstance(a, Const) and not isinstance(b, Const):
            return self.op("+", b, a)
        if op == "+" and isinstance(b, Const) and _plus_const(a):  # (x + c1) + c2
            assert isinstance(a, BinOp) and isinstance(a.b, Const)
            return self.op("+", a.a, Const(a.b.value + b.value))
        if op == "-" and isinstance(a, BinOp) and a.op == "+" and a.b == b:
            return a.a  # (x + y) - y
        if op == "-" and isinstance(b, BinOp) and b.op == "&" and b.a == a:
            return self._and_not(a, b.b)  # x - (x & m) = x & ~m
        if op == "-" and isinstance(b, Const) and _plus_const(a):
            assert isinstance(a, BinOp) and isinstance(a.b, Const)
            if a.b.value >= b.value:
                return self.op("+", a.a, Const(a.b.value - b.value))
        if op == "&" and isinstance(b, Const):
            return self._mask(a, b.value)
        if op in ("^", "|"):
            joined = self._disjoint(op, a, b)
            if joined is not None:
                return joined
        if op in ("%", "/") and isinstance(b, Const) and b.value > 0:
            return self._divmod(op, a, b.value)
        if op == ">>" and isinstance(b, Const) and self.below(a, 1 << b.value):
            return Const(0)
        if op == ">>" and isinstance(b, Const) and 0 < b.value <= 64:
            # x >> s is x / 2^s: ``(warp * 32 + lane) >> 5`` is the warp
            return self._divmod("/", a, 1 << b.value)
        if op == "<<" and isinstance(b, Const) and _shifted(a):
            assert isinstance(a, BinOp) and isinstance(a.b, Const)
            return self.op("<<", a.a, Const(a.b.value + b.value))
        return None

    def _disjoint(self, op: str, a: Expr, b: Expr) -> Expr | None:
        """a | b (or a ^ b) as a sum where their bits cannot meet: Triton's row
        ``pid_m << 7 | tid / 8`` is ``pid_m * 128 + tid / 8``, so the block's part
        of an address is a term of its own; and ``(m + t) | c``, with m a multiple
        of 2^k above both t and c, is ``m + (t | c)``."""
        for x, y in ((a, b), (b, a)):
            k = _zero_bits(x)
            if k and self.below(y, 1 << k):
                return self.op("+", x, y)
            if isinstance(x, BinOp) and x.op == "+":
                for m, t in ((x.a, x.b), (x.b, x.a)):
                    k = _zero_bits(m)
                    if k and self.below(t, 1 << k) and self.below(y, 1 << k):
                        return self.op("+", m, self.op(op, t, y))
        return None

    def _and_not(self, x: Expr, m: Expr) -> Expr | None:
        if not isinstance(m, Const):
            return None
        top = self.top(x)
        if top is None:
            return None
        width = max(top.bit_length(), m.value.bit_length())
        return self.op("&", x, Const(((1 << width) - 1) & ~m.value))

    def _mask(self, a: Expr, m: int) -> Expr | None:
        top = self.top(a)
        if top is not None and m & ((1 << top.bit_length()) - 1) == (1 << top.bit_length()) - 1:
            return a  # the mask keeps every bit `a` can have
        if m & (m + 1) == 0 and m > 0:
            return self._divmod("%", a, m + 1)  # x & (2^k - 1) = x % 2^k
        return None

    def _divmod(self, op: str, a: Expr, k: int) -> Expr | None:
        if self.below(a, k):
            return a if op == "%" else Const(0)
        if isinstance(a, BinOp) and a.op == "+":
            # (x + y) with one side a multiple of k: it leaves % and adds whole to /
            for m, rest in ((a.a, a.b), (a.b, a.a)):
                q = self._multiple(m, k)
                if q is not None:
                    if op == "%":
                        return self.op("%", rest, Const(k))
                    return self.op("+", q, self.op("/", rest, Const(k)))
        q = self._multiple(a, k)
        if q is not None:
            return Const(0) if op == "%" else q
        return None

    def _multiple(self, e: Expr, k: int) -> Expr | None:
        """e / k when e is provably a multiple of k built as c * x or x << s."""
        if isinstance(e, Const) and e.value % k == 0:
            return Const(e.value // k)
        if isinstance(e, BinOp) and e.op == "*":
            for c, x in ((e.a, e.b), (e.b, e.a)):
                if isinstance(c, Const) and c.value % k == 0:
                    return self.op("*", x, Const(c.value // k))
        if isinstance(e, BinOp) and e.op == "<<" and isinstance(e.b, Const):
            factor = 1 << e.b.value
            if factor % k == 0:
                return self.op("*", e.a, Const(factor // k))
        return None

    def rebuild(self, e: Expr) -> Expr:
        """`e` simplified again under the current ranges (after a substitution made
        a wrap-around provably impossible, its ``% 2^w`` goes). Kept per node and
        the ranges of its variables: the same node under the same ranges rebuilds
        the same."""
        if not isinstance(e, BinOp):
            return e
        return self._kept(self._rebuilt, e, self._rebuild)

    def _rebuild(self, e: BinOp) -> Expr:
        table = self._tabulated(e)
        if table is not None and self.nodes(table) < self.nodes(e):
            return table
        a, b = self.rebuild(e.a), self.rebuild(e.b)
        if e.op == "%" and isinstance(b, Const) and b.value >= 1 << 16 and self.below(a, b.value):
            return a
        return self.op(e.op, a, b)

    def _tabulated(self, e: BinOp) -> Expr | None:
        """`e` of one variable with few values, written from its values: a constant,
        ``a + d * v``, or a lookup (a stage counter's wrapped selects collapse)."""
        names = free_vars(e)
        if len(names) != 1:
            return None
        (name,) = names
        r = self.ranges.get(name)
        if r is None or r.size > MAX_TABLE:
            return None
        try:  # as `evaluate` at each value, without generating code for each node
            values = tuple(self._points([name], checked=True).values(e))
        except SpecError:
            return None
        # what follows reads only the values and the variable's range: different
        # nodes of one table (each access rebuilds its address) build it once
        key = (name, r.lo, r.hi, values)
        found = self._tables.get(key, _MISSING)
        if found is _MISSING:
            found = self._from_values(name, r, list(values), e)
            if found is not _LARGER:
                self._tables[key] = found
        return None if found is _LARGER else found  # type: ignore[return-value]

    def _from_values(self, name: str, r: Range, values: list[int], e: BinOp) -> object:
        """The expression of `_tabulated` whose values over `r` are `values`; _LARGER
        for a lookup no smaller than `e`, which `_rebuild` would not take."""
        v: Expr = Var(name) if r.lo == 0 else self.op("-", Var(name), Const(r.lo))
        if len(set(values)) == 1:
            return Const(values[0])
        d = values[1] - values[0]
        if d > 0 and all(y - x == d for x, y in zip(values, values[1:])):
            return self.op("+", Const(values[0]), self.op("*", v, Const(d)))
        period = _period(values)
        if period < len(values):
            # a stage picked by the iteration (`verify.ptx.trace`) repeats: its
            # first period, looked up by the variable modulo the period
            v, values = self.op("%", v, Const(period)), values[:period]
            d = values[1] - values[0]
            if d > 0 and all(y - x == d for x, y in zip(values, values[1:])):
                return self.op("+", Const(values[0]), self.op("*", v, Const(d)))
        if not _may_beat(values, self.nodes(e)):
            return _LARGER
        out: Expr = Const(0)
        for k, value in enumerate(values):
            if value:
                pick = self.equal(v, Const(k))
                if isinstance(pick, Unknown):
                    return None
                out = self.op("+", out, self.op("*", pick, Const(value)))
        return out

    # -- PTX's fixed-width ops ------------------------------------------------

    def wrap(self, e: Expr, width: int) -> Value:
        """`e` modulo 2^width: `e` itself where it provably fits."""
        if self.nodes(e) > MAX_NODES:
            return Unknown("an address expression larger than this reader follows")
        if self.below(e, 1 << width):
            return e
        if self.low(e) is None:
            return Unknown("a value that may be negative before it wraps")
        return self.op("%", e, Const(1 << width))

    def sub(self, a: Expr, b: Expr, width: int) -> Value:
        """a - b modulo 2^width."""
        direct = self.op("-", a, b)
        if not (isinstance(direct, BinOp) and direct.op == "-") or self.low(direct) is not None:
            return self.wrap(direct, width)
        top = self.top(b)
        if top is None or top >= 1 << width:
            return Unknown("a subtraction whose operand range is unknown")
        return self.wrap(self.op("+", a, self.op("-", Const(1 << width), b)), width)

    def signed(self, e: Expr, width: int) -> Value:
        """`e` read as a signed `width`-bit value, where it is non-negative."""
        if self.below(e, 1 << (width - 1)):
            return e
        # the variables that reach the sign bit: wide ones (a parameter, or its
        # quotient ``param_N_q`` under a residue class), named for --assume
        wide = sorted(v.removesuffix("_q") for v in free_vars(e) if self.ranges[v].size >= 1 << 16)
        through = f" (through {', '.join(wide)}: --assume bounds it)" if wide else ""
        return Unknown(f"a signed {width}-bit value that may be negative{through}")

    def immediate(self, value: int, width: int) -> Expr:
        return Const(value % (1 << width))

    # -- predicates as 0/1 expressions ---------------------------------------

    def less(self, a: Expr, b: Expr) -> Value:
        """[a < b] for non-negative a, b."""
        if isinstance(b, Const):
            return self._less_const(a, b.value)
        top = self.top(b)
        if top is None:
            return Unknown("a comparison with an unbounded value")
        # a < b  <=>  a + (top - b) < top
        return self._less_const(self.op("+", a, self.op("-", Const(top), b)), top)

    def _less_const(self, a: Expr, c: int) -> Value:
        lo, hi = self.low(a), self.top(a)
        if lo is None or hi is None:
            return Unknown("a comparison of a value with unprovable bounds")
        if hi < c:
            return Const(1)
        if lo >= c:
            return Const(0)
        q = self.op("/", a, Const(c))  # 0 exactly when a < c
        k = hi // c
        return self.op("/", self.op("-", Const(k), q), Const(k))

    def equal(self, a: Expr, b: Expr) -> Value:
        """[a == b]."""
        diff = self.op("^", a, b)
        if isinstance(diff, Const):
            return Const(int(diff.value == 0))
        top = self.top(diff)
        if top is None:
            return Unknown("a comparison of a value with unprovable bounds")
        if top == 0:
            return Const(1)
        return self.op("/", self.op("-", Const(top), diff), Const(top))

    def negate(self, p: Expr) -> Expr:
        return self.op("^", p, Const(1))

    def select(self, p: Expr, a: Expr, b: Expr) -> Expr:
        """p ? a : b for a 0/1 predicate p."""
        if isinstance(p, Const):
            return a if p.value else b
        if a == b:
            return a
        return self.op("+", self.op("*", p, a), self.op("*", self.negate(p), b))


_MISSING = object()  # `Context._seen`: nothing kept
_LARGER = object()  # `Context._from_values`: no table smaller than the node


class _ByValue:
    """Bounds kept per expression, equal expressions alike; asked first by the
    node's identity, as hashing a tree walks all of it."""

    def __init__(self) -> None:
        self._by_value: dict[Expr, tuple[int, int] | None] = {}
        self._by_id: dict[int, tuple[Expr, tuple[int, int] | None]] = {}

    def __contains__(self, e: Expr) -> bool:
        seen = self._by_id.get(id(e))
        if seen is not None and seen[0] is e:
            return True
        if e not in self._by_value:
            return False
        self._by_id[id(e)] = (e, self._by_value[e])
        return True

    def get(self, e: Expr) -> tuple[int, int] | None:
        """What was put for `e` (or an equal expression); `e` is in it."""
        seen = self._by_id.get(id(e))
        if seen is not None and seen[0] is e:
            return seen[1]
        return self._by_value[e]

    def put(self, e: Expr, value: tuple[int, int] | None) -> None:
        self._by_value[e] = value
        self._by_id[id(e)] = (e, value)


def _may_beat(values: list[int], most: int) -> bool:
    """Whether `_from_values`' lookup of `values` may have fewer nodes than `most`
    (`nodes` of the node it would stand for): it
    has a term of a node at least for each value not 0 (its pick is not constant:
    v takes every k), the terms joined by a "+" each (no rule of `_simplify` joins
    two expressions that are not constants)."""
    return 2 * sum(map(bool, values)) - 1 < most


def _points(domains: list[range]):
    """The points of `domains`, the first fastest, lazily (`itertools.product` would
    hold a range of 2^31 block ids as a tuple)."""
    if not domains:
        yield ()
        return
    for rest in _points(domains[1:]):
        for x in domains[0]:
            yield (x, *rest)


def _period(values: list[int]) -> int:
    """The least p with values[k] == values[k + p] for every k (len(values) if none)."""
    n = len(values)
    return next(p for p in range(1, n + 1) if values[p:] == values[: n - p])


class _Points:
    """Expressions evaluated at every point of a few variables' ranges (the first
    name slowest, as `itertools.product`), a list of values per node, operands'
    lists kept: what `compiled` gives at each point (`evaluate` where `checked`),
    or a SpecError where it fails at any point. Lists are kept for domains of at
    most MAX_KEPT points."""

    def __init__(self, names: list[str], ranges: Mapping[str, Range], checked: bool):
        self.checked = checked
        points = list(itertools.product(*(range(ranges[n].lo, ranges[n].hi) for n in names)))
        self.size = len(points)
        self.columns = {n: [p[k] for p in points] for k, n in enumerate(names)}
        self.kept: dict[int, tuple[BinOp, object]] | None = {} if self.size <= MAX_KEPT else None

    def bounds(self, e: Expr) -> tuple[int, int] | None:
        try:
            values = self.values(e)
        except SpecError:
            return None
        if type(values) is not list:
            return values, values
        return (min(values), max(values)) if values else None

    def values(self, e: Expr):
        """`e` at each point (a list), or its one value where it reads no variable;
        walked without recursion, as `compiled` evaluates."""
        kept: dict[int, tuple[BinOp, object]] = {} if self.kept is None else self.kept
        stack: list[tuple[Expr, bool]] = [(e, False)]
        while stack:
            node, ready = stack.pop()
            if not isinstance(node, BinOp) or self._found(node, kept) is not _MISSING:
                continue
            if not ready:
                stack += [(node, True), (node.b, False), (node.a, False)]
                continue
            a, b = self._found(node.a, kept), self._found(node.b, kept)
            if type(a) is not list and type(b) is not list:
                out = _combined(node, [a], [b], self.checked)[0]
            else:
                out = _combined(node, _spread(a, self.size), _spread(b, self.size), self.checked)
            kept[id(node)] = (node, out)  # `node` kept: its id is not reused
        return self._found(e, kept)

    def _found(self, e: Expr, kept: dict[int, tuple[BinOp, object]]):
        if isinstance(e, Const):
            return e.value
        if isinstance(e, Var):
            return self.columns[e.name]
        seen = kept.get(id(e))
        return seen[1] if seen is not None and seen[0] is e else _MISSING


def _spread(x, size: int) -> list:
    return x if type(x) is list else [x] * size


def _combined(e: BinOp, xs: list, ys: list, checked: bool) -> list:
    """`compiled`'s node `e` at each point: its checks (a zero divisor, a shift past
    MAX_SHIFT, a negative result of an op that can give one, of any op where
    `checked`, as `evaluate`) at any point fail."""
    op = e.op
    if ys and (op in ("/", "%") and 0 in ys or op in ("<<", ">>") and max(ys) > MAX_SHIFT):
        raise SpecError(f"'{op}' by zero or shifted too far", e.pos)
    out = list(map(CONCRETE_OPS[op], xs, ys))
    if out and (checked or op not in ("+", "*", "&", "|", "^")) and min(out) < 0:
        raise SpecError(f"'{op}' gives a negative value", e.pos)
    return out


def _zero_bits(e: Expr) -> int:
    """Low bits `e` provably has 0 (a shift, a product, a sum of such; capped at 64)."""
    if isinstance(e, Const):
        return 64 if e.value == 0 else min(64, (e.value & -e.value).bit_length() - 1)
    if isinstance(e, BinOp) and e.op == "<<" and isinstance(e.b, Const):
        return min(64, _zero_bits(e.a) + e.b.value)
    if isinstance(e, BinOp) and e.op == "*":
        return min(64, _zero_bits(e.a) + _zero_bits(e.b))
    if isinstance(e, BinOp) and e.op == "+":
        return min(_zero_bits(e.a), _zero_bits(e.b))
    return 0


def _plus_const(e: Expr) -> bool:
    return isinstance(e, BinOp) and e.op == "+" and isinstance(e.b, Const)


def _shifted(e: Expr) -> bool:
    return isinstance(e, BinOp) and e.op == "<<" and isinstance(e.b, Const)


def _fold(op: str, x: int, y: int) -> int | None:
    if op in ("/", "%") and y == 0:
        return None
    if op in ("<<", ">>") and y > 64:
        return None
    r = {
        "+": x + y,
        "-": x - y,
        "*": x * y,
        "/": x // y if y else 0,
        "%": x % y if y else 0,
        "&": x & y,
        "|": x | y,
        "^": x ^ y,
        "<<": x << y if y <= 64 else 0,
        ">>": x >> y if y <= 64 else 0,
    }[op]
    return r if r >= 0 else None
