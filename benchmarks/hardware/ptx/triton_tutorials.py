"""Triton's tutorials 02 (fused softmax), 05 (layer norm, forward) and 06 (fused
attention, forward) measured per SASS instruction on the H200, beside what
`verify ptx` decides for each shared-memory PTX instruction (issue 24 item 5).

Three steps:

    python benchmarks/hardware/ptx/triton_tutorials.py build     # here: PTX, cubins
    python3 benchmarks/hardware/ptx/triton_tutorials.py measure  # on the H200
    python benchmarks/hardware/ptx/triton_tutorials.py table [MEASURED.csv]

**build** compiles each kernel with Triton 3.9 on the CPU (benchmarks/triton_compile.py;
softmax and attention: ``specs/triton_kernels/``, the catalog's forms of the tutorials,
at the catalog's constants; layer norm: ``triton/layernorm.py``) for sm_80 and sm_90 into
``triton/<kernel>_<target>.ptx`` (pointers hinted, as `verify triton` compiles) and
``triton/<kernel>_hinted_<target>.ptx`` (as Triton's launcher compiles this launch),
then assembles each with Triton's bundled ptxas (``-lineinfo``; sm_80 PTX for
``-arch=sm_90``, sm_90 PTX for ``-arch=sm_90a``).
The PTX that ptxas reads is a copy whose ``.loc`` names the PTX's own line before
every instruction, so ``nvdisasm -g`` gives each SASS instruction the PTX line it
came from, with no matching by order (``triton/<kernel>_<target>.map.csv``).

**measure** (cupy, ncu; no Triton needed) launches each cubin once on random
inputs at `LAUNCHES` (checked against numpy) under ``ncu --section SourceCounters
--page source --print-source sass --csv`` and writes
``$OUT/triton_tutorials_h200.csv``: kernel, SASS offset, opcode, executions, L1
Wavefronts Shared and its ideal, for every SASS instruction that touches shared
memory.

**table** runs ``verify ptx --json`` on each PTX under the launch's own values
(``--assume``, ``--grid``, ``--global-align 256``, ``--dynamic-shared``) and
writes ``benchmarks/results/triton_tutorials_h200.{md,csv}``: per SASS
instruction its PTX line, verify's wavefronts (or UNKNOWN with its reason) and
the H200's wavefronts per execution."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, ROOT)  # run as a script, here and on the H200 (measure: no Triton)
from benchmarks import triton_compile  # noqa: E402
from benchmarks.triton_compile import ATTENTION, SOFTMAX  # noqa: E402

BUILD = os.path.join(HERE, "triton")
RESULTS = os.path.join(ROOT, "benchmarks", "results")
# measure's $OUT/triton_tutorials_h200.csv, as committed (ncu's raw pages beside it)
MEASURED = os.path.join(RESULTS, "triton_tutorials_h200.measured.csv")
SHARED_OPS = ("LDGSTS", "LDSM", "STSM", "LDS", "STS", "ATOMS", "HGMMA", "UTMA", "UBLKCP")
# PTX target -> (the H200's ptxas -arch, the bundled ptxas that Triton 3.9 itself runs for
# that PTX's .version: 8.8 for sm_80, 9.4 for sm_90a)
TARGETS = {"sm_80": ("sm_90", "ptxas"), "sm_90": ("sm_90a", "ptxas-blackwell")}
# "": pointers hinted only (verify triton's default); "_hinted": as Triton's launcher
# compiles this launch, i32 arguments divisible by 16 hinted too
VARIANTS = ("", "_hinted")
ROWS, COLS = 1024, 1024  # softmax
LN_ROWS, LN_COLS = 256, 1024  # layer norm
HEADS, N_CTX, HEAD_DIM = 4, 256, 64  # attention
# The H200 puts the dynamic shared memory of a kernel with no static shared memory at a
# multiple of 1024 bytes (benchmarks/results/smem_base_h200.txt); Triton's PTX declares
# only .align 16, where rule S's line pairs would cost 16 wavefronts for the ideal 4.
SHARED_BASE_ALIGN = 1024


@dataclass(frozen=True)
class Tutorial:
    """One tutorial kernel: where its source is, how it is compiled, and how it is
    launched (``args`` in .param order: a buffer is ``(dtype, elements)``, a
    scalar ``(dtype, value)``; Triton 3.9 appends two null scratch pointers)."""

    stem: str
    source: str
    function: str
    signature: dict
    constants: dict
    args: tuple
    grid: tuple

    def assumes(self) -> list[str]:
        """verify's --assume for every integer scalar, by its .param index."""
        return [
            f"param_{i}={value}" for i, (dtype, value) in enumerate(self.args) if dtype == "i32"
        ]


TUTORIALS = (
    Tutorial(
        "softmax",
        "specs/triton_kernels/softmax.py",
        "softmax_kernel",
        SOFTMAX,
        {"BLOCK_SIZE": 1024, "num_stages": 2},
        (
            ("f32", ROWS * COLS),
            ("f32", ROWS * COLS),
            ("i32", COLS),
            ("i32", COLS),
            ("i32", ROWS),
            ("i32", COLS),
        ),
        (256, 1, 1),
    ),
    Tutorial(
        "layernorm",
        "benchmarks/hardware/ptx/triton/layernorm.py",
        "layer_norm_fwd_fused",
        {
            "X": "*fp16",
            "Y": "*fp16",
            "W": "*fp16",
            "B": "*fp16",
            "Mean": "*fp32",
            "Rstd": "*fp32",
            "stride": "i32",
            "N": "i32",
            "eps": "fp32",
            "BLOCK_SIZE": "constexpr",
        },
        {"BLOCK_SIZE": 1024},
        (
            ("f16", LN_ROWS * LN_COLS),
            ("f16", LN_ROWS * LN_COLS),
            ("f16", LN_COLS),
            ("f16", LN_COLS),
            ("f32", LN_ROWS),
            ("f32", LN_ROWS),
            ("i32", LN_COLS),
            ("i32", LN_COLS),
            ("fp32", 1e-5),
        ),
        (LN_ROWS, 1, 1),
    ),
    Tutorial(
        "attention",
        "specs/triton_kernels/attention.py",
        "attn_fwd",
        ATTENTION,
        {"HEAD_DIM": HEAD_DIM, "BLOCK_M": 64, "BLOCK_N": 32},
        (
            ("f16", HEADS * N_CTX * HEAD_DIM),
            ("f16", HEADS * N_CTX * HEAD_DIM),
            ("f16", HEADS * N_CTX * HEAD_DIM),
            ("f16", HEADS * N_CTX * HEAD_DIM),
            ("fp32", 0.125),
            ("i32", N_CTX),
        ),
        (N_CTX // 64, HEADS, 1),
    ),
)


def _ptxas_dir() -> str:
    import triton

    return os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")


def lined(ptx: str, name: str) -> str:
    """`ptx` with its own line numbers as the source lines: the debug sections and
    ``.file``/``.loc`` dropped, ``.loc 1 N 0`` put before the instruction of line N."""
    lines = ptx.splitlines()
    end = next((i for i, t in enumerate(lines) if t.lstrip().startswith(".file")), len(lines))
    out = []
    for number, text in enumerate(lines[:end], start=1):
        body = text.strip()
        if body.startswith(".loc"):
            continue
        if text.startswith("\t") and body and body[0] not in ".{}$/@" or body.startswith("@"):
            out.append(f"\t.loc\t1 {number} 0")
        out.append(text)
    out.append(f'\t.file\t1 "{name}"')
    return "\n".join(out) + "\n"


def sass_lines(cubin: str) -> list[tuple[str, int]]:
    """(SASS offset as ncu prints it, PTX line) for every instruction of `cubin`."""
    text = subprocess.run(
        [os.path.join(_ptxas_dir(), "nvdisasm"), "-g", "-c", cubin],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    rows, line = [], 0
    for t in text.splitlines():
        found = re.search(r'//## File ".*", line (\d+)', t)
        if found:
            line = int(found.group(1))
            continue
        at = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s", t)
        if at:
            rows.append((f"0x{int(at.group(1), 16):x}", line))
    return rows


def _compile(fn, tut: Tutorial, target: str, hinted: bool):
    """Triton 3.9's compile on the CPU: every pointer 16-byte aligned (as `verify
    triton` assumes); `hinted` adds what Triton's launcher specializes at this
    launch, tt.divisibility 16 on every i32 argument that is a multiple of 16."""
    from verify.ttgir.kernel import build_signature

    sig, values, attrs = build_signature(fn, tut.signature, tut.constants)
    runtime = [p for p in fn.params if sig[p.name] != "constexpr"]
    for param, (dtype, value) in zip(runtime, tut.args):
        if hinted and dtype == "i32" and value % 16 == 0:
            attrs[(param.num,)] = [["tt.divisibility", 16]]
    src = triton_compile.source(fn, sig, values, attrs)
    return triton_compile.compile_for(src, int(target[3:]), {"num_warps": 4, "num_stages": 3})


def build() -> None:
    meta = {}
    for tut, variant in ((t, v) for t in TUTORIALS for v in VARIANTS):
        fn = getattr(triton_compile.load(tut.source, f"_tut_{tut.stem}"), tut.function)
        for target, (arch, ptxas) in TARGETS.items():
            compiled = _compile(fn, tut, target, variant == "_hinted")
            stem = f"{tut.stem}{variant}_{target.replace('_', '')}"
            ptx = compiled.asm["ptx"].replace(os.getcwd() + "/", "")
            with open(os.path.join(BUILD, f"{stem}.ptx"), "w", encoding="utf-8") as f:
                f.write(ptx)
            copy = os.path.join("/tmp", f"{stem}.lined.ptx")
            with open(copy, "w", encoding="utf-8") as f:
                f.write(lined(ptx, f"{stem}.ptx"))
            cubin = os.path.join(BUILD, f"{stem}.cubin")
            subprocess.run(
                [os.path.join(_ptxas_dir(), ptxas), f"-arch={arch}", "-lineinfo", copy,
                 "-o", cubin],
                check=True,
            )  # fmt: skip
            with open(os.path.join(BUILD, f"{stem}.map.csv"), "w", newline="") as f:
                csv.writer(f).writerows([("sass_offset", "ptx_line"), *sass_lines(cubin)])
            meta[stem] = {"name": compiled.metadata.name, "shared": compiled.metadata.shared}
            print(stem, meta[stem], flush=True)
    with open(os.path.join(BUILD, "tutorials.json"), "w") as f:
        json.dump(meta, f, indent=1)


# --- on the H200 -------------------------------------------------------------------


def _reference(stem: str, host: list, outputs: list):
    """‖out - ref‖ / ‖ref‖ of the kernel's main output, in float64 (numpy)."""
    import numpy as np

    if stem == "softmax":
        x = host[1].reshape(ROWS, COLS).astype(np.float64)
        e = np.exp(x - x.max(1, keepdims=True))
        return outputs[0].reshape(ROWS, COLS), e / e.sum(1, keepdims=True)
    if stem == "layernorm":
        x = host[0].reshape(LN_ROWS, LN_COLS).astype(np.float64)
        mean, var = x.mean(1, keepdims=True), x.var(1, keepdims=True)
        y = (x - mean) / np.sqrt(var + 1e-5) * host[2] + host[3]
        return outputs[1].reshape(LN_ROWS, LN_COLS), y
    q, k, v = (h.reshape(HEADS, N_CTX, HEAD_DIM).astype(np.float64) for h in host[:3])
    s = q @ k.transpose(0, 2, 1) * 0.125
    p = np.exp(s - s.max(2, keepdims=True))
    return outputs[3].reshape(HEADS, N_CTX, HEAD_DIM), (p / p.sum(2, keepdims=True)) @ v


def launch(stem: str) -> None:
    import cupy as cp
    import numpy as np

    with open(os.path.join(BUILD, "tutorials.json")) as f:
        meta = json.load(f)[stem]
    tut = next(t for t in TUTORIALS if stem.startswith(t.stem + "_"))
    fn = cp.RawModule(path=os.path.join(BUILD, f"{stem}.cubin")).get_function(meta["name"])
    rng = np.random.default_rng(24)
    host, args = [], []
    for dtype, value in tut.args:
        if dtype in ("f16", "f32"):
            h = rng.uniform(-1, 1, value).astype(np.float16 if dtype == "f16" else np.float32)
            host.append(h)
            args.append(cp.asarray(h))
        else:
            host.append(value)
            args.append(np.int32(value) if dtype == "i32" else np.float32(value))
    null = np.uint64(0)  # Triton 3.9's global and profile scratch: none for these kernels
    if meta["shared"] > 48 * 1024:
        fn.max_dynamic_shared_size_bytes = meta["shared"]
    fn(tut.grid, (128,), (*args, null, null), shared_mem=meta["shared"])
    cp.cuda.runtime.deviceSynchronize()
    got, want = _reference(
        tut.stem, host, [cp.asnumpy(a) if hasattr(a, "get") else a for a in args]
    )
    error = float(np.linalg.norm(got.astype(np.float64) - want) / np.linalg.norm(want))
    print(f"{stem}: relative error {error:.2e} {'ok' if error < 1e-2 else 'WRONG'}", flush=True)


def measure(out: str) -> int:
    with open(os.path.join(BUILD, "tutorials.json")) as f:
        meta = json.load(f)
    kernels = {stem: kernel["name"] for stem, kernel in meta.items()}
    return profile(kernels, os.path.abspath(__file__), out, "triton_tutorials_h200.csv")


def profile(kernels: dict[str, str], script: str, out: str, name: str) -> int:
    """Each kernel's launch (``python SCRIPT launch STEM``, the entry named in `kernels`)
    once under ``ncu --section SourceCounters``, its page kept as $OUT/STEM.ncu.csv; every
    SASS instruction that touches shared memory (a `SHARED_OPS` opcode, or wavefronts)
    into $OUT/`name`: kernel, SASS offset, opcode, executions, wavefronts and their
    ideal. The last non-zero return code of ncu, or 0."""
    keep = ["Source", "Instructions Executed", "L1 Wavefronts Shared", "L1 Wavefronts Shared Ideal"]
    table = [["kernel", "sass_offset", "sass", "executions", "wavefronts", "ideal"]]
    status = 0
    for stem, kernel in kernels.items():
        raw = os.path.join(out, f"{stem}.ncu.csv")
        with open(raw, "w") as f:
            done = subprocess.run(
                ["ncu", "--section", "SourceCounters", "--page", "source", "--print-source",
                 "sass", "--csv", "-k", kernel, "--launch-count", "1",
                 sys.executable, script, "launch", stem],
                stdout=f, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
        print(stem, "ncu rc", done.returncode, done.stderr[-1500:], flush=True)
        if done.returncode:
            status = done.returncode
            continue
        with open(raw) as f:
            rows = list(csv.reader(f))
        head = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
        col = {name: i for i, name in enumerate(rows[head])}
        body = [r for r in rows[head + 1 :] if len(r) == len(rows[head])]
        start = int(body[0][col["Address"]], 16)  # ncu prints loaded addresses
        for r in body:
            waves = r[col["L1 Wavefronts Shared"]].strip()
            if any(op in r[col["Source"]] for op in SHARED_OPS) or waves not in ("", "0"):
                offset = f"0x{int(r[col['Address']], 16) - start:x}"
                table.append([stem, offset, *(r[col[k]].strip() for k in keep)])
    with open(os.path.join(out, name), "w", newline="") as f:
        csv.writer(f).writerows(table)
    for row in table:
        print(",".join(row))
    return status


# --- here: verify's side and the table ----------------------------------------------


def verify_figures(stem: str, tut: Tutorial, shared: int) -> dict[int, list[dict]]:
    """verify ptx --json's checks of `stem` under the launch's values, by PTX line."""
    argv = ["verify", "ptx", os.path.join(BUILD, f"{stem}.ptx"), "--json", "--grid",
            ",".join(map(str, tut.grid)), "--global-align", "256", "--block", "128",
            "--shared-align", str(SHARED_BASE_ALIGN)]  # fmt: skip
    if shared:
        argv += ["--dynamic-shared", str(shared)]
    for a in tut.assumes():
        argv += ["--assume", a]
    done = subprocess.run(argv, capture_output=True, text=True)
    if not done.stdout.strip():
        raise SystemExit(f"{' '.join(argv)}: {done.stderr}")
    by_line: dict[int, list[dict]] = {}
    for check in json.loads(done.stdout)["checks"]:
        by_line.setdefault(check["facts"]["ptx_line"], []).append(check)
    return by_line


def _figure(checks: list[dict]) -> tuple[str, str, str]:
    """(verify's wavefronts per warp instruction, verdict, reason) from one PTX line's
    checks: its conflict_free check, or for a wgmma the sum of its operands' wavefronts
    (per warpgroup: four warps' SASS executions)."""
    for check in checks:
        if check["property"].startswith("conflict_free"):
            if check["status"] == "unknown":
                return "UNKNOWN", "unknown", check["reason"] or ""
            return str(check["wavefronts"]), check["status"], ""
    operands = [c for c in checks if c["property"].startswith("wavefronts operand")]
    if operands:
        if any(c["status"] == "unknown" for c in operands):
            return "UNKNOWN", "unknown", "; ".join(c["reason"] or "" for c in operands)
        total = sum(c["wavefronts"] for c in operands)
        return f"{total / 4:g}", "proved", f"wgmma: {total} per warpgroup / 4 warps"
    return "", "", "no check at this PTX line" if checks else "no shared access in verify"


def _wgmma_by_order(lines: dict, measured: dict, stem: str, ptx_text: list[str]) -> None:
    """ptxas gives an HGMMA the line of a neighbouring instruction (a wgmma.fence, an
    add): map the kernel's HGMMAs to its wgmma.mma_async lines in order instead."""
    wgmma = [i for i, t in enumerate(ptx_text, 1) if "wgmma.mma_async" in t]
    hgmma = sorted(
        (int(offset, 16), offset)
        for (kstem, offset), row in measured.items()
        if kstem == stem and row[2].startswith("HGMMA")
    )
    if len(wgmma) == len(hgmma):
        lines.update({offset: str(line) for (_, offset), line in zip(hgmma, wgmma)})


INTRO = """# Triton's tutorials per instruction: verify's figure against the H200

Issue 24 item 5. `benchmarks/hardware/ptx/triton_tutorials.py` (its module doc has the
method): tutorials 02 (fused softmax, `specs/triton_kernels/softmax.py`, BLOCK_SIZE 1024,
num_stages 2), 05 (layer norm forward, `benchmarks/hardware/ptx/triton/layernorm.py`,
BLOCK_SIZE 1024) and 06 (fused attention forward, `specs/triton_kernels/attention.py`,
HEAD_DIM 64, BLOCK_M 64, BLOCK_N 32), 4 warps, compiled by Triton 3.9.0 on the CPU for
sm_80 and sm_90 (`benchmarks/hardware/ptx/triton/<kernel>[_hinted]_<target>.ptx`), assembled by
Triton's bundled ptxas (sm_80 PTX: ptxas 12.9 `-arch=sm_90`; sm_90 PTX: ptxas 13.4
`-arch=sm_90a`) with each instruction's `.loc` set to its own PTX line, so the PTX line
of every SASS instruction is `nvdisasm -g`'s, not matched by order (HGMMA excepted:
ptxas files it under a neighbour's line, so HGMMAs take the wgmma lines in order).
Launched once each on the H200 (2026-12-02, 41 s of device time; outputs checked against
numpy in float64: softmax 6.8e-8, layer norm 2.1e-4, attention 2.8e-4) under `ncu
--section SourceCounters --page source --print-source sass`: softmax 1024 x 1024 fp32,
grid 256; layer norm 256 x 1024 fp16, grid 256; attention 4 heads x 256 x 64 fp16,
grid 4 x 4. Per execution = L1 Wavefronts Shared / Instructions Executed (per warp).

verify's side: `verify ptx <kernel>_<target>.ptx --block 128 --grid <grid>
--global-align 256 --shared-align 1024 --dynamic-shared <Triton's shared bytes>
--assume param_N=<value>` for every i32 parameter (softmax: param_2..5 = 1024; layer
norm: param_6, param_7 = 1024; attention: param_5 = 256). `--shared-align 1024`: the H200
puts a kernel's dynamic shared memory, with no static shared memory, at a multiple of
1024 (`smem_base_h200.txt`); at Triton's declared `.align 16` rule S's line pairs cost 16
for the ideal 4 (the attention's cp.async.cg, REFUTED at base 48). wgmma: verify's
operand wavefronts per warpgroup over its 4 warps (HGMMA executes per warp).
Per SASS instruction with its PTX line and text: `triton_tutorials_h200.csv`; the
measurement as it came back: `triton_tutorials_h200.measured.csv`, ncu's raw source
pages: `triton_tutorials_h200.ncu.tar.gz`.

**Findings.** Two compiles of each kernel: as `verify triton` compiles it (pointers
hinted 16-byte aligned) and `_hinted`, as Triton's launcher compiles this launch (its
i32 arguments, all multiples of 16, hinted `tt.divisibility 16` too: softmax then copies
16 bytes per lane and reads `ld.shared.v4`; layer norm keeps only its reduction
scratch; attention is unchanged but for its registers). Every shared-memory SASS
instruction of the twelve is decided, and every figure equals the H200's per
execution, HGMMA's included. Every check PROVED (softmax 82 / 34 per target, layer
norm 48 and 18 / 12, attention sm_80 144) except one per attention sm_90 (below). The
six unhinted kernels were measured twice (two runs, same figures in all 163 rows).
Two fixes got there:
- the in-loop cp.async of softmax (8 per target) and attention (4 per target) were
  UNKNOWN "src-size may be below the copy size": Triton's `selp.b32 %r, SIZE, 0, %p`
  is a predicated LDGSTS (`..., P5`), so the src-size is now the copy's guard
  (`verify/ptx/memory.py` `Access.masks`, `guards.py`); a guard that names the lane
  but runs each warp whole at every instance (enumerated,
  `guards._same_for_every_lane`) keeps the figure: this also decides the tutorial
  matmul's in-loop B copies at 4, the H200's (`triton_matmul_h200.md`);
- the attention's cp.async.cg came out REFUTED at 16 wavefronts (ideal 4) at a
  dynamic base of 48: not the launch's value (`--shared-align 1024`, above).

Left UNKNOWN when measured: attention sm_90's `k_blocks of 4 wgmma into one
accumulator` ("no stage is proved a block of its matrix for all of them"; PROVED
since commit 01a18df, which joins the operands' stages: re-read 2026-12-02 04:35
UTC on attention_sm90.ptx and attention_hinted_sm90.ptx), a check of the wgmma
operands (issue 24's Hopper part, outside item 5's "every instruction other than
wgmma reads and TMA"); the wgmma operand wavefronts (A 16 + B 8 per m64n32k16, B 16
per m64n64k16) are PROVED and equal the H200's HGMMA rows (6 and 4 per warp). Read
with the working tree of 2026-12-02 02:10 UTC (verify/ptx/hopper.py being changed
by another session; an earlier read gave 10 wgmma `writer_reader` UNKNOWN instead).

"""


def table(measured_csv: str) -> None:
    with open(os.path.join(BUILD, "tutorials.json")) as f:
        meta = json.load(f)
    measured: dict[tuple[str, str], list[str]] = {}
    with open(measured_csv) as f:
        for row in list(csv.reader(f))[1:]:
            measured[(row[0], row[1])] = row
    out_rows = [["kernel", "sass_offset", "sass", "ptx_line", "ptx", "executions",
                 "h200_wavefronts_per_exec", "h200_ideal_per_exec", "verify_wavefronts",
                 "verdict", "reason"]]  # fmt: skip
    coverage: dict[str, tuple[set[int], set[int]]] = {}
    for stem, kernel in meta.items():
        tut = next(t for t in TUTORIALS if stem.startswith(t.stem + "_"))
        with open(os.path.join(BUILD, f"{stem}.ptx")) as f:
            ptx_text = f.read().splitlines()
        with open(os.path.join(BUILD, f"{stem}.map.csv")) as f:
            lines = dict(list(csv.reader(f))[1:])
        figures = verify_figures(stem, tut, kernel["shared"])
        checked = {
            line
            for line, checks in figures.items()
            if any(c["property"].startswith(("conflict_free", "wavefronts")) for c in checks)
        }
        coverage[stem] = (checked, set())
        _wgmma_by_order(lines, measured, stem, ptx_text)
        for (kstem, offset), row in measured.items():
            if kstem != stem or row[2].startswith("@!PT"):
                continue  # ptxas's never-executed `@!PT LDS RZ, [RZ]` beside each cp.async
            line = int(lines.get(offset, 0))
            execs = int(float(row[3].replace(",", "") or 0))
            waves = float(row[4].replace(",", "") or 0)
            ideal = float(row[5].replace(",", "") or 0)
            per = f"{waves / execs:g}" if execs else "-"
            per_ideal = f"{ideal / execs:g}" if execs else "-"
            figure, verdict, reason = _figure(figures.get(line, []))
            coverage[stem][1].add(line)
            ptx = ptx_text[line - 1].strip() if line else ""
            out_rows.append([stem, offset, row[2], str(line), ptx, str(execs), per,
                             per_ideal, figure, verdict, reason])  # fmt: skip
    with open(os.path.join(RESULTS, "triton_tutorials_h200.csv"), "w", newline="") as f:
        csv.writer(f).writerows(out_rows)
    agree = sum(r[6] == r[8] for r in out_rows[1:])
    summary = [f"{agree} of {len(out_rows) - 1} SASS instructions: verify's figure = the H200's."]
    for stem, (checked, seen) in coverage.items():
        missing = ", ".join(map(str, sorted(checked - seen))) or "none"
        summary.append(
            f"{stem}: {len(checked)} shared-memory PTX instructions with a bank check, "
            f"{len(checked & seen)} of them with a SASS row measured; without one: {missing}."
        )
    with open(os.path.join(RESULTS, "triton_tutorials_h200.md"), "w") as f:
        f.write(INTRO + "\n".join(f"- {line}" for line in summary) + "\n\n" + markdown(out_rows))
    print("\n".join(summary))


def markdown(rows: list[list[str]]) -> str:
    """The per-instruction table: one line per SASS instruction."""
    head = "| kernel | SASS (offset) | PTX line: instruction | executions | H200 (ideal) | verify |"
    out = [head, "| --- | --- | --- | --- | --- | --- |"]
    for r in rows[1:]:
        opcode = r[4].split()[0] if r[4] else ""
        figure = r[8] if r[9] != "unknown" else f"UNKNOWN: {r[10]}"
        note = f" ({r[9]}{'; ' + r[10] if r[10] and r[9] != 'unknown' else ''})"
        out.append(
            f"| {r[0]} | `{r[2].split()[0]}` ({r[1]}) | {r[3]}: `{opcode}` | {r[5]} "
            f"| {r[6]} ({r[7]}) | {figure}{note if r[9] != 'unknown' else ''} |"
        )
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if sys.argv[1] == "build":
        build()
    elif sys.argv[1] == "launch":
        launch(sys.argv[2])
    elif sys.argv[1] == "measure":
        sys.exit(measure(os.environ.get("OUT", ".")))
    else:
        table(sys.argv[2] if len(sys.argv) > 2 else MEASURED)
