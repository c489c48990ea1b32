"""Differential campaign: every verdict and figure of verify against an independent oracle.

    python -m benchmarks.campaigns.differential --cases 200 --seed 7        # a quick look
    python -m benchmarks.campaigns.differential --start 0 --cases 50000 --jobs 16 --budget 3000 \
        --out part1
    python -m benchmarks.campaigns.differential --numbers part1/differential_stopped.txt --out part2
    python -m benchmarks.campaigns.differential --cases 50000 \
        --dask tcp://scheduler:8786 --out part3
    python -m benchmarks.campaigns.differential --merge part1 part2          # one summary of all
    python -m benchmarks.campaigns.differential --replay 123   # one case, both answers
    python -m benchmarks.campaigns.differential --family ttgir --start 400000 \
        --cases 3000   # one family

Rows are written as cases finish, so a run stopped by --budget, SIGINT or SIGTERM
keeps its results; the cases it stopped mid-run are listed in
differential_stopped.txt (slow ones are thereby not silently dropped: rerun them
with --numbers). Cases run where `verify sweep` runs them (`verify.sweep.engine`):
--jobs local processes (1: in this process, where a stop waits for the Z3 call in
progress), or the Dask cluster at --dask ADDRESS, whose workers must import the
benchmarks package (start them in the repository's root). Results go to
results/differential_independent/ (each run in a directory of its own under runs/,
merged into the summary above them); the
earlier campaign against verify's own enumeration stays in results/differential*.

Each case is one random spec from `spec_generator` (its families and shares are
described there), written as text and answered twice: by verify
(`verify.engines.runner.run_spec`, with each engine it offers when it offers several) and
by the independent oracle `oracle`, which shares only the grammar with
verify and reads every notation its own way: CuTe layouts, swizzles,
tile_to_shape and composition through pycute, Triton encodings through Triton's
own linear layouts, formulas with its own interpreter, banks with its own model,
and every answer by enumeration. Compared, per case: the status of every
property either side checks (implicit ones included; a property only one side
checks is a disagreement), the max-ways and wavefront figures of each
conflict_free check, and the cosize of each bijective check. An UNKNOWN
(timeout) is counted apart, never as agreement. A spec both sides reject is
"rejected"; a spec one side rejects and the other answers is "rejected by one
side" and listed in full, since either could be wrong. A case is seeded by its
number, so any row of the CSV can be replayed with ``--replay N``.

Every disagreement is written out in full (spec text and both answers) to
differential_disagreements.txt; zero is the bar.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import inspect
import multiprocessing
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from functools import partial

from joblib.externals.loky.process_executor import TerminatedWorkerError

from benchmarks.speed.catalog import machine
from oracle import OracleRefusal, OracleUnavailable, answers
from oracle.spec_generator import FAMILIES, random_case
from verify.engines.options import RunOptions
from verify.engines.runner import run_spec
from verify.errors import SpecError
from verify.smt.solve import Status
from verify.spec.parser import parse_text
from verify.sweep.engine import Engine

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "benchmarks", "results", "differential_independent")
SUMMARY_EVERY = 30  # seconds between rewrites of the summary during a run
SPAN_GAP = 1000  # case-number gaps a summary's block of numbers bridges
TIMEOUT = 120  # seconds per check, as in every campaign so far
OPTIONS = RunOptions(seconds=TIMEOUT)  # each engine's run: RunOptions.of(OPTIONS, engine)
STOPPED_FILE = "differential_stopped.txt"
FOUND_FILE = "differential_disagreements.txt"
MERGED_HEADING = "\n## The runs merged here\n\n"
DISAGREEMENTS_HEADING = "## Disagreements: verify and the oracle answer differently\n\n"
ONE_SIDED_HEADING = (
    "## Rejected by one side: one answers, the other refuses (either could be wrong)\n\n"
)
# verify's engines, as run_spec's `engine` argument names them; before it had one,
# run_spec was the z3 engine alone.
ENGINES = ("z3", "enumeration")
HAS_ENGINES = "engine" in inspect.signature(run_spec).parameters
ENGINE_FIELDS = ("disagreements", "comparisons", "unknown", "seconds")
CSV_FIELDS = [
    "case",
    "family",
    "seconds",
    "oracle_seconds",
    "disagreements",
    "comparisons",
    "unknown",
    "refuted",
    "out_of_domain",
    "rejected",
    "one_sided",
] + [f"{e}_{f}" for e in ENGINES for f in ENGINE_FIELDS]
TEXT_FIELDS = ("family", "rejected", "one_sided")
OUR_ORACLE = (
    "`oracle/`, independent of verify: it shares only the grammar file and "
    "reads every notation its own way -- CuTe layouts, swizzles, tile_to_shape and "
    "composition through pycute (nvidia-cutlass), Triton encodings through Triton's "
    "own linear layouts, formulas with its own interpreter, banks with its own "
    "model -- and answers by enumeration"
)


# -- one case ---------------------------------------------------------------------


# verify's located error for a cp.async check asked of the solver engine.
COPY_ENUMERATION_ONLY = "is decided by enumeration only"


def engines() -> tuple[str, ...]:
    return ENGINES if HAS_ENGINES else ENGINES[:1]


def _verdict(holds: bool) -> str:
    return "proved" if holds else "refuted"


def ask_oracle(text: str):
    """(answers, None), or (None, why it refused). A missing oracle library stops
    the campaign: a case it cannot answer is no comparison."""
    try:
        return answers(text, "case.spec"), None
    except OracleUnavailable:
        raise
    except OracleRefusal as e:
        return None, e.message


def ask_verify(text: str, engine: str, options: RunOptions = OPTIONS):
    """(check results, None), or (None, verify's error message)."""
    try:
        spec = parse_text(text, "case.spec")
        if HAS_ENGINES:
            return run_spec(spec, RunOptions.of(options, engine)), None
        return run_spec(spec, timeout=TIMEOUT), None
    except SpecError as e:
        return None, str(e)


def compare(text: str, options: RunOptions = OPTIONS) -> tuple[list[str], dict]:
    """(disagreements, counts) for one spec: each engine of verify against the oracle,
    each check under `options`' budget (the tests' count z3 resource units)."""
    counts = {
        "comparisons": 0,
        "unknown": 0,
        "refuted": 0,
        "out_of_domain": 0,
        "rejected": "",
        "one_sided": "",
    }
    started, crash = time.monotonic(), None
    try:
        theirs, refusal = ask_oracle(text)
    except OracleUnavailable:
        raise
    except Exception as e:  # a bug in the oracle: shown, never skipped
        theirs, refusal = None, None
        crash = f"the oracle raised {_one_line(e)}"
    counts["oracle_seconds"] = round(time.monotonic() - started, 4)
    bad, one_sided, rejected = [], [], []
    for engine in engines():
        started = time.monotonic()
        try:
            mine, error = ask_verify(text, engine, options)
        except Exception as e:  # verify's InternalError, or worse
            mine, error, found = None, None, [f"verify raised {_one_line(e)}"]
        else:
            found = []
        if error is not None and COPY_ENUMERATION_ONLY in error and not crash:
            # cp.async checks are decided by enumeration only (README): the solver's
            # located refusal is the documented answer, not a disagreement.
            counts[f"{engine}_disagreements"] = 0
            counts[f"{engine}_seconds"] = round(time.monotonic() - started, 4)
            continue
        if crash:
            found.append(crash)
        elif mine is not None and theirs is not None:
            found += _compare_checks(mine, theirs, engine, counts)
        elif error is not None and refusal is not None:
            rejected.append(error)
        elif not found:
            one_sided.append(
                f"{engine}: verify {error or 'answers'}; oracle "
                f"{'refuses: ' + refusal if refusal else 'answers'}"
            )
        counts[f"{engine}_disagreements"] = len(found)
        counts[f"{engine}_seconds"] = round(time.monotonic() - started, 4)
        bad += [f"{engine}: {f}" for f in found]
    counts["rejected"] = rejected[0] if len(rejected) == len(engines()) else ""
    counts["one_sided"] = "; ".join(one_sided)
    return bad, counts


def _one_line(error: Exception) -> str:
    """An exception as one line of the disagreements file (lark's span several)."""
    return f"{type(error).__name__}: {' '.join(str(error).split())}"


def _compare_checks(mine, theirs: dict, engine: str, counts: dict) -> list[str]:
    """Disagreements of one engine's results with the oracle's answers; counts the
    comparisons, UNKNOWNs and REFUTED verdicts into `counts`."""
    results = {r.property: r for r in mine}
    outside = _outside_the_domain(results, theirs)
    counts["out_of_domain"] += len(outside)
    # A check whose only figure is an upper bound (cp.async.cg's bound G) that
    # cannot decide it: verify says UNKNOWN, the oracle leaves it out.
    undecided = {p for p in results.keys() - theirs.keys() if results[p].status == Status.UNKNOWN}
    bad = [
        f"{p}: only {'verify' if p in results else 'the oracle'} checks it"
        for p in sorted((set(results) ^ set(theirs)) - outside - undecided)
    ]
    compared, unknown = 0, len(undecided)
    for prop in sorted(results.keys() & theirs.keys()):
        result, answer = results[prop], theirs[prop]
        if result.status == Status.UNKNOWN:
            unknown += 1
            continue
        compared += 1
        counts["refuted"] += result.status == Status.REFUTED
        if (result.status == Status.PROVED) != answer.holds:
            bad.append(f"{prop}: verify {result.status.value}, oracle {_verdict(answer.holds)}")
        for figure, ours, exact, oracle in _figures(prop, result, answer):
            if not exact:
                unknown += 1
            elif ours != oracle:
                compared += 1
                bad.append(f"{prop}: verify {figure} {ours}, oracle {oracle}")
            else:
                compared += 1
    counts[f"{engine}_comparisons"], counts[f"{engine}_unknown"] = compared, unknown
    counts["comparisons"] += compared
    counts["unknown"] += unknown
    return bad


def _outside_the_domain(results: dict, theirs: dict) -> set[str]:
    """verify's checks of accesses whose coordinates leave the layout's domain
    (in_bounds refuted by both sides), which the oracle does not answer: no
    notation defines addresses there, while verify extends CuTe's arithmetic.
    Not compared, and counted apart; in_bounds itself is compared."""
    leaving = {
        _target(p)
        for p, r in results.items()
        if p.startswith("in_bounds ")
        and r.status == Status.REFUTED
        and p in theirs
        and not theirs[p].holds
    }
    return {
        p
        for p in results.keys() - theirs.keys()
        if p.split()[0] not in ("bijective", "base_aligned", "equivalent") and _target(p) in leaving
    }


def _target(prop: str) -> str:
    """The access a check names: its last word, or for a cp.async's global side
    (``aligned 16 cp from G``) the copy, whose bank checks need both sides."""
    words = prop.split()
    return words[-3] if len(words) >= 3 and words[-2] == "from" else words[-1]


def _figures(prop: str, result, answer):
    """(figure, verify's value, whether it is exact, the oracle's value) to compare:
    bank figures on conflict_free checks (where either side has them: an access
    the other side finds misaligned has none), cosize on bijective checks (where
    the oracle gives it)."""
    kind = prop.split()[0]
    facts = result.facts or {}
    if kind == "conflict_free" and (result.max_ways, answer.max_ways) != (None, None):
        return [
            ("max_ways", result.max_ways, facts.get("max_ways_exact", True), answer.max_ways),
            (
                "wavefronts",
                result.wavefronts,
                facts.get("wavefronts_exact", True),
                answer.wavefronts,
            ),
        ]
    if kind == "conflict_free" and answer.wavefronts is not None and result.max_ways is None:
        # cp.async: one figure, rule C's or bound G's (the same bound on both sides).
        return [("wavefronts", result.wavefronts, True, answer.wavefronts)]
    if kind == "bijective" and answer.cosize is not None:
        cosize = facts.get("cosize")
        return [("cosize", cosize, cosize is not None, answer.cosize)]
    return []


def run_case(
    number: int, seed: int, family: str | None = None, options: RunOptions = OPTIONS
) -> dict:
    family, text = random_case(random.Random(f"{seed}:{number}"), family)
    started = time.monotonic()
    bad, counts = compare(text, options)
    flagged = bool(bad or counts["one_sided"])
    return {
        "case": number,
        "family": family.split()[0],
        "seconds": round(time.monotonic() - started, 4),
        "disagreements": len(bad),
        **counts,
        "detail": "; ".join(bad),
        "spec": text if flagged else "",
    }


# -- the campaign -------------------------------------------------------------------


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--start", type=int, default=0, help="number of the first case")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--family",
        choices=sorted(FAMILIES),
        help="draw every case from this family of the generator (a slice of the campaign)",
    )
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run the cases on the Dask cluster whose scheduler is at ADDRESS",
    )
    ap.add_argument("--out", default=RESULTS)
    ap.add_argument(
        "--budget",
        type=float,
        help="seconds; then the cases still running are stopped and not counted",
    )
    ap.add_argument(
        "--budget-cases",
        type=int,
        metavar="N",
        help="stop once N cases have finished; the cases still running are stopped and "
        "not counted (a budget that counts work, not seconds: the tests')",
    )
    ap.add_argument(
        "--numbers",
        type=argparse.FileType(),
        help="run the case numbers listed in this file (one per line) instead",
    )
    ap.add_argument("--replay", type=int, help="print case N's spec and its comparison")
    ap.add_argument("--merge", nargs="+", metavar="DIR", help="summarise earlier runs' CSVs")
    args = ap.parse_args(argv)
    if args.merge:
        return merge(args)
    if args.replay is not None:
        _, text = random_case(random.Random(f"{args.seed}:{args.replay}"), args.family)
        bad, counts = compare(text)
        print(
            text,
            f"oracle: {ask_oracle(text)}",
            f"disagreements: {bad}",
            f"counts: {counts}",
            sep="\n",
        )
        return 0
    numbers = (
        range(args.start, args.start + args.cases)
        if args.numbers is None
        else [int(line) for line in args.numbers if line.strip()]
    )
    args.commit = _commit()  # now: the tree may move on while the run lasts
    rows = run_cases(numbers, args)
    return 1 if any(r["disagreements"] for r in rows) else 0


def _run_one(case: tuple[int, int]) -> dict:
    _leave_interrupts_to_the_campaign()
    return run_case(*case)


def _run_one_of(family: str, case: tuple[int, int]) -> dict:
    """`_run_one` with every case drawn from `family` (--family)."""
    _leave_interrupts_to_the_campaign()
    return run_case(*case, family=family)


def _leave_interrupts_to_the_campaign():
    """In a local worker: a terminal's ^C reaches every process of its group, and
    the campaign, not the worker, decides what a stop keeps."""
    if (
        multiprocessing.parent_process() is not None
        and threading.current_thread() is threading.main_thread()
    ):
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def run_cases(numbers, args) -> list[dict]:
    """Rows of the cases finished, written out as they finish.

    Each row is appended to the CSV at once and the summary is rewritten every
    SUMMARY_EVERY seconds, so a run killed from outside leaves its results behind.
    With --budget the run is stopped at the deadline, with --budget-cases once that
    many cases have finished, and likewise on an interrupt
    (SIGINT or SIGTERM to this process): local workers are killed, cases still
    running then are not counted, and are listed.
    """
    started = time.monotonic()
    rows: list[dict] = []
    engine = Engine(args.jobs, getattr(args, "dask", None))
    remaining, stopped = list(numbers), []
    with CampaignFiles(args) as out, StopSwitch(args.budget, args.budget_cases) as switch:
        while remaining and not switch.stopped:
            task = partial(_run_one_of, args.family) if args.family else _run_one
            lost = _run_until_stopped(
                engine, remaining, args.seed, switch, rows, out, started, task
            )
            stopped += lost
            finished = {r["case"] for r in rows}
            remaining = [n for n in remaining if n not in finished and n not in lost]
        out.write_stopped(stopped)
        out.summarise(rows, time.monotonic() - started, stopped, echo=True)
    return rows


def _run_until_stopped(engine, numbers, seed, switch, rows, out, started, task) -> list[int]:
    """Run `numbers` until they end, the switch stops the run, or a worker dies;
    returns the cases that were running then (not counted, and listed).

    A worker killed by native code (Triton's bindings abort on some inputs; a
    segfault) ends joblib's whole pool: the cases in flight are lost and listed
    with the stopped ones, for --numbers to rerun, and the campaign goes on with
    the rest in a fresh pool."""
    last_summary = time.monotonic()
    with engine.run(task, ((n, seed) for n in numbers), one_per_worker=True) as run:
        try:
            for _, row in switch.until_stopped(run):
                rows.append(row)
                out.append(row)
                if time.monotonic() - last_summary > SUMMARY_EVERY:
                    out.summarise(rows, time.monotonic() - started, [])
                    last_summary = time.monotonic()
        except TerminatedWorkerError as e:
            print(
                f"differential.py: a worker died ({e.__class__.__name__}); the cases it "
                "was running with the others are listed as stopped",
                file=sys.stderr,
            )
    # Cases joblib had read but not started are not part of the run.
    return [number for number, _ in run.unfinished()[: run.workers]]


class Interrupted(BaseException):
    """The budget ran out, or SIGINT or SIGTERM came: stop, keep what finished. A
    BaseException, as KeyboardInterrupt is, so that no `except Exception` on the
    way (the campaign's own, around verify and the oracle) takes it for a crash."""


class StopSwitch:
    """Stops a run at the budget's deadline (SIGALRM), after `cases` results, or on
    SIGINT or SIGTERM.

    A signal raises Interrupted only while the campaign waits for the next case,
    and joblib, interrupted there, stops its workers; one that comes while a row
    is being written is noted, and the run stops after that row. The previous
    handlers are restored afterwards.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)

    def __init__(self, budget: float | None, cases: int | None = None):
        self.budget = budget
        self.cases = cases
        self.finished = 0  # results handed on, over every pool of the run
        self.waiting = self.stopped = False

    def __enter__(self):
        self.previous = {sig: signal.signal(sig, self._stop) for sig in self.SIGNALS}
        if self.budget is not None:
            # A zero timer is no timer: a budget of 0 still stops at once.
            signal.setitimer(signal.ITIMER_REAL, max(self.budget, 1e-6))
        return self

    def __exit__(self, *exc):
        signal.setitimer(signal.ITIMER_REAL, 0)
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)

    def _stop(self, signum, frame):
        self.stopped = True
        if self.waiting:
            raise Interrupted

    def until_stopped(self, run):
        """The run's results until it ends or is stopped."""
        while not self.stopped:
            if self.cases is not None and self.finished >= self.cases:
                self.stopped = True
                return
            self.waiting = True
            try:
                result = next(run)
            except (StopIteration, Interrupted):
                return
            finally:
                self.waiting = False
            self.finished += 1
            yield result


class CampaignFiles:
    """The result files of a run or a merge: CSV rows, disagreements (and specs
    rejected by one side, under their own heading), the cases stopped mid-run,
    and the summary."""

    def __init__(self, args):
        os.makedirs(args.out, exist_ok=True)
        self.args = args
        # Open for the whole run, closed by close(): rows stream out as cases finish.
        self.csv = open(os.path.join(args.out, "differential.csv"), "w", newline="")  # noqa: SIM115
        self.writer = csv.DictWriter(self.csv, CSV_FIELDS, extrasaction="ignore")
        self.writer.writeheader()
        self.found, self.one_sided = [], []
        self.write_found()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.csv.close()

    def append(self, row: dict):
        self.writer.writerow(row)
        self.csv.flush()
        head = f"# case {row['case']} (seed {self.args.seed}, {row['family']})"
        if row["disagreements"]:
            self.found.append(f"{head}: {row['detail']}\n{row['spec']}\n")
        if row["one_sided"]:
            self.one_sided.append(f"{head}: {row['one_sided']}\n{row['spec']}\n")
        if row["disagreements"] or row["one_sided"]:
            self.write_found()

    def write_found(self):
        """The whole file, rewritten at each new entry (they are rare): a run killed
        from outside keeps every one found so far."""
        with open(os.path.join(self.args.out, FOUND_FILE), "w") as f:
            f.write(
                DISAGREEMENTS_HEADING
                + "".join(self.found)
                + "\n"
                + ONE_SIDED_HEADING
                + "".join(self.one_sided)
            )

    def write_stopped(self, stopped: list[int]):
        with open(os.path.join(self.args.out, STOPPED_FILE), "w") as f:
            f.write("".join(f"{n}\n" for n in stopped))

    def summarise(self, rows: list[dict], wall: float, stopped: list[int], echo=False, appendix=""):
        text = summarise(rows, self.args, wall, stopped) + appendix
        with open(os.path.join(self.args.out, "differential.md"), "w") as f:
            f.write(text)
        if echo:
            print(text)


def merge(args) -> int:
    """One summary of several runs (for example halves run as separate commands)."""
    rows, found, one_sided, parts, wall, stopped = [], [], [], [], 0.0, set()
    for d in args.merge:
        with _open_rows(d) as f:
            part = [_typed(r) for r in csv.DictReader(f)]
        rows += part
        with open(os.path.join(d, FOUND_FILE)) as f:
            theirs = f.read().removeprefix(DISAGREEMENTS_HEADING).split(ONE_SIDED_HEADING)
        found.append(theirs[0].removesuffix("\n"))
        one_sided.append(theirs[1])
        with open(os.path.join(d, "differential.md")) as f:
            summary = f.read()
        m = re.search(r"; wall (\d+) s", summary)
        assert m is not None, f"{d}/differential.md: its summary line names the wall time"
        wall += float(m.group(1))
        stopped |= _stopped_in(d)
        parts += _provenance(d, summary, part)
    repeated = len(rows) - len({r["case"] for r in rows})
    if repeated:
        sys.exit(
            f"differential.py: the runs merged share {repeated} case numbers; "
            "merge runs of disjoint --start/--cases ranges"
        )
    args.machine = f"{len(parts)} runs, listed below"
    stopped -= {r["case"] for r in rows}  # stopped in one run, finished in a later one
    with CampaignFiles(args) as out:
        out.writer.writerows(sorted(rows, key=lambda r: r["case"]))
        out.found, out.one_sided = found, one_sided
        out.write_found()
        out.write_stopped(sorted(stopped))
        out.summarise(
            rows,
            wall,
            sorted(stopped),
            echo=True,
            appendix=MERGED_HEADING + "\n".join(parts) + "\n",
        )
    return 1 if any(r["disagreements"] for r in rows) else 0


def _open_rows(directory: str):
    """A run's CSV rows: differential.csv, or differential.csv.gz as committed (runs
    are kept compressed; a merge's own CSV is regenerated on demand, not kept)."""
    path = os.path.join(directory, "differential.csv")
    if os.path.exists(path):
        return open(path, newline="")
    return gzip.open(path + ".gz", "rt", newline="")


def _typed(row: dict) -> dict:
    """A CSV row as run_case made it: text, seconds, counts; an engine not run is None."""

    def value(key, text):
        if key in TEXT_FIELDS:
            return text
        if text == "":
            return None
        return float(text) if key.endswith("seconds") else int(text)

    return {k: value(k, v) for k, v in row.items()}


def _this_run(args) -> str:
    family = getattr(args, "family", None)
    only = f"; family {family} only (replay with --family {family})" if family else ""
    return f"{machine()}; {args.jobs} processes; code at {args.commit}{only}"


def _commit() -> str:
    """The commit the campaign ran, '+changes' if the tree differed from it.

    A copy of the tree whose .git is absent or stale (a lent machine) names it in
    VERIFY_COMMIT.
    """
    if "VERIFY_COMMIT" in os.environ:
        return os.environ["VERIFY_COMMIT"]
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "an unrecorded commit"
    return head + ("+changes" if changed else "")


def _stopped_in(directory: str) -> set[int]:
    try:
        with open(os.path.join(directory, STOPPED_FILE)) as f:
            return {int(line) for line in f if line.strip()}
    except FileNotFoundError:  # runs from before the file existed
        return set()


def _provenance(directory: str, summary: str, rows: list[dict]) -> list[str]:
    """A line per run in a summary: its own, or those it lists if it is a merge."""
    if MERGED_HEADING in summary:
        return summary.split(MERGED_HEADING)[1].strip().splitlines()
    return [
        f"- `{os.path.basename(os.path.normpath(directory))}`: "
        f"{summary.split('Machine: ')[1].splitlines()[0]} "
        f"Cases {_spans([r['case'] for r in rows])}."
    ]


def _spans(numbers: list[int]) -> str:
    """'0-44999, 200000-214999 (less 3)': the case numbers run, as blocks; a block
    bridges gaps of up to SPAN_GAP numbers and says how many it leaves out."""
    blocks: list[list[int]] = []  # [first, last, numbers run]
    numbers = sorted(numbers)
    for n in numbers:
        if blocks and n - blocks[-1][1] <= SPAN_GAP:
            blocks[-1][1:] = [n, blocks[-1][2] + 1]
        else:
            blocks.append([n, n, 1])
    return ", ".join(
        f"{a}-{b}" + (f" (less {b - a + 1 - k})" if b - a + 1 > k else "") for a, b, k in blocks
    )


def summarise(rows: list[dict], args, wall: float, stopped: list[int]) -> str:
    # Reasons differ only in the numbers they quote; group them without.
    rejected = Counter(
        re.sub(r"\d+", "N", r["rejected"].split(": error: ")[-1].splitlines()[0])
        for r in rows
        if r.get("rejected")
    )
    times = _sorted_times(rows, "seconds")
    flagged = [r for r in rows if r["disagreements"]]
    lines = [
        "# Differential campaign: verify against an independent oracle",
        "",
        f"Oracle: {OUR_ORACLE}.",
        "",
        f"Machine: {getattr(args, 'machine', None) or _this_run(args)}; "
        f"seed {args.seed}; wall {wall:.0f} s.",
        "",
        "Reproduce: `python -m benchmarks.campaigns.differential --cases N --seed S`; "
        "replay one case "
        "with `--replay CASE` (and `--family NAME` for a run of one family). The "
        "generator's families are described in "
        "`oracle/spec_generator.py`.",
        "",
        "| figure | value |",
        "|---|---|",
        f"| cases (random specs) | {len(rows)} (numbers {_spans([r['case'] for r in rows])}) |",
        f"| specs both sides rejected (not compared) | {sum(rejected.values())} |",
        f"| **specs rejected by one side** (listed in {FOUND_FILE}) "
        f"| **{sum(bool(r['one_sided']) for r in rows)}** |",
        "| cases stopped while running, by the budget, a signal or a worker that died "
        f"(not counted; {STOPPED_FILE}) "
        f"| {len(stopped)} |",
        f"| comparisons (verdicts and figures, all engines) "
        f"| {sum(r['comparisons'] for r in rows)} |",
        f"| refuted verdicts among them | {sum(r['refuted'] for r in rows)} |",
        "| checks of accesses leaving the layout's domain, which the oracle does not answer "
        f"(in_bounds refuted by both; not compared) "
        f"| {sum(r.get('out_of_domain') or 0 for r in rows)} |",
        "| unknown (timeouts, or a bound that cannot decide; never counted as agreement) "
        f"| {sum(r['unknown'] for r in rows)} |",
        f"| **disagreements** | **{sum(r['disagreements'] for r in rows)}** "
        f"(in {len(flagged)} cases) |",
        f"| median / worst seconds per case | {times[len(times) // 2]:.3f} / {times[-1]:.2f} |",
        "",
        "Per engine of verify:",
        "",
        "| engine | cases | comparisons | unknown | disagreements | median s |",
        "|---|---|---|---|---|---|",
    ]
    for engine in ENGINES:
        ran = [r for r in rows if r.get(f"{engine}_seconds") is not None]
        if ran:
            t = _sorted_times(ran, f"{engine}_seconds")
            lines.append(
                f"| {engine} | {len(ran)} | "
                + " | ".join(
                    str(sum(r.get(f"{engine}_{f}") or 0 for r in ran))
                    for f in ENGINE_FIELDS[1:3] + ENGINE_FIELDS[:1]
                )
                + f" | {t[len(t) // 2]:.3f} |"
            )
    lines += [
        "",
        "Per family of specs:",
        "",
        "| family | cases | both rejected | one side rejected | comparisons | disagreements |",
        "|---|---|---|---|---|---|",
    ]
    for family, n in sorted(Counter(r["family"] for r in rows).items()):
        mine = [r for r in rows if r["family"] == family]
        lines.append(
            f"| {family} | {n} | {sum(bool(r['rejected']) for r in mine)} | "
            f"{sum(bool(r['one_sided']) for r in mine)} | "
            f"{sum(r['comparisons'] for r in mine)} | "
            f"{sum(r['disagreements'] for r in mine)} |"
        )
    if rejected:
        lines += ["", "Specs both sides rejected, by verify's reason:", ""]
        lines += [f"- {n}: {why}" for why, n in rejected.most_common()]
    return "\n".join(lines) + "\n"


def _sorted_times(rows: list[dict], key: str) -> list[float]:
    return sorted(r[key] for r in rows) or [0.0]


if __name__ == "__main__":
    sys.exit(main())
