"""What checking every compiled kernel costs (`verify run`, `pytest
--verify-triton`): verify's time per newly compiled kernel against Triton's own
compile time of it, on the kernels of benchmarks/campaigns/triton_kernels.py (Triton's
tutorial matmul, softmax, fused attention and transpose, and Gluon kernels),
compiled for sm_80 on this machine's CPU.

    python -m benchmarks.speed.triton_hook      # results/triton_hook.{csv,md}

Per kernel and round (median of ROUNDS): Triton's wall time of ``triton.compile``
with no listener, then with `verify.integrations.triton_hook` installed (both
with ``always_compile``, so Triton's cache never answers), verify's own seconds
inside the listener, and verify's seconds when its cache answers (a new session
over the same cache). The first kernel of a process also pays for starting the
TTGIR reading child (once per run): measured apart, on a kernel outside the
table. A last pass (not timed against Triton) splits verify's seconds per kernel
into its phases (`PHASES`: reading the TTGIR, TTGIR's checks, parsing the PTX,
the PTX's checks; and across both, parsing the generated specs and deciding
them), finds the slowest single spec decided (one buffer's or one PTX
allocation's checks), and the slowest single op: the CPU seconds of all the checks
of one access (one PTX instruction, or one TTGIR op the PTX leaves undecided),
the figure issue 23's 100 ms bound is about.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import importlib
import json
import os
import resource
import runpy
import statistics
import sys
import tempfile
import time

import triton
from triton import knobs
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon._runtime import GluonASTSource

from benchmarks.campaigns.triton_kernels import CATALOG, source
from benchmarks.speed.catalog import machine
from benchmarks.speed.ptx_front import record
from verify.engines import enumeration
from verify.engines.runner import ACCESS_CHECKS, Runner
from verify.integrations.triton_hook import Session

RESULTS = "benchmarks/results/triton_hook"
TARGET = GPUTarget("cuda", 80, 32)
ROUNDS = 5
TUTORIALS = {"matmul", "softmax", "attention", "transpose"}


def compile_seconds(src, options) -> float:
    return compile_times(src, options)[0]


def compile_times(src, options) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one ``triton.compile``; its CPU time counts
    this process and the children it waited for (ptxas). Verify's bank searches kept
    from earlier kernels (and rounds) are forgotten first: each kernel is checked as
    if it were the program's first."""
    enumeration.forget_bank_searches()
    started, cpu = time.perf_counter(), cpu_seconds()
    triton.compile(src, target=TARGET, options=options)
    return time.perf_counter() - started, cpu_seconds() - cpu


def cpu_seconds() -> float:
    own, children = (
        resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def one_round(cache_dir: str) -> dict[str, dict]:
    """Each kernel's figures in one round: no hook, hook (fresh), hook (cached)."""
    rows: dict[str, dict] = {}
    sources = [(k.stem, source(k), k.options) for k in CATALOG]
    for stem, src, options in sources:
        wall, cpu = compile_times(src, options)
        rows[stem] = {"alone": wall, "alone_cpu": cpu}
    for answered in ("fresh", "cached"):
        session = Session(cache_dir=cache_dir, report=None)
        session.install()
        warm_up(session)
        try:
            for stem, src, options in sources:
                wall = compile_seconds(src, options)
                kernel = session.kernels[-1]
                assert kernel.cached == (answered == "cached"), f"{stem}: cache state"
                rows[stem].update(
                    {
                        f"hooked_{answered}": wall,
                        f"verify_{answered}": kernel.seconds,
                        # verify's CPU: this process's and the reading child's
                        f"verify_cpu_{answered}": kernel.cpu_seconds + kernel.reader_cpu_seconds,
                        f"reader_cpu_{answered}": kernel.reader_cpu_seconds,
                        "checks": len(kernel.results),
                        "refuted": len(kernel.refuted),
                        "not_modelled": sum(
                            r.property.startswith("not modelled") for r in kernel.results
                        ),
                    }
                )
        finally:
            session.uninstall()
    return rows


def warm_up(session: Session) -> float:
    """Verify's seconds on a kernel outside the table: the child's start."""
    column_reads = runpy.run_path("tests/data/kernels/gluon_phase.py")["column_reads"]
    src = GluonASTSource(column_reads, WARM_SIGNATURE, {"ROWS": 32, "MAX_PHASE": 1}, {})
    triton.compile(src, target=TARGET, options={"num_warps": 4})
    return session.kernels[-1].seconds


WARM_SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "ROWS": "constexpr", "MAX_PHASE": "constexpr"}


def first_kernel_seconds(cache_dir: str) -> tuple[float, float]:
    """(verify's seconds on the first kernel of a session, on the second): the
    first includes starting the reading child."""
    session = Session(cache_dir="", report=None)
    session.install()
    try:
        first = warm_up(session)
        src = CATALOG[0]
        triton.compile(source(src), target=TARGET, options=src.options)
        return first, session.kernels[-1].seconds
    finally:
        session.uninstall()


# (phase, module, owner attribute or "", function): wrapped with a timer for the
# breakdown pass. The first four are verify's steps per kernel, in order; the
# last two sum the spec parsing and deciding inside TTGIR's and the PTX's checks.
PHASES = (
    ("read TTGIR", "verify.integrations.extract_worker", "ExtractWorker", "read"),
    ("TTGIR checks", "verify.ttgir.module", "KernelChecker", "run"),
    ("parse PTX", "verify.ttgir.from_ptx", "", "parse_ptx"),
    ("PTX checks", "verify.ptx.check", "", "check_module"),
    ("spec parse", "verify.ttgir.specgen", "BufferSpec", "read"),
    ("spec parse", "verify.ptx.specgen", "SharedSpec", "read"),
    ("decide", "verify.ttgir.module", "", "run_spec"),
    ("decide", "verify.ptx.check", "", "run_spec"),
)
PHASE_NAMES = tuple(dict.fromkeys(name for name, *_ in PHASES))


@contextlib.contextmanager
def timed_phases(seconds: dict[str, float], slowest: list, ops: dict):
    """Each function of PHASES timed into `seconds`; `slowest` keeps the longest
    single decide as [seconds, checks]; `ops` each access's checks (`timed_ops`)."""
    saved = []
    for phase, module_name, owner_name, attr in PHASES:
        owner = importlib.import_module(module_name)
        owner = getattr(owner, owner_name) if owner_name else owner
        original = getattr(owner, attr)
        saved.append((owner, attr, original))
        setattr(owner, attr, _timer(phase, original, seconds, slowest))
    for attr, timer in (("_implicit", _implicit_timer), ("_explicit", _explicit_timer)):
        original = getattr(Runner, attr)
        saved.append((Runner, attr, original))
        setattr(Runner, attr, timer(original, ops))
    try:
        yield
    finally:
        for owner, attr, original in reversed(saved):
            setattr(owner, attr, original)


# One op's checks are those of one access of one generated spec: its implicit
# in_bounds and aligned (and a copy's source checks), and every explicit check
# naming it. `ops` maps (spec file, access) to [CPU seconds, its results]; the
# results are the objects the kernel reports, relabelled afterwards with the op.


def _implicit_timer(original, ops: dict):
    def timed(self, adef):
        started = time.process_time()
        out = original(self, adef)
        _charge(ops, (self.spec.file, adef.name), time.process_time() - started, out)
        return out

    return timed


def _explicit_timer(original, ops: dict):
    def timed(self, check):
        started = time.process_time()
        out = original(self, check)
        if check.kind in ACCESS_CHECKS:
            _charge(ops, (self.spec.file, check.target), time.process_time() - started, [out])
        return out

    return timed


def _charge(ops: dict, key: tuple[str, str], spent: float, results: list):
    entry = ops.setdefault(key, [0.0, []])
    entry[0] += spent
    entry[1] += results


def slowest_op(ops: dict) -> tuple[float, int, str]:
    """(CPU seconds, checks, the op as reported) of the access whose checks cost most."""
    if not ops:
        return 0.0, 0, ""
    spent, results = max(ops.values(), key=lambda entry: entry[0])
    shown = results[0].property if results else ""
    return spent, len(results), f"{shown} ({results[0].file}:{results[0].line})"


def _timer(phase, original, seconds, slowest):
    def timed(*args, **kwargs):
        started = time.perf_counter()
        try:
            out = original(*args, **kwargs)
        finally:
            spent = time.perf_counter() - started
            seconds[phase] = seconds.get(phase, 0.0) + spent
        if phase == "decide" and spent > slowest[0]:
            slowest[:] = [spent, len(out)]
        return out

    return timed


def breakdown() -> dict[str, dict]:
    """Each kernel's verify seconds by phase, and its slowest single decide."""
    rows: dict[str, dict] = {}
    session = Session(cache_dir="", report=None)
    session.install()
    warm_up(session)
    try:
        for kernel in CATALOG:
            seconds: dict[str, float] = {}
            slowest = [0.0, 0]
            ops: dict = {}
            with timed_phases(seconds, slowest, ops):
                compile_seconds(source(kernel), kernel.options)
            op_seconds, op_checks, op = slowest_op(ops)
            rows[kernel.stem] = {
                **{name: seconds.get(name, 0.0) for name in PHASE_NAMES},
                "slowest_decide": slowest[0],
                "slowest_checks": slowest[1],
                "slowest_op": op_seconds,
                "op_checks": op_checks,
                "op": op,
            }
    finally:
        session.uninstall()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--parser",
        action="store_true",
        help="also read the PTX's generated specs with the spec parser, as before "
        "verify.spec.direct: rounds of both ways take turns in one process (OUT_parser.md)",
    )
    parser.add_argument("--out", default=RESULTS, help="where the .csv and .md go (no suffix)")
    parser.add_argument("--record", help="check each kernel once and write its results here (JSON)")
    parser.add_argument("--compare", help="check each kernel once and compare with --record's file")
    args = parser.parse_args()
    if args.record or args.compare:
        return record_or_compare(args.record, args.compare)
    from benchmarks.speed.kernel_check import read_with_parser
    from verify.ptx import specgen

    readers = {"direct": specgen.SharedSpec.read, "parser": read_with_parser}
    modes = ["direct", "parser"] if args.parser else ["direct"]
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    knobs.compilation.always_compile = True
    load_at_start = os.getloadavg()[0]
    rounds: dict[str, list] = {mode: [] for mode in modes}
    phases = {}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TRITON_CACHE_DIR"] = os.path.join(tmp, "triton")
        first, second = first_kernel_seconds(tmp)
        for i in range(ROUNDS):
            for mode in modes if i % 2 == 0 else modes[::-1]:
                specgen.SharedSpec.read = readers[mode]  # type: ignore[method-assign]
                rounds[mode].append(one_round(os.path.join(tmp, f"verify-{mode}{i}")))
        for mode in modes:
            specgen.SharedSpec.read = readers[mode]  # type: ignore[method-assign]
            phases[mode] = breakdown()
    specgen.SharedSpec.read = readers["direct"]  # type: ignore[method-assign]
    for mode in modes:
        rows = [
            {
                "kernel": stem,
                **{k: statistics.median(r[stem][k] for r in rounds[mode]) for k in FIGURES},
                **counts(rounds[mode], stem),
            }
            for stem in rounds[mode][0]
        ]
        out = args.out if mode == "direct" else f"{args.out}_parser"
        note = ""
        if args.parser:
            note = (
                " The PTX's generated specs read by the spec parser (lark), as before "
                "verify.spec.direct; rounds took turns with those reading them directly, "
                f"in one process: `--parser`, {args.out}.md and {out}.md."
                if mode == "parser"
                else " Rounds took turns, in one process, with rounds reading the PTX's "
                f"generated specs by the spec parser (`--parser`: {args.out}_parser.md)."
            )
        write(rows, first, second, phases[mode], load_at_start, out, note)
    return 0


def kernel_results() -> dict[str, list]:
    """Each catalog kernel's results as `ptx_front.record` writes them, one pass."""
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    knobs.compilation.always_compile = True
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TRITON_CACHE_DIR"] = os.path.join(tmp, "triton")
        session = Session(cache_dir="", report=None)
        session.install()
        try:
            for kernel in CATALOG:
                compile_seconds(source(kernel), kernel.options)
                out[kernel.stem] = [record(r) for r in session.kernels[-1].results]
        finally:
            session.uninstall()
    return out


def record_or_compare(record_to: str | None, compare_with: str | None) -> int:
    """`--record F` writes every kernel's results; `--compare F` says which differ
    (exit 1 if any): a speed change is shown to change no verdict, figure or reason."""
    results = json.loads(json.dumps(kernel_results()))
    if record_to:
        with open(record_to, "w") as f:
            json.dump(results, f, indent=0)
    if not compare_with:
        return 0
    with open(compare_with) as f:
        before = json.load(f)
    differ = [
        stem for stem in sorted(set(before) | set(results)) if before.get(stem) != results.get(stem)
    ]
    for stem in differ:
        print(f"{stem}: results differ")
    print(f"{len(differ)} of {len(results)} kernels differ")
    return 1 if differ else 0


FIGURES = (
    "alone",
    "alone_cpu",
    "hooked_fresh",
    "verify_fresh",
    "verify_cpu_fresh",
    "reader_cpu_fresh",
    "hooked_cached",
    "verify_cached",
)


# The breakdown pass's slowest op of each kernel, in the CSV beside its times.
OP_FIGURES = ("slowest_op", "op_checks", "op")


def counts(rounds, stem) -> dict:
    last = rounds[-1][stem]
    return {k: last[k] for k in ("checks", "refuted", "not_modelled")}


def write(
    rows: list[dict],
    first: float,
    second: float,
    phases: dict[str, dict],
    load_at_start: float,
    out: str = RESULTS,
    note: str = "",
):
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(f"{out}.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=[*rows[0], *OP_FIGURES])
        writer.writeheader()
        for row in rows:
            row = {**row, **{k: phases[row["kernel"]][k] for k in OP_FIGURES}}
            writer.writerow({k: f"{v:.4f}" if isinstance(v, float) else v for k, v in row.items()})
    total_alone = sum(r["alone"] for r in rows)
    total_verify = sum(r["verify_fresh"] for r in rows)
    total_hooked = sum(r["hooked_fresh"] for r in rows)
    total_alone_cpu = sum(r["alone_cpu"] for r in rows)
    total_verify_cpu = sum(r["verify_cpu_fresh"] for r in rows)
    lines = [
        "# Cost of checking every compiled kernel (verify run, pytest --verify-triton)",
        "",
        f"Machine: {machine()}, shared with other work: load average "
        f"{load_at_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; "
        f"Triton {triton.__version__}, target sm_80, compiled on the CPU. "
        f"Median of {ROUNDS} rounds; `python -m benchmarks.speed.triton_hook`.{note}",
        "",
        "`alone`: wall seconds of `triton.compile` with no listener; `hooked`: with "
        "verify's listener installed; `verify`: verify's seconds inside the listener "
        "(reading the TTGIR in the long-lived child, checking every shared-memory "
        "instruction of the kernel's PTX and TTGIR's buffers and the ops the PTX "
        "leaves undecided), `fresh` "
        "when verify checks the kernel, `cached` when verify's cache answers. "
        "Triton's cache never answers here (`always_compile`); on a Triton cache hit of "
        "a kernel already seen in the session verify does nothing. `CPU`: the same in "
        "CPU seconds (Triton's with ptxas; verify's in the program's process and in the "
        "child reading the TTGIR, whose share is `reader CPU`), which the machine's load "
        "disturbs less than wall time.",
        "",
        "| kernel | tutorial | checks | refuted | not modelled | triton alone (s) | "
        "hooked (s) | verify (s) | overhead | triton CPU (s) | verify CPU (s) | "
        "reader CPU (s) | overhead in CPU | verify cached (s) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['kernel']} | {'yes' if r['kernel'] in TUTORIALS else 'gluon'} | "
            f"{r['checks']} | {r['refuted']} | {r['not_modelled']} | {r['alone']:.3f} | "
            f"{r['hooked_fresh']:.3f} | {r['verify_fresh']:.3f} | "
            f"{100 * r['verify_fresh'] / r['alone']:.1f}% | {r['alone_cpu']:.3f} | "
            f"{r['verify_cpu_fresh']:.3f} | {r['reader_cpu_fresh']:.3f} | "
            f"{100 * r['verify_cpu_fresh'] / r['alone_cpu']:.1f}% | {r['verify_cached']:.4f} |"
        )
    lines += [
        "",
        f"All kernels: verify {total_verify:.3f} s over Triton's {total_alone:.3f} s: "
        f"{100 * total_verify / total_alone:.1f}% (target: at most 25%). The worst kernel: "
        f"{max(100 * r['verify_fresh'] / r['alone'] for r in rows):.1f}%. In CPU seconds: "
        f"verify {total_verify_cpu:.3f} s over Triton's {total_alone_cpu:.3f} s: "
        f"{100 * total_verify_cpu / total_alone_cpu:.1f}%. Wall time of "
        f"the compiles with the listener against without: {total_hooked:.3f} s against "
        f"{total_alone:.3f} s (+{100 * (total_hooked / total_alone - 1):.1f}%; it includes "
        "the noise of a shared 2-core machine, and Python's work after each check).",
        "",
        tutorials_line(rows),
        "",
        f"Once per process: verify's first kernel took {first:.3f} s (the reading child "
        f"starts: it imports verify and Triton), the next {second:.3f} s.",
    ]
    lines += phase_table(phases)
    with open(f"{out}.md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def tutorials_line(rows: list[dict]) -> str:
    """The CPU figures of Triton's four tutorial kernels alone, summed and each."""
    tutorials = [r for r in rows if r["kernel"] in TUTORIALS]
    verify = sum(r["verify_cpu_fresh"] for r in tutorials)
    alone = sum(r["alone_cpu"] for r in tutorials)
    each = ", ".join(
        f"{r['kernel']} {100 * r['verify_cpu_fresh'] / r['alone_cpu']:.1f}%" for r in tutorials
    )
    return (
        f"Triton's tutorials alone, in CPU seconds: verify {verify:.3f} s over Triton's "
        f"{alone:.3f} s: {100 * verify / alone:.1f}% ({each})."
    )


def phase_table(phases: dict[str, dict]) -> list[str]:
    total = {name: sum(p[name] for p in phases.values()) for name in PHASE_NAMES}
    steps = sum(total[name] for name in PHASE_NAMES[:4])
    worst = max(phases.items(), key=lambda item: item[1]["slowest_decide"])
    worst_op = max(phases.items(), key=lambda item: item[1]["slowest_op"])
    return [
        "",
        "## Where verify's time goes",
        "",
        "One more pass, each phase timed (wall seconds; `spec parse` and `decide` are "
        "inside `TTGIR checks` and `PTX checks`, summed over both). `slowest decide`: "
        "the longest single spec decided in the kernel (one buffer's or one PTX "
        "allocation's checks, all its ops), and its checks. `slowest op`: the CPU "
        "seconds of the checks of one op (one access of a generated spec: a PTX "
        "instruction, or a TTGIR op the PTX leaves undecided; its implicit in_bounds "
        "and aligned, a copy's source checks, and each check naming it, with the searches "
        "they share), and its checks; the op is in the CSV.",
        "",
        "| kernel | "
        + " | ".join(PHASE_NAMES)
        + " | slowest decide (s) | its checks | slowest op (s) | its checks |",
        "|---|" + "---|" * (len(PHASE_NAMES) + 4),
        *(
            f"| {stem} | "
            + " | ".join(f"{p[name]:.3f}" for name in PHASE_NAMES)
            + f" | {p['slowest_decide']:.3f} | {p['slowest_checks']} | "
            f"{p['slowest_op']:.4f} | {p['op_checks']} |"
            for stem, p in phases.items()
        ),
        "",
        "All kernels: "
        + ", ".join(
            f"{name} {total[name]:.3f} s ({100 * total[name] / steps:.0f}%)" for name in PHASE_NAMES
        )
        + f" of the four steps' {steps:.3f} s. The slowest single decide: "
        f"{worst[1]['slowest_decide']:.3f} s ({worst[1]['slowest_checks']} checks, {worst[0]}). "
        f"The slowest single op: {1000 * worst_op[1]['slowest_op']:.1f} ms of CPU "
        f"({worst_op[1]['op_checks']} checks, {worst_op[0]}: {worst_op[1]['op']}; target: "
        "at most 100 ms).",
    ]


if __name__ == "__main__":
    sys.exit(main())
