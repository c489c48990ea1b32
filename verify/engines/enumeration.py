"""The enumeration engine: every property decided by evaluating every point.

Over a finite domain, evaluating every point is a complete proof. The domain is
exactly the one the solver quantifies: every lane, loop value, `$stage` and
`$base` (the aligned bases of one period, `Program.base_range`: the module doc of
`verify.model.program` says why they stand for the whole 32-bit window), every layout
coordinate. `verify.engines.decide` sends a check here when its domain is small.

Evaluation is vectorised: each variable is a numpy array along its own axis and
an expression is evaluated with the same operators `verify.model.expr.evaluate` applies
to integers, broadcast over the domain. That is exact because `bounds` has proved
every subexpression non-negative, every divisor non-zero and every shift at most
64 over the variables' ranges before anything is evaluated, so floor division,
remainder and shifts agree with Python's; values that could pass 2^62 are
evaluated on Python integers (numpy object arrays) instead of int64.

Figures (max-ways, wavefronts, cosize) are exact maxima over the domain, as the
solver's are. Wavefronts are the H200's: the phase model's, less the phase pairs
rule L merges for 64/128-bit loads (`merged_pairs`); max-ways stays the phase
model's busiest bank. Every witness -- the first violating point in enumeration order, or
the first instance attaining a maximum -- is replayed by `verify.engines.witness` with the
plain evaluator and `verify.model.bank`, so a numpy result that the replay does not
confirm is an InternalError, never a verdict.

The domain is walked in chunks of at most CHUNK points, so memory stays bounded
and the check's time budget is looked at between chunks: running out is UNKNOWN,
as for the solver. Its resource units are the solver's alone: the work here is fixed
by the domain, so a budget of units alone (the tests') never stops it.

What this engine is not: an oracle for what the notations mean. It evaluates the
expression trees `verify.model.layout` and `verify.notation` build, the same trees the
solver encodes, so its agreement with z3 (tests/engines/test_differential.py) checks the
bit-vector encoding against plain evaluation, nothing more. A misreading of CuTe,
Triton or a formula would be shared by both engines; the meaning is checked by
`oracle`, which reads the spec text with pycute, Triton's linear layouts and
its own interpreter and shares none of this code (tests/oracle/test_oracle_independence.py,
the campaign in benchmarks/campaigns/differential.py).
"""

from __future__ import annotations

import itertools
import operator
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from math import prod
from typing import TYPE_CHECKING

from verify.engines import cp_async as copies
from verify.engines import plain, witness
from verify.errors import InternalError, SpecError
from verify.model.bank import (
    BANKS,
    WORD_BYTES,
    bank_cost,
    rule_l,
)
from verify.model.expr import (
    CONCRETE_OPS,
    BinOp,
    Const,
    Expr,
    Range,
    Var,
    free_vars,
    max_intermediate,
    trailing_zeros,
)
from verify.model.expr import shape as shape_of_expr
from verify.model.instructions import Instruction
from verify.model.layout import coordinate_vars
from verify.model.program import BASE, GBASE, LANE, STAGE, Access, Program
from verify.results import BankFigures, Counterexample, Verdict
from verify.smt.budget import Budget
from verify.smt.width import width_for
from verify.spec.ast import LayoutDef
from verify.verdicts import Maximum, Status

if TYPE_CHECKING:
    import numpy as np
else:

    class _Numpy:
        """numpy, imported at its first use: a small domain is walked by
        `verify.engines.plain` and never needs it (issue 23: start-up)."""

        def __getattr__(self, name):
            import numpy

            globals()["np"] = numpy
            return getattr(numpy, name)

    np = _Numpy()

# Points evaluated at once: an int64 array of a chunk is 8 MB, and the bank cost
# sorts a few such arrays; large enough that numpy's per-call overhead vanishes.
CHUNK = 1 << 20
# Bijectivity sorts every (coordinate, stage) address of one base at once: beyond
# this many (2 GB of int64 with the sort's copies) it refuses rather than swap.
MAX_SORTED = 1 << 27
# When every subexpression stays below this (`max_intermediate`), int64 holds
# every value exactly; otherwise the values are Python integers.
INT64_SAFE = 1 << 62


# Moved to `verify.engines.copy_rules` (numpy at import): still reachable here.
_COPY_RULES = ("copy_costs", "rule_c_costs", "cg_costs")


def __getattr__(name: str):
    if name in _COPY_RULES:
        from verify.engines import copy_rules

        return getattr(copy_rules, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- the domain and vectorised evaluation ---------------------------------------


@dataclass(frozen=True)
class Domain:
    """Named variables with ranges, walked in C order (the last name varies fastest)."""

    names: tuple[str, ...]
    ranges: tuple[Range, ...]

    @classmethod
    def of(cls, ranges: dict[str, Range]) -> Domain:
        return cls(tuple(ranges), tuple(ranges.values()))

    @property
    def points(self) -> int:
        return prod(r.size for r in self.ranges)

    def values_at(self, flat: int) -> dict[str, int]:
        """The assignment at position `flat` of the walk."""
        out = {}
        for name, r in reversed(list(zip(self.names, self.ranges))):
            flat, i = divmod(flat, r.size)
            out[name] = r.lo + i
        return dict(reversed(list(out.items())))

    def chunks(self):
        """(first flat position, {name: array}) for consecutive blocks of the walk.

        Trailing axes whose product fits in CHUNK are taken whole; the axis before
        them is cut into pieces; earlier axes are fixed one value at a time. Each
        array has its values along its own axis, so expressions broadcast.
        """
        sizes = [r.size for r in self.ranges]
        split, inner = len(sizes), 1
        while split > 0 and inner * sizes[split - 1] <= CHUNK:
            split -= 1
            inner *= sizes[split]
        if split == 0:  # one chunk: its arrays made once per domain (read-only), a new dict
            yield 0, dict(_whole_domain(self))
            return
        rank = len(sizes)
        whole = {
            self.names[i]: _along(np.arange(self.ranges[i].lo, self.ranges[i].hi), i, rank)
            for i in range(split, rank)
        }
        cut, step = split - 1, max(1, CHUNK // inner)
        fixed_axes = [range(r.lo, r.hi) for r in self.ranges[:cut]]
        position = 0
        for fixed in itertools.product(*fixed_axes):
            env = dict(zip(self.names[:cut], (np.int64(v) for v in fixed)))
            r = self.ranges[cut]
            for lo in range(r.lo, r.hi, step):
                piece = np.arange(lo, min(lo + step, r.hi))
                yield position, {**env, self.names[cut]: _along(piece, cut, rank), **whole}
                position += piece.size * inner

    def shape_of(self, env: dict) -> tuple[int, ...]:
        """The broadcast shape of a chunk's arrays (each of the domain's rank, or a
        scalar): along each axis, the length of the arrays that are not 1 long there."""
        shapes = [np.shape(a) for a in env.values()]
        return tuple(0 if 0 in axis else max(axis) for axis in zip(*(s for s in shapes if s)))


# Each domain of one chunk -> its arrays (`Domain.chunks`), of MAX_BANK_SEARCHES
# domains at most (an array per name, as long as its range).
_WHOLE: dict[Domain, dict[str, np.ndarray]] = {}


def _whole_domain(domain: Domain) -> dict[str, np.ndarray]:
    found = _WHOLE.get(domain)
    if found is None:
        rank = len(domain.names)
        found = {}
        for i, (name, r) in enumerate(zip(domain.names, domain.ranges)):
            found[name] = _along(np.arange(r.lo, r.hi), i, rank)
            found[name].flags.writeable = False
        if len(_WHOLE) >= MAX_BANK_SEARCHES:
            _WHOLE.clear()
        _WHOLE[domain] = found
    return found


def _along(values: np.ndarray, axis: int, rank: int) -> np.ndarray:
    shape = [1] * rank
    shape[axis] = values.size
    return values.astype(np.int64).reshape(shape)


class Vectorised:
    """Expressions evaluated over a domain's chunks, as `evaluate` would at each point.

    Given the `domain` the chunks come from, a domain of one chunk of at most
    SHARED_POINTS points keeps each subexpression's values by its `shape`, for
    every evaluation over that domain: a kernel's accesses repeat most of their
    address (an access's in_bounds, aligned and bank search evaluate it again), and
    a value is a function of the expression's structure and the points alone."""

    def __init__(self, exprs: list[Expr], ranges: dict[str, Range], domain: Domain | None = None):
        self.exact_ints = max(checked(exprs, ranges), default=0) >= INT64_SAFE
        self._kept = _kept_values(domain, self.exact_ints) if domain is not None else None

    def __call__(self, e: Expr, env: dict, shape: tuple[int, ...]) -> np.ndarray:
        if self.exact_ints:
            env = {n: np.asarray(a).astype(object) for n, a in env.items()}
        value = self._eval(e, env, {} if self._kept is None else self._kept)
        if isinstance(value, np.ndarray) and value.shape == shape:
            return value  # as broadcast_to would give it, and no caller writes to it
        return np.broadcast_to(np.asarray(value), shape)

    def _eval(self, e: Expr, env: dict, memo: dict):
        if isinstance(e, Const):
            return e.value if self.exact_ints else np.int64(e.value)
        if isinstance(e, Var):
            return env[e.name]
        assert isinstance(e, BinOp)
        key = shape_of_expr(e)
        value = memo.get(key)
        if value is None:
            value = CONCRETE_OPS[e.op](self._eval(e.a, env, memo), self._eval(e.b, env, memo))
            if memo is self._kept and isinstance(value, np.ndarray):
                value.flags.writeable = False  # read by every later evaluation
            memo[key] = value
        return value


# Values kept by (domain, exact ints), for domains of one chunk of at most this many
# points; all of them hold at most KEPT_VALUES values before they are forgotten.
SHARED_POINTS = 1 << 12
KEPT_VALUES = 1 << 22
_VALUES: dict[tuple[Domain, bool], dict[int, object]] = {}
_KEPT_COUNT = [0]


def _kept_values(domain: Domain, exact_ints: bool) -> dict[int, object] | None:
    """The values kept over `domain` (a new table if none), None when it is too large
    or is walked in more than one chunk (the values are the one chunk's)."""
    points = domain.points
    if points > min(SHARED_POINTS, CHUNK):
        return None
    _KEPT_COUNT[0] += points
    if _KEPT_COUNT[0] > KEPT_VALUES:
        _VALUES.clear()
        _KEPT_COUNT[0] = points
    return _VALUES.setdefault((domain, exact_ints), {})


def checked(exprs: list[Expr], ranges: dict[str, Range]) -> list[int]:
    """Raise the located SpecErrors the solver path raises (a divisor that may be
    zero, a value outside the 32-bit window) before anything is evaluated; else
    each expression's largest intermediate value. One walk per expression:
    `max_intermediate` walks each tree as `bounds` does and raises its errors."""
    tops = [max_intermediate(e, ranges) for e in exprs]
    width_for([], ranges, extra=max(tops, default=0))  # width_for(exprs, ranges), tops known
    return tops


def _first(mask: np.ndarray) -> int | None:
    """Flat position of the first True in C order, if any."""
    flat = np.flatnonzero(mask)
    return int(flat[0]) if flat.size else None


class _Clock:
    """Charges the time spent to the budget's solver_seconds; says when it is spent."""

    def __init__(self, budget: Budget):
        self.budget = budget
        self.stopped = ""  # why `lane_chunks` stopped early, if it did

    def __enter__(self):
        self.started = time.monotonic()
        return self

    def __exit__(self, *exc):
        self.budget.solver_seconds += time.monotonic() - self.started

    def out_of_time(self) -> bool:
        return self.budget.remaining_ms() <= 0

    def reason(self) -> str:
        return self.budget.timeout_reason()

    def lane_chunks(self, domain: Domain, evaluate: Vectorised, exprs: list[Expr], lanes: int):
        """Each chunk of `domain` as (its first instance, each of `exprs` as an int64
        array of instances x lanes), until the budget is spent (`stopped` says so)."""
        for start, env in domain.chunks():
            if self.out_of_time():
                self.stopped = self.reason()
                return
            shape = domain.shape_of(env)
            arrays = [evaluate(e, env, shape).reshape(-1, lanes).astype(np.int64) for e in exprs]
            yield start // lanes, arrays


def _find(
    domain: Domain,
    exprs: list[Expr],
    violated,
    budget: Budget,
    replay: Callable[[dict[str, int]], Counterexample],
) -> Verdict:
    """The first point of `domain` where violated(*values of exprs) holds, replayed
    into the counterexample; none proves the property."""
    ranges = dict(zip(domain.names, domain.ranges))
    if domain.points <= plain.limit():
        checked(exprs, ranges)
        with _Clock(budget) as clock:
            if clock.out_of_time():
                return Verdict(Status.UNKNOWN, reason=clock.reason())
            hit = plain.first(domain.names, domain.ranges, exprs, violated)
        if hit is not None:
            return Verdict(Status.REFUTED, replay(domain.values_at(hit)))
        return Verdict(Status.PROVED)
    evaluate = Vectorised(exprs, ranges, domain)
    with _Clock(budget) as clock:
        for start, env in domain.chunks():
            if clock.out_of_time():
                return Verdict(Status.UNKNOWN, reason=clock.reason())
            shape = domain.shape_of(env)
            hit = _first(violated(*(evaluate(e, env, shape) for e in exprs)))
            if hit is not None:
                return Verdict(Status.REFUTED, replay(domain.values_at(start + hit)))
    return Verdict(Status.PROVED)


def _misaligned(n: int):
    return lambda address: address % n != 0


# -- alignment and bounds of one access ---------------------------------------


def _access_domain(access: Access, base: Range) -> tuple[Domain, list[str]]:
    """Instances outside, the lane innermost; and the solver's order of the names."""
    ranges = {**access.ranges, BASE: base}
    walk = {n: ranges[n] for n in ranges if n != LANE}
    walk[LANE] = ranges[LANE]
    return Domain.of(walk), list(ranges)


def _in_order(values: dict[str, int], names: list[str]) -> dict[str, int]:
    return {n: values[n] for n in names}


def aligned(program: Program, access: Access, n: int, budget: Budget) -> Verdict:
    """Every lane's address is a multiple of n, for every instance and aligned base."""
    if n <= 0 or n & (n - 1):
        raise SpecError(f"aligned: expected a power of two, found {n}")
    domain, order = _access_domain(access, program.base_range(access.layout, n))
    return _find(
        domain,
        [access.address],
        _misaligned(n),
        budget,
        lambda values: witness.misaligned(program, access, n, _in_order(values, order)),
    )


def base_aligned(program: Program, ldef: LayoutDef, budget: Budget) -> Verdict:
    """Every stage of the buffer starts at a multiple of ``ldef.required_align``."""
    n = ldef.required_align
    domain = Domain.of(
        {STAGE: Range(0, program.spec.buffer.stages), BASE: program.base_range(ldef, n)}
    )
    return _find(
        domain,
        [program.stage_start()],
        _misaligned(n),
        budget,
        lambda values: witness.stage_misaligned(program, ldef, values),
    )


def in_bounds(program: Program, access: Access, budget: Budget) -> Verdict:
    """Every coordinate an access names lies inside its layout's domain."""
    coords, limits = list(access.definition.coords), access.coordinate_ranges
    domain, order = _access_domain(access, access.ranges[BASE])

    def outside(*values):  # on numpy arrays, or on plain integers (`verify.engines.plain`)
        hit = False
        for c, r in zip(values, limits):
            hit = hit | (c < r.lo) | (c >= r.hi)
        return hit

    return _find(
        domain,
        coords,
        outside,
        budget,
        lambda values: witness.out_of_bounds(program, access, _in_order(values, order)),
    )


# -- bank conflicts ----------------------------------------------------------


# Rows `_phase_ways` counts at once: their BANKS counts a row (256 KB) stay in cache,
# where one count of 32768 instances' phases (32 MB) would not.
WAYS_BLOCK = 1024


def _phase_ways(words: np.ndarray) -> np.ndarray:
    """words: (instances, items) word indices of one phase -> per instance, the
    distinct words of its busiest bank."""
    if len(words) > WAYS_BLOCK:
        blocks = range(0, len(words), WAYS_BLOCK)
        return np.concatenate([_phase_ways(words[i : i + WAYS_BLOCK]) for i in blocks])
    ordered = np.sort(words, axis=1)
    new = np.ones(ordered.shape, dtype=bool)
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    rows = np.arange(ordered.shape[0])[:, None]
    slots = (BANKS * rows + ordered % BANKS)[new]
    counts = np.bincount(slots, minlength=BANKS * ordered.shape[0])
    return counts.reshape(-1, BANKS).max(axis=1)


def _group_ways(instr: Instruction, addresses: np.ndarray, lanes: int) -> np.ndarray:
    """addresses: (instances, address lanes) -> (instances, groups): `_phase_ways` of
    each group of `lanes` consecutive lanes, every group of every instance in one
    call (a lane's words are side by side, so a group's words are consecutive)."""
    assert addresses.shape[1] == instr.address_lanes, f"{instr.name}: {addresses.shape}"
    words = addresses[:, :, None] // WORD_BYTES + np.arange(instr.words_per_address)
    per_group = words.reshape(-1, lanes * instr.words_per_address)
    return _phase_ways(per_group).reshape(addresses.shape[0], -1)


def phase_costs(access: Access, addresses: np.ndarray) -> np.ndarray:
    """addresses: (instances, address lanes), naturally aligned -> (instances, phases)
    of the bank model's per-phase cost (`verify.model.bank.phase_cost`'s ways).
    Phases are consecutive runs of `phase_lanes` lanes (`Instruction.phases`)."""
    instr = access.instruction
    return _group_ways(instr, addresses, instr.phase_lanes)


def merged_pairs(instr: Instruction, addresses: np.ndarray) -> np.ndarray:
    """Per instance, the phase pairs rule L serves in one wavefront instead of two
    (`verify.model.bank.hardware_wavefronts`): in a 64/128-bit load, a pair of
    neighbouring phases whose own lanes come in equal pairs (2k, 2k+1) or alternate
    two addresses, and whose union has at most one distinct word in every bank. Such
    a pair's phases cost one each, so rule L's wavefronts are the phase model's
    minus this count."""
    if not instr.merges_phases:
        return np.zeros(addresses.shape[0], dtype=np.int64)
    span = 2 * instr.phase_lanes  # a pair of phases: (instances, pairs, its lanes)
    pairs = addresses.reshape(addresses.shape[0], -1, span)
    in_pairs = (pairs[:, :, 0::2] == pairs[:, :, 1::2]).all(axis=2)
    alternating = (pairs == pairs[:, :, [i % 2 for i in range(span)]]).all(axis=2)
    union_ok = _group_ways(instr, addresses, span) == 1
    return ((in_pairs | alternating) & union_ok).sum(axis=1)


class _Best:
    """The largest value seen and the first instance reaching it."""

    def __init__(self):
        self.value, self.flat = -1, None

    def offer(self, values: np.ndarray, start: int):
        i = int(np.argmax(values))
        if values[i] > self.value:
            self.value, self.flat = int(values[i]), start + i


def bank_figures(access: Access, budget: Budget) -> BankFigures:
    """Max-ways and wavefronts of an access, exact over every instance.

    Requires: the access is naturally aligned (checked before any bank figure).
    """
    instance = Domain.of({n: access.ranges[n] for n in access.instance_vars})
    question = bank_question(access)
    if question in _BANK_SEARCHES:
        checked([access.address], dict(access.ranges))  # the errors a search raises
        return _replayed_figures(access, instance, *_BANK_SEARCHES[question], "")
    domain, _ = _access_domain(access, access.ranges[BASE])
    search = _plain_bank_search if domain.points <= plain.limit(bank=True) else _numpy_bank_search
    ways, waves, stopped = search(access, domain, budget)
    if not stopped:  # a search cut short by its budget is not kept
        if len(_BANK_SEARCHES) >= MAX_BANK_SEARCHES:
            _BANK_SEARCHES.clear()
        _BANK_SEARCHES[question] = (ways, waves)
    return _replayed_figures(access, instance, ways, waves, stopped)


def _numpy_bank_search(access: Access, domain: Domain, budget: Budget) -> tuple[_Best, _Best, str]:
    """Both maxima's first instances over `domain` (`_access_domain`'s), and why the
    search stopped early."""
    evaluate = Vectorised([access.address], dict(access.ranges), domain)
    lanes = access.instruction.address_lanes
    ways, waves = _Best(), _Best()
    with _Clock(budget) as clock:
        for first, (addresses,) in clock.lane_chunks(domain, evaluate, [access.address], lanes):
            costs = phase_costs(access, addresses)
            merged = merged_pairs(access.instruction, addresses)
            ways.offer(costs.max(axis=1), first)
            waves.offer(costs.sum(axis=1) - merged, first)
    return ways, waves, clock.stopped


def _plain_bank_search(access: Access, domain: Domain, budget: Budget) -> tuple[_Best, _Best, str]:
    """`_numpy_bank_search` of a small domain, by `verify.engines.plain`."""
    checked([access.address], dict(access.ranges))
    ways, waves = _Best(), _Best()
    with _Clock(budget) as clock:
        if clock.out_of_time():
            clock.stopped = clock.reason()
        else:
            lane = domain.ranges[-1]
            (ways.value, ways.flat), (waves.value, waves.flat) = plain.bank_maxima(
                access.instruction,
                access.address,
                domain.names[:-1],
                domain.ranges[:-1],
                LANE,
                range(lane.lo, lane.hi),
            )
    return ways, waves, clock.stopped


# -- one bank search for accesses that differ by a constant placement -----------------
#
# Both bank figures of an instance depend on its lanes' addresses only through which
# lanes share a byte, a word or a bank (`verify.model.bank`: words per bank, rule L's
# equal and alternating addresses, its union's words per bank). A map g applied to
# every lane's address alike keeps all three when it is one-to-one, keeps bytes of one
# word together and moves banks alike: adding c, or XOR with k, where c and k are
# multiples of m = max(4, access width) (XOR: bits below m untouched, the bank bits
# moved the same for every word; a wide access's words stay its aligned run). So an
# address P + T(X), T a chain of such + c and ^ k around the one lane-dependent term X,
# has at every instance the figures of P + X, provided (for ^ k) P is a multiple of m
# and the same for every lane: g(y) = P + ((y - P) ^ k). The question below is the
# address with those constants taken out; the figures, and the first instance reaching
# each maximum, are the stripped address's. Each access still replays its own
# witness on plain integers (`_replayed_figures`), so a wrong lemma would be an
# InternalError, never a wrong figure.

# Searches by question (instruction, stripped address, every range in order).
_BANK_SEARCHES: dict[tuple, tuple[_Best, _Best]] = {}
MAX_BANK_SEARCHES = 4096


def forget_bank_searches() -> None:
    """Empty the searches and values kept (a benchmark measuring each kernel as if first)."""
    _BANK_SEARCHES.clear()
    _VALUES.clear()
    _WHOLE.clear()
    _KEPT_COUNT[0] = 0


def bank_question(access: Access) -> tuple:
    """What a bank search of `access` depends on, constant placements taken out."""
    instr = access.instruction
    unit = max(WORD_BYTES, instr.bytes_per_address)
    terms = _sum_terms(access.address)
    moving = [t for t in terms if LANE in free_vars(t)]
    fixed = [t for t in terms if LANE not in free_vars(t) and not _is_multiple_const(t, unit)]
    xor_ok = len(moving) == 1 and all(
        (1 << trailing_zeros(t, access.ranges)) % unit == 0 for t in fixed
    )
    stripped = [_stripped(t, unit, xor_ok) for t in moving]
    # shapes name equal trees alike (and unequal ones apart): the sum's terms in any order
    shown = tuple(sorted(shape_of_expr(t) for t in fixed)) + tuple(
        shape_of_expr(t) for t in stripped
    )
    return (instr, shown, tuple(access.ranges.items()))


def _sum_terms(e: Expr) -> list[Expr]:
    if isinstance(e, BinOp) and e.op == "+":
        return _sum_terms(e.a) + _sum_terms(e.b)
    return [e]


def _is_multiple_const(e: Expr, unit: int) -> bool:
    return isinstance(e, Const) and e.value % unit == 0


def _stripped(e: Expr, unit: int, xor_ok: bool) -> Expr:
    """`e` without its outer chain of + c (and ^ k where `xor_ok`), c, k multiples of unit."""
    while isinstance(e, BinOp) and (e.op == "+" or (e.op == "^" and xor_ok)):
        if _is_multiple_const(e.b, unit):
            e = e.a
        elif _is_multiple_const(e.a, unit):
            e = e.b
        else:
            break
    return e


def _replayed_figures(
    access: Access, instance: Domain, ways: _Best, waves: _Best, reason: str
) -> BankFigures:
    """Both maxima with their witnesses, each confirmed by the plain bank model
    (wavefronts by the measured rules, `verify.model.bank.hardware_wavefronts`).
    An instance is replayed once for both figures: the two witnesses are usually
    one instance, and a replay is a pure function of it."""
    replays: dict[int, dict[str, int]] = {}

    def replayed(best: _Best, metric: str) -> Maximum:
        flat = best.flat or 0
        if flat not in replays:
            replays[flat] = replay_figures(access, instance.values_at(flat))
        replay = replays[flat][metric]
        values = instance.values_at(flat)
        if best.flat is not None and replay != best.value:
            raise InternalError(f"enumerated {metric} {best.value} replays as {replay}: {values}")
        return Maximum(replay, values, exact=not reason, reason=reason)

    return BankFigures(replayed(ways, "max_ways"), replayed(waves, "wavefronts"))


def replay_figures(access: Access, values: dict[str, int]) -> dict[str, int]:
    """Max-ways (the phase model) and wavefronts (the measured rules) of one
    instance, on plain integers: one evaluation of its lane addresses, one phase
    model cost that rule L starts from (`hardware_wavefronts` in one pass)."""
    addresses = access.lane_addresses(values)
    cost = bank_cost(access.instruction, addresses)
    return {"max_ways": cost.max_ways, "wavefronts": rule_l(cost, addresses)}


# -- cp.async: rule C, rule S and bound G ---------------------------------------------


class _CopyBest:
    """The largest exact and bound-G costs seen, each with the first (instance,
    global base) reaching it."""

    def __init__(self):
        self.exact, self.bound = _Best(), _Best()

    def offer(self, costs: np.ndarray, exact: np.ndarray, start: int, base: int):
        for best, mask in ((self.exact, exact), (self.bound, ~exact)):
            values = np.where(mask, costs, -1)
            i = int(np.argmax(values))
            if values[i] > best.value:
                best.value, best.flat = int(values[i]), (start + i, base)


def copy_wavefronts(program: Program, access: Access, budget: Budget) -> copies.CopyFigures:
    """A cp.async's largest cost over every instance and global base
    (`Program.global_bases`): rule C for .ca; for .cg rule S where it is exact and
    bound G elsewhere, kept apart. Each maximum's first instance is replayed by
    `verify.model.bank.hardware_copy_cost`.

    Requires: destinations and sources naturally aligned (checked before)."""
    source = access.source
    assert source is not None, f"{access.name}: a copy without its global source"
    instr, bases = access.instruction, program.global_bases(access)
    rule_s = program.copy_rule_s(access)
    exprs = [access.address, source.address]
    question = (instr, *exprs, tuple(access.ranges.items()), bases, rule_s)
    searched = _COPY_SEARCHES.setdefault(program, {})
    if question not in searched:
        domain, _ = _access_domain(access, access.ranges[BASE])
        evaluate = Vectorised(exprs, dict(access.ranges))
        best = _CopyBest()
        with _Clock(budget) as clock:
            lanes = instr.address_lanes
            for first, (dst, src) in clock.lane_chunks(domain, evaluate, exprs, lanes):
                for group in _base_groups(bases, len(dst)):
                    _offer_bases(best, instr, dst, src, group, rule_s, first)
        if clock.stopped:  # a search cut short by its budget is not kept
            return _copy_figures(program, access, best, clock.stopped)
        searched[question] = best
    return _copy_figures(program, access, searched[question], "")


# Instances costed in one call at most: a chunk's instances are costed at several
# global bases at once, each base's copy of them one block of rows (every rule costs
# each instance, a row, on its own), so numpy's per-call work is paid once for all.
BASE_ROWS = 1 << 14


def _base_groups(bases: range, instances: int) -> list[range]:
    """`bases` in consecutive groups of at most BASE_ROWS instances in all (one base at least)."""
    size = max(1, BASE_ROWS // max(1, instances))
    return [bases[i : i + size] for i in range(0, len(bases), size)]


def _offer_bases(best: _CopyBest, instr, dst, src, bases: range, rule_s: bool, first: int):
    """Each base's costs of one chunk offered to `best`, the bases in order."""
    from verify.engines import copy_rules  # numpy, for copies only

    n = len(dst)
    costs, exact = copy_rules.copy_costs(
        instr, np.tile(dst, (len(bases), 1)), np.concatenate([src + b for b in bases]), rule_s
    )
    for k, base in enumerate(bases):
        best.offer(costs[k * n : (k + 1) * n], exact[k * n : (k + 1) * n], first, base)


# Each Program's copy searches, by the exact question (instruction, destination and
# source expressions, every range in order, the global bases, rule S or not): a spec
# that holds one copy several times under other names (`verify.ttgir.module` writes one
# per buffer and op) searches it once, and each access replays the maxima itself.
_COPY_SEARCHES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _copy_figures(
    program: Program, access: Access, best: _CopyBest, reason: str
) -> copies.CopyFigures:
    """A search's maxima, each replayed on this access."""
    instance = Domain.of({n: access.ranges[n] for n in access.instance_vars})
    return copies.CopyFigures(
        _replayed_copy(program, access, instance, best.exact, True, reason),
        _replayed_copy(program, access, instance, best.bound, False, reason),
        stopped=reason,
    )


def _replayed_copy(
    program: Program, access: Access, instance: Domain, best: _Best, exact: bool, reason: str
) -> Maximum | None:
    """The maximum with its witness, confirmed by `verify.model.bank.hardware_copy_cost`
    (its figure and whether it is exact); None where no instance was of this kind."""
    if best.flat is None:
        return None
    flat, base = best.flat
    values = {**instance.values_at(flat), GBASE: base}
    replay = copies.replayed_cost(program, access, values)
    if (replay.wavefronts, replay.exact) != (best.value, exact):
        raise InternalError(
            f"enumerated cp.async wavefronts {best.value} (exact {exact}) replay as "
            f"{replay.wavefronts} (exact {replay.exact}): {values}"
        )
    return Maximum(replay.wavefronts, values, exact=not reason, reason=reason)


# -- layouts -----------------------------------------------------------------


def _layout_address(program: Program, ldef: LayoutDef):
    coords = coordinate_vars(ldef.function)
    address = program.address(ldef, [Var(n) for n, _ in coords], ldef.pos)
    return coords, address


def bijective(program: Program, ldef: LayoutDef, budget: Budget) -> Verdict:
    """No two (coordinate, stage) pairs overlap in memory, for every aligned base:
    per base, every address sorted, neighbours at least an element apart."""
    coords, address = _layout_address(program, ldef)
    ranges = {**dict(coords), **program.buffer_ranges(ldef)}
    if ldef.pointer_swizzle is None:
        # The base moves every address alike, and overlap is invariant under a
        # common shift: base 0 decides every base (as in the solver's query).
        ranges[BASE] = Range(0, 1)
    program.check_window(address, ranges, ldef.pos)
    eb = program.elem_bytes(ldef.pos, ldef)
    own = Domain.of({**dict(coords), STAGE: ranges[STAGE]})
    if own.points > MAX_SORTED:
        return Verdict(
            Status.UNKNOWN,
            reason=f"{own.points} addresses per base are too many "
            "to sort in memory: this check needs the solver "
            "engine",
        )
    if own.points * ranges[BASE].size <= plain.limit():
        return _plain_bijective(program, ldef, (address, coords, ranges), own, budget)
    evaluate = Vectorised([address], ranges)
    with _Clock(budget) as clock:
        for base in range(ranges[BASE].lo, ranges[BASE].hi):
            addresses = []
            for _, env in own.chunks():
                if clock.out_of_time():
                    return Verdict(Status.UNKNOWN, reason=clock.reason())
                env[BASE] = np.int64(base)
                addresses.append(evaluate(address, env, own.shape_of(env)).ravel())
            flat = np.concatenate(addresses).astype(np.int64)
            order = np.argsort(flat, kind="stable")
            close = _first(np.diff(flat[order]) < eb)
            if close is not None:
                va, vb = own.values_at(int(order[close])), own.values_at(int(order[close + 1]))
                return Verdict(
                    Status.REFUTED,
                    witness.overlap(program, ldef, address, coords, va, vb, base, eb),
                )
    return Verdict(Status.PROVED)


def _plain_bijective(program: Program, ldef: LayoutDef, question, own: Domain, budget) -> Verdict:
    """`bijective` of a small domain, by `verify.engines.plain`."""
    address, coords, ranges = question
    checked([address], ranges)
    eb = program.elem_bytes(ldef.pos, ldef)
    with _Clock(budget) as clock:
        if clock.out_of_time():
            return Verdict(Status.UNKNOWN, reason=clock.reason())
        bases = range(ranges[BASE].lo, ranges[BASE].hi)
        close = plain.first_overlap(address, own.names, own.ranges, BASE, bases, eb)
    if close is None:
        return Verdict(Status.PROVED)
    base, i, j = close
    va, vb = own.values_at(i), own.values_at(j)
    return Verdict(
        Status.REFUTED, witness.overlap(program, ldef, address, coords, va, vb, base, eb)
    )


def footprint(program: Program, ldef: LayoutDef, budget: Budget) -> dict:
    """cosize: 1 + the largest element offset (base 0, stage 0)."""
    coords = coordinate_vars(ldef.function)
    value = ldef.value([Var(n) for n, _ in coords])
    domain = Domain.of(dict(coords))
    top, exact = 0, True
    if domain.points <= plain.limit():
        checked([value], dict(coords))
        with _Clock(budget) as clock:
            if clock.out_of_time():
                exact = False
            else:
                top = max(top, plain.largest(value, domain.names, domain.ranges))
    else:
        evaluate = Vectorised([value], dict(coords))
        with _Clock(budget) as clock:
            for _, env in domain.chunks():
                if clock.out_of_time():
                    exact = False
                    break
                top = max(top, int(evaluate(value, env, domain.shape_of(env)).max()))
    scale = program.elem_bytes(ldef.pos, ldef) if ldef.pointer_swizzle else 1
    cosize = top // scale + 1
    facts = {"size": ldef.function.size(), "cosize": cosize if exact else None}
    if exact:
        facts["cosize_bytes"] = cosize * program.elem_bytes(ldef.pos, ldef)
    return facts


def equivalent(lhs: Expr, rhs: Expr, loops, budget: Budget) -> Verdict:
    """lhs == rhs for every value of the loop variables."""
    return _find(
        Domain.of(dict(loops)),
        [lhs, rhs],
        operator.ne,
        budget,
        lambda values: witness.unequal(lhs, rhs, values),
    )
