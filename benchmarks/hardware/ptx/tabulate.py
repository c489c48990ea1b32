"""Per-instruction table of the H200 measurements of measure.sh, and the checks of the
PTX interpreter against them.

    python -m benchmarks.hardware.ptx.tabulate RAW_DIR
        RAW_DIR: measure.sh's ptx_h200_raw.tar.gz unpacked, with measure_zfill.sh's
        zfill.csv as ncu/zfill_copies.csv and zfill.sass as sass/zfill.sass (the
        committed benchmarks/results/ptx_h200.raw.tar.gz is laid out so). Writes
        benchmarks/results/ptx_h200.csv and prints the summary numbers that
        benchmarks/results/ptx_h200.md quotes.

Rows: every SASS instruction with shared wavefronts or a shared opcode (LDS, STS,
LDSM, STSM, LDGSTS, ATOMS) in Nsight Compute's source page, mapped to its source line
by the cubin's line info (nvdisasm -g; the same build the ncu run measured), with the
PTX opcodes the PTX attributes (.loc) to that line. Wavefronts per execution is the
source page's "L1 Wavefronts Shared" over its "Instructions Executed".
"""

import csv
import re
import struct
import sys
from collections import Counter, defaultdict
from pathlib import Path

from benchmarks.hardware.ptx import broadcast_rule
from oracle.ptx_interpreter import BlockRun, run_block
from oracle.ptx_kernels import LAUNCHES, run_kernel
from oracle.ptx_syntax import parse

HERE = Path(__file__).parent
RESULTS = HERE.parent.parent / "results"
SHARED_SASS = ("LDS", "STS", "LDSM", "STSM", "LDGSTS", "ATOMS")
KERNELS = {  # measure.sh's per-kernel ncu files -> (PTX file, mangled-name fragment)
    "transpose_unpadded": "kernels",
    "transpose_padded": "kernels",
    "transpose_xor": "kernels",
    "ldmatrix_plain": "kernels",
    "ldmatrix_sw333": "kernels",
    "vector_ldst": "kernels",
    "pipeline_double": "kernels",
    "pipeline_triple_mod": "kernels",
    "pipeline_shift": "kernels",
    "tail_dynamic": "kernels",
    "broadcast_loads": "kernels",
    "sgemm_sm80": "sgemm",
    "zfill_copies": "zfill",
}
BROADCAST_FIRST_LINE = 10  # broadcast.cu: pattern p is on line 10 + p


def source_page(path: Path) -> tuple[str, list[dict[str, str]]]:
    """(demangled kernel name, rows) of an `ncu --page source --csv` file."""
    rows = list(csv.reader(path.open()))
    start = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    name = next(r[1] for r in rows[:start] if r and r[0] == "Kernel Name")
    header = rows[start]
    return name, [
        dict(zip(header, r, strict=True)) for r in rows[start + 1 :] if len(r) == len(header)
    ]


def sass_lines(sass: str, mangled: str) -> dict[int, tuple[str, int]]:
    """SASS offset -> (source file name, line) for one function of `nvdisasm -g`."""
    start = sass.index(f".text.{mangled}:")
    end = sass.find("//----", start)
    out: dict[int, tuple[str, int]] = {}
    cur = ("?", 0)
    for line in sass[start : end if end > 0 else None].splitlines():
        loc = re.search(r'//## File "(.*)", line (\d+)', line)
        if loc:
            cur = (Path(loc.group(1)).name, int(loc.group(2)))
            continue
        ins = re.match(r"\s*/\*([0-9a-f]{4,})\*/", line)
        if ins:
            out[int(ins.group(1), 16)] = cur
    return out


def sass_functions(sass: str) -> list[str]:
    return re.findall(r"^\.text\.(\S+):$", sass, re.M)


def ptx_opcodes_by_line(ptx_text: str, mangled: str) -> dict[tuple[str, int], list[str]]:
    module = parse(ptx_text)
    func = module.functions[mangled]
    out: dict[tuple[str, int], list[str]] = defaultdict(list)
    for ins in func.body:
        if ins.loc is None or not _is_shared(ins.opcode):
            continue
        key = (Path(module.files.get(ins.loc[0], "?")).name, ins.loc[1])
        if ins.opcode not in out[key]:
            out[key].append(ins.opcode)
    return out


def _is_shared(opcode: str) -> bool:
    if opcode.startswith(("cp.async.commit", "cp.async.wait")):
        return False
    return ".shared" in opcode or opcode.startswith(("ldmatrix", "stmatrix", "cp.async."))


def table(raw: Path) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    ptx_dir = HERE / "ptx"
    texts = {
        "kernels": (ptx_dir / "kernels_sm90.ptx").read_text(),
        "sgemm": (ptx_dir / "sgemm_sm80_sm90.ptx").read_text(),
        "zfill": (ptx_dir / "zfill_sm90.ptx").read_text(),
    }
    sass = {
        "kernels": (raw / "sass" / "kernels.sass").read_text(),
        "sgemm": (raw / "sass" / "sgemm.sass").read_text(),
        "zfill": (raw / "sass" / "zfill.sass").read_text(),
    }
    for kernel, which in KERNELS.items():
        path = raw / "ncu" / f"{kernel}.csv"
        if not path.exists() or "Address" not in path.read_text():
            continue
        _, page = source_page(path)
        mangled = next(
            f
            for f in sass_functions(sass[which])
            if kernel in f or which == "sgemm" and "gemm_device" in f
        )
        lines = sass_lines(sass[which], mangled)
        ptx_ops = ptx_opcodes_by_line(texts[which], mangled)
        base = int(page[0]["Address"], 16)
        for r in page:
            words = r["Source"].split()
            if not words or words[0] == "@!PT":
                continue  # never executed (ptxas pads LDGSTS with `@!PT LDS RZ, [RZ]`)
            op = words[1] if words[0].startswith("@") else words[0]
            wavefronts = int(r.get("L1 Wavefronts Shared") or 0)
            if not (wavefronts or op.split(".")[0] in SHARED_SASS):
                continue
            executions = int(r.get("Instructions Executed") or 0)
            file, line = lines[int(r["Address"], 16) - base]
            rows.append(
                {
                    "kernel": kernel,
                    "source": f"{file}:{line}",
                    "ptx_opcode": " ".join(ptx_ops.get((file, line), [])),
                    "sass_offset": hex(int(r["Address"], 16) - base),
                    "sass_opcode": op,
                    "executions": executions,
                    "wavefronts": wavefronts,
                    "wavefronts_per_execution": round(wavefronts / executions, 3)
                    if executions
                    else "",
                    "ideal_wavefronts": int(r.get("L1 Wavefronts Shared Ideal") or 0),
                }
            )
    return rows


def broadcast_scores(rows: list[dict[str, object]]) -> dict[str, Counter[str]]:
    """How often each rule gives the measured cost, by family (designed / held-out)."""
    patterns = [line.split() for line in (HERE / "broadcast_patterns.txt").read_text().splitlines()]
    scores: dict[str, Counter[str]] = defaultdict(Counter)
    for r in rows:
        if r["kernel"] != "broadcast_loads" or not str(r["sass_opcode"]).startswith("LDS"):
            continue
        line = int(str(r["source"]).split(":")[1])
        name, width, *offs = patterns[line - BROADCAST_FIRST_LINE]
        offsets = [int(o) for o in offs]
        family = "held-out" if name.startswith("held") else "designed"
        measured = r["wavefronts"]
        scores[family]["loads"] += 1
        for rule in ("phase_model", "rule_l", "per_half"):
            scores[family][rule] += (
                getattr(broadcast_rule, rule)(offsets, int(width) // 8) == measured
            )
    return scores


def write_csv(rows: list[dict[str, object]]) -> None:
    with (RESULTS / "ptx_h200.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def sgemm_params() -> dict[int | str, int | bytes]:
    """The launch of `sgemm_sm80 512 512 256 T N` (measure.sh): prob_shape (M, N, K),
    the A/B/C pointers (any global addresses), ldA = ldB = K, ldC = M, alpha 1, beta 0
    (f16 bits)."""
    return {0: struct.pack("<iii", 512, 512, 256), 2: 1 << 32, 3: 256, 7: 2 << 32, 8: 256,
            12: 3 << 32, 13: 512, 16: 0x3C00, 17: 0}  # fmt: skip


SGEMM_BLOCKS = 16  # 512 x 512 in 128 x 128 tiles


def sgemm_run() -> BlockRun:
    ptx = (HERE / "ptx" / "sgemm_sm80_sm90.ptx").read_text()
    return run_block(ptx, "gemm_device", block=(128, 1, 1), params=sgemm_params(), shared_base=1024)


def executions_check(rows: list[dict[str, object]]) -> list[str]:
    """The interpreter's warp instructions per source line against the H200's
    executions (one block; sgemm's 16 blocks do the same work each)."""
    out = []
    measured: dict[tuple[str, str], int] = Counter()
    for r in rows:
        measured[(str(r["kernel"]), str(r["source"]))] += int(str(r["executions"]))
    runs = {kernel: (run_kernel(kernel), 1) for kernel in LAUNCHES}
    runs["sgemm_sm80"] = (sgemm_run(), SGEMM_BLOCKS)
    for kernel, (run, blocks) in runs.items():
        predicted: Counter[str] = Counter()
        for acc in run.accesses:
            if acc.loc:
                predicted[f"{Path(acc.loc[0]).name}:{acc.loc[1]}"] += blocks * len(acc.warps())
        for source, count in sorted(predicted.items()):
            got = measured.get((kernel, source))
            if got != count:
                out.append(f"{kernel} {source}: interpreter {count} warp instructions, H200 {got}")
    return out


def opcode_totals(path: Path) -> dict[str, tuple[int, int]]:
    """Per kernel (demangled name's base), (sum of the per-opcode shared wavefront
    metrics, their instruction counts), from measure.sh's --metrics runs."""
    rows = list(csv.reader(path.open()))
    start = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
    header = rows[start]
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows[start + 1 :]:
        if len(r) != len(header):
            continue
        d = dict(zip(header, r, strict=True))
        kernel = d["Kernel Name"].split("(")[0].split("<")[0].split()[-1]
        value = int(float(d["Metric Value"].replace(",", "")))
        totals[kernel][0 if "wavefronts" in d["Metric Name"] else 1] += value
    return {k: (v[0], v[1]) for k, v in totals.items()}


def totals_check(raw: Path, rows: list[dict[str, object]]) -> list[str]:
    """The source page's wavefronts, summed per kernel, against the per-opcode metrics."""
    page: Counter[str] = Counter()
    for r in rows:
        page[str(r["kernel"])] += int(str(r["wavefronts"]))
    totals = opcode_totals(raw / "ncu" / "opcode_totals.csv")
    totals.update({"sgemm_sm80": opcode_totals(raw / "ncu" / "sgemm_totals.csv")["gemm_device"]})
    return [
        f"{k}: source page {page[k]}, per-opcode metrics {totals.get(k, (None,))[0]}" for k in page
    ]


def markdown_table(rows: list[dict[str, object]]) -> list[str]:
    """Rows grouped by (kernel, source line, SASS opcode), broadcast loads left out
    (their own section): the table of ptx_h200.md."""
    groups: dict[tuple[str, str, str, str], list[int]] = {}
    for r in rows:
        if r["kernel"] == "broadcast_loads":
            continue
        key = (str(r["kernel"]), str(r["source"]), str(r["ptx_opcode"]), str(r["sass_opcode"]))
        g = groups.setdefault(key, [0, 0, 0, 0])
        g[0] += 1
        g[1] += int(str(r["executions"]))
        g[2] += int(str(r["wavefronts"]))
        g[3] += int(str(r["ideal_wavefronts"]))
    out = [
        "| kernel | source | PTX opcode | SASS opcode | SASS instrs | executions |"
        " wavefronts | per execution | ideal |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for (kernel, source, ptx, sass), (n, ex, wf, ideal) in groups.items():
        per = f"{wf / ex:g}" if ex else "-"
        out.append(
            f"| {kernel} | {source} | `{ptx}` | {sass} | {n} | {ex} | {wf} | {per} | {ideal} |"
        )
    return out


def main(argv: list[str]) -> None:
    raw = Path(argv[1])
    rows = table(raw)
    write_csv(rows)
    print(f"{len(rows)} rows written to {RESULTS / 'ptx_h200.csv'}")
    for family, score in broadcast_scores(rows).items():
        print(family, dict(score))
    if "--markdown" in argv:
        print("\n".join(markdown_table(rows)))
    for line in totals_check(raw, rows):
        print("TOTALS", line)
    for line in executions_check(rows):
        print("MISMATCH", line)


if __name__ == "__main__":
    main(sys.argv)
