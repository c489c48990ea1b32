"""Designed experiments for cp.async.cg (16 bytes): which lanes the hardware serves
together when each lane copies one 16-byte chunk of global memory into shared memory.

    python -m benchmarks.hardware.hw_cg --out DIR [--budget-s 300] [--seed 28 --fresh-seed 1028]
        -> DIR/hw_cases.csv (every planned case, written before anything runs)
           DIR/hw_cg.csv    (each case run: measured wavefronts, data check)
    python -m benchmarks.hardware.hw_cg --out DIR --repeats 2000 --fresh-seed 4028 --label repeats
        -> only patterns where two lanes copy one chunk into one line (the third set,
           drawn after rule S's rounds were fixed; `repeats` below and the others)

Addresses are built from chunks: a 128-byte line holds 8 chunks of 16 bytes, so a
lane's copy is (source line, source chunk p) -> (destination line, chunk q).
Families (the `fit` set; a `fresh` set draws the same families with its own seed,
a third of it fully random, generated before anything runs):
  pair       31 lanes copy one chunk to one place, one lane another: do two copies
             share a wavefront?
  perm       each quarter-warp copies one source line to one destination line
             through a chunk permutation (the same one in every quarter, or
             identity in three quarters and the tested one in the fourth)
  groups     up to 8 (source line, destination line) groups with random sizes,
             chunk subsets and maps, lanes in group order or shuffled
  split      one source line to two destination lines, two source lines to one
  dup        the same copies repeated (a quarter's pattern four times, lanes in
             pairs, or padded with copies of lane 0)
  swizzle    tiles as kernels copy them: rows of a global tile (pitch 64-512 bytes)
             into shared rows with an xor swizzle of the chunk index
  random     32 distinct destinations in a few lines from sources in a few lines
  wild       destinations in a few lines (repeats allowed), sources anywhere
  repeats    (--repeats only) 1-4 groups whose sources come from a few chunks, or
             whole source sectors copied into several destination sectors
Needs nvcc, an NVIDIA GPU and ncu (see verify/gpu/probe.py).
"""

from __future__ import annotations

import argparse
import os
import random
import sys

from benchmarks.hardware import hw_campaign

CHUNK = 16
LINE_CHUNKS = 8
DEST_LINES = hw_campaign.SHARED_SPAN // 128  # 128 lines of shared memory
SOURCE_LINES = hw_campaign.SOURCE_SPAN // 128  # 480 lines of global memory


def _lines(rng, n, total):
    return rng.sample(range(total), n)


def _addr(line, chunk):
    return 128 * line + CHUNK * chunk


def _case(dest, src):
    return [_addr(*d) for d in dest], [_addr(*s) for s in src]


def pair(rng):
    """31 lanes: (S0 -> X); one lane k: (T -> Y), with chosen line relations."""
    sl, dl = _lines(rng, 2, SOURCE_LINES), _lines(rng, 2, DEST_LINES)
    same_src, same_dst = rng.random() < 0.6, rng.random() < 0.6
    p0, q0 = rng.randrange(8), rng.randrange(8)
    p1 = rng.choice([c for c in range(8) if c != p0]) if same_src else rng.randrange(8)
    q1 = rng.choice([c for c in range(8) if c != q0]) if same_dst else rng.randrange(8)
    a = ((sl[0], p0), (dl[0], q0))
    b = ((sl[0] if same_src else sl[1], p1), (dl[0] if same_dst else dl[1], q1))
    k = rng.choice([0, 1, 7, 8, 16, 31])
    lanes = [b if lane == k else a for lane in range(32)]
    return _case([d for _, d in lanes], [s for s, _ in lanes])


def _perm8(rng):
    kind = rng.random()
    if kind < 0.25:  # an xor, a rotation or a reflection of the chunks or sectors
        k = rng.randrange(8)
        return rng.choice(
            [
                [c ^ k for c in range(8)],
                [(c + k) % 8 for c in range(8)],
                [(k - c) % 8 for c in range(8)],
                [2 * ((c // 2 + k) % 4) + c % 2 for c in range(8)],
                [2 * ((k - c // 2) % 4) + (c % 2 ^ (k & 1)) for c in range(8)],
            ]
        )
    p = list(range(8))
    rng.shuffle(p)
    return p


def perm(rng):
    """Quarter i copies source line a_i to destination line b_i through a permutation."""
    sl, dl = _lines(rng, 4, SOURCE_LINES), _lines(rng, 4, DEST_LINES)
    tested = _perm8(rng)
    alone = rng.random() < 0.4  # identity in three quarters, the tested map in one
    at = rng.randrange(4)
    dest, src = [], []
    for quarter in range(4):
        m = tested if (not alone or quarter == at) else list(range(8))
        for p in range(8):
            src.append((sl[quarter], p))
            dest.append((dl[quarter], m[p]))
    return _case(dest, src)


def groups(rng):
    """Up to 8 groups (source line -> destination line), each an injective chunk map."""
    n = rng.choice([2, 3, 4, 4, 5, 6, 8])
    sl = _lines(rng, n, SOURCE_LINES)
    dl = _lines(rng, n, DEST_LINES)
    if rng.random() < 0.4:  # groups sharing source or destination lines
        sl = [rng.choice(sl[:2]) for _ in range(n)]
    if rng.random() < 0.4:
        dl = [rng.choice(dl[:2]) for _ in range(n)]
    used: set[tuple[int, int]] = set()
    copies: list[tuple[tuple[int, int], tuple[int, int]]] = []
    while len(copies) < 32:
        g = rng.randrange(n)
        q = rng.randrange(8)
        if (dl[g], q) in used:
            if len(used) >= 8 * len(set(dl)):
                break
            continue
        used.add((dl[g], q))
        copies.append(((sl[g], rng.randrange(8)), (dl[g], q)))
    while len(copies) < 32:  # too few destinations: lane 0's copy again
        copies.append(copies[0])
    if rng.random() < 0.5:
        copies.sort(key=lambda c: (c[0][0], c[1][0]))
    return _case([d for _, d in copies], [s for s, _ in copies])


def split(rng):
    """Each quarter: one source line into two destination lines, or the reverse."""
    dest, src = [], []
    one_to_two = rng.random() < 0.5
    cut = rng.randrange(1, 8)
    m = _perm8(rng) if rng.random() < 0.5 else list(range(8))
    shift = rng.randrange(8)
    for _ in range(4):
        a, b = _lines(rng, 2, SOURCE_LINES), _lines(rng, 2, DEST_LINES)
        for p in range(8):
            q = (m[p] + shift) % 8
            if one_to_two:
                src.append((a[0], p))
                dest.append((b[0] if p < cut else b[1], q))
            else:
                src.append((a[0] if p < cut else a[1], q))
                dest.append((b[0], p))
    return _case(dest, src)


def dup(rng):
    """Repeated copies: one quarter's 8 copies four times, in pairs, or lane 0's."""
    sl, dl = _lines(rng, 2, SOURCE_LINES), _lines(rng, 2, DEST_LINES)
    eight = []
    for lane in range(8):
        g = 0 if lane < rng.randrange(1, 9) else 1
        eight.append(((sl[g], rng.randrange(8)), (dl[g], lane)))
    how = rng.choice(["period", "pairs", "quads", "pad"])
    if how == "period":
        copies = [eight[lane % 8] for lane in range(32)]
    elif how == "pairs":
        copies = [eight[(lane // 2) % 8] for lane in range(32)]
    elif how == "quads":
        copies = [eight[lane // 4] for lane in range(32)]
    else:
        copies = eight + [eight[0]] * 24
    return _case([d for _, d in copies], [s for s, _ in copies])


def swizzle(rng):
    """Rows of a global tile into swizzled shared rows, 32 lanes row-major."""
    row_chunks = rng.choice([2, 4, 8, 16])  # tile row of 32..256 bytes
    pitch = rng.choice([row_chunks, 8, 16, 32, 64]) if row_chunks <= 8 else row_chunks
    pitch = max(pitch, row_chunks)
    bits = rng.choice([0, 1, 2, 3])
    base_s = rng.randrange(0, 1024) * 8
    base_d = rng.randrange(0, 32) * 8 * LINE_CHUNKS
    dest, src = [], []
    for lane in range(32):
        row, col = divmod(lane, row_chunks)
        g = base_s + row * pitch + col
        flat = row * row_chunks + col
        line, chunk = divmod(flat, 8)
        chunk ^= line % (1 << bits)
        d = base_d + 8 * line + chunk
        src.append(divmod(g % (SOURCE_LINES * 8), 8))
        dest.append(divmod(d % (DEST_LINES * 8), 8))
    return _case(dest, src)


def wild(rng):
    """Anything: destinations in a few lines (repeats allowed), sources anywhere."""
    dl = _lines(rng, rng.choice([1, 2, 4]), DEST_LINES)
    sl = _lines(rng, rng.choice([1, 2, 4, 32]), SOURCE_LINES)
    dest = [(rng.choice(dl), rng.randrange(8)) for _ in range(32)]
    return _case(dest, [(rng.choice(sl), rng.randrange(8)) for _ in range(32)])


def random_injective(rng):
    nd, ns = rng.choice([4, 5, 6, 8]), rng.choice([1, 2, 4, 6, 8, 32])
    dl = _lines(rng, nd, DEST_LINES)
    slots = rng.sample([(line, c) for line in dl for c in range(8)], 32)
    sl = _lines(rng, min(ns, 32), SOURCE_LINES)
    src = [(rng.choice(sl), rng.randrange(8)) for _ in range(32)]
    return _case(slots, src)


def repeats(rng):
    """Chunks copied several times into one line: each of 1-4 groups draws its
    sources from a few chunks (or copies whole source sectors into several
    destination sectors, halves kept or exchanged), lanes in group order or shuffled."""
    n = rng.choice([1, 1, 2, 3, 4])
    sl, dl = _lines(rng, n, SOURCE_LINES), _lines(rng, n, DEST_LINES)
    if rng.random() < 0.3:
        dl = [dl[0]] * n
    copies = []
    for g in range(n):
        slots = rng.sample(range(8), rng.randint(2, 8))
        if rng.random() < 0.5:
            pool = rng.sample(range(8), rng.randint(1, 4))
            chunks = [rng.choice(pool) for _ in slots]
        else:
            sectors = rng.sample(range(4), rng.randint(1, 2))
            swap = rng.randrange(2)
            chunks = [2 * rng.choice(sectors) + (q % 2 ^ swap) for q in slots]
        copies += [((sl[g], p), (dl[g], q)) for p, q in zip(chunks, slots)]
    if rng.random() < 0.5:
        rng.shuffle(copies)
    if rng.random() < 0.5:
        copies = (copies * 32)[:32]
    else:
        copies += [rng.choice(copies) for _ in range(32 - len(copies))]
    return _case([d for _, d in copies], [s for s, _ in copies])


FAMILIES = {
    "pair": (pair, 900),
    "perm": (perm, 1200),
    "groups": (groups, 1400),
    "split": (split, 600),
    "dup": (dup, 500),
    "swizzle": (swizzle, 400),
    "random": (random_injective, 600),
    "wild": (wild, 400),
}


def plan(seed: int, which: str, scale: float) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    if which == "fit":
        names = [name for name, (_, n) in FAMILIES.items() for _ in range(int(n * scale))]
    else:
        total = int(sum(n for _, n in FAMILIES.values()) * scale)
        names = [
            rng.choice(["random", "wild"]) if rng.random() < 1 / 3 else rng.choice(list(FAMILIES))
            for _ in range(total)
        ]
    for name in names:
        dest, src = FAMILIES[name][0](rng)
        rows.append(
            {
                "set": which,
                "op": "cpa16",
                "size": 16,
                "dest_kind": name,
                "source_kind": "",
                "shared": dest,
                "sources": src,
            }
        )
    return rows


def copies_a_chunk_twice(shared, sources) -> bool:
    """Do two lanes, each the first to write its 16-byte destination, copy one source
    chunk into one shared line? (Rule S as first fixed gave only bound G there.)"""
    first: dict[int, int] = {}
    for lane, d in enumerate(shared):
        first.setdefault(d // CHUNK, lane)
    copies = [(sources[lane] // CHUNK, shared[lane] // 128) for lane in first.values()]
    return len(set(copies)) < len(copies)


def plan_repeats(seed: int, which: str, count: int) -> list[dict]:
    """`count` patterns where some chunk is copied twice into a line: half from
    `repeats`, half from the other families drawn as a fresh set draws them (a third
    fully random), each kept only if it copies a chunk twice into a line."""
    rng = random.Random(seed)
    rows: list[dict] = []
    while len(rows) < count:
        if rng.random() < 0.5:
            name = "repeats"
        elif rng.random() < 1 / 3:
            name = rng.choice(["random", "wild"])
        else:
            name = rng.choice(list(FAMILIES))
        dest, src = (repeats if name == "repeats" else FAMILIES[name][0])(rng)
        if copies_a_chunk_twice(dest, src):
            rows.append(
                {"set": which, "op": "cpa16", "size": 16, "dest_kind": name}
                | {"source_kind": "", "shared": dest, "sources": src}
            )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--fresh-seed", type=int, default=1028)
    ap.add_argument("--fit-scale", type=float, default=1.0)
    ap.add_argument("--fresh-scale", type=float, default=0.4)
    ap.add_argument("--label", default="fresh", help="the second set's name")
    ap.add_argument("--budget-s", type=float, default=300)
    ap.add_argument("--plan-only", action="store_true")
    ap.add_argument(
        "--repeats", type=int, default=0, help="only this many patterns that copy a chunk twice"
    )
    args = ap.parse_args()
    rows = []
    if args.repeats:
        rows = plan_repeats(args.fresh_seed, args.label, args.repeats)
    else:
        if args.fit_scale > 0:
            rows += plan(args.seed, "fit", args.fit_scale)
        rows += plan(args.fresh_seed, args.label, args.fresh_scale)
    os.makedirs(args.out, exist_ok=True)
    hw_campaign.write_plan(os.path.join(args.out, "hw_cases.csv"), rows)
    if not args.plan_only:
        hw_campaign.run(rows, args.out, args.budget_s, args.seed, "hw_cg.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
