"""Fidelity campaign: the bank model and the fragment model against a real GPU.

    python -m benchmarks.hardware.gpu_campaign [--per-class 1200] [--seed 0]
        -> benchmarks/results/gpu_campaign.csv.gz and gpu_campaign.md

For every instruction class (ld.shared and st.shared of 8..128 bits,
ldmatrix/stmatrix .x1/.x2/.x4 with and without .trans, cp.async of 4/8/16 bytes)
it generates seeded address patterns, including the hard ones: broadcast,
addresses repeated within and across half- and quarter-warps, permutations,
strides, two addresses alternating, random spans of a few words. Each pattern
runs once under Nsight Compute (wavefronts) and once with tagged data (which
bytes reached which register, or which shared bytes were written).
Needs nvcc, an NVIDIA GPU and ncu.
"""

from __future__ import annotations

import argparse
import collections
import csv
import gzip
import os
import random
import sys

from verify.gpu.compare import compare, cp_async, dump_size
from verify.gpu.probe import Case, Probe, op_name
from verify.model.instructions import parse_instruction

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
SPAN = 16 * 1024  # patterns stay in the first 16 KB of the probe buffer

CLASSES = {
    "ld.shared": [
        "ld.shared.b8",
        "ld.shared.b16",
        "ld.shared.b32",
        "ld.shared.v2.b32",
        "ld.shared.v4.b32",
    ],
    "st.shared": [
        "st.shared.b8",
        "st.shared.b16",
        "st.shared.b32",
        "st.shared.v2.b32",
        "st.shared.v4.b32",
    ],
    "ldmatrix": [
        "ldmatrix.x1",
        "ldmatrix.x2",
        "ldmatrix.x4",
        "ldmatrix.x1.trans",
        "ldmatrix.x2.trans",
        "ldmatrix.x4.trans",
    ],
    "stmatrix": [
        "stmatrix.x1",
        "stmatrix.x2",
        "stmatrix.x4",
        "stmatrix.x1.trans",
        "stmatrix.x2.trans",
        "stmatrix.x4.trans",
    ],
    "cp.async": ["cp.async.4", "cp.async.8", "cp.async.16"],
}


def instruction(name: str):
    return (
        cp_async(int(name.rsplit(".", 1)[1]))
        if name.startswith("cp.async")
        else parse_instruction(name)
    )


def _group_repeat(rng, n, size, group):
    """`group` neighbouring lanes share one address."""
    starts = [rng.randrange(0, SPAN // size) * size for _ in range(n // group + 1)]
    return [starts[i // group] for i in range(n)]


def _phase_repeat(rng, n, size, phase):
    """Every phase repeats the first phase's addresses shifted by a constant."""
    first = [rng.randrange(0, SPAN // (2 * size)) * size for _ in range(phase)]
    shift = rng.choice([0, 0, size, 4 * size, 128, 256, rng.randrange(0, 64) * size])
    return [min(SPAN - size, first[i % phase] + (i // phase) * shift) for i in range(n)]


def pattern(rng: random.Random, kind: str, n: int, size: int, phase: int) -> list[int]:
    """Per-lane byte offsets of one pattern family, each naturally aligned."""
    units = SPAN // size
    if kind == "broadcast":
        return [rng.randrange(units) * size] * n
    if kind == "group":
        return _group_repeat(rng, n, size, rng.choice([2, 4, 8, 16]))
    if kind == "phase_repeat":
        return _phase_repeat(rng, n, size, phase)
    if kind == "permutation":
        base = rng.randrange(0, units - n) * size
        perm = list(range(n))
        rng.shuffle(perm)
        return [base + p * size for p in perm]
    if kind == "stride":
        stride = rng.choice(list(range(0, 34)) + [64, 65, 96, 128, rng.randrange(1, 200)])
        base = rng.randrange(0, 64) * size
        return [(base + i * stride * size) % (units * size) for i in range(n)]
    if kind == "alternate":
        a, b = (rng.randrange(units) * size for _ in range(2))
        return [a if i % 2 == 0 else b for i in range(n)]
    span_words = rng.choice([1, 2, 4, 8, 16, 32, 64])  # "span": a few words
    base = rng.randrange(0, units // 2) * size
    slots = max(1, span_words * 4 // size)
    return [base + rng.randrange(slots) * size for _ in range(n)]


KINDS = ["broadcast", "group", "phase_repeat", "permutation", "stride", "alternate", "span"]


def generate(per_class: int, seed: int):
    rng = random.Random(seed)
    cases = []
    for cls, names in CLASSES.items():
        for i in range(per_class):
            name = names[i % len(names)]
            instr = instruction(name)
            kind = KINDS[(i // len(names)) % len(KINDS)]
            addrs = pattern(
                rng, kind, instr.address_lanes, instr.bytes_per_address, instr.phase_lanes
            )
            case = Case(op_name(instr), addrs)
            case.dump_bytes = 0 if instr.family in ("ld", "ldmatrix") else dump_size(case)
            cases.append((cls, name, kind, instr, case))
    return cases


def _table(rows, key: str, title: str) -> list[str]:
    groups = collections.defaultdict(list)
    for r in rows:
        groups[r[key]].append(r)
    out = [
        f"| {title} | patterns | data checks ok | wavefronts = model | hardware < model | "
        "hardware > model |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, rs in groups.items():
        m = [(int(r["measured"]), int(r["predicted"])) for r in rs]
        data = sum(str(r["data_ok"]) == "True" for r in rs)
        out.append(
            f"| {name} | {len(rs)} | {data} | {sum(a == b for a, b in m)} | "
            f"{sum(a < b for a, b in m)} | {sum(a > b for a, b in m)} |"
        )
    return out


def summarise(rows) -> str:
    """Agreement per class, then per instruction."""
    return "\n".join(
        _table(rows, "class", "class") + [""] + _table(rows, "instruction", "instruction")
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-class", type=int, default=1200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=RESULTS)
    ap.add_argument("--summarise", metavar="CSV", help="Only re-summarise an earlier CSV.")
    args = ap.parse_args()
    if args.summarise:
        with open(args.summarise) as f:
            print(summarise(list(csv.DictReader(f))))
        return 0
    probe = Probe()
    cases = generate(args.per_class, args.seed)
    outcomes = probe.run([c[-1] for c in cases])
    rows = []
    for (cls, name, kind, instr, case), outcome in zip(cases, outcomes):
        a = compare(instr, case, outcome, probe.smem_base)
        rows.append(
            {
                "class": cls,
                "instruction": name,
                "pattern": kind,
                "addresses": " ".join(map(str, case.addresses)),
                "predicted": a.predicted,
                "measured": a.measured,
                "data_ok": a.data_ok,
                "detail": a.detail,
            }
        )
    os.makedirs(args.out, exist_ok=True)
    with gzip.open(os.path.join(args.out, "gpu_campaign.csv.gz"), "wt", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    table = summarise(rows)
    with open(os.path.join(args.out, "gpu_campaign.md"), "w") as f:
        f.write(
            f"# GPU fidelity campaign\n\nGPU: compute capability "
            f"{probe.arch[0]}.{probe.arch[1]}, seed {args.seed}, "
            f"{args.per_class} patterns per class.\n\n{table}\n"
        )
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
