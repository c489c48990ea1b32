"""Designed experiments for issue 18: cp.async with chosen global sources, and the
64/128-bit shared loads that the hardware sometimes serves in fewer wavefronts.

    python -m benchmarks.hardware.hw_campaign --out DIR [--budget-s 420]
        -> DIR/hw_cases.csv (every planned case, written before anything runs)
           DIR/hw_campaign.csv (each case run: measured wavefronts, data check)

Two sets, both seeded and generated before any measurement:
  fit    systematic: every destination family crossed with every source family
         (cp.async), every repeat family (loads), parameters drawn per case;
  fresh  a separate seed, families drawn at random and a third fully random
         patterns: the test set a rule fitted on `fit` must also predict.
Cases run in one seeded shuffled order, in batches, until the time budget is
spent, so a partial run still samples both sets and every instruction evenly.
Needs nvcc, an NVIDIA GPU and ncu (see verify/gpu/probe.py).
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import sys
import time
import types

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED_SPAN = 16 * 1024  # destinations stay in the first 16 KB of the probe buffer
SOURCE_SPAN = 60 * 1024  # sources stay inside the probe's 64 KB global buffer
BATCH = 100  # cases per ncu invocation

# op -> (bytes per lane, cp.async?)
OPS = {
    "cpa4": (4, True),
    "cpa8": (8, True),
    "cpa16": (16, True),
    "cpa16ca": (16, True),
    "ld64": (8, False),
    "ld128": (16, False),
}
FIT_PER_OP = {"cpa4": 300, "cpa8": 300, "cpa16": 300, "cpa16ca": 300, "ld64": 200, "ld128": 200}
FRESH_PER_OP = {op: n // 2 for op, n in FIT_PER_OP.items()}


def _load_probe_modules():
    """verify's GPU modules, also where the solver is not installed (the device image
    has no z3, and the package's __init__ imports it): the submodules need none of it."""
    try:
        import z3  # noqa: F401
    except ImportError:
        stub = types.ModuleType("verify")
        stub.__path__ = [os.path.join(ROOT, "verify")]
        sys.modules["verify"] = stub
    from verify.gpu import compare, probe

    return compare, probe


# ---- address families: each returns 32 byte offsets, naturally aligned to `size` ----


def _slot_base(rng, size, span, aligned):
    """A base address; `aligned` puts it on a 128-byte line, else anywhere size-aligned."""
    unit = 128 if aligned else size
    return rng.randrange(0, span // 2 // unit) * unit


def _slots(rng, size, span, kind):
    """32 slot indices (multiples of `size` from a base) of one regular kind."""
    if kind == "contig":
        return list(range(32))
    if kind == "perm":
        p = list(range(32))
        rng.shuffle(p)
        return p
    if kind == "perm_quarter":  # lanes keep their quarter's 8 slots, any order
        out = []
        for q in range(4):
            p = list(range(8 * q, 8 * q + 8))
            rng.shuffle(p)
            out += p
        return out
    if kind == "xor":
        k = rng.randrange(1, 32)
        return [lane ^ k for lane in range(32)]
    if kind == "rotate":
        r = rng.randrange(1, 32)
        return [(lane + r) % 32 for lane in range(32)]
    if kind == "reverse":
        return [31 - lane for lane in range(32)]
    if kind == "stride":
        k = rng.choice([0, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 32, 33, 64])
        return [k * lane for lane in range(32)]
    if kind == "rows":  # lane l: row l % r of 128 bytes, column l // r
        r = rng.choice([2, 4, 8, 16, 32])
        per_row = 128 // size
        return [(lane % r) * per_row + (lane // r) % per_row for lane in range(32)]
    if kind == "group":  # g neighbouring lanes share a slot
        g = rng.choice([2, 4, 8, 16, 32])
        return [lane // g for lane in range(32)]
    if kind == "period":  # lane l uses slot l % p: repeats across quarters/halves
        p = rng.choice([1, 2, 4, 8, 16])
        return [lane % p for lane in range(32)]
    if kind == "half_shift":  # the second half-warp: the first one's slots, shifted
        first = [rng.randrange(0, 64) for _ in range(16)]
        d = rng.choice([0, 1, 2, 8, 16, 32, rng.randrange(0, 64)])
        return first + [s + d for s in first]
    if kind == "quarter_shift":
        first = [rng.randrange(0, 64) for _ in range(8)]
        d = rng.choice([0, 1, 8, 16, rng.randrange(0, 64)])
        return [first[lane % 8] + (lane // 8) * d for lane in range(32)]
    if kind == "few":  # k distinct slots in a random arrangement
        k = rng.choice([2, 3, 4, 8])
        vals = rng.sample(range(64), k)
        return [rng.choice(vals) for _ in range(32)]
    if kind == "alternate":
        a, b = rng.sample(range(64), 2)
        return [a if lane % 2 == 0 else b for lane in range(32)]
    raise ValueError(kind)


SLOT_KINDS = [
    "contig",
    "perm",
    "perm_quarter",
    "xor",
    "rotate",
    "reverse",
    "stride",
    "rows",
    "group",
    "period",
    "half_shift",
    "quarter_shift",
    "few",
    "alternate",
]


def regular(rng, size, span, kind):
    base = _slot_base(rng, size, span, aligned=rng.random() < 0.7)
    return [(base + size * s) % span for s in _slots(rng, size, span, kind)]


def scattered(rng, size, span, kind):
    """Irregular families: each lane in its own line, a few lines, or anywhere."""
    if kind == "line_each":
        step = 128 * rng.choice([1, 2, 3, 8])
        off = rng.randrange(0, 128 // size) * size
        return [(off + step * lane) % span for lane in range(32)]
    if kind == "uniform":
        return [rng.randrange(span // size) * size] * 32
    if kind == "lines":  # random slots within a few lines
        n = rng.choice([1, 2, 4, 8])
        base = rng.randrange(0, span // 2 // 128) * 128
        return [base + rng.randrange(n * 128 // size) * size for _ in range(32)]
    return [rng.randrange(span // size) * size for _ in range(32)]  # "random"


SCATTER_KINDS = ["line_each", "uniform", "lines", "random"]


def family(rng, size, span, kind):
    return (
        scattered(rng, size, span, kind)
        if kind in SCATTER_KINDS
        else regular(rng, size, span, kind)
    )


def source_like(rng, size, dest, kind):
    """Sources defined from the destinations: the same offsets, or shifted."""
    if kind == "same_as_dest":
        return list(dest)
    shift = rng.choice([128, 256, 1024, size, 2 * size, 64, rng.randrange(1, 64) * size])
    return [(d + shift) % SOURCE_SPAN for d in dest]


DEST_KINDS = SLOT_KINDS + SCATTER_KINDS
SOURCE_KINDS = SLOT_KINDS + SCATTER_KINDS + ["same_as_dest", "dest_shift", "16lane"]


def cp_async_case(rng, size, dkind, skind):
    dest = family(rng, size, SHARED_SPAN, dkind)
    if skind == "16lane":  # the earlier campaigns' fixed source
        src = [16 * lane for lane in range(32)]
    elif skind in ("same_as_dest", "dest_shift"):
        src = source_like(rng, size, dest, skind)
    else:
        src = family(rng, size, SOURCE_SPAN, skind)
    return dest, src


def plan(seed: int, which: str, per_op: dict[str, int]) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for op, n in per_op.items():
        size, is_cpa = OPS[op]
        kinds = (
            [(d, s) for d in DEST_KINDS for s in SOURCE_KINDS]
            if is_cpa
            else [(d, "") for d in DEST_KINDS]
        )
        for i in range(n):
            if which == "fit":  # a prime step spreads the crossings evenly
                dk, sk = kinds[(i * 7919) % len(kinds)]
            else:
                fully_random = rng.random() < 1 / 3
                dk = "random" if fully_random else rng.choice(DEST_KINDS)
                sk = ("random" if fully_random else rng.choice(SOURCE_KINDS)) if is_cpa else ""
            if is_cpa:
                dest, src = cp_async_case(rng, size, dk, sk)
            else:
                dest, src = family(rng, size, SHARED_SPAN, dk), None
            rows.append(
                {
                    "set": which,
                    "op": op,
                    "size": size,
                    "dest_kind": dk,
                    "source_kind": sk,
                    "shared": dest,
                    "sources": src,
                }
            )
    return rows


def _case(probe_mod, compare_mod, row):
    c = probe_mod.Case(
        row["op"], row["shared"], sources=row["sources"], data=row["sources"] is not None
    )
    if c.data:
        c.dump_bytes = compare_mod.dump_size(c)
    return c


def _data_ok(compare_mod, row, case, outcome) -> bool | None:
    if not case.data:
        return None
    instr = compare_mod.cp_async(row["size"])
    return compare_mod._store_data(instr, case, outcome)[0]


def _fmt(addrs):
    return "" if addrs is None else " ".join(map(str, addrs))


FIELDS = ["set", "op", "size", "dest_kind", "source_kind", "shared", "sources"]


def write_plan(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow({**r, "shared": _fmt(r["shared"]), "sources": _fmt(r["sources"])})


def run(rows, out_dir, budget_s, seed, name="hw_campaign.csv"):
    compare_mod, probe_mod = _load_probe_modules()
    probe = probe_mod.Probe()
    order = list(range(len(rows)))
    random.Random(seed).shuffle(order)
    path = os.path.join(out_dir, name)
    start, done = time.time(), 0
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS + ["measured", "data_ok"])
        w.writeheader()
        for b in range(0, len(order), BATCH):
            if time.time() - start > budget_s:
                break
            idx = order[b : b + BATCH]
            cases = [_case(probe_mod, compare_mod, rows[i]) for i in idx]
            for i, c, o in zip(idx, cases, probe.run(cases)):
                r = rows[i]
                w.writerow(
                    {
                        **r,
                        "shared": _fmt(r["shared"]),
                        "sources": _fmt(r["sources"]),
                        "measured": o.wavefronts,
                        "data_ok": _data_ok(compare_mod, r, c, o),
                    }
                )
            f.flush()
            done += len(idx)
            print(f"{done}/{len(rows)} cases, {time.time() - start:.0f} s", flush=True)
    print(f"smem_base {probe.smem_base} sm {probe.arch}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--fresh-seed", type=int, default=1018)
    ap.add_argument("--budget-s", type=float, default=420)
    ap.add_argument("--plan-only", action="store_true")
    args = ap.parse_args()
    rows = plan(args.seed, "fit", FIT_PER_OP) + plan(args.fresh_seed, "fresh", FRESH_PER_OP)
    os.makedirs(args.out, exist_ok=True)
    write_plan(os.path.join(args.out, "hw_cases.csv"), rows)
    if not args.plan_only:
        run(rows, args.out, args.budget_s, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
