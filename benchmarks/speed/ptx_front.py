"""CPU seconds of each phase of checking a compiled Triton kernel's PTX, as the
compile hook (`verify.integrations.triton_hook`) checks it: the kernels of
benchmarks/campaigns/triton_kernels.py compiled for sm_80 on this machine's CPU.

    python -m benchmarks.speed.ptx_front                    # results/ptx_front.md
    python -m benchmarks.speed.ptx_front --record F.json    # every result, to compare
    python -m benchmarks.speed.ptx_front --compare F.json   # exit 1 if any differs

Each kernel is compiled once with the hook installed, which gives the PTX text and
the `verify.ptx.check.Options` the hook passes (block, assumptions, shared
alignment and size); then, ROUNDS times, the PTX is parsed and checked
(`check_module`) with each phase's own CPU time counted apart (a phase called
inside another is taken out of the outer one's time), and the median of the
rounds is kept per kernel and phase. The phases (`PHASES`): parsing the PTX, the
symbolic trace (values and loops), placing each access in its allocation,
generating the specs, reading them, deciding them (verify's engines), settling
refutations under guards, the Hopper checks, the --assume rechecks, and the rest
of `check_module`.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable

RESULTS = "benchmarks/results/ptx_front"
ROUNDS = 5
# (phase, module, class or "", attribute): each is wrapped by a timer.
PHASES = (
    ("trace", "verify.ptx.check", "Kernel", "trace"),
    ("place", "verify.ptx.memory", "", "access_of"),
    ("place", "verify.ptx.check", "", "_why_not"),
    ("specgen", "verify.ptx.specgen", "", "build"),
    ("spec read", "verify.ptx.specgen", "SharedSpec", "read"),
    ("decide", "verify.ptx.check", "", "run_spec"),
    ("decide", "verify.ptx.assume", "", "run_spec"),
    ("settle", "verify.ptx.guards", "", "settle"),
    ("hopper", "verify.ptx.hopper", "", "check"),
    ("assume", "verify.ptx.assume", "", "state_classes"),
    ("assume", "verify.ptx.assume", "", "state_proved_under"),
)
COLUMNS = (
    *("parse", "trace", "place", "specgen", "spec read"),
    *("decide", "settle", "hopper", "assume", "other"),
)
FRONT = ("parse", "trace", "place", "specgen")  # the PTX front end's own phases


class Clock:
    """CPU seconds per phase, each phase's own: entering a timed function stops
    the clock of the phase it was called from."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._stack: list[list] = []

    def timed(self, phase: str, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def run(*args, **kwargs):
            self._enter(phase)
            try:
                return fn(*args, **kwargs)
            finally:
                self._leave()

        return run

    def _enter(self, phase: str) -> None:
        now = time.process_time()
        if self._stack:
            outer = self._stack[-1]
            self.seconds[outer[0]] += now - outer[1]
        self._stack.append([phase, now])

    def _leave(self) -> None:
        now = time.process_time()
        phase, start = self._stack.pop()
        self.seconds[phase] += now - start
        if self._stack:
            self._stack[-1][1] = now


def install(clock: Clock) -> None:
    """Every function of PHASES replaced by its timed self, where it is looked up."""
    import importlib

    for phase, module_name, owner_name, attr in PHASES:
        owner = importlib.import_module(module_name)
        if owner_name:
            owner = getattr(owner, owner_name)
        setattr(owner, attr, clock.timed(phase, getattr(owner, attr)))


def captured() -> dict[str, tuple[str, str, object]]:
    """stem -> (PTX text, its name, the Options the hook checks it with), for every
    catalog kernel, compiled with the hook installed."""
    import triton
    from triton import knobs

    from benchmarks.campaigns.triton_kernels import CATALOG, source
    from benchmarks.speed.triton_hook import TARGET
    from verify.integrations.triton_hook import Session
    from verify.ttgir import from_ptx

    found: dict[str, dict] = defaultdict(dict)
    stem = [""]
    parse, check = from_ptx.parse_ptx, from_ptx.ptx_check.check_module

    def seen_parse(text, name="<ptx>"):
        found[stem[0]]["ptx"] = (text, name)
        return parse(text, name)

    def seen_check(module, options):
        found[stem[0]]["options"] = options
        return check(module, options)

    from_ptx.parse_ptx, from_ptx.ptx_check.check_module = seen_parse, seen_check
    session = Session(cache_dir="", report=None)
    session.install()
    try:
        with knobs.compilation.scope():
            knobs.compilation.always_compile = True
            for kernel in CATALOG:
                stem[0] = kernel.stem
                triton.compile(source(kernel), target=TARGET, options=kernel.options)
    finally:
        session.uninstall()
        from_ptx.parse_ptx, from_ptx.ptx_check.check_module = parse, check
    return {k: (*v["ptx"], v["options"]) for k, v in found.items()}


def one_kernel(clock: Clock, text: str, name: str, options) -> list:
    """Parse and check one kernel's PTX under `clock`; its results as records."""
    from verify.ptx.check import check_module
    from verify.ptx.parse import parse_ptx

    module = clock.timed("parse", parse_ptx)(text, name)
    results = clock.timed("other", check_module)(module, options)
    return [record(r) for r in results]


def record(result) -> list:
    """What a result says: its line, property, status, figures, reason, counterexample."""
    return [
        result.facts.get("ptx_line"),
        result.property,
        result.status.name,
        result.wavefronts,
        result.ideal_wavefronts,
        result.max_ways,
        result.reason,
        str(result.counterexample) if result.counterexample is not None else None,
    ]


def measure(kernels: dict, rounds: int) -> tuple[dict[str, dict[str, float]], dict[str, list]]:
    """(stem -> phase -> median CPU seconds, stem -> its results)."""
    clock = Clock()
    install(clock)
    per_round: dict[str, list[dict[str, float]]] = defaultdict(list)
    found: dict[str, list] = {}
    for text, name, options in kernels.values():
        one_kernel(clock, text, name, options)  # warm: lark's parser, generated evaluators
    for _ in range(rounds):
        for stem, (text, name, options) in kernels.items():
            clock.seconds.clear()
            found[stem] = one_kernel(clock, text, name, options)
            per_round[stem].append(dict(clock.seconds))
    medians = {
        stem: {c: statistics.median(r.get(c, 0.0) for r in rows) for c in COLUMNS}
        for stem, rows in per_round.items()
    }
    return medians, found


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def table(medians: dict[str, dict[str, float]]) -> list[str]:
    lines = [
        "| kernel | " + " | ".join(COLUMNS) + " | front end | all |",
        "|---|" + "---|" * (len(COLUMNS) + 2),
    ]
    totals: dict[str, float] = defaultdict(float)
    for stem, phases in medians.items():
        for c in COLUMNS:
            totals[c] += phases[c]
        lines.append(_row(stem, phases))
    lines.append(_row("**all kernels**", totals))
    return lines


def _row(label: str, phases: dict[str, float]) -> str:
    front, everything = sum(phases[c] for c in FRONT), sum(phases[c] for c in COLUMNS)
    cells = [f"{phases[c]:.4f}" for c in COLUMNS] + [f"{front:.4f}", f"{everything:.4f}"]
    return f"| {label} | " + " | ".join(cells) + " |"


def totals(medians: dict[str, dict[str, float]]) -> dict[str, float]:
    return {c: sum(phases[c] for phases in medians.values()) for c in COLUMNS}


def comparison(before: dict, after: dict) -> list[str]:
    """Each phase over all kernels, a saved run (`--save`) against this one."""
    was, now = totals(before["medians"]), totals(after["medians"])
    lines = ["| phase | before (s) | after (s) | after / before |", "|---|---|---|---|"]
    rows = [(c, was[c], now[c]) for c in COLUMNS]
    front = [sum(t[c] for c in FRONT) for t in (was, now)]
    rows.append(("**front end**", front[0], front[1]))
    rows.append(("**all**", sum(was.values()), sum(now.values())))
    for label, a, b in rows:
        ratio = f"{b / a:.2f}" if a else "-"
        lines.append(f"| {label} | {a:.4f} | {b:.4f} | {ratio} |")
    return lines


def write(run: dict, before: dict | None) -> None:
    from benchmarks.speed.catalog import machine

    lines = [
        "# The PTX front end's CPU per phase (the compile hook's kernels)",
        "",
        f"Machine: {machine()}, shared with other work. `python -m benchmarks.speed.ptx_front "
        f"--rounds {run['rounds']}`: the kernels of benchmarks/campaigns/triton_kernels.py, "
        "compiled for sm_80 with the hook installed (which gives each kernel's PTX and the "
        "options the hook checks it with), then parsed and checked each round; each phase's "
        "own CPU seconds (a phase called inside another is taken out of the outer's), median "
        "of the rounds per kernel. The front end is parse, trace, place and specgen.",
        "",
    ]
    if before is not None:
        lines += [
            "## Before and after",
            "",
            f"Before: {before['label']} (load: {before['load']}). "
            f"After: {run['label']} (load: {run['load']}). Both runs back to back on the "
            "same tree, every result the same (`--record`, `--compare`).",
            "",
            *comparison(before, run),
            "",
        ]
    lines += [f"## Per kernel: {run['label']}", "", *table(run["medians"]), ""]
    if before is not None:
        lines += [f"## Per kernel: {before['label']}", "", *table(before["medians"]), ""]
    with open(f"{RESULTS}.md", "w") as f:
        f.write("\n".join(lines))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--record", help="write every kernel's results here (JSON)")
    parser.add_argument("--compare", help="compare with results written by --record")
    parser.add_argument("--label", default="this tree", help="how the results name this run")
    parser.add_argument("--save", help="write this run's medians and load here (JSON)")
    parser.add_argument("--before", help="a run --save wrote, shown against this one")
    parser.add_argument("--write", action="store_true", help=f"write {RESULTS}.md")
    args = parser.parse_args()
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    kernels = captured()
    load_before = uptime()
    medians, found = measure(kernels, args.rounds)
    load = f"{_load(load_before)} at the start, {_load(uptime())} at the end"
    run = {"label": args.label, "rounds": args.rounds, "load": load, "medians": medians}
    print("\n".join(table(medians)))
    print(f"load average: {load}")
    if args.save:
        with open(args.save, "w") as f:
            json.dump(run, f, indent=1)
    before = None
    if args.before:
        with open(args.before) as f:
            before = json.load(f)
        print("\n".join(comparison(before, run)))
    if args.write:
        write(run, before)
    if args.record:
        with open(args.record, "w") as f:
            json.dump(found, f, indent=0)
    if args.compare:
        with open(args.compare) as f:
            recorded = json.load(f)
        differ = [k for k in recorded if recorded[k] != json.loads(json.dumps(found.get(k)))]
        for k in differ:
            print(f"DIFFERS: {k}")
        print(f"{len(differ)} of {len(recorded)} kernels differ")
        return 1 if differ else 0
    return 0


def _load(uptime_line: str) -> str:
    """The 1-minute load average of an `uptime` line."""
    return uptime_line.rsplit("load average:", 1)[-1].split(",")[0].strip()


if __name__ == "__main__":
    sys.exit(main())
