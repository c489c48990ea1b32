"""verify's side of `tma_kernels.py` and the results table (its ``table`` step).

    python benchmarks/hardware/tma_kernels/tma_kernels.py table

`verify_checks` checks each run's PTX as a user would: ``t09_tma`` and
``device_matmul`` through ``verify ttgir --ptx`` (`verify.ttgir.from_ptx.check`,
their maps read from the kernel: Triton's ``tensordesc_meta``, the
``tensormap.replace`` instructions), the two variants through ``verify ptx``
(`verify.ptx.check.check_ptx`) with the maps the H200 run encoded given as
``--tma-map``. Every run at the launch's values: block 128, its grid, M = N = K
= 512, and the dynamic shared base the H200 gives (1024-aligned with no static
shared memory; the pad variant's 1152 is a multiple of 128, ``--shared-align 128``).
`rows` joins that with the committed per-SASS-instruction measurement;
tests/ptx/test_tma_kernels_h200.py replays the same comparison in CI.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tarfile
from collections import Counter

from benchmarks.hardware.ptx import triton_tutorials as tt
from benchmarks.hardware.tma_kernels import tma_kernels as tk

MEASURED_CSV = os.path.join(tk.RESULTS, "tma_kernels_h200.measured.csv")
RESULTS_JSON = os.path.join(tk.RESULTS, "tma_kernels_h200.results.json")
RAW = os.path.join(tk.RESULTS, "tma_kernels_h200.raw.tar.gz")
OUT_CSV = os.path.join(tk.RESULTS, "tma_kernels_h200.csv")
OUT_MD = os.path.join(tk.RESULTS, "tma_kernels_h200.md")
SIZES = ("512",) * 3
# run -> (the TTGIR stem, in tests/data/hopper/tensormaps/, that verify ttgir reads with
#         the run's PTX, or None: verify ptx; grid; i32 params M N K; --shared-align;
#         --tma-map terms for verify ptx)
H_MAP = "dataType=FLOAT16,boxDim={64,128},swizzle=%s,param=matmul_kernel_tma_param_%d"
T09 = ((16, 1, 1), (15, 16, 17))
DEVICE = ((4, 4, 1), (3, 4, 5))
SETUPS = {
    "t09_tma": ("t09_tma.sm90", *T09, 1024, ()),
    "t09_tma_swnone": (
        None,
        *T09,
        1024,
        (H_MAP % ("NONE", 0), H_MAP % ("NONE", 5), H_MAP % ("128B", 10)),
    ),
    "t09_tma_pad128": (
        None,
        *T09,
        128,
        (H_MAP % ("128B", 0), H_MAP % ("128B", 5), H_MAP % ("128B", 10)),
    ),
    "device_matmul": ("device_matmul.sm90", *DEVICE, 1024, ()),
    "device_matmul_a_swnone": ("device_matmul.sm90", *DEVICE, 1024, ()),
}
DEVICE_TIME = (
    "7.0 minutes (four calls: the first launched only device_matmul, each later one "
    "measured every run defined by then)"
)
GMMA_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum"
GMMA_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum"
GMMA_INSTRUCTIONS = "sm__inst_executed_pipe_tensor_op_gmma.sum"  # counted per warp


def ptx_path(run: str) -> str:
    """The PTX the run's cubin was assembled from."""
    return tk.KERNELS[tk.RUNS[run][0]][0]


def verify_checks(run: str) -> list[dict]:
    """verify's checks of `run`'s PTX at the launch's values, as JSON dicts."""
    from verify.report.text import result_json

    stem, grid, params, align, maps = SETUPS[run]
    if stem:
        from verify.ttgir import from_ptx

        with open(os.path.join(tk.DATA, f"{stem}.json"), encoding="utf-8") as f:
            meta = json.load(f)["tensordesc_meta"]
        options = from_ptx.PtxOptions(
            ptx=ptx_path(run), tensordesc_meta=meta, grid=grid, shared_align=align,
            assume=tuple(f"{n}={v}" for n, v in zip("MNK", SIZES)),
        )  # fmt: skip
        results = from_ptx.check(os.path.join(tk.DATA, f"{stem}.ttgir"), options=options)
    else:
        from verify.ptx.check import Options, check_ptx

        ptx_options = Options(
            block=(128,), grid=grid, shared_align=align, tma_maps=maps,
            assume=tuple(f"param_{p}={v}" for p, v in zip(params, SIZES)),
        )  # fmt: skip
        results = check_ptx(ptx_path(run), ptx_options)
    return [result_json(r) for r in results]


def by_line(checks: list[dict]) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for c in checks:
        if "ptx_line" in c["facts"]:
            out.setdefault(c["facts"]["ptx_line"], []).append(c)
    return out


def _is(check: dict, head: str, part: str) -> bool:
    return check["property"].startswith(head) and part in check["property"]


def figure(checks: list[dict]) -> tuple[str, str, str]:
    """(verify's wavefronts per warp instruction, its status, reason) of one PTX line:
    its conflict_free check, or for a wgmma its operands' wavefronts summed over the
    warpgroup's 4 warps (HGMMA is counted per warp); TMA copies have no figure."""
    for c in checks:
        if c["property"].startswith("conflict_free"):
            if c["status"] == "unknown":
                return "UNKNOWN", "unknown", c["reason"] or ""
            return str(c["wavefronts"]), c["status"], ""
    operands = [c for c in checks if _is(c, "wavefronts", " operand ")]
    if operands:
        if any(c["status"] == "unknown" for c in operands):
            return "UNKNOWN", "unknown", "; ".join(c["reason"] or "" for c in operands)
        total = sum(c["wavefronts"] for c in operands)
        return f"{total / 4:g}", "proved", f"wgmma: {total} per warpgroup / 4 warps"
    if any("cp.async.bulk" in c["property"] for c in checks):
        return "", "", "TMA copy: its cost is not modelled"
    if any("tensormap." in c["property"] for c in checks):
        return "", "", "tensormap.*: not modelled (ptxas makes it LDS/STS of the map's template)"
    return "", "", "no check at this PTX line" if checks else "no shared access in verify"


def kind(prop: str) -> str:
    """A check's kind and operand, without the op and instruction."""
    head = prop.split(" ")[0]
    if head == "aligned":
        head = " ".join(prop.split(" ")[:2])
    for operand in ("A", "B"):
        if f"operand {operand} of" in prop:
            return f"{head} {operand}"
    return head


def verdicts(checks: list[dict]) -> str:
    """The writer = reader, placement and alignment verdicts of one PTX line."""
    seen = Counter(
        f"{kind(c['property'])}: {c['status'].upper()}"
        for c in checks
        if c["property"].startswith(("writer_reader", "placement", "aligned 128"))
    )
    return "; ".join(f"{k}{f' x{n}' if n > 1 else ''}" for k, n in sorted(seen.items()))


def measured_rows(path: str = MEASURED_CSV) -> dict[tuple[str, str], list[str]]:
    with open(path, encoding="utf-8") as f:
        return {(r[0], r[1]): r for r in list(csv.reader(f))[1:]}


def rows(run: str, checks: list[dict], measured: dict) -> list[list[str]]:
    """One row per measured SASS instruction of `run` (ptxas's never-executed
    ``@!PT LDS RZ, [RZ]`` left out)."""
    stem = tk.RUNS[run][0]
    with open(ptx_path(run), encoding="utf-8") as f:
        ptx_text = f.read().splitlines()
    with open(os.path.join(tk.BUILD, f"{stem}.map.csv"), encoding="utf-8") as f:
        lines = dict(list(csv.reader(f))[1:])
    tt._wgmma_by_order(lines, measured, run, ptx_text)
    lined = by_line(checks)
    on = predicated_on(run)
    out = []
    for (krun, offset), row in measured.items():
        if krun != run or row[2].startswith("@!PT"):
            continue
        line = int(lines.get(offset, 0))
        execs = int(float(row[3].replace(",", "") or 0))
        waves = float(row[4].replace(",", "") or 0)
        ideal = float(row[5].replace(",", "") or 0)
        here = lined.get(line, [])
        value, status, reason = figure(here)
        threads = on.get(offset, 0)
        out.append([
            run, offset, row[2], str(line), ptx_text[line - 1].strip() if line else "",
            str(execs), f"{waves / execs:g}" if execs else "-",
            f"{ideal / execs:g}" if execs else "-", value, status, verdicts(here), reason,
            str(threads), agreement(value, execs, waves, threads),
        ])  # fmt: skip
    return out


def agreement(value: str, execs: int, waves: float, threads: int) -> str:
    """Whether verify's figure per warp instruction is the H200's: per execution, or,
    for an instruction some warps execute with every lane off (ncu counts those
    executions, with no wavefront), per warp of its predicated-on threads."""
    if value in ("", "UNKNOWN") or not execs:
        return ""
    if f"{waves / execs:g}" == value:
        return "yes"
    warps = threads // 32
    if threads % 32 == 0 and warps < execs and f"{waves / warps:g}" == value:
        return f"yes, per warp with lanes on ({warps} of {execs} executions)"
    return "no"


def _raw(run: str, kind: str, raw: str = RAW) -> str:
    with tarfile.open(raw) as tar:
        member = tar.extractfile(f"tma_kernels_h200/{run}.{kind}.csv")
        assert member is not None
        return io.TextIOWrapper(member, encoding="utf-8").read()


def gmma(run: str) -> dict[str, float]:
    """The gmma counters of `run`'s one profiled launch (ncu's raw page)."""
    text = _raw(run, "gmma")
    launch = list(csv.DictReader(text[text.find('"ID"') :].splitlines()))[1]  # [0]: units
    keys = (GMMA_WAVEFRONTS, GMMA_CONFLICTS, GMMA_INSTRUCTIONS)
    return {k: float(launch[k].replace(",", "")) for k in keys}


def predicated_on(run: str) -> dict[str, int]:
    """ncu's Predicated-On Thread Instructions Executed per SASS offset of `run`
    (its source page in the committed raw archive)."""
    table = list(csv.reader(_raw(run, "ncu").splitlines()))
    head = next(i for i, r in enumerate(table) if r and r[0] == "Address")
    col = {name: i for i, name in enumerate(table[head])}
    body = [r for r in table[head + 1 :] if len(r) == len(table[head])]
    start = int(body[0][col["Address"]], 16)
    key = "Predicated-On Thread Instructions Executed"
    return {
        f"0x{int(r[col['Address']], 16) - start:x}": int(r[col[key]].replace(",", "") or 0)
        for r in body
    }


HEADER = ["run", "sass_offset", "sass", "ptx_line", "ptx", "executions",
          "h200_wavefronts_per_exec", "h200_ideal_per_exec", "verify_wavefronts",
          "verify_status", "verify_checks", "reason", "h200_predicated_on_threads",
          "agree"]  # fmt: skip


def summary(run: str, checks: list[dict]) -> dict:
    """Counts of verify's writer = reader / placement / aligned verdicts of `run`'s
    TMA copies and wgmma operands, and its gmma wavefronts per wgmma."""
    count: Counter = Counter()
    for c in checks:
        prop = c["property"]
        if not ("cp.async.bulk.tensor" in prop or "wgmma" in prop):
            continue
        for what in ("writer_reader", "placement", "aligned 128"):
            if prop.startswith(what):
                count[(what, c["status"])] += 1
    operands = [c for c in checks if _is(c, "wavefronts", "wgmma")]
    per_wgmma = {c["facts"]["ptx_line"]: 0 for c in operands}
    for c in operands:
        per_wgmma[c["facts"]["ptx_line"]] += c["wavefronts"] or 0
    return {"count": count, "per_wgmma": sorted(set(per_wgmma.values()))}


def _cell(count: Counter, what: str) -> str:
    parts = [
        f"{count[(what, s)]} {s}" for s in ("proved", "refuted", "unknown") if count[(what, s)]
    ]
    return ", ".join(parts) or "none"


def first_refutation(checks: list[dict]) -> str:
    """verify's first writer = reader or placement refutation, with its counterexample."""
    for c in checks:
        if c["status"] == "refuted" and c["property"].startswith(("writer_reader", "placement")):
            cex = (c.get("counterexample") or {}).get("summary") or c.get("reason") or ""
            what = c["property"].split(" [")[0]
            return f"`{what}` (PTX line {c['facts']['ptx_line']}): {cex}"
    return ""


INTRO = """# Triton's sm_90 TMA kernels on the H200: verify's proofs against the run

Issue 25 items 1 and 5. `benchmarks/hardware/tma_kernels/tma_kernels.py` (its module doc
has the method). Kernels: Triton 3.9's tutorial 09 matmul with host tensor descriptors
(`tests/data/hopper/tensormaps/t09_tma.sm90.ptx`) and a matmul building its two maps on
the device with `tensormap.replace` (`device_matmul.sm90.ptx`, maps in a 256-byte global
scratch per program, no host encode); sm_90a PTX assembled by Triton's bundled ptxas
13.4 (`-arch=sm_90a -lineinfo`, each SASS instruction's PTX line from `nvdisasm -g`,
HGMMA in order). fp16, M = N = K = 512, 128 x 128 x 64 tiles (16 CTAs, 8 k-tiles), 4
warps, 3 stages. Three variants that verify must refute, two of tutorial 09:
`t09_tma_swnone`, the same cubin with A's and B's host maps encoded without swizzle
while its wgmma descriptors read 128B; `t09_tma_pad128`, its PTX with 128 bytes of
static shared memory (`benchmarks/hardware/tma_kernels/cubin/t09_tma_pad128.ptx`), which
moves the dynamic base from 1024 to 1152 (`smem_base_h200.txt`; ncu's static shared
128 bytes); and `device_matmul_a_swnone`, the device-built-map matmul whose PTX builds A's
map with `swizzle_mode` 0 (`benchmarks/hardware/tma_kernels/cubin/device_matmul_a_swnone.ptx`).

Measured {date} on one {gpu} ({ncu}, `--clock-control none`; CuPy {cupy}, maps
encoded by `cuTensorMapEncodeTiled` through ctypes as Triton's launcher encodes them),
device time {device}. Each run launched twice on fresh uniform(-1, 1) inputs, output
poisoned with NaN, compared with numpy in float64; then once under `ncu --section
SourceCounters --page source --print-source sass` (per SASS instruction, L1 Wavefronts
Shared / Instructions Executed) and once under `--metrics` for
`l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum`. Raw: `tma_kernels_h200.results.json`,
`tma_kernels_h200.measured.csv`, ncu's pages `tma_kernels_h200.raw.tar.gz`; per SASS
instruction: `tma_kernels_h200.csv`. Replayed in CI by `tests/ptx/test_tma_kernels_h200.py`.

verify's side (`benchmarks/hardware/tma_kernels/table.py`): `t09_tma` and `device_matmul`
as `verify ttgir K.sm90.ttgir --ptx K.sm90.ptx --grid G --shared-align 1024 --assume M=512
--assume N=512 --assume K=512` (maps read from the kernel); the variants as `verify ptx
--block 128 --grid 16 --assume param_15=512 ...` with the maps the run encoded as
`--tma-map 'dataType=FLOAT16,boxDim={{64,128}},swizzle=S,param=...'`, the pad variant at
`--shared-align 128` (its base, 1152, is 128 mod 1024).

"""


def main(measured_csv: str = MEASURED_CSV) -> None:
    with open(RESULTS_JSON, encoding="utf-8") as f:
        results = json.load(f)
    measured = measured_rows(measured_csv)
    table = [HEADER]
    lines = [
        "| run | H200 product (2 launches) | verify writer = reader | placement | aligned 128 "
        "| gmma wavefronts per wgmma: verify / H200 | SASS rows: verify = H200 |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    notes = []
    for run in tk.RUNS:
        checks = verify_checks(run)
        mine = rows(run, checks, measured)
        table += mine
        launches = [r for r in results["runs"] if r["run"] == run]
        product = ", ".join(
            f"{'right' if r['right'] else 'WRONG'} ({r['relative_error']:.1e}, "
            f"{r['wrong_elements']:,} of {r['elements']:,} off"
            + ("" if r["right"] else f"; {r['error_against_prediction']:.1e} off the predicted")
            + ")"
            for r in launches
        )
        s = summary(run, checks)
        with_figure = [r for r in mine if r[8] not in ("", "UNKNOWN")]
        agree = sum(r[13].startswith("yes") for r in with_figure)
        per = "/".join(map(str, s["per_wgmma"]))
        g = gmma(run)
        h200 = f"{g[GMMA_WAVEFRONTS] / (g[GMMA_INSTRUCTIONS] / 4):g}"
        h200 += f" ({g[GMMA_WAVEFRONTS]:,.0f} / {g[GMMA_INSTRUCTIONS] / 4:,.0f})"
        h200 += f", {g[GMMA_CONFLICTS]:g} conflicts"
        lines.append(
            f"| {run} | {product} | {_cell(s['count'], 'writer_reader')} | "
            f"{_cell(s['count'], 'placement')} | {_cell(s['count'], 'aligned 128')} | "
            f"{per} / {h200} | {agree} of {len(with_figure)} with a figure "
            f"({len(mine)} rows) |"
        )
        refuted = first_refutation(checks)
        if refuted:
            notes.append(f"- **{run}**: first refutation, {refuted}")
    with open(OUT_CSV, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(table)
    with open(OUT_MD, "w", encoding="utf-8") as f:
        f.write(INTRO.format(**_header(results)))
        f.write("\n".join(lines) + "\n\n" + "\n".join(notes) + "\n\n" + FINDINGS)
        f.write("\n" + markdown(table))
    print("\n".join(lines + notes))


def markdown(table: list[list[str]]) -> str:
    """One line per SASS instruction: the H200's figure, verify's, and verify's
    writer = reader, placement and alignment verdicts at its PTX line."""
    out = [
        "| run | SASS (offset) | PTX line: instruction | executions | H200 (ideal) | verify "
        "| agree | verify's other checks there |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in table[1:]:
        opcode = r[4].split()[0] if r[4] else ""
        shown = r[8] if r[9] != "unknown" else f"UNKNOWN: {r[11]}"
        if r[8] and r[9] != "unknown":
            shown += f" ({r[9]})"
        elif not r[8]:
            shown = f"- ({r[11]})"
        out.append(
            f"| {r[0]} | `{r[2].split()[1] if r[2].startswith('@') else r[2].split()[0]}` "
            f"({r[1]}) | {r[3]}: `{opcode}` | {r[5]} | {r[6]} ({r[7]}) | {shown} "
            f"| {r[13] or '-'} | {r[10] or '-'} |"
        )
    return "\n".join(out) + "\n"


def _header(results: dict) -> dict:
    gpu, _, driver = results["gpu"].partition(", ")
    return {
        "date": results.get("date", "2026-12-02"),
        "gpu": f"{gpu} (driver {driver})",
        "ncu": "Nsight Compute " + results["ncu"].split()[1],
        "cupy": results["cupy"],
        "device": results.get(
            "device_time",
            DEVICE_TIME,
        ),
    }


FINDINGS = """"Predicted": the product the model's counterexamples describe, every element placed
where verify says it lands (`tma_kernels.chunks`): for `t09_tma_swnone` wgmma reads chunk
`j ^ (row % 8)` of each unswizzled 128-byte box row (verify: "element (row 1, k 0) ...
written at byte 128, read from byte 144"; `device_matmul_a_swnone`: the same for A
only), for `t09_tma_pad128` the TMA store reads chunk
`j ^ (row % 8) ^ ((row + 1) % 8)` of what stmatrix wrote (verify: "element (inner 0, row
0) is at byte 144, but stmatrix ... writes it at byte 128").

**Findings.**

- Every right product is one verify proves, and every wrong one is one it refutes, at the
  instruction that goes wrong: `t09_tma` (maps from Triton's `tensordesc_meta`) has its 16
  wgmma operands' writer = reader, its 7 copies' `aligned 128` and its store's placement
  PROVED, and computed the right product. The host maps encoded without swizzle refute
  all 16 writer = reader checks, and the H200's product equals, to fp16 rounding
  (2.1e-4), the one the counterexample's misplacement gives. With 128 static bytes the
  TMA loads and wgmma stay right (writer = reader PROVED at every 128-aligned base: both
  swizzle absolute addresses) and only the epilogue's TMA store is REFUTED (stmatrix
  writes at offsets from the base); the H200's product is exactly the predicted chunk
  permutation, so its A and B tiles were read right, as proved.
- `device_matmul` (maps built on the device, read from its `tensormap.replace`
  instructions, each copy paired with its own map): right product; 16 of 16 writer =
  reader checks against the TMA boxes PROVED, the 6 copies' `aligned 128` and 2
  placements PROVED, 16 wgmma placements PROVED. 16 more writer = reader checks stay
  UNKNOWN: "st.shared.b32 at PTX line 57 writes 4 bytes, not 16", the zero-fill of the
  map's 128-byte template at the start of shared memory, which the A tile later
  overwrites; `verify/ptx/hopper_copies.py` counts it among the operand's thread writers.
- A device-built map is read, not assumed: with A's `tensormap.replace.tile.swizzle_mode`
  set to 0, verify (`verify ttgir --ptx`, no option) REFUTES A's 8 writer = reader checks
  and keeps B's 8 PROVED; the H200's product is the predicted one (A's chunks misread,
  B right) to 2.1e-4.
- wgmma cost: 48 gmma wavefronts per m64n128k16 (A 16 + B 32, operand bytes / 128),
  verify's figure, on all five runs: 49,152 over 1,024 warpgroup instructions
  (`sm__inst_executed_pipe_tensor_op_gmma.sum` 4,096 per warp), no gmma bank conflicts;
  per SASS row 12 per HGMMA per warp. Every SASS instruction with a verify figure equals
  the H200's (the epilogue stmatrix 4 and `ld.shared.v4` 4 per warp instruction). The
  zero-fill `@%p2 st.shared.b32` runs in one warp of four (`tid < 32`): ncu divides its
  16 wavefronts over all 64 executions (0.25), verify's 1 is per warp that stores (ncu's
  predicated-on threads: 512 = 16 full warps).
- Not modelled, measured: TMA copies (UTMALDG, UTMASTG) count no L1 shared wavefronts;
  `tensormap.replace` and `tensormap.cp_fenceproxy` become single-thread LDS/STS of the
  template in shared memory, 1 wavefront each (32 SASS rows of `device_matmul`),
  reported "not modelled" by verify.
- The per-SASS measurement was taken three times (three calls, fresh inputs): identical
  in every row of the four runs measured each time.
"""
