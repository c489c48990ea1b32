"""Differential campaign: every verdict and figure of the solver against brute force.

    python benchmarks/differential.py --cases 100000 --jobs 16   # writes results/differential.*
    python benchmarks/differential.py --cases 200 --seed 7        # a quick look
    python benchmarks/differential.py --start 50000 --cases 50000 --budget 500 --out part2
    python benchmarks/differential.py --numbers part2/differential_stopped.txt --out part3
    python benchmarks/differential.py --merge part1 part2 part3   # one summary of all

Rows are written as cases finish, so a run stopped by --budget, SIGINT or SIGTERM
keeps its results; the cases it stopped mid-run are listed in
differential_stopped.txt (slow ones are thereby not silently dropped: rerun them
with --numbers). The committed campaign is the merge of the runs kept in
results/differential_runs/, each naming its machine and commit.

Each case is one random spec, written as text and checked twice: symbolically by
`verify.runner` and by `verify.enumerate`, which walks every coordinate, lane,
loop value, stage and aligned base. Compared, per case: in_bounds, natural and
explicit alignment, bijectivity and cosize, max-ways and wavefronts (both the
figures and the verdicts of ``<=`` and ``==`` bounds), and layout equivalence.

The space: CuTe shapes with nested modes and padded or zero strides, element
swizzles and pointer (byte-address) swizzles with positive and negative shifts,
formulas with XOR/AND/shifts/division, every instruction class, loops, stages
and base alignments from 1 to 1024 bytes. A case is seeded by its number, so any
row of the CSV can be replayed with ``--replay N``.

Any disagreement is written out in full (spec text and both answers) to
results/differential_disagreements.txt; zero is the bar.
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import multiprocessing
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter

from catalog import machine
from verify.enumerate import access_facts, aligned_to, layout_facts
from verify.errors import SpecError
from verify.layout import offsets
from verify.program import Program
from verify.runner import run_spec
from verify.solve import Status
from verify.spec.parser import parse_text

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
INSTRUCTIONS = [
    "ld.shared.b8", "ld.shared.b16", "ld.shared.b32", "ld.shared.b64", "ld.shared.v2.b32",
    "ld.shared.v4.b32", "ld.shared.v2.b16", "st.shared.b8", "st.shared.b16", "st.shared.b32",
    "st.shared.v2.b32", "st.shared.v4.b32", "ldmatrix.x1", "ldmatrix.x2", "ldmatrix.x4",
    "ldmatrix.x1.trans", "ldmatrix.x4.trans", "stmatrix.x1", "stmatrix.x2.trans",
    "stmatrix.x4", "SM75_U32x4_LDSM_N", "SM90_U16x8_STSM_T"]
SUMMARY_EVERY = 30             # seconds between rewrites of the summary during a run
SPAN_GAP = 1000                # case-number gaps a summary's block of numbers bridges
STOPPED_FILE = "differential_stopped.txt"
MERGED_HEADING = "\n## The runs merged here\n\n"
CSV_FIELDS = ["case", "seconds", "disagreements", "comparisons", "unknown", "refuted", "rejected"]
DTYPE_BITS = {"b8": 8, "f16": 16, "f32": 32, "f64": 64}


# -- random specs -----------------------------------------------------------------

def _mode(rng: random.Random) -> tuple[str, str]:
    """One top-level mode: an extent and stride, or a nested pair of them."""
    # Mostly small strides; now and then one past 2^20 or 2^31, where a too-narrow
    # bit-vector would wrap.
    stride = lambda: rng.choice([0, 1, 2, 4, 8, 16, 32, 64, rng.randint(0, 80),
                                 rng.randint(0, 80), rng.randint(0, 80),
                                 rng.choice([(1 << 20) + 4, (1 << 31) + 64])])
    if rng.random() < 0.6:
        return str(rng.choice([1, 2, 3, 4, 8, 16])), str(stride())
    a, b = rng.choice([1, 2, 4]), rng.choice([2, 4, 8])
    return f"({a},{b})", f"({stride()},{stride()})"


def _swizzle(rng: random.Random, top_bit: int) -> str:
    b = rng.randint(0, 3)
    m = rng.randint(0, 4)
    s = rng.randint(max(b, 1), 4)
    while m + s + b > top_bit:
        m, s = max(0, m - 1), max(b, 1, s - 1)
        if m + max(b, 1) + b > top_bit:
            b = max(0, b - 1)
    return f"Sw<{b},{m},{s * rng.choice([1, -1])}>"


def _formula(rng: random.Random) -> tuple[str, list[int]]:
    rows, cols = rng.choice([2, 4, 8, 16]), rng.choice([4, 8, 16, 32, 64])
    pitch = cols + rng.choice([0, 0, 0, 1, 2, 4, 8])
    mix = rng.choice([f"(c ^ ((r & {rng.choice([1, 3, 7])}) << {rng.randint(0, 3)}))",
                      f"(c ^ (r % {rng.choice([2, 4, 8])}))",
                      f"((c / {rng.choice([2, 4])}) ^ (r >> {rng.randint(0, 2)}))",
                      "c"])
    return f"(r in 0..{rows}, c in 0..{cols}) = {pitch} * r + {mix}", [rows, cols]


def _layout(rng: random.Random, bits: int) -> tuple[str, bool]:
    """Layout text after 'layout L', and whether it swizzles byte addresses."""
    if rng.random() < 0.15:
        return _formula(rng)[0], False
    modes = [_mode(rng) for _ in range(rng.choice([1, 2, 2, 2, 3]))]
    cute = f"({','.join(m[0] for m in modes)}):({','.join(m[1] for m in modes)})"
    kind = rng.choice(["plain", "element", "element", "pointer"])
    if kind == "element":
        return f" = {_swizzle(rng, 9)} o {cute}", False
    if kind == "pointer":
        return f" = {_swizzle(rng, 10)} o smem_ptr[{bits}b](unset) o {cute}", True
    return f" = {cute}", False


def _coordinate(rng: random.Random, loops: list[str]) -> str:
    terms = [f"{rng.randint(0, 9)} * lane", f"lane / {rng.choice([1, 2, 4, 8])}"]
    terms += [f"{rng.randint(0, 9)} * {v}" for v in loops]
    rng.shuffle(terms)
    op = rng.choice([" + ", " + ", " ^ "])
    return "(" + op.join(terms[:rng.randint(1, len(terms))]) + ")"


def random_spec(rng: random.Random) -> str:
    dtype = rng.choice(list(DTYPE_BITS))
    layout, pointer = _layout(rng, DTYPE_BITS[dtype])
    align = rng.choice([1, 2, 4, 8, 16, 16, 32, 128, 128, 256, 1024])
    if pointer:
        align = max(align, 16)
    stages = rng.choice([1, 1, 1, 2, 3]) if align >= 16 else 1
    buffer = f"buffer align {align}"
    if stages > 1:
        buffer += f" stages {stages} stage_bytes {rng.randint(1, 96) * rng.choice([1, 4, 16])}"
    loops = ["q", "w"][:rng.choice([0, 1, 1, 2])]
    loop_text = ", ".join(f"{v} in 0..{rng.randint(1, 4)}" for v in loops)
    sizes = _mode_sizes(f"layout L{layout}")
    coords = [_coordinate(rng, loops) for _ in sizes]
    if rng.random() < 0.9:
        coords = [f"{c} % {n}" for c, n in zip(coords, sizes)]
    k, w = rng.randint(1, 8), rng.randint(1, 12)
    lines = [f"dtype {dtype}", buffer, f"layout L{layout}",
             f"access a = {rng.choice(INSTRUCTIONS)} L({', '.join(coords)})"
             + (f" for {loop_text}" if loops else ""),
             "check bijective L", "check conflict_free a", f"check max_ways <= {k} a",
             f"check max_ways == {k} a", f"check wavefronts <= {w} a",
             f"check wavefronts == {w} a", f"check aligned {rng.choice([2, 4, 8, 16])} a"]
    if not pointer and rng.random() < 0.3:
        lines += [f"layout M = {_swizzle(rng, 9)} o {_plain_of(layout)}", "check equivalent L, M"]
    return "\n".join(lines) + "\n"


def _mode_sizes(layout_line: str) -> list[int]:
    spec = parse_text(layout_line + "\n")
    return spec.layouts["L"].function.mode_sizes


def _plain_of(layout: str) -> str:
    """The shape:stride term of a layout text, or a same-size row-major one for formulas."""
    if not layout.startswith(" = "):
        rows, cols = _mode_sizes(f"layout L{layout}")
        return f"({rows},{cols}):({cols},1)"
    return layout.split(" o ")[-1].removeprefix(" = ")


# -- one case ---------------------------------------------------------------------

def _expected(holds: bool) -> str:
    return "proved" if holds else "refuted"


def compare(text: str) -> tuple[list[str], dict]:
    """(disagreements, counts) for one spec: each solver answer against enumeration."""
    spec = parse_text(text, "case.spec")
    program = Program(spec)
    access = program.access("a", None)
    results = {r.property: r for r in run_spec(spec, timeout=120)}
    truth = access_facts(program, access)
    layout = layout_facts(program, spec.layouts["L"])
    want = {"in_bounds a": _expected(truth.in_bounds),
            "bijective L": _expected(layout.bijective)}
    for prop in results:
        words = prop.split()
        if words[0] == "aligned":
            want[prop] = _expected(aligned_to(program, access, int(words[1])))
        elif words[0] in ("conflict_free", "max_ways", "wavefronts"):
            want[prop] = _bank_verdict(words, truth)
        elif words[0] == "equivalent":
            same = offsets(spec.layouts["L"].function) == offsets(spec.layouts["M"].function)
            want[prop] = _expected(same)
    bad = [f"{p}: solver {r.status.value}, enumeration {want[p]}"
           for p, r in results.items() if r.status.value != want[p]
           and r.status != Status.UNKNOWN]
    cf = results["conflict_free a"]
    if truth.aligned and (cf.max_ways, cf.wavefronts) != (truth.max_ways, truth.wavefronts):
        bad.append(f"figures: solver max_ways {cf.max_ways} wavefronts {cf.wavefronts}, "
                   f"enumeration {truth.max_ways} and {truth.wavefronts}")
    counts = {"comparisons": len(results) + (2 if truth.aligned else 0),
              "unknown": sum(r.status == Status.UNKNOWN for r in results.values()),
              "refuted": sum(r.status == Status.REFUTED for r in results.values())}
    return bad, counts


def _bank_verdict(words: list[str], truth) -> str:
    if not truth.aligned:
        return "refuted"            # bank figures undefined: the alignment counterexample
    if words[0] == "conflict_free":
        return _expected(truth.max_ways <= 1)
    value = truth.max_ways if words[0] == "max_ways" else truth.wavefronts
    bound = int(words[2])
    return _expected(value == bound if words[1] == "==" else value <= bound)


def run_case(number: int, seed: int) -> dict:
    text = random_spec(random.Random(f"{seed}:{number}"))
    started = time.monotonic()
    try:
        bad, counts = compare(text)
    except SpecError as e:            # a generated spec the language rejects: counted apart
        bad, counts = [], {"comparisons": 0, "unknown": 0, "refuted": 0, "rejected": str(e)}
    return {"case": number, "seconds": round(time.monotonic() - started, 4),
            "disagreements": len(bad), **counts, "detail": "; ".join(bad),
            "spec": text if bad else ""}


# -- the campaign -------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--start", type=int, default=0, help="number of the first case")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default=RESULTS)
    ap.add_argument("--budget", type=float,
                    help="seconds; then the cases still running are stopped and not counted")
    ap.add_argument("--numbers", type=argparse.FileType(),
                    help="run the case numbers listed in this file (one per line) instead")
    ap.add_argument("--replay", type=int, help="print case N's spec and its comparison")
    ap.add_argument("--merge", nargs="+", metavar="DIR", help="summarise earlier runs' CSVs")
    args = ap.parse_args(argv)
    if args.merge:
        return merge(args)
    if args.replay is not None:
        text = random_spec(random.Random(f"{args.seed}:{args.replay}"))
        print(text, compare(text), sep="\n")
        return 0
    numbers = (range(args.start, args.start + args.cases) if args.numbers is None
               else [int(line) for line in args.numbers if line.strip()])
    args.commit = _commit()         # now: the tree may move on while the run lasts
    rows = run_cases(numbers, args)
    return 1 if any(r["disagreements"] for r in rows) else 0


def _run_one(number_and_seed: tuple[int, int]) -> dict:
    return run_case(*number_and_seed)


def run_cases(numbers, args) -> list[dict]:
    """Rows of the cases finished, written out as they finish.

    Each row is appended to the CSV at once and the summary is rewritten every
    SUMMARY_EVERY seconds, so a run killed from outside leaves its results behind.
    With --budget the workers are terminated at the deadline, and likewise on an
    interrupt (SIGINT or SIGTERM to this process): cases still running then are not
    counted, and are listed.
    """
    started = time.monotonic()
    deadline = None if args.budget is None else started + args.budget
    rows, last_summary = [], started
    with CampaignFiles(args) as out, multiprocessing.Pool(args.jobs, _default_signals) as pool, \
            _signals_stop_the_run():
        pending = pool.imap_unordered(_run_one, ((n, args.seed) for n in numbers))
        while len(rows) < len(numbers):
            try:
                row = pending.next(timeout=_left(deadline))
            except (multiprocessing.TimeoutError, Interrupted):
                pool.terminate()
                break
            rows.append(row)
            out.append(row)
            if time.monotonic() - last_summary > SUMMARY_EVERY:
                out.summarise(rows, time.monotonic() - started, [])
                last_summary = time.monotonic()
        stopped = running_when_stopped(numbers, rows, args.jobs)
        out.write_stopped(stopped)
        out.summarise(rows, time.monotonic() - started, stopped, echo=True)
    return rows


class Interrupted(Exception):
    """SIGINT or SIGTERM during a run: stop as at the budget, keep what finished."""


def _interrupted(signum, frame):
    raise Interrupted


def _default_signals():
    """In each worker: pool.terminate()'s SIGTERM must end it, whatever the parent set."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # a terminal's ^C is the parent's to handle


@contextlib.contextmanager
def _signals_stop_the_run():
    """SIGINT and SIGTERM raise Interrupted in this process while the run lasts;
    the previous handlers are restored afterwards."""
    previous = {sig: signal.signal(sig, _interrupted) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def running_when_stopped(numbers, rows: list[dict], jobs: int) -> list[int]:
    """Cases the budget stopped mid-run: the pool hands out cases in order, one per
    free worker, so at the deadline each busy worker holds one of the first `jobs`
    cases not finished. (Cases never started are not part of the run.)"""
    finished = {r["case"] for r in rows}
    return [n for n in numbers if n not in finished][:jobs]


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.monotonic())


class CampaignFiles:
    """The result files of a run or a merge: CSV rows, disagreements, the cases
    stopped mid-run, and the summary."""

    def __init__(self, args):
        os.makedirs(args.out, exist_ok=True)
        self.args = args
        self.csv = open(os.path.join(args.out, "differential.csv"), "w", newline="")
        self.writer = csv.DictWriter(self.csv, CSV_FIELDS, extrasaction="ignore")
        self.writer.writeheader()
        self.found = open(os.path.join(args.out, "differential_disagreements.txt"), "w")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.csv.close()
        self.found.close()

    def append(self, row: dict):
        self.writer.writerow(row)
        self.csv.flush()
        if row["disagreements"]:
            self.found.write(f"# case {row['case']} (seed {self.args.seed}): {row['detail']}\n"
                             f"{row['spec']}\n")
            self.found.flush()

    def write_stopped(self, stopped: list[int]):
        with open(os.path.join(self.args.out, STOPPED_FILE), "w") as f:
            f.write("".join(f"{n}\n" for n in stopped))

    def summarise(self, rows: list[dict], wall: float, stopped: list[int], echo=False,
                  appendix=""):
        text = summarise(rows, self.args, wall, stopped) + appendix
        with open(os.path.join(self.args.out, "differential.md"), "w") as f:
            f.write(text)
        if echo:
            print(text)


def merge(args) -> int:
    """One summary of several runs (for example halves run as separate commands)."""
    rows, notes, parts, wall, stopped = [], [], [], 0.0, set()
    for d in args.merge:
        with open(os.path.join(d, "differential.csv")) as f:
            part = [{k: (v if k == "rejected" else float(v) if k == "seconds" else int(v))
                     for k, v in r.items()} for r in csv.DictReader(f)]
        rows += part
        with open(os.path.join(d, "differential_disagreements.txt")) as f:
            notes.append(f.read())
        with open(os.path.join(d, "differential.md")) as f:
            summary = f.read()
        wall += float(re.search(r"; wall (\d+) s", summary).group(1))
        stopped |= _stopped_in(d)
        parts += _provenance(d, summary, part)
    repeated = len(rows) - len({r["case"] for r in rows})
    if repeated:
        sys.exit(f"differential.py: the runs merged share {repeated} case numbers; "
                 "merge runs of disjoint --start/--cases ranges")
    args.machine = f"{len(parts)} runs, listed below"
    stopped -= {r["case"] for r in rows}     # stopped in one run, finished in a later one
    with CampaignFiles(args) as out:
        out.writer.writerows(sorted(rows, key=lambda r: r["case"]))
        out.found.write("".join(notes))
        out.write_stopped(sorted(stopped))
        out.summarise(rows, wall, sorted(stopped), echo=True,
                      appendix=MERGED_HEADING + "\n".join(parts) + "\n")
    return 1 if any(r["disagreements"] for r in rows) else 0


def _this_run(args) -> str:
    return f"{machine()}; {args.jobs} processes; code at {args.commit}"


def _commit() -> str:
    """The commit the campaign ran, '+changes' if the tree differed from it.

    A copy of the tree whose .git is absent or stale (a lent machine) names it in
    VERIFY_COMMIT.
    """
    if "VERIFY_COMMIT" in os.environ:
        return os.environ["VERIFY_COMMIT"]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout.strip()
        changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                 cwd=ROOT, capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "an unrecorded commit"
    return head + ("+changes" if changed else "")


def _stopped_in(directory: str) -> set[int]:
    try:
        with open(os.path.join(directory, STOPPED_FILE)) as f:
            return {int(line) for line in f if line.strip()}
    except FileNotFoundError:           # runs from before the file existed
        return set()


def _provenance(directory: str, summary: str, rows: list[dict]) -> list[str]:
    """A line per run in a summary: its own, or those it lists if it is a merge."""
    if MERGED_HEADING in summary:
        return summary.split(MERGED_HEADING)[1].strip().splitlines()
    return [f"- `{os.path.basename(os.path.normpath(directory))}`: "
            f"{summary.split('Machine: ')[1].splitlines()[0]} "
            f"Cases {_spans([r['case'] for r in rows])}."]


def _spans(numbers: list[int]) -> str:
    """'0-44999, 200000-214999 (less 3)': the case numbers run, as blocks; a block
    bridges gaps of up to SPAN_GAP numbers and says how many it leaves out."""
    blocks, numbers = [], sorted(numbers)
    for n in numbers:
        if blocks and n - blocks[-1][1] <= SPAN_GAP:
            blocks[-1][1:] = [n, blocks[-1][2] + 1]
        else:
            blocks.append([n, n, 1])
    return ", ".join(f"{a}-{b}" + (f" (less {b - a + 1 - k})" if b - a + 1 > k else "")
                     for a, b, k in blocks)


def summarise(rows: list[dict], args, wall: float, stopped: list[int]) -> str:
    # Reasons differ only in the numbers they quote; group them without.
    rejected = Counter(re.sub(r"\d+", "N", r["rejected"].split(": error: ")[-1])
                       for r in rows if r.get("rejected"))
    times = sorted(r["seconds"] for r in rows) or [0.0]
    lines = [
        "# Differential campaign: solver against brute-force enumeration", "",
        f"Machine: {getattr(args, 'machine', None) or _this_run(args)}; "
        f"seed {args.seed}; wall {wall:.0f} s.", "",
        "Reproduce: `python benchmarks/differential.py --cases N --seed S`; replay one case "
        "with `--replay CASE`.", "",
        "| figure | value |", "|---|---|",
        f"| cases (random specs) | {len(rows)} (numbers {_spans([r['case'] for r in rows])}) |",
        f"| specs the language rejected (not compared) | {sum(rejected.values())} |",
        f"| cases stopped while running, by the budget or a signal (not counted; {STOPPED_FILE}) "
        f"| {len(stopped)} |",
        f"| comparisons (verdicts and figures) | {sum(r['comparisons'] for r in rows)} |",
        f"| refuted verdicts among them | {sum(r['refuted'] for r in rows)} |",
        f"| unknown (timeouts) | {sum(r['unknown'] for r in rows)} |",
        f"| **disagreements** | **{sum(r['disagreements'] for r in rows)}** |",
        f"| median / worst seconds per case | {times[len(times) // 2]:.3f} / {times[-1]:.2f} |",
    ]
    if rejected:
        lines += ["", "Rejected specs, by reason:", ""]
        lines += [f"- {n}: {why}" for why, n in rejected.most_common()]
    return "\n".join(lines) + "\n"

if __name__ == "__main__":
    sys.exit(main())
