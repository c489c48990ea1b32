"""Differential campaign: every verdict and figure of the solver against brute force.

    python benchmarks/differential.py --cases 100000 --jobs 16   # writes results/differential.*
    python benchmarks/differential.py --cases 200 --seed 7        # a quick look
    python benchmarks/differential.py --start 50000 --cases 50000 --out part2
    python benchmarks/differential.py --merge part1 part2         # one summary of both

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
import csv
import os
import random
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, TimeoutError

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
CHUNK = 8                      # cases per task handed to a worker process
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
    ap.add_argument("--budget", type=float, help="seconds; stop starting cases after this")
    ap.add_argument("--replay", type=int, help="print case N's spec and its comparison")
    ap.add_argument("--merge", nargs="+", metavar="DIR", help="summarise earlier runs' CSVs")
    args = ap.parse_args(argv)
    if args.merge:
        return merge(args)
    if args.replay is not None:
        text = random_spec(random.Random(f"{args.seed}:{args.replay}"))
        print(text, compare(text), sep="\n")
        return 0
    started = time.monotonic()
    rows = run_cases(range(args.start, args.start + args.cases), args)
    write_results(rows, args, time.monotonic() - started)
    return 1 if any(r["disagreements"] for r in rows) else 0


def _run_chunk(numbers: range, seed: int) -> list[dict]:
    return [run_case(n, seed) for n in numbers]


def run_cases(numbers: range, args) -> list[dict]:
    """Rows of the cases run, in order; with --budget, the prefix that fit in it."""
    deadline = None if args.budget is None else time.monotonic() + args.budget
    chunks = [numbers[i:i + CHUNK] for i in range(0, len(numbers), CHUNK)]
    rows = []
    with ProcessPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(_run_chunk, c, args.seed) for c in chunks]
        for future in futures:
            try:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                rows += future.result(timeout=left)
            except TimeoutError:
                pool.shutdown(cancel_futures=True)
                break
    return rows


def merge(args) -> int:
    """One summary of several runs (for example halves run as separate commands)."""
    rows, notes, wall = [], [], 0.0
    for d in args.merge:
        with open(os.path.join(d, "differential.csv")) as f:
            rows += [{k: (v if k == "rejected" else float(v) if k == "seconds" else int(v))
                      for k, v in r.items()} for r in csv.DictReader(f)]
        with open(os.path.join(d, "differential_disagreements.txt")) as f:
            notes.append(f.read())
        with open(os.path.join(d, "differential.md")) as f:
            header = next(line for line in f if line.startswith("Machine: "))
        wall += float(header.split("; wall ")[1].split(" s")[0])
        args.machine = header.removeprefix("Machine: ").split("; seed")[0]
    for r in rows:
        r.update(detail="", spec="")
    write_results(rows, args, wall, "".join(notes))
    return 1 if any(r["disagreements"] for r in rows) else 0


def write_results(rows: list[dict], args, wall: float, found: str | None = None):
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "differential.csv"), "w", newline="") as f:
        fields = ["case", "seconds", "disagreements", "comparisons", "unknown", "refuted",
                  "rejected"]
        writer = csv.DictWriter(f, fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    if found is None:
        found = "".join(f"# case {r['case']} (seed {args.seed}): {r['detail']}\n{r['spec']}\n"
                        for r in rows if r["disagreements"])
    with open(os.path.join(args.out, "differential_disagreements.txt"), "w") as f:
        f.write(found)
    summary = summarise(rows, args, wall)
    with open(os.path.join(args.out, "differential.md"), "w") as f:
        f.write(summary)
    print(summary)


def _spans(numbers: list[int]) -> str:
    """'0-44999, 200000-214999': the case numbers run, as contiguous spans."""
    spans, numbers = [], sorted(numbers)
    for n in numbers:
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(f"{a}-{b}" for a, b in spans)


def summarise(rows: list[dict], args, wall: float) -> str:
    rejected = Counter(r.get("rejected", "").split(": error: ")[-1][:60]
                       for r in rows if r.get("rejected"))
    times = sorted(r["seconds"] for r in rows)
    lines = [
        "# Differential campaign: solver against brute-force enumeration", "",
        f"Machine: {getattr(args, 'machine', None) or f'{machine()}; {args.jobs} processes'}; "
        f"seed {args.seed}; wall {wall:.0f} s.", "",
        "Reproduce: `python benchmarks/differential.py --cases N --seed S`; replay one case "
        "with `--replay CASE`.", "",
        "| figure | value |", "|---|---|",
        f"| cases (random specs) | {len(rows)} (numbers {_spans([r['case'] for r in rows])}) |",
        f"| specs the language rejected (not compared) | {sum(rejected.values())} |",
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
