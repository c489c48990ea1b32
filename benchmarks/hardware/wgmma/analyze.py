"""Score the H200's wgmma probe (run.sh) against verify.model.wgmma.

    python -m benchmarks.hardware.wgmma.analyze DIR

DIR holds what run.sh left in $OUT (maps.txt, launches.txt, ncu.csv, gpu.txt).
Writes benchmarks/results/wgmma_h200.csv (one row per profiled launch) and
tests/data/hopper/wgmma_h200_maps.txt (the read maps, the tests' hardware oracle),
and prints the summary table of benchmarks/results/wgmma_h200.md.

Each map is compared with three readings of the base offset: the model's (the XOR
takes the pattern row less the base offset), one that ignores the field, and one
that XORs it into the row; only a reading that matches every element is kept.
"""

from __future__ import annotations

import csv
import re
import shutil
import sys
from dataclasses import replace
from pathlib import Path

from verify.model.expr import BinOp, Const, Var, compiled
from verify.model.wgmma import (
    MatrixDescriptor,
    Operand,
    ReadMap,
    SwizzleMode,
    read_wavefronts,
    swizzled_address,
)

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
CONFIG = re.compile(r'\{"(\w+)", (\d+), (\d+), (\d+), (\d+), (\d+), (\d+), (\d+)\}')
WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum"
CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum"


def configs() -> dict[str, tuple[MatrixDescriptor, Operand]]:
    """probe.cu's configurations as descriptors of its B operand (64 n x 16 k, f16)."""
    out = {}
    for name, *fields in CONFIG.findall((HERE / "probe.cu").read_text()):
        trans, mode, start, lbo, sbo, bo, _ = map(int, fields)
        desc = MatrixDescriptor(start, lbo, sbo, SwizzleMode(mode), bo)
        out[name] = desc, Operand(64, 16, 16, "MN" if trans else "K")
    return out


def maps(path: Path) -> dict[str, list[int]]:
    """name -> byte offsets read, n major, k minor (negative: the probe disagreed)."""
    with open(path) as f:
        return {p[1]: [int(v) for v in p[3:]] for p in (line.split() for line in f)}


def xor_reading(desc: MatrixDescriptor, op: Operand) -> list[int]:
    """The alternative reading 'pattern row XOR base offset', for the record: the
    linear addresses (the XOR undone: it is an involution) with that row's XOR."""
    no_bo = replace(desc, base_offset=0)
    a = Var("a")
    undo = compiled(swizzled_address(a, desc.swizzle))
    b = desc.swizzle.bits
    row = BinOp("%", BinOp("^", BinOp(">>", a, Const(7)), Const(desc.base_offset)), Const(1 << b))
    redo = compiled(BinOp("^", a, BinOp("<<", row, Const(4))))
    if desc.swizzle is SwizzleMode.NONE:
        return flat(desc, op)
    return [redo({"a": undo({"a": x})}) for x in flat(no_bo, op)]


def mismatches(got: list[int], want: list[int]) -> int:
    return sum(g != w for g, w in zip(got, want))


def flat(desc: MatrixDescriptor, op: Operand) -> list[int]:
    return [a for row in ReadMap(desc, op).table() for a in row]


def launches(directory: Path) -> list[dict]:
    """One dict per profiled launch: config, variant (rs/ss), repeats, metrics."""
    with open(directory / "ncu.csv") as f:
        rows = list(csv.DictReader(line for line in f if line[:1] == '"'))
    metrics: dict[int, dict[str, int]] = {}
    for r in rows:
        metrics.setdefault(int(r["ID"]), {})[r["Metric Name"]] = int(r["Metric Value"])
    with open(directory / "launches.txt") as f:
        listed = [line.split() for line in f]
    return [
        {"config": n, "variant": v, "repeats": int(rep), **metrics[i]}
        for i, (n, v, rep) in enumerate(listed)
    ]


def main(directory: Path) -> None:
    table, read = configs(), maps(directory / "maps.txt")
    out = []
    for launch in launches(directory):
        desc, op = table[launch["config"]]
        got = read[launch["config"]]
        no_bo = replace(desc, base_offset=0)
        operands = 2 if launch["variant"] == "ss" else 1
        out.append(
            {
                "config": launch["config"],
                "major": op.major,
                "swizzle": desc.swizzle.label,
                "start": desc.start_address,
                "lbo": desc.leading_byte_offset,
                "sbo": desc.stride_byte_offset,
                "base_offset": desc.base_offset,
                "a_from": "shared" if operands == 2 else "registers",
                "repeats": launch["repeats"],
                "operand_bytes": operands * op.rows * op.k * op.elem_bytes,
                "wavefronts": launch[WAVEFRONTS],
                "model_wavefronts": launch["repeats"] * operands * read_wavefronts(op),
                "bank_conflicts": launch[CONFLICTS],
                "map_wrong_model": mismatches(got, flat(desc, op)),
                "map_wrong_ignoring_base_offset": mismatches(got, flat(no_bo, op)),
                "map_wrong_xor_base_offset": mismatches(got, xor_reading(desc, op)),
            }
        )
    with open(ROOT / "benchmarks/results/wgmma_h200.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(out[0]))
        writer.writeheader()
        writer.writerows(out)
    shutil.copy(directory / "maps.txt", ROOT / "tests/data/hopper/wgmma_h200_maps.txt")
    exact = sum(r["wavefronts"] == r["model_wavefronts"] for r in out)
    maps_ok = sum(mismatches(read[n], flat(*table[n])) == 0 for n in read)
    print(f"wavefronts: model = measured on {exact} of {len(out)} launches")
    print(f"read maps: model = measured on {maps_ok} of {len(read)} configurations")
    for r in out:
        print(
            f"| {r['config']} | {r['a_from']} | {r['repeats']} | {r['wavefronts']} | "
            f"{r['model_wavefronts']} | {r['bank_conflicts']} | {r['map_wrong_model']} | "
            f"{r['map_wrong_ignoring_base_offset']} | {r['map_wrong_xor_base_offset']} |"
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
