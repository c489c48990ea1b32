"""A layout that fixes a refuted bank check without breaking the spec's other
checks: the nearest of the same family, scored by `verify synth`'s machinery and
re-checked by the ordinary engines on the whole spec.

Overview
--------
When a bank check fails (refuted, and not expected to be), the layout its access
reads is placed in a family by how it is written (`family_of`, in
`verify.synth.repair_families`):

* CuTe ``[Sw<B,M,S> o] (R,C):(P,1)`` or ``(R,C):(1,P)``: parameters major
  order, pitch P and swizzle (``(8,64):(72,1)`` is a padded row-major tile);
* ``tile_to_shape([Sw<B,M,S> o] atom, (R, C)[, order])``: the atom's shape, its
  major order and its swizzle (the order is kept);
* CuTe's GMMA atoms ``GMMA::Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom<T>``,
  bare or tiled: major and swizzle mode;
* Triton ``#ttg.swizzled_shared`` (vec, perPhase, maxPhase, order),
  ``#ttg.nvmma_shared`` (swizzlingByteWidth, transposed) and
  ``#ttg.padded_shared`` (each pair's interval and padding);
* a formula ``F(r in .., c in ..) = e``: a padding term (a coordinate's
  coefficient raised) and an XOR term ``(e) ^ (2^m * (v % 2^b))``, each optional.

Accesses given by thread maps (``by ...``) are not read by synthesis, so a
layout they use gets no suggestion. Synthesis keeps a lane's vector along the
second coordinate; a layout written with its first coordinate contiguous is
scored transposed (`Scorer`).

The spec is then read as a synthesis problem with that layout unknown
(``?(R, C)``) and every access and bank check of the spec kept: each member is
scored by `verify.synth.cost.score`, which demands every bank check of every
access of the layout, bijectivity, alignment and whole vectors at once. The
members that pass are taken nearest first and the whole spec is run again by the
ordinary engines with each in place (at most `RECHECKS`): the first under which
the failing check is proved and every check that passed still passes is
printed (an exact figure, ``max_ways == 8 rd``, of an access whose bank check
fails states the conflict being removed: it may change, and the text says so;
a check that ends UNKNOWN is not a pass). Nothing is printed otherwise; when
no member meets the failing check together with another access's check, a
``fix:`` line names the checks that cannot be satisfied together, and when the
nearest fixes break another check of the spec, it names that check.

Nearest
-------
Fewest parameter changes first (a swizzle counts as one parameter, whatever of
B, M and S change; a parameter the layout lacks, added, counts as one), then the
smallest footprint (cosize, in elements), then the fewest steps (the sum of
the changed parameters' differences: |dB| + |dM| + |dS|, pitch elements, log2
of Triton's powers of two), then `verify.synth.cost`'s objective. The search
scores the members with one change, then two, and stops at the first count
that has a fix, or when `SEARCH_MEMBERS` members have been tried for the
whole spec, whichever comes first: a count of work, not seconds, so the text
printed is the same on every run and every machine. Beside it, re-checked the
same way, one alternative: for a padded CuTe tile, the nearest fix without
padding when it saves footprint (``(8,64):(80,1)`` gets ``(8,64):(72,1)`` and
``Sw<3,3,3> o (8,64):(64,1)``); otherwise the nearest fix with as few changes
that moves other parameters (a pitch, not a swizzle).

Worked example
--------------
``(8,64):(64,1)`` fp16 read by ldmatrix.x1 rows is 8-way. One change fixes it:
a pitch of 72 (footprint 568 elements) or ``Sw<3,3,3>`` (footprint 512); the
swizzle is the nearest and the pitch the alternative.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np

from verify.engines.options import RunOptions
from verify.engines.runner import run_spec
from verify.errors import SpecError
from verify.results import CheckResult
from verify.spec.ast import CheckDef, LayoutDef, Spec
from verify.spec.parser import parse_text, statement_texts
from verify.synth.cost import Objective, Score, score
from verify.synth.problem import Problem, problem_of
from verify.synth.repair_families import (
    Candidate,
    Family,
    Params,
    Tile,
    changes,
    family_of,
    moved_parameters,
    parsed_table,
    steps,
)
from verify.verdicts import Status

# Members of a family tried per spec, over all its failing checks: enough for
# every search of the catalog and tests/synth/test_suggest.py to end on its own (the
# largest, a 128-column tile's, tries under 400), about 0.5 s of scoring here.
SEARCH_MEMBERS = 4096
# Fixes re-checked on the whole spec, nearest first, before giving up.
RECHECKS = 3


@dataclass
class Fix:
    candidate: Candidate
    objective: Objective
    changes: int
    results: list[CheckResult] = field(default_factory=list)  # the whole spec re-checked
    stale: list[str] = field(default_factory=list)  # exact figures it changes (Rechecker)


@dataclass
class Outcome:
    """What the search found for one layout: shared by all its failing checks."""

    family: Family
    scored: int = 0
    stopped: bool = False  # the member budget ran out before the search ended
    chosen: Fix | None = None
    alternative: Fix | None = None
    rejected: list[tuple[Fix, list[str]]] = field(default_factory=list)
    broken_sets: list[frozenset[str]] = field(default_factory=list)  # hard constraints met
    requirements: tuple[str, ...] = ()


@dataclass
class Work:
    """The members a spec's searches may still try."""

    left: int

    def take(self) -> bool:
        """Spend one member; False when none is left."""
        if self.left <= 0:
            return False
        self.left -= 1
        return True


def attach(
    spec: Spec,
    results: list[CheckResult],
    source: str | None = None,
    timeout: RunOptions | float = 60.0,
) -> list[CheckResult]:
    """`results` with a suggestion (or a sentence saying why there is none) on each
    failing bank check whose layout has a family; a suggestion's whole-spec re-check
    runs under `timeout` per check, as the first run did."""
    work = Work(SEARCH_MEMBERS)
    outcomes: dict[str, Outcome | None] = {}
    for result in results:
        check = _failing_bank_check(spec, result)
        if check is None:
            continue
        layout = spec.accesses[check.target].layout
        if layout not in outcomes:
            if work.left <= 0:
                break
            source = source if source is not None else _read(spec.file)
            outcomes[layout] = _search(spec, source, layout, results, (work, timeout))
        outcome = outcomes[layout]
        if outcome is not None:
            _annotate(result, check, outcome)
    return results


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _failing_bank_check(spec: Spec, result: CheckResult) -> CheckDef | None:
    if result.status != Status.REFUTED or result.passed or result.max_ways is None:
        return None
    return next(
        (
            c
            for c in spec.checks
            if c.pos.line == result.line
            and c.text == result.property
            and c.kind in ("max_ways", "wavefronts")
            and not c.exact
        ),
        None,
    )


def _annotate(result: CheckResult, check: CheckDef, outcome: Outcome) -> None:
    cex = result.counterexample
    assert cex is not None, "a refuted check has its counterexample"
    text = _suggestion_text(check, outcome)
    if text:
        result.counterexample = replace(cex, suggestion=text)
        return
    sentence = _no_fix_sentence(check, outcome)
    if sentence:
        result.counterexample = replace(cex, explanation=(*cex.explanation, ("fix", sentence)))


# --- the search ---------------------------------------------------------------


def _search(
    spec: Spec,
    source: str,
    layout: str,
    before: list[CheckResult],
    limits: tuple[Work, RunOptions | float],
) -> Outcome | None:
    """The nearest fix of `layout`'s family for all its accesses, re-checked; `limits`
    is (the members the spec's searches may still try, each re-checked check's timeout)."""
    work, timeout = limits
    ldef = spec.layouts[layout]
    statement = _statement_of(source, ldef)
    header = "".join(c for _, c in statement_texts(source) if c.split()[0] == "dtype")
    if statement is None or len(ldef.function.mode_sizes) != 2:
        return None
    rows, cols = ldef.function.mode_sizes
    problem = _problem(spec, source, ldef, rows, cols)
    if problem is None:
        return None
    tile = Tile(layout, rows, cols, problem.elem_bytes, header)
    family = family_of(ldef, statement[1], tile)
    if family is None:
        return None
    outcome = Outcome(family, requirements=tuple(r.describe() for r in problem.requirements))
    scorer = _scorer(problem, tile, f"layout {statement[1]}")
    fixes = _score(scorer, outcome, work)
    required = frozenset((r.line, r.text) for r in problem.requirements)
    exempt = _exempt(spec, before)
    recheck = Rechecker(source, statement[0], spec.file, before, required, exempt, timeout)
    _choose(outcome, fixes, recheck)
    _offer_alternative(outcome, fixes, _unpadded_fixes(scorer, family, fixes), recheck)
    return outcome


def _exempt(spec: Spec, before: list[CheckResult]) -> frozenset[tuple[int, str]]:
    """Exact bank figures of the accesses that have a failing bank check."""
    failing = {
        check.target
        for result in before
        if (check := _failing_bank_check(spec, result)) is not None
    }
    return frozenset(
        (c.pos.line, c.text)
        for c in spec.checks
        if c.exact and c.kind in ("max_ways", "wavefronts") and c.target in failing
    )


def _statement_of(source: str, ldef: LayoutDef) -> tuple[int, str] | None:
    """(line, text after 'layout ') of the statement that defines `ldef`, comments
    dropped and spaces collapsed."""
    for line, chunk in statement_texts(source):
        if line == ldef.pos.line and chunk.split()[0] == "layout":
            text = " ".join(_COMMENT.sub("", chunk).split())
            return line, text.split(" ", 1)[1]
    return None


# A comment runs from '#' to the end of the line; a Triton encoding is not one.
_COMMENT = re.compile(r"#(?!ttg\.|triton_gpu\.)[^\n]*")


def _replaced(source: str, line: int, statement: str) -> str:
    """`source` with the statement at `line` replaced, every other line where it was."""
    out = []
    for first, chunk in _all_chunks(source):
        if first == line:
            chunk = statement + "\n" * max(1, chunk.count("\n"))
        out.append(chunk)
    return "".join(out)


def _all_chunks(source: str) -> Iterator[tuple[int, str]]:
    """(first line, text) of each line group: a statement and whatever follows
    it up to the next, so that joining them gives `source` back."""
    starts = [line for line, _ in statement_texts(source)]
    lines = source.splitlines(keepends=True)
    bounds = [1, *starts[1:], len(lines) + 1] if starts else [1, len(lines) + 1]
    firsts = [starts[0] if starts else 1, *starts[1:]]
    for first, lo, hi in zip(firsts, bounds, bounds[1:]):
        yield first, "".join(lines[lo - 1 : hi - 1])


def _problem(spec: Spec, source: str, ldef: LayoutDef, rows: int, cols: int) -> Problem | None:
    """The spec as `verify synth` reads it with `ldef` unknown: every access and
    bank check kept."""
    line = ldef.pos.line
    text = _replaced(source, line, f"layout {ldef.name} = ?({rows}, {cols})")
    try:
        return problem_of(parse_text(text, spec.file), text)
    except SpecError:
        return None


@dataclass(frozen=True)
class Scorer:
    """`verify.synth.cost.score` on the problem, the right way round: synthesis
    keeps a lane's vector along c, so a layout written with its rows contiguous
    (column-major, Triton's order [0, 1], nvmma transposed) is scored transposed,
    its vectors along r."""

    problem: Problem
    transposed: bool = False

    def __call__(self, candidate: Candidate) -> Score | None:
        table = candidate.table()
        if table is None:
            return None
        return score(self.problem, table.T if self.transposed else table, candidate.xor_terms)


def _scorer(problem: Problem, tile: Tile, written: str) -> Scorer:
    """The scorer for the layout as `written` (a statement)."""
    table = parsed_table(tile, written)
    if table is None or _unit_steps(table, 0) <= _unit_steps(table, 1):
        return Scorer(problem)
    accesses = tuple(
        replace(a, coords=np.ascontiguousarray(a.coords[..., ::-1])) for a in problem.accesses
    )
    unknown = replace(problem.unknown, rows=problem.unknown.cols, cols=problem.unknown.rows)
    return Scorer(replace(problem, accesses=accesses, unknown=unknown), transposed=True)


def _unit_steps(table: np.ndarray, axis: int) -> int:
    """How often one step along `axis` moves one element."""
    return int(np.count_nonzero(np.diff(table, axis=axis) == 1))


def _score(scorer: Scorer, outcome: Outcome, work: Work) -> list[Fix]:
    """The members that meet every constraint, with the fewest changes that any
    does: one change, then two, ...; scoring stops there or when `work` is spent."""
    family = outcome.family
    fixes: list[Fix] = []
    for n in range(1, len(family.axes) + 1):
        for candidate in family.level(n):
            if not work.take():
                outcome.stopped = True
                return _nearest_first(family.here, fixes)
            result = scorer(candidate)
            if result is None:
                continue
            outcome.scored += 1
            if result.feasible:
                fixes.append(Fix(candidate, result.found, n))
            elif set(result.broken) <= set(outcome.requirements):
                outcome.broken_sets.append(frozenset(result.broken))
        if fixes:
            break
    return _nearest_first(family.here, fixes)


def _nearest_first(here: Params, fixes: list[Fix]) -> list[Fix]:
    return sorted(fixes, key=partial(_nearness, here))


def _nearness(here: Params, fix: Fix) -> tuple:
    return (
        fix.changes,
        fix.objective.footprint,
        steps(here, fix.candidate.params),
        fix.objective.key(),
    )


@dataclass
class Rechecker:
    """Runs the whole spec with a member in place, to compare with the first run."""

    source: str
    line: int  # of the layout's statement
    file: str
    before: list[CheckResult]
    required: frozenset[tuple[int, str]]  # (line, text) of the bank checks scored on
    # (line, text) of exact figures ('max_ways == 8 rd') of an access with a failing
    # bank check: they state the conflict being fixed, so a fix may change them
    exempt: frozenset[tuple[int, str]]
    timeout: RunOptions | float = 60.0  # per check, as the first run's

    def __call__(self, fix: Fix) -> tuple[bool, list[str]]:
        """(whether every required check is proved and every check that passed
        still passes, the checks that passed and are now refuted); fills
        fix.results. A check now UNKNOWN neither passes nor counts as broken."""
        text = _replaced(self.source, self.line, fix.candidate.statement)
        try:
            fix.results = run_spec(parse_text(text, self.file), self.timeout)
        except SpecError:
            return False, []
        now = {(r.line, r.property): r for r in fix.results}
        passed = [(r.line, r.property) for r in self.before if r.passed and r.expect != "refuted"]
        kept = [now.get(key) for key in passed if key not in self.exempt]
        fix.stale = [
            f"'{key[1]}' (line {key[0]})"
            for key in passed
            if key in self.exempt and not ((n := now.get(key)) and n.passed)
        ]
        broken = [
            f"'{r.property}' (line {r.line})" for r in kept if r and r.status == Status.REFUTED
        ]
        required = [now.get(key) for key in self.required]
        passes = all(r is not None and r.passed for r in kept) and all(
            r is not None and r.status == Status.PROVED for r in required
        )
        return passes, broken


def _choose(outcome: Outcome, fixes: list[Fix], recheck: Rechecker) -> None:
    """The nearest fix that the whole spec re-checks, and an alternative that
    changes other parameters; fixes that break another check are remembered."""
    for fix in fixes[:RECHECKS]:
        passes, broken = recheck(fix)
        if passes:
            outcome.chosen = fix
            break
        if broken:
            outcome.rejected.append((fix, broken))


def _offer_alternative(
    outcome: Outcome, fixes: list[Fix], unpadded: list[Fix], recheck: Rechecker
) -> None:
    """Beside the chosen fix: the nearest without padding when it saves footprint,
    else the nearest as near that changes other parameters (a pitch, not a swizzle)."""
    chosen = outcome.chosen
    if chosen is None:
        return
    here = outcome.family.here
    moved = moved_parameters(here, chosen.candidate.params)
    others = [
        f
        for f in fixes
        if f.changes == chosen.changes and moved_parameters(here, f.candidate.params) != moved
    ]
    smaller = [f for f in unpadded if f.objective.footprint < chosen.objective.footprint]
    for fix in (smaller or others)[:1]:
        if recheck(fix)[0]:
            outcome.alternative = fix


def _unpadded_fixes(scorer: Scorer, family: Family, fixes: list[Fix]) -> list[Fix]:
    """The family's members without padding that meet every constraint, nearest
    first (none when the nearest fix has no padding to save)."""
    if not fixes or family.unpadded is None:
        return []
    found = []
    for candidate in family.compact():
        result = scorer(candidate)
        if result is not None and result.feasible:
            found.append(Fix(candidate, result.found, changes(family.here, candidate.params)))
    return _nearest_first(family.here, found)


# --- what is printed ----------------------------------------------------------


def _suggestion_text(check: CheckDef, outcome: Outcome) -> str:
    """'layout A = ...' and, on the next line, what it does (re-checked)."""
    fix = outcome.chosen
    proved = None if fix is None else _proved(fix, check)
    if fix is None or proved is None:
        return ""
    assert proved.wavefronts is not None, "a proved bank check has its wavefronts"
    waves = f"{proved.wavefronts} wavefront{'s' if proved.wavefronts > 1 else ''}"
    text = (
        f"{fix.candidate.statement}\n"
        f"would make this access {proved.max_ways}-way, {waves}: re-checked with the whole "
        f"spec, '{check.text}' is proved and every other check still passes{_stale(fix)}. "
        f"Nearest of "
        f"{_scored(outcome)} ({_change(outcome, fix)}, footprint {fix.objective.footprint} "
        f"elements)"
    )

    alt = outcome.alternative
    if alt is not None and _proved(alt, check) is not None:
        text += (
            f". Also re-checked: {alt.candidate.statement} ({_change(outcome, alt)}, "
            f"footprint {alt.objective.footprint} elements)"
        )
    return text


def _stale(fix: Fix) -> str:
    if not fix.stale:
        return ""
    noun = "the figure" if len(fix.stale) == 1 else "the figures"
    return f" except {' and '.join(fix.stale)}, {noun} of the conflict it removes"


def _scored(outcome: Outcome) -> str:
    cut = f" before the budget of {SEARCH_MEMBERS} members ran out" if outcome.stopped else ""
    return f"the {outcome.scored} {outcome.family.name} layouts of this tile scored{cut}"


def _change(outcome: Outcome, fix: Fix) -> str:
    moved = sorted(moved_parameters(outcome.family.here, fix.candidate.params))
    return f"{'it changes' if len(moved) == 1 else 'changing'} the {' and the '.join(moved)}"


def _proved(fix: Fix, check: CheckDef) -> CheckResult | None:
    found = [r for r in fix.results if r.line == check.pos.line and r.property == check.text]
    return found[0] if found and found[0].status == Status.PROVED else None


def _no_fix_sentence(check: CheckDef, outcome: Outcome) -> str:
    """Why no suggestion: the nearest fix breaks another check, or no member
    meets this check together with another access's."""
    if outcome.rejected:
        fix, broken = outcome.rejected[0]
        return (
            f"no suggestion: the nearest {outcome.family.name} layout that fixes it, "
            f"'{fix.candidate.statement}', breaks {', '.join(broken)}"
        )
    target = f"'{check.text}' (line {check.pos.line})"
    alone = [s for s in outcome.broken_sets if target not in s]
    if outcome.chosen is not None or target not in outcome.requirements or not alone:
        return ""
    others = [r for r in outcome.requirements if r != target]
    clash = [r for r in others if all(r in s for s in alone)] or others
    return (
        f"no suggestion: no {outcome.family.name} layout meets {target} and "
        f"{' and '.join(clash)} together (of {_scored(outcome)})"
    )
