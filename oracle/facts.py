"""Every check of a spec answered by exhaustive enumeration.

Overview
--------
Each property is decided over its whole finite domain: every lane, loop value,
stage and aligned base for an access; every coordinate, stage and base for a
layout; every value of the `for` variables for ``equivalent E1 == E2``. Addresses
are ``S(base + k*stage_bytes + elem_bytes*L(c))`` with S the pointer swizzle
(identity if none); numpy evaluates a whole domain at once.

Why one period of bases is enough
---------------------------------
Let P be a power of two with P >= 128, P >= every modulus a check asks about
(an ``aligned N`` N, a required base alignment R), and P above every bit a
pointer swizzle reads or writes. Write an aligned base as b = b0 + K*P with
b0 = b mod P (b0 is again a multiple of `align` when align <= P, and 0 when
align > P, since then P divides align). Adding K*P to an address x changes only
bits >= log2 P: no carry reaches the bits below P. A pointer swizzle reads and
writes only bits below P and copies the rest, so S(x + K*P) = S(x) + K*P. Hence
every address at base b is the address at base b0 plus the same K*P, and:
banks (address bits 2..6, P >= 128), word identity and equality of two
addresses, overlap of two elements, and divisibility by any N dividing P are
all the same at b and b0. So the bases 0, align, 2*align, ... below P (or just 0
when align >= P) decide every property for every aligned base of the window.

Worked example
--------------
``Sw<3,4,3> o smem_ptr[16b] o (8,64):(64,1)`` in a buffer aligned to 16: the
swizzle touches bits 4..9, so P = 1024 and the bases are 0, 16, ..., 1008 (64 of
them); with ``buffer align 1024`` only base 0 remains.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from math import prod

import numpy as np

from oracle import hardware, merging
from oracle.errors import OracleRefusal
from oracle.formulas import narrow, scaled
from oracle.layouts import LIMIT, Layout
from oracle.reading import Access, Check, Spec

WINDOW = 1 << 32


@dataclass(frozen=True)
class Answer:
    """A property's truth over its whole domain, with the figures verify reports."""

    holds: bool
    max_ways: int | None = None
    wavefronts: int | None = None
    cosize: int | None = None


def period(layouts: list[Layout], modulus: int = 1) -> int:
    """P of the module doc for addresses of `layouts` and a check modulo `modulus`."""
    top = max(128, modulus)
    for layout in layouts:
        if layout.pointer is not None:
            top = max(top, 1 << layout.pointer.touched_bits.bit_length())
    return top


class Facts:
    """Answers for one spec; accesses' enumerations are shared by their checks."""

    def __init__(self, spec: Spec):
        self.spec = spec
        self._access_cache: dict[str, AccessFacts] = {}

    # -- names and units -------------------------------------------------------------

    def layout(self, name: str, at: str) -> Layout:
        if name not in self.spec.layouts:
            raise OracleRefusal(f"{at}: unknown layout '{name}'")
        return self.spec.layouts[name]

    def access(self, name: str, at: str) -> AccessFacts:
        if name not in self.spec.accesses:
            raise OracleRefusal(f"{at}: unknown access '{name}'")
        if name not in self._access_cache:
            self._access_cache[name] = AccessFacts(self, self.spec.accesses[name])
        return self._access_cache[name]

    def element_bytes(self, layout: Layout, at: str) -> int:
        dtype, pointer = self.spec.dtype, layout.pointer
        if dtype is None:
            if pointer is None:
                raise OracleRefusal(f"{at}: addresses need a 'dtype' statement")
            return pointer.element_bytes
        if dtype not in hardware.DTYPE_BYTES:
            raise OracleRefusal(f"unknown dtype '{dtype}'")
        size = hardware.DTYPE_BYTES[dtype]
        named = pointer.element_bytes if pointer is not None else layout.named_bytes
        if named is not None and named != size:
            raise OracleRefusal(
                f"{at}: the layout names {8 * named}-bit elements but dtype "
                f"{dtype} is {8 * size} bits"
            )
        return size

    def stage_starts(self, modulus_period: int) -> np.ndarray:
        """Start byte of every (base, stage): shape (bases, stages)."""
        spec = self.spec
        bases = np.arange(0, modulus_period, spec.align, dtype=np.int64)[:, None]
        return bases + spec.stage_bytes * np.arange(spec.stages, dtype=np.int64)[None, :]

    def addresses(self, layout: Layout, elements: np.ndarray, p: int, at: str) -> np.ndarray:
        """Byte addresses, shape (bases, stages, *elements.shape), window-checked."""
        eb = self.element_bytes(layout, at)
        starts = self.stage_starts(p)
        absolute = (
            starts.reshape(starts.shape + (1,) * elements.ndim) + scaled(elements, eb)[None, None]
        )
        if layout.pointer is not None:
            absolute = layout.pointer.apply(absolute)
        if np.max(absolute) >= WINDOW:
            raise OracleRefusal(f"{at}: byte addresses reach 2^32 or more, past the shared window")
        return narrow(absolute)

    # -- layout checks ---------------------------------------------------------------

    def bijective(self, check: Check) -> Answer:
        layout = self.layout(check.target, check.at)
        eb = self.element_bytes(layout, check.at)
        self._within_limit(layout.size * self.spec.stages, check.at)
        p = period([layout]) if layout.pointer is not None else self.spec.align
        spans = self.addresses(layout, layout.table, p, check.at)
        spans = np.sort(spans.reshape(spans.shape[0], -1), axis=1)
        holds = spans.shape[1] < 2 or int(np.min(np.diff(spans, axis=1))) >= eb
        value = (
            layout.table
            if layout.pointer is None
            else layout.pointer.apply(scaled(layout.table, layout.pointer.element_bytes))
        )
        return Answer(holds, cosize=int(np.max(value)) // (eb if layout.pointer else 1) + 1)

    def base_aligned(self, check: Check) -> Answer:
        layout = self.layout(check.target, check.at)
        need = layout.required_align
        if need == 1:
            raise OracleRefusal(
                f"{check.at}: base_aligned {check.target}: the layout needs no "
                "aligned buffer (not a TMA box, GMMA atom or nvmma_shared)"
            )
        starts = self.stage_starts(period([layout], need))
        return Answer(bool(np.all(starts % need == 0)))

    def equivalent_layouts(self, check: Check) -> Answer:
        a, b = self.layout(check.target, check.at), self.layout(check.second, check.at)
        if a.size != b.size:  # no 1-D index pairs them: a malformed check
            raise OracleRefusal(
                f"{check.at}: equivalent {check.target}, {check.second}: "
                f"sizes {a.size} and {b.size} differ"
            )
        self._within_limit(a.size * self.spec.stages, check.at)
        p = period([a, b])
        left = self.addresses(a, a.table, p, check.at)
        right = self.addresses(b, b.table, p, check.at)
        return Answer(bool(np.array_equal(left, right)))

    def equivalent_exprs(self, check: Check) -> Answer:
        env = grid(check.loops, check.at)
        lhs, rhs = (side(env) for side in check.sides)
        return Answer(bool(np.all(np.asarray(lhs) == np.asarray(rhs))))

    def _within_limit(self, count: int, at: str):
        if count > LIMIT.value:
            raise OracleRefusal(f"{at}: {count} evaluations, more than the limit {LIMIT.value}")


def grid(loops, at: str) -> dict[str, np.ndarray]:
    """Every value of the loop variables, one broadcast axis each."""
    total = prod(hi - lo for _, lo, hi in loops)
    if total > LIMIT.value:
        raise OracleRefusal(f"{at}: {total} evaluations, more than the limit {LIMIT.value}")
    env = {}
    for axis, (name, lo, hi) in enumerate(loops):
        shape = [1] * len(loops)
        shape[axis] = hi - lo
        env[name] = np.arange(lo, hi, dtype=np.int64).reshape(shape)
    return env


class AccessFacts:
    """One access enumerated: coordinates of every lane and loop value, then addresses
    for every stage and base of the period."""

    def __init__(self, facts: Facts, access: Access):
        self.facts, self.access = facts, access
        self._by_period: dict[int, np.ndarray] = {}
        self.layout = facts.layout(access.layout_name, access.at)
        instr = access.instruction
        loops = access.loops + [("lane", 0, instr.address_lanes)]
        per_base = prod(hi - lo for _, lo, hi in loops) * facts.spec.stages
        bases = max(1, period([self.layout], 16) // facts.spec.align)
        facts._within_limit(per_base * bases, access.at)
        env = grid(loops, access.at)
        shape = tuple(hi - lo for _, lo, hi in loops)
        coords = [np.broadcast_to(c(env), shape) for c in access.coords]
        index, inside = self.layout.index_of(coords, access.at)
        self.in_bounds = bool(np.all(inside))
        self._index = narrow(np.broadcast_to(index, shape)).reshape(-1, instr.address_lanes)
        self.source: Layout | None = None
        self.source_in_bounds = True
        if access.source_layout is not None:
            self._read_source(env, shape)

    # -- cp.async's global side ----------------------------------------------------

    def _read_source(self, env: dict, shape: tuple):
        """The global tile's layout and each lane's index in it ('from G(coords)')."""
        access, spec = self.access, self.facts.spec
        assert access.source_layout is not None, "only copies have a source"
        self.source = self.facts.layout(access.source_layout, access.at)
        if self.source.pointer is not None:
            raise OracleRefusal(f"{access.at}: a global tile has no pointer swizzle")
        if spec.global_align % access.instruction.bytes_per_lane:
            raise OracleRefusal(
                f"{access.at}: global align {spec.global_align} is not a multiple of "
                f"the copy's {access.instruction.bytes_per_lane} bytes"
            )
        coords = [np.broadcast_to(c(env), shape) for c in access.source_coords]
        index, inside = self.source.index_of(coords, access.at)
        self.source_in_bounds = bool(np.all(inside))
        lanes = access.instruction.address_lanes
        self._source_index = narrow(np.broadcast_to(index, shape)).reshape(-1, lanes)

    def global_bases(self) -> np.ndarray:
        """Every aligned global base of one bank period (128 bytes: a global word's
        bank is its address / 4 mod 32, README), or 0 alone when the alignment is 128
        or more."""
        return np.arange(0, max(128, self.facts.spec.global_align), self.facts.spec.global_align)

    def line_residues(self) -> np.ndarray:
        """Where an aligned global base can fall inside a 128-byte line: the distinct
        values of (k * global align) mod 128 (k = 0..127 reaches all of them). Rule S
        reads a source's 128-byte line and its 16-byte chunk in it, which a whole
        number of lines added to every source leaves alone, so these bases stand for
        every aligned base of a .cg copy (README, "The spec language")."""
        multiples = np.arange(128, dtype=np.int64) * self.facts.spec.global_align
        return np.unique(multiples % 128)

    def source_addresses(self, bases: np.ndarray) -> np.ndarray:
        """Global byte addresses, shape (bases, instances, lanes)."""
        assert self.source is not None, "only copies have a source"
        eb = self.facts.element_bytes(self.source, self.access.at)
        offsets = scaled(self.source.table[self._source_index], eb)
        return bases.reshape(-1, 1, 1) + offsets[None]

    @cached_property
    def source_aligned(self) -> bool:
        """The global side aligned to the copy size at every aligned global base."""
        n = self.access.instruction.bytes_per_lane
        return bool(np.all(self.source_addresses(self.global_bases()) % n == 0))

    def copy_wavefronts(self, every_global_base: bool = False) -> int:
        """The largest rule C / bound G cost (`hardware.copy_cost`) over every instance,
        stage and shared base of the period. The README's argument: moving every
        source by the same number of words rotates the source banks, which changes
        neither rule C nor bound G, so global base 0 stands for every aligned one;
        `every_global_base` enumerates the bases of one period instead."""
        instr = self.access.instruction
        destinations = self._addresses(period([self.layout]))
        bases = self.global_bases() if every_global_base else np.zeros(1, dtype=np.int64)
        repeat = destinations.shape[0] // self._source_index.shape[0]
        best = 0
        for sources in self.source_addresses(bases):
            # Only a source's bank matters: its address mod 128.
            low = np.asarray(sources % 128, dtype=np.int64)
            costs = hardware.copy_cost(instr, destinations, np.tile(low, (repeat, 1)))
            best = max(best, int(costs.max()))
        return best

    @cached_property
    def cg_figures(self) -> tuple[int | None, int | None]:
        """A .cg copy's (largest rule S cost where rule S is exact, largest bound G
        cost where it is not), over every instance, stage, shared base of the period
        and global base in `line_residues`; None where no instance is of that kind
        (`hardware.cg_copy_costs`, which reads full addresses: lines matter)."""
        destinations = self._addresses(period([self.layout]))
        repeat = destinations.shape[0] // self._source_index.shape[0]
        exact_top: int | None = None
        bound_top: int | None = None
        for sources in self.source_addresses(self.line_residues()):
            every = np.tile(np.asarray(sources, dtype=np.int64), (repeat, 1))
            costs, exact = hardware.cg_copy_costs(destinations, every)
            if exact.any():
                exact_top = max(exact_top or 0, int(costs[exact].max()))
            if not exact.all():
                bound_top = max(bound_top or 0, int(costs[~exact].max()))
        return exact_top, bound_top

    @cached_property
    def elements(self) -> np.ndarray:
        return self.layout.table[self._index]

    def aligned_to(self, n: int) -> bool:
        p = period([self.layout], n)
        return bool(np.all(self._addresses(p) % n == 0))

    def _addresses(self, p: int) -> np.ndarray:
        if p not in self._by_period:
            addresses = self.facts.addresses(self.layout, self.elements, p, self.access.at)
            self._by_period[p] = addresses.reshape(-1, self.access.instruction.address_lanes)
        return self._by_period[p]

    @cached_property
    def naturally_aligned(self) -> bool:
        return self.aligned_to(self.access.instruction.bytes_per_lane)

    @cached_property
    def bank_figures(self) -> tuple[int, int]:
        """(max-ways, wavefronts) over every instance, stage and base; a 64/128-bit
        load's wavefronts by rule L (`merging`)."""
        instr, addresses = self.access.instruction, self._addresses(period([self.layout]))
        ways, waves = hardware.bank_figures(instr, addresses)
        if merging.applies(instr, self.access.load):
            waves = merging.wavefronts(instr, addresses)
        return ways, waves
