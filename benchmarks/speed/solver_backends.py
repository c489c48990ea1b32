"""z3 against bitwuzla on verify's own queries: does a second backend pay?

    python -m benchmarks.speed.solver_backends   # benchmarks/results/solver_backends.{csv,md}

For every layout of the bundled specs, the bijectivity (overlap) query; for every
access, the per-phase "max-ways >= 2" query of its first phase -- the two queries
that dominate verify's time. For each,
the same z3 terms are translated node by node into bitwuzla terms; both solve the
same formula (solve time only, no construction), and the answers must agree.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import z3

from verify.api import spec_paths
from verify.engines.solver import BankQuery, overlap_query
from verify.model.program import Program
from verify.spec.parser import parse_file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "benchmarks", "results")


def conflict_query(access) -> z3.Solver:
    query = BankQuery(access)
    solver = query._solver()
    solver.add(query._at_least(query.counts[0], 2))
    return solver


def solve_z3(solver: z3.Solver) -> tuple[str, float]:
    started = time.monotonic()
    answer = str(solver.check())
    return answer, time.monotonic() - started


class ToBitwuzla:
    """The same formula as bitwuzla terms (bitwuzla 0.9's SMT-LIB2 parser rejected
    z3's printed form, so the z3 terms are translated node by node)."""

    def __init__(self):
        import bitwuzla

        self.bw, self.tm, self.memo = bitwuzla, bitwuzla.TermManager(), {}
        k = bitwuzla.Kind
        self.kinds = {
            z3.Z3_OP_BADD: k.BV_ADD,
            z3.Z3_OP_BSUB: k.BV_SUB,
            z3.Z3_OP_BMUL: k.BV_MUL,
            z3.Z3_OP_BUDIV: k.BV_UDIV,
            z3.Z3_OP_BUREM: k.BV_UREM,
            z3.Z3_OP_BUDIV_I: k.BV_UDIV,
            z3.Z3_OP_BUREM_I: k.BV_UREM,
            z3.Z3_OP_BAND: k.BV_AND,
            z3.Z3_OP_BOR: k.BV_OR,
            z3.Z3_OP_BXOR: k.BV_XOR,
            z3.Z3_OP_BSHL: k.BV_SHL,
            z3.Z3_OP_BLSHR: k.BV_SHR,
            z3.Z3_OP_ULT: k.BV_ULT,
            z3.Z3_OP_ULEQ: k.BV_ULE,
            z3.Z3_OP_UGT: k.BV_UGT,
            z3.Z3_OP_UGEQ: k.BV_UGE,
            z3.Z3_OP_EQ: k.EQUAL,
            z3.Z3_OP_DISTINCT: k.DISTINCT,
            z3.Z3_OP_AND: k.AND,
            z3.Z3_OP_OR: k.OR,
            z3.Z3_OP_NOT: k.NOT,
            z3.Z3_OP_ITE: k.ITE,
            z3.Z3_OP_CONCAT: k.BV_CONCAT,
        }

    def term(self, e):
        key = e.get_id()
        if key not in self.memo:
            self.memo[key] = self._term(e)
        return self.memo[key]

    def _term(self, e):
        tm, op = self.tm, e.decl().kind()
        if z3.is_bv_value(e):
            return tm.mk_bv_value(tm.mk_bv_sort(e.size()), e.as_long())
        if z3.is_true(e) or z3.is_false(e):
            return tm.mk_true() if z3.is_true(e) else tm.mk_false()
        if op == z3.Z3_OP_UNINTERPRETED:
            return tm.mk_const(tm.mk_bv_sort(e.size()), e.decl().name())
        args = [self.term(a) for a in e.children()]
        if op == z3.Z3_OP_EXTRACT:
            hi, lo = e.params()
            return tm.mk_term(self.bw.Kind.BV_EXTRACT, args, [hi, lo])
        if len(args) == 1 and op in (
            z3.Z3_OP_AND,
            z3.Z3_OP_OR,
            z3.Z3_OP_BADD,
            z3.Z3_OP_BMUL,
            z3.Z3_OP_BXOR,
            z3.Z3_OP_BOR,
            z3.Z3_OP_BAND,
        ):
            return args[0]
        return tm.mk_term(self.kinds[op], args)

    def solve(self, solver: z3.Solver) -> tuple[str, float]:
        options = self.bw.Options()
        engine = self.bw.Bitwuzla(self.tm, options)
        for a in solver.assertions():
            engine.assert_formula(self.term(a))
        started = time.monotonic()
        answer = str(engine.check_sat()).lower()
        return answer, time.monotonic() - started


def queries():
    for path in spec_paths([os.path.join(ROOT, "specs")]):
        program = Program(parse_file(path))
        name = os.path.relpath(path, ROOT)
        for ldef in program.spec.layouts.values():
            yield name, f"bijective {ldef.name}", overlap_query(program, ldef).solver
        for access_name in program.spec.accesses:
            access = program.access(access_name, None)
            yield name, f"max_ways>=2 {access_name}", conflict_query(access)


def main() -> int:
    from benchmarks.speed.catalog import machine, write_csv

    rows = []
    for spec, query, solver in queries():
        z_answer, z_time = solve_z3(solver)
        b_answer, b_time = ToBitwuzla().solve(solver)
        rows.append(
            {
                "spec": spec,
                "query": query,
                "z3": z_answer,
                "bitwuzla": b_answer.lower(),
                "z3_ms": round(1000 * z_time, 2),
                "bitwuzla_ms": round(1000 * b_time, 2),
            }
        )
    write_csv(os.path.join(RESULTS, "solver_backends.csv"), rows)
    disagree = [r for r in rows if r["z3"] != r["bitwuzla"]]
    z, b = [r["z3_ms"] for r in rows], [r["bitwuzla_ms"] for r in rows]
    text = "\n".join(
        [
            f"# z3 vs bitwuzla on verify's queries ({len(rows)} queries)",
            "",
            f"Machine: {machine()}, bitwuzla {__import__('bitwuzla').version()}",
            "",
            "| solver | median ms | worst ms | total ms |",
            "|---|---|---|---|",
            f"| z3 | {statistics.median(z):.1f} | {max(z):.1f} | {sum(z):.0f} |",
            f"| bitwuzla | {statistics.median(b):.1f} | {max(b):.1f} | {sum(b):.0f} |",
            "",
            f"Answers that differ: {len(disagree)}. bitwuzla faster on "
            f"{sum(r['bitwuzla_ms'] < r['z3_ms'] for r in rows)} queries.",
            "",
        ]
    )
    with open(os.path.join(RESULTS, "solver_backends.md"), "w") as f:
        f.write(text)
    print(text)
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
