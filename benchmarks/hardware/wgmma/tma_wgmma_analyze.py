"""Score `tma_wgmma_base.sh`'s H200 run against verify's verdicts on the same PTX.

    benchmarks/hardware/wgmma/tma_wgmma_base.sh build      # binaries and PTX, here
    python -m benchmarks.hardware.wgmma.tma_wgmma_analyze [DIR]

DIR (default benchmarks/results/wgmma_tma_base_h200/, committed) holds the run's
results.txt (the bytes wgmma read wrong, per case) and ncu.txt (gmma wavefronts and
bank conflicts). For each case verify checks build/tma_wgmma/NAME.ptx with the case's
tensor map (`--tma-map`, the arguments the binary passes to cuTensorMapEncodeTiled):
writer = reader should be REFUTED exactly where the H200 read wrong bytes, and the
wavefronts should be the H200's. The per-class table adds the descriptor probe's
launches (`wgmma_h200.csv`: canonical and non-canonical layouts of every mode).
Writes benchmarks/results/wgmma_tma_base_h200.csv and wgmma_classes_h200.csv.
"""

from __future__ import annotations

import csv
import os
import re
import sys
from collections import defaultdict

from verify.model.wgmma import MatrixDescriptor, ReadMap, SwizzleMode, operand
from verify.ptx.check import Options, check_ptx
from verify.ptx.hopper_tma import tma_swizzle

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
PTX_DIR = os.path.join(HERE, "build", "tma_wgmma")
WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum"
CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum"

# The map each case's binary encodes (tma_wgmma_base.cu: 64 rows of SPAN bytes, or
# 128 rows of 16 bytes without a swizzle), in --tma-map's syntax.
MAPS = {
    128: "dataType=FLOAT16,boxDim={64,64},swizzle=128B",
    64: "dataType=FLOAT16,boxDim={32,64},swizzle=64B",
    32: "dataType=FLOAT16,boxDim={16,64},swizzle=32B",
    0: "dataType=FLOAT16,boxDim={8,128},swizzle=NONE",
}
MODE = {128: "128B", 64: "64B", 32: "32B", 0: "none"}
SWIZZLE_MODES = {
    128: SwizzleMode.B128,
    64: SwizzleMode.B64,
    32: SwizzleMode.B32,
    0: SwizzleMode.NONE,
}
CANONICAL = re.compile(r"^(K|MN)_(SW128|SW64|SW32|INTER)(_kb\d)?$")


def cases() -> list[dict]:
    with open(os.path.join(PTX_DIR, "cases.txt")) as f:
        rows = [line.split() for line in f if line.strip()]
    return [
        {"case": n, "span": int(s), "desc_span": int(d), "bo_addr": int(b), "pad": int(p)}
        for n, s, d, b, p in rows
    ]


def h200(folder: str) -> dict[str, dict]:
    """Per case: the base, the bytes read and read wrong, and the gmma counters."""
    got: dict[str, dict] = defaultdict(dict)
    with open(os.path.join(folder, "results.txt")) as f:
        for line in f:
            m = re.match(r"case (\S+) base=(\d+) kblocks=(\d+) .* wrong_bytes=(\d+) of (\d+)", line)
            if m:
                name, base, kblocks, wrong, total = m.groups()
                got[name].update(base=int(base), kblocks=int(kblocks))
                got[name].update(wrong_bytes=int(wrong), bytes=int(total))
    name = None
    with open(os.path.join(folder, "ncu.txt")) as f:
        for line in f:
            if line.startswith("== "):
                name = line.split()[1]
            elif name and (WAVEFRONTS in line or CONFLICTS in line):
                fields = next(csv.reader([line]))
                key = "wavefronts" if WAVEFRONTS in line else "bank_conflicts"
                got[name][key] = int(float(fields[-1].replace(",", "")))
    return got


def verdicts(case: dict) -> dict:
    """verify's writer = reader verdicts and wavefronts on the case's PTX."""
    ptx = os.path.join(PTX_DIR, case["case"] + ".ptx")
    options = Options(block=(128,), tma_maps=(MAPS[case["span"]],))
    results = check_ptx(ptx, options)
    reader = [r for r in results if r.property.startswith("writer_reader")]
    cost = [r for r in results if r.property.startswith("wavefronts operand")]
    statuses = sorted(r.status.value.upper() for r in reader)
    cex = next((r.counterexample for r in reader if r.counterexample is not None), None)
    unknown = next((r for r in reader if r.status.value == "unknown"), None)
    note = cex.summary.split(":")[0] if cex else (unknown.reason if unknown else "")
    return {
        "verify_writer_reader": " ".join(
            f"{s} x{statuses.count(s)}" for s in dict.fromkeys(statuses)
        ),
        "verify_wavefronts": sum(r.wavefronts or 0 for r in cost),
        "verify_note": note,
    }


def model_wrong_bytes(case: dict, base: int) -> int:
    """The bytes wgmma reads wrong at the H200's base, element by element: verify's
    read map of each k-block's descriptor (as tma_wgmma_base.cu builds it) against
    TMA's placement of the box (the swizzle on the absolute address)."""
    span = case["span"]
    inner, kblocks = (span // 2, span // 32) if span else (8, 1)
    lbo, sbo = (16, 8 * span) if span else (1024, 128)
    b = operand("m64n64k16", "f16", "B", 0)
    wrong = 0
    for kb in range(kblocks):
        start = base + 32 * kb
        base_offset = (start >> 7) & 7 if case["bo_addr"] else 0
        desc = MatrixDescriptor(start, lbo, sbo, SWIZZLE_MODES[case["desc_span"]], base_offset)
        reads = ReadMap(desc, b)
        for n in range(64):
            for k in range(16 * kb, 16 * kb + 16):
                element = n * inner + k if span else (n + 64 * (k // 8)) * 8 + k % 8
                wrong += reads.address(n, k - 16 * kb) != tma_swizzle(base + 2 * element, span)
    return 2 * wrong


def agreement(row: dict) -> str:
    """'yes' where verify refutes exactly where the H200 read wrong bytes."""
    verdict = row["verify_writer_reader"]
    if "UNKNOWN" in verdict:
        return "undecided"
    wrong = row["wrong_bytes"] > 0
    return "yes" if wrong == ("REFUTED" in verdict) else "NO"


def case_rows(folder: str) -> list[dict]:
    got = h200(folder)
    rows = []
    for case in cases():
        measured = got[case["case"]]
        row = {
            "case": case["case"],
            "map_swizzle": MODE[case["span"]],
            "descriptor_swizzle": MODE[case["desc_span"]],
            "descriptor_base_offset": "(start >> 7) & 7" if case["bo_addr"] else "0",
            "static_bytes": case["pad"],
            "base": measured["base"],
            "wgmma": measured["kblocks"],
            "wrong_bytes": measured["wrong_bytes"],
            "bytes": measured["bytes"],
            "model_wrong_bytes": model_wrong_bytes(case, measured["base"]),
            **verdicts(case),
            "wavefronts": measured["wavefronts"],
            "bank_conflicts": measured["bank_conflicts"],
        }
        row["agree"] = agreement(row)
        if row["model_wrong_bytes"] != row["wrong_bytes"]:
            row["agree"] = "NO (wrong bytes)"
        if row["verify_wavefronts"] != row["wavefronts"]:
            row["agree"] = "NO (wavefronts)"
        rows.append(row)
    return rows


def class_rows(tma_rows: list[dict]) -> list[dict]:
    """Per class (the mode, and how the layout relates to it), the launches measured
    and whether the model's wavefronts were the H200's on every one."""
    groups: dict[tuple, list[tuple[int, int, int]]] = defaultdict(list)
    with open(os.path.join(RESULTS, "wgmma_h200.csv")) as f:
        for r in csv.DictReader(f):
            kind = "canonical" if CANONICAL.match(r["config"]) else "non-canonical (legal)"
            key = (r["swizzle"], f"{r['major']}-major {kind}", "descriptor probe")
            groups[key].append(
                (
                    int(r["wavefronts"]),
                    int(r["model_wavefronts"]),
                    int(r["operand_bytes"]) * int(r["repeats"]),
                )
            )
    for r in tma_rows:
        same = r["map_swizzle"] == r["descriptor_swizzle"]
        kind = "TMA box (canonical)" if same else f"TMA box of {r['map_swizzle']} (mismatch)"
        key = (r["descriptor_swizzle"], f"K-major {kind}", "TMA + wgmma")
        groups[key].append((r["wavefronts"], r["verify_wavefronts"], 2048 * r["wgmma"]))
    rows = []
    for (mode, layout, source), runs in sorted(groups.items()):
        rows.append(
            {
                "swizzle": mode,
                "layout": layout,
                "source": source,
                "launches": len(runs),
                "operand_bytes": sum(b for _, _, b in runs),
                "wavefronts": sum(w for w, _, _ in runs),
                "model_wavefronts": sum(m for _, m, _ in runs),
                "bytes_per_wavefront": round(
                    sum(b for _, _, b in runs) / sum(w for w, _, _ in runs), 2
                ),
                "model": "exact" if all(w == m for w, m, _ in runs) else "differs",
            }
        )
    return rows


def write(name: str, rows: list[dict]) -> None:
    with open(os.path.join(RESULTS, name), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def main(argv: list[str]) -> int:
    if len(argv) > 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    folder = argv[0] if argv else os.path.join(RESULTS, "wgmma_tma_base_h200")
    rows = case_rows(folder)
    write("wgmma_tma_base_h200.csv", rows)
    write("wgmma_classes_h200.csv", class_rows(rows))
    for r in rows:
        print(r)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
