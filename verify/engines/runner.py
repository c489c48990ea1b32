"""Runs every check of a spec, in file order, and collects `CheckResult`s.

Each access also gets two implicit checks at its own line: its coordinates stay
inside the layout's domain, and every address has the instruction's natural
alignment (16 bytes for an ldmatrix/stmatrix row or a 128-bit access). Bank
figures are only defined for naturally aligned accesses, so a bank check on a
misaligned access is refuted with the alignment counterexample.

Each check is decided by one engine (`verify.engines.decide`): exhaustive evaluation
when its domain is small, the solver otherwise, or the one `engine` names.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from verify.engines import cp_async as copies
from verify.engines import decide, witness
from verify.engines.options import RunOptions
from verify.errors import Pos, SpecError
from verify.model.bank import bank_cost, hardware_wavefronts
from verify.model.expr import Range, Var, evaluate
from verify.model.instructions import ptx_opcode
from verify.model.program import BASE, STAGE, Access, Program
from verify.results import BankFigures, CheckResult, Counterexample, Verdict
from verify.spec.ast import AccessDef, CheckDef, LayoutDef, Spec
from verify.verdicts import Status, bound_status


class Runner:
    def __init__(self, spec: Spec, options: RunOptions):
        self.spec = spec
        self.program = Program(spec)
        self.options = options
        self._alignment: dict[tuple[str, bool], Decided] = {}
        self._figures: dict[str, Decided] = {}

    def run(self) -> list[CheckResult]:
        items: list[tuple[int, int, AccessDef | LayoutDef | CheckDef]] = [
            (a.pos.line, 0, a) for a in self.spec.accesses.values()
        ]
        explicit = {c.target for c in self.spec.checks if c.kind == "base_aligned"}
        items += [
            (ld.pos.line, 0, ld)
            for ld in self.spec.layouts.values()
            if ld.required_align > 1 and ld.name not in explicit
        ]
        items += [(c.pos.line, 1, c) for c in self.spec.checks]
        results = []
        for _, _, item in sorted(items, key=lambda t: (t[0], t[1])):
            if isinstance(item, AccessDef):
                results += self._implicit(item)
            elif isinstance(item, LayoutDef):
                results.append(self._base_alignment(item))
            else:
                results.append(self._explicit(item))
        return results

    def _decide(self, points: int, ask, limit: int = decide.ENUMERATION_LIMIT) -> Decided:
        """ask(engine module, budget) under a fresh budget, by the engine for `points`."""
        engine = decide.engine_for(self.options.engine, points, limit)
        budget = self.options.budget()
        answer = ask(decide.engine_module(engine), budget)
        return Decided(answer, engine, budget.solver_seconds)

    # -- implicit checks -----------------------------------------------------

    def _implicit(self, adef: AccessDef) -> list[CheckResult]:
        access = self.program.access(adef.name, adef.pos)
        n = access.instruction.bytes_per_address
        points = decide.access_points(self.program, access)
        implicit = [
            (
                f"in_bounds {adef.name}",
                lambda: self._decide(
                    points, lambda engine, b: engine.in_bounds(self.program, access, b)
                ),
            )
        ]
        if not self._explicitly_aligned(adef.name, n):
            implicit.append((f"aligned {n} {adef.name}", lambda: self._natural_alignment(access)))
        if access.source is not None:
            implicit += self._source_checks(access, points)
        return [
            _named(self._implicit_result(adef.pos.line, prop, fn), access) for prop, fn in implicit
        ]

    def _source_checks(self, access: Access, points: int) -> list:
        """A cp.async's global side: in bounds of its tile, aligned to the copy size."""
        source, n = access.source, access.instruction.bytes_per_address
        assert source is not None, f"{access.name}: a copy without its global source"
        where = f"{access.name} from {source.layout.name}"
        return [
            (
                f"in_bounds {where}",
                lambda: self._decide(
                    points, lambda engine, b: engine.in_bounds(self.program, source, b)
                ),
            ),
            (f"aligned {n} {where}", lambda: self._natural_alignment(source)),
        ]

    def _base_alignment(self, ldef: LayoutDef) -> CheckResult:
        return self._implicit_result(
            ldef.pos.line,
            f"base_aligned {ldef.name}",
            lambda: self._decide(
                decide.stage_points(self.program, ldef),
                lambda engine, b: engine.base_aligned(self.program, ldef, b),
            ),
        )

    def _implicit_result(self, line: int, prop: str, decide_it) -> CheckResult:
        started = time.monotonic()
        result = CheckResult(self.spec.file, line, prop, Status.UNKNOWN, implicit=True)
        _record(result, self._charged(result, decide_it()))
        result.seconds = time.monotonic() - started
        return result

    def _explicitly_aligned(self, access: str, n: int) -> bool:
        """An explicit 'aligned N' check (N >= natural) already covers natural alignment."""
        return any(
            c.kind == "aligned" and c.target == access and c.bound >= n and c.bound % n == 0
            for c in self.spec.checks
        )

    def _natural_alignment(self, access: Access) -> Decided:
        """Searched once per access (and once per cp.async's global side): the implicit
        check and every bank check read it."""
        # A cp.async's global side is an Access of the same name without a source.
        key = (access.name, access.instruction.is_copy and access.definition.source is None)
        if key not in self._alignment:
            n = access.instruction.bytes_per_address
            self._alignment[key] = self._decide(
                decide.access_points(self.program, access, n),
                lambda engine, b: engine.aligned(self.program, access, n, b),
            )
            return self._alignment[key]
        return replace(self._alignment[key], solver_seconds=0.0)

    # -- explicit checks -----------------------------------------------------

    def _explicit(self, check: CheckDef) -> CheckResult:
        started = time.monotonic()
        result = CheckResult(
            self.spec.file, check.pos.line, check.text, Status.UNKNOWN, expect=check.expect
        )
        try:
            _record(result, CHECKS[check.kind](self, check, result))
            if check.kind in ACCESS_CHECKS:
                _named(result, self.program.access(check.target, check.pos))
        except SpecError as e:
            raise SpecError(e.message, e.pos if e.pos.line else check.pos) from None
        result.seconds = time.monotonic() - started
        return result

    @staticmethod
    def _charged(result: CheckResult, decided: Decided):
        """`decided`'s answer, after charging `result` with the engine that gave it
        and the time spent inside that engine."""
        result.engine = decided.engine
        result.solver_seconds += decided.solver_seconds
        return decided.answer

    def _check_bijective(self, check: CheckDef, result: CheckResult) -> Verdict:
        ldef = self.program.layout(check.target, check.pos)

        def with_footprint(engine, budget) -> Verdict:
            verdict = engine.bijective(self.program, ldef, budget)
            return replace(verdict, figures=engine.footprint(self.program, ldef, budget))

        verdict = self._charged(
            result, self._decide(decide.layout_points(self.program, ldef), with_footprint)
        )
        facts = dict(verdict.figures)
        # Onto [0,size) needs the verdict: unknown while bijectivity is.
        known = facts["cosize"] is not None and verdict.status != Status.UNKNOWN
        facts["onto"] = (
            verdict.status == Status.PROVED and facts["cosize"] == facts["size"] if known else None
        )
        return replace(verdict, figures=facts)

    def _check_base_aligned(self, check: CheckDef, result: CheckResult) -> Verdict:
        ldef = self.program.layout(check.target, check.pos)
        if ldef.required_align == 1:
            raise SpecError(
                f"base_aligned {ldef.name}: expected a layout that requires an "
                "aligned buffer (a TMA box, GMMA atom or nvmma_shared encoding)",
                check.pos,
            )
        return self._charged(
            result,
            self._decide(
                decide.stage_points(self.program, ldef),
                lambda engine, b: engine.base_aligned(self.program, ldef, b),
            ),
        )

    def _check_aligned(self, check: CheckDef, result: CheckResult) -> Verdict:
        access = self.program.access(check.target, check.pos)
        return self._charged(
            result,
            self._decide(
                decide.access_points(self.program, access, check.bound),
                lambda engine, b: engine.aligned(self.program, access, check.bound, b),
            ),
        )

    def _check_max_ways(self, check: CheckDef, result: CheckResult) -> Verdict:
        return self._bank_check(check, result, "ways")

    def _check_wavefronts(self, check: CheckDef, result: CheckResult) -> Verdict:
        return self._bank_check(check, result, "wavefronts")

    def _bank_check(self, check: CheckDef, result: CheckResult, metric: str) -> Verdict:
        access = self.program.access(check.target, check.pos)
        instr = access.instruction
        result.ideal_wavefronts, result.fidelity = instr.ideal_wavefronts, instr.fidelity
        if instr.is_copy:
            copies.refuse_undefined(access, check)
        alignment = self._charged(result, self._natural_alignment(access))
        if alignment.status == Status.PROVED and access.source is not None:
            alignment = self._charged(result, self._natural_alignment(access.source))
        if alignment.status != Status.PROVED:
            return replace(
                alignment,
                reason=alignment.reason
                or ("bank figures are undefined: the access is not naturally aligned"),
            )
        if instr.is_copy:
            return self._copy_check(check, result, access)
        figures: BankFigures = self._charged(result, self._bank_figures(access))
        result.max_ways = figures.ways.value
        result.wavefronts = figures.wavefronts.value
        best = figures.of(metric)
        verdict = Verdict(
            bound_status(best, check.bound, check.exact),
            figures={
                "max_ways_exact": figures.ways.exact,
                "wavefronts_exact": figures.wavefronts.exact,
            },
        )
        if verdict.status == Status.REFUTED:
            cex = witness.bank_counterexample(self.program, access, best.witness, metric)
            if metric == "wavefronts":
                cex = _with_merged_phases(access, best.witness, cex)
            if best.value <= check.bound:  # "== bound" that no instance reaches
                cex = replace(
                    cex,
                    summary=f"no instance reaches {check.bound}; the worst "
                    f"gives {best.value}: {cex.summary}",
                )
            return replace(verdict, counterexample=cex)
        if verdict.status == Status.UNKNOWN:
            return replace(verdict, reason=best.reason)
        return verdict

    def _copy_check(self, check: CheckDef, result: CheckResult, access: Access) -> Verdict:
        """cp.async: rule C, rule S or bound G (`verify.engines.cp_async`), by either engine."""
        figures = self._charged(result, self._bank_figures(access))
        answer = copies.decide_copy(self.program, access, check, figures)
        result.wavefronts, result.fidelity = answer.wavefronts, answer.fidelity
        return Verdict(answer.status, answer.counterexample, answer.reason)

    def _bank_figures(self, access: Access) -> Decided:
        """Max-ways and wavefronts of an access (`BankFigures`), or a cp.async's
        figures (`copies.CopyFigures`), searched once under one timeout that both
        share; every bank check of the access reads them. A search that timed out
        is not repeated per check: it would get the same allowance again. The
        search's time is charged to the first check that reads it."""
        if access.name not in self._figures and access.instruction.is_copy:
            self._figures[access.name] = self._decide(
                decide.copy_points(self.program, access),
                lambda engine, b: engine.copy_wavefronts(self.program, access, b),
                decide.copy_limit(access),
            )
            return self._figures[access.name]
        if access.name not in self._figures:
            self._figures[access.name] = self._decide(
                decide.access_points(self.program, access),
                lambda engine, b: engine.bank_figures(access, b),
            )
            return self._figures[access.name]
        return replace(self._figures[access.name], solver_seconds=0.0)

    def _check_equivalent_layouts(self, check: CheckDef, result: CheckResult) -> Verdict:
        """Same byte address for every 1-D index, stage and aligned base: byte
        addresses, so a swizzle of absolute addresses (TMA, smem_ptr) is compared
        with an offset swizzle as the hardware would place the data."""
        a = self.program.layout(check.target, check.pos)
        b = self.program.layout(check.second, check.pos)
        if a.function.size() != b.function.size():
            raise SpecError(
                f"equivalent {a.name}, {b.name}: expected layouts of one size, "
                f"found {a.function.size()} and {b.function.size()}",
                check.pos,
            )
        index = Var("index")
        bases = max((self.program.base_range(ldef) for ldef in (a, b)), key=lambda r: r.hi)
        loops = (
            ("index", Range(0, a.function.size())),
            (STAGE, Range(0, self.spec.buffer.stages)),
            (BASE, bases),
        )
        left = self.program.address(a, a.function.idx2crd(index), check.pos)
        right = self.program.address(b, b.function.idx2crd(index), check.pos)
        verdict = self._charged(
            result,
            self._decide(
                decide.loop_points(loops),
                lambda engine, b: engine.equivalent(left, right, loops, b),
            ),
        )
        if verdict.counterexample is None:
            return verdict
        v = verdict.counterexample.instance
        where = f"coordinate {a.function.index_to_coords(v['index'])} (index {v['index']})"
        shown = witness.shown_instance(self.program, {STAGE: v[STAGE], BASE: v[BASE]})
        return replace(
            verdict,
            counterexample=Counterexample(
                f"{a.name} puts {where} at byte {evaluate(left, v)}, {b.name} "
                f"at byte {evaluate(right, v)}",
                shown,
            ),
        )

    def _check_equivalent_exprs(self, check: CheckDef, result: CheckResult) -> Verdict:
        return self._charged(
            result,
            self._decide(
                decide.loop_points(check.loops),
                lambda engine, b: engine.equivalent(check.lhs, check.rhs, check.loops, b),
            ),
        )


# Every check kind a spec can name, and the method that decides it.
CHECKS = {
    "bijective": Runner._check_bijective,
    "base_aligned": Runner._check_base_aligned,
    "aligned": Runner._check_aligned,
    "max_ways": Runner._check_max_ways,
    "wavefronts": Runner._check_wavefronts,
    "equivalent_layouts": Runner._check_equivalent_layouts,
    "equivalent_exprs": Runner._check_equivalent_exprs,
}


# The check kinds whose target is an access: each names its instruction.
ACCESS_CHECKS = ("aligned", "max_ways", "wavefronts")


def _named(result: CheckResult, access: Access) -> CheckResult:
    """`result` with the PTX opcode of the instruction it is about in its facts."""
    result.facts["instruction"] = ptx_opcode(access.instruction)
    return result


def _with_merged_phases(access: Access, values: dict[str, int], cex: Counterexample):
    """A wavefront counterexample whose figure is rule L's: the bank model's summary
    shows the phase model's figure and phases, which merged phase pairs undercut."""
    addresses = access.lane_addresses(values)
    phase_model = bank_cost(access.instruction, addresses).wavefronts
    merged = hardware_wavefronts(access.instruction, addresses)
    if merged == phase_model:
        return cex
    pairs = phase_model - merged
    return replace(
        cex,
        summary=f"{merged} wavefront{'s' if merged > 1 else ''} by rule L ({pairs} "
        f"conflict-free phase pair{'s' if pairs > 1 else ''} merged): {cex.summary}",
    )


def _record(result: CheckResult, verdict: Verdict):
    """`verdict` into the result's columns."""
    result.status = verdict.status
    result.counterexample = verdict.counterexample
    result.reason = verdict.reason
    result.facts = dict(verdict.figures)


@dataclass(frozen=True)
class Decided:
    """What one engine answered (a `Verdict`, `BankFigures`, or a cp.async's
    figures, `copies.CopyFigures`), which engine, and the time spent inside it."""

    answer: Verdict | BankFigures | copies.CopyFigures
    engine: str
    solver_seconds: float


def run_spec(
    spec: Spec,
    options: RunOptions | float | None = None,
    engine: str | None = None,
    *,
    timeout: float | None = None,
) -> list[CheckResult]:
    """Every check of `spec`, each decided as `options` say (`RunOptions`). The
    older pair is still taken, seconds (`options` or `timeout`) and an engine name:
    `RunOptions.of`.
    A spec with nothing to check is an error, not a pass; so is one whose layout
    is left unknown (``?(R, C)``), which is `verify synth`'s question."""
    for unknown in spec.unknown_layouts.values():
        raise SpecError(
            f"layout '{unknown.name}' is unknown (?({unknown.rows}, {unknown.cols})): "
            f"there is nothing to check until it is chosen; run 'verify synth "
            f"{spec.file}' to find the best layout and its proof",
            unknown.pos,
            spec.file,
        )
    run = RunOptions.of(timeout if options is None else options, engine)
    results = Runner(spec, run).run()
    if not results:
        raise SpecError(
            "nothing to verify: expected at least one access or check", Pos(1, 1), spec.file
        )
    return results
