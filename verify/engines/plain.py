"""The enumeration engine's small domains, point by point on Python integers.

A domain of at most PLAIN_POINTS points is walked here instead of in numpy, so
that a small spec (the README's first command) is decided without importing numpy
(issue 23: start-up); once numpy is imported anyway, only the smallest domains are
(`limit`). It is the same engine: the same domain in the same order (C
order, the last name varying fastest, as `verify.engines.enumeration.Domain` walks
it), each expression with `verify.model.expr.evaluate`'s operators (`function`),
each bank figure by the bank model the numpy path is replayed against
(`verify.model.bank`), so every verdict, figure and first witness is the numpy
path's (tests/engines/test_engines.py compares the two over the catalog). Python
integers are exact at any size, so there is no int64 limit here.

`verify.engines.enumeration` decides which path a check takes, checks the
expressions first (`bounds`, the 32-bit window) as for the numpy path, and turns
what these functions find into verdicts and replayed witnesses.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterator, Sequence

from verify.model.bank import bank_cost, hardware_wavefronts
from verify.model.expr import BinOp, Const, Expr, Range, Var, generated_factory
from verify.model.instructions import Instruction

# Points (lane evaluations) at most walked here: a few milliseconds of Python,
# less than importing numpy costs; bank figures, costed by the bank model instance by
# instance, at most PLAIN_BANK_POINTS. Above these the numpy path is the cheaper even
# in a process that has not loaded numpy yet (the catalog: benchmarks/results/startup.md).
PLAIN_POINTS = 512
PLAIN_BANK_POINTS = 64
# Once numpy is imported (a Triton program imports it; so does a larger domain) its
# cost is paid, and its path is the cheaper above a few dozen points: on this
# 2-core machine an access's in_bounds and aligned took 0.41 ms walked here against
# 0.11 ms in numpy at 256 points, alike at 32; its bank figures alike at 8 points,
# 0.24 ms against 0.17 ms at 64. Checking the tutorial kernels (where most accesses
# have 32-512 points) spent 0.09 s of about 1 s more walking them here.
LOADED_POINTS = 32
LOADED_BANK_POINTS = 8


def limit(bank: bool = False) -> int:
    """The most points walked here (for a bank figure, with `bank`)."""
    points = min(PLAIN_POINTS, PLAIN_BANK_POINTS) if bank else PLAIN_POINTS
    if "numpy" in sys.modules:
        return min(points, LOADED_BANK_POINTS if bank else LOADED_POINTS)
    return points


# Python's operator for each of `verify.model.expr.CONCRETE_OPS`.
PYTHON_OPS = {
    "+": "+",
    "-": "-",
    "*": "*",
    "/": "//",
    "%": "%",
    "&": "&",
    "|": "|",
    "^": "^",
    "<<": "<<",
    ">>": ">>",
}


def function(exprs: list[Expr]) -> Callable[[dict[str, int]], tuple[int, ...]]:
    """Every expression's value at one point, by one generated Python function: each
    distinct node (expressions share subtrees) computed once with `CONCRETE_OPS`'s
    operator. Exact as `verify.model.expr.evaluate` is, given what the caller
    checked first (`verify.engines.enumeration.checked`: no negative value, zero
    divisor or long shift anywhere in the domain, so no error to raise). Constants
    and variable names are the generated factory's arguments, so expressions of one
    shape (a kernel's accesses mostly differ in their constants) share one
    compiled text (`verify.model.expr.generated_factory`)."""
    lines: list[str] = []
    refs: dict[int, str] = {}
    local: dict[str, str] = {}
    cells: list[object] = []

    def cell(value: object) -> str:
        cells.append(value)
        return f"c{len(cells) - 1}"

    def visit(e: Expr) -> str:
        if id(e) in refs:
            return refs[id(e)]
        if isinstance(e, Const):
            ref = cell(int(e.value))
        elif isinstance(e, Var):
            if e.name not in local:
                local[e.name] = f"v{len(local)}"
                lines.append(f"        {local[e.name]} = env[{cell(e.name)}]")
            ref = local[e.name]
        else:
            assert isinstance(e, BinOp)
            a, b = visit(e.a), visit(e.b)
            ref = f"t{len(refs)}"
            lines.append(f"        {ref} = {a} {PYTHON_OPS[e.op]} {b}")
        refs[id(e)] = ref
        return ref

    results = [visit(e) for e in exprs]
    source = "\n".join(
        [
            f"def factory({', '.join(f'c{k}' for k in range(len(cells)))}):",
            "    def values(env):",
            *lines,
            f"        return ({', '.join(results)},)",
            "    return values",
        ]
    )
    return generated_factory(source, "<verify.engines.plain>")(*cells)


def walk(names: Sequence[str], ranges: Sequence[Range]) -> Iterator[dict[str, int]]:
    """Every assignment of `names`, in C order (the last name varies fastest)."""
    for values in itertools.product(*(range(r.lo, r.hi) for r in ranges)):
        yield dict(zip(names, values))


def first(
    names: Sequence[str], ranges: Sequence[Range], exprs: list[Expr], violated: Callable
) -> int | None:
    """Walk position of the first point where violated(*values of exprs) holds."""
    values = function(exprs)
    for position, env in enumerate(walk(names, ranges)):
        if violated(*values(env)):
            return position
    return None


def bank_maxima(
    instr: Instruction,
    address: Expr,
    names: Sequence[str],
    ranges: Sequence[Range],
    lane: str,
    lanes: range,
) -> tuple[tuple[int, int | None], tuple[int, int | None]]:
    """((max-ways, first instance), (wavefronts, first instance)) over every instance
    of `names` (the lane not among them): each instance's lane addresses evaluated
    and costed by the bank model, max-ways by the phase model, wavefronts by the
    measured rules (`hardware_wavefronts`), as the numpy path's replay does."""
    values = function([address])
    ways: tuple[int, int | None] = (-1, None)
    waves: tuple[int, int | None] = (-1, None)
    for position, env in enumerate(walk(names, ranges)):
        addresses = []
        for value in lanes:
            env[lane] = value
            addresses.append(values(env)[0])
        w = bank_cost(instr, addresses).max_ways
        f = hardware_wavefronts(instr, addresses)
        if w > ways[0]:
            ways = (w, position)
        if f > waves[0]:
            waves = (f, position)
    return ways, waves


def first_overlap(
    address: Expr,
    names: Sequence[str],
    ranges: Sequence[Range],
    base: str,
    bases: range,
    element_bytes: int,
) -> tuple[int, int, int] | None:
    """(base, i, j): the first base, in order, with two walk positions i, j whose
    addresses, sorted stably, are neighbours less than an element apart."""
    values = function([address])
    for b in bases:
        flat = []
        for env in walk(names, ranges):
            env[base] = b
            flat.append(values(env)[0])
        order = sorted(range(len(flat)), key=flat.__getitem__)
        for i, j in zip(order, order[1:]):
            if flat[j] - flat[i] < element_bytes:
                return b, i, j
    return None


def largest(value: Expr, names: Sequence[str], ranges: Sequence[Range]) -> int:
    """The largest value of `value` over the domain (which is not empty)."""
    values = function([value])
    return max(values(env)[0] for env in walk(names, ranges))
