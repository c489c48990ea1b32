"""A candidate layout scored on a synthesis problem, concretely.

Overview
--------
A candidate is a table ``T[r, c]`` of element offsets. `score` decides the hard
constraints and computes the objective, lexicographically:

1. hard: bijective (offsets distinct, and stages do not overlap), every access
   aligned to its width, every lane's vector whole (``T[r, c + j] = T[r, c] + j``);
2. the worst max-ways over all accesses;
3. the sum over accesses of weight x wavefronts of the access's worst instance;
4. the footprint (cosize, in elements: padding costs);
5. the number of XOR terms of the layout's formula.

Worked example
--------------
Row-major 8x64 fp16 read by ldmatrix.x1 at column 8q: the eight row addresses
are 128 bytes apart, all in banks 0-3, so max-ways is 8 and each instance costs
8 wavefronts. Under ``Sw<3,3,3>`` they fall in eight bank groups: 1 and 1.

The math
--------
Bank figures use `verify.engines.enumeration.phase_costs` and `merged_pairs` (rule L
for 64/128-bit loads), the enumeration engine's own numpy bank model, on
``eb * T[r, c]`` (the problem's module doc says why bases and stages drop out).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from verify.engines.enumeration import merged_pairs, phase_costs
from verify.synth.problem import Problem, Requirement, SynthAccess


@dataclass(frozen=True)
class Objective:
    """What is minimised, in order."""

    max_ways: int
    wavefronts: int  # weighted sum over accesses
    footprint: int  # cosize in elements
    xor_terms: int

    def key(self) -> tuple[int, int, int, int]:
        return (self.max_ways, self.wavefronts, self.footprint, self.xor_terms)


@dataclass
class Score:
    """A candidate's figures: which named constraints it breaks, and its objective."""

    broken: list[str] = field(default_factory=list)  # hard constraints and requirements
    per_access: dict = field(default_factory=dict)  # name -> (max_ways, wavefronts)
    objective: Objective | None = None

    @property
    def feasible(self) -> bool:
        return not self.broken

    @property
    def found(self) -> Objective:
        """The objective of a feasible score (`score` gives every feasible one its own)."""
        assert self.objective is not None, f"no objective: the layout breaks {self.broken}"
        return self.objective


def hard_name(kind: str, access: SynthAccess, elem_bytes: int) -> str:
    """How a per-access hard constraint is named in messages and unsat cores."""
    if kind == "aligned":
        return f"aligned {access.instruction.bytes_per_address} {access.name}"
    return f"vectors of {access.vector(elem_bytes)} elements whole in {access.name}"


def score(problem: Problem, table: np.ndarray, xor_terms: int) -> Score:
    """Hard constraints, requirements and objective of the layout `table`."""
    result = Score()
    if np.unique(table).size != table.size:
        result.broken.append("bijective")
        return result
    if not _fits_stage(problem, table):
        result.broken.append(problem.stages_text())
        return result
    for access in problem.accesses:
        result.broken += _access_breaks(problem, table, access)
    if result.broken:
        return result
    for access in problem.accesses:
        addresses = problem.elem_bytes * table[access.coords[..., 0], access.coords[..., 1]]
        costs = phase_costs(access.access, addresses)
        # The engines' wavefronts: the phase model less rule L's merged phase pairs of
        # 64/128-bit loads, or the certificate's re-check would refute the figure.
        waves = costs.sum(axis=1) - merged_pairs(access.access.instruction, addresses)
        result.per_access[access.name] = (int(costs.max()), int(waves.max()))
    result.broken += [r.describe() for r in problem.requirements if not _meets(result, r)]
    ways = max(w for w, _ in result.per_access.values())
    waves = sum(a.weight * result.per_access[a.name][1] for a in problem.accesses)
    result.objective = Objective(ways, waves, int(table.max()) + 1, xor_terms)
    return result


def _fits_stage(problem: Problem, table: np.ndarray) -> bool:
    """With several stages, each stage's tile fits in its slot (else stages overlap)."""
    limit = problem.stage_elements
    return limit is None or int(table.max()) + 1 <= limit


def _access_breaks(problem: Problem, table: np.ndarray, access: SynthAccess) -> list[str]:
    """The access's hard constraints that `table` breaks: natural alignment of each
    lane's address, and each lane's vector stored contiguously."""
    eb, rows, cols = problem.elem_bytes, access.coords[..., 0], access.coords[..., 1]
    offsets = table[rows, cols]
    broken = []
    if np.any((eb * offsets) % access.instruction.bytes_per_address):
        broken.append(hard_name("aligned", access, eb))
    vector = access.vector(eb)
    if vector > 1:
        inside = cols + vector - 1 < table.shape[1]
        whole = inside.all() and all(
            np.array_equal(table[rows, cols + j], offsets + j) for j in range(1, vector)
        )
        if not whole:
            broken.append(hard_name("vectors", access, eb))
    return broken


def _meets(result: Score, requirement: Requirement) -> bool:
    ways, waves = result.per_access[requirement.access]
    return (ways if requirement.metric == "ways" else waves) <= requirement.bound
