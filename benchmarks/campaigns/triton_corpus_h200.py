"""The corpus's candidate finding on the H200: Triton's lit module
test/Conversion/tritongpu_to_llvm.mlir #28, whose ``ttg.convert_layout`` from
``#block3`` to ``#AL`` goes through scratch shared memory that Triton lays out
itself, and whose scratch reads verify finds 4-way at sm_90 (issue 26 item 5).

Three steps, as benchmarks/hardware/ptx/triton_tutorials.py does them:

    python -m benchmarks.campaigns.triton_corpus_h200 build      # here: PTX, cubins
    python3 benchmarks/campaigns/triton_corpus_h200.py measure    # on the H200
    python -m benchmarks.campaigns.triton_corpus_h200 table [MEASURED.csv]

**build** lowers the module (unpacked by benchmarks/campaigns/triton_corpus.py at
its commit; ``--module`` names another copy) with the installed Triton for sm_80
and sm_90, as ``verify ttgir --target`` lowers it (`verify.ttgir.lower`: the
target written into the module), into ``BUILD/m28_<target>.ptx``, and assembles
each with Triton's bundled ptxas (sm_80 PTX for ``-arch=sm_90``, sm_90 PTX for
``-arch=sm_90a``) from a copy whose ``.loc`` names each instruction's own PTX
line (`triton_tutorials.lined`), so ``nvdisasm -g`` maps every SASS instruction
to its PTX line (``BUILD/m28_<target>.map.csv``).

**measure** (cupy, ncu) launches each cubin once (grid 1, 128 threads, Triton's
4096 bytes of dynamic shared memory; the one pointer argument a buffer of 16 x 64
random f32, Triton's two scratch pointers null; the kernel only copies into
shared memory, so there is no output to check beyond a clean launch) under ``ncu
--section SourceCounters --page source --print-source sass --csv`` and writes
``$OUT/triton_corpus_h200.measured.csv``: per SASS instruction that touches
shared memory its offset, executions, L1 Wavefronts Shared and its ideal.

**table** runs ``verify ttgir --target <target> --json`` on the module, reads
each PTX line's conflict_free figure, and writes
``benchmarks/results/triton_corpus_h200.{csv,md}``: per SASS instruction its PTX
line, the H200's wavefronts per execution and verify's.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, ROOT)  # `measure` runs as a script on the H200

from benchmarks.hardware.ptx.triton_tutorials import (  # noqa: E402
    TARGETS,
    _ptxas_dir,
    lined,
    profile,
    sass_lines,
)

RESULTS = os.path.join(ROOT, "benchmarks", "results")
BUILD = os.path.join(RESULTS, "triton_corpus_h200")
MEASURED = os.path.join(RESULTS, "triton_corpus_h200.measured.csv")
UPSTREAM = "test/Conversion/tritongpu_to_llvm.mlir"
INDEX = 28
MODULE = f"/tmp/vc/modules/{UPSTREAM}.{INDEX}.mlir"
NAME = f"tritongpu_to_llvm.mlir.{INDEX}.mlir"  # how the PTX's .file names it
KERNEL = "basic_insert_slice_async_v4"
ELEMENTS = 16 * 64
SHARED = 4096


def build(module: str) -> None:
    from verify.ttgir import lower

    os.makedirs(BUILD, exist_ok=True)
    with open(module, encoding="utf-8") as f:
        text = f.read()
    with open(os.path.join(BUILD, NAME), "w", encoding="utf-8") as f:
        f.write(text)
    meta = {}
    for target, (arch, ptxas) in TARGETS.items():
        lowered = lower.lower(text, NAME, f"cuda:{target[3:]}")
        stem = f"m28_{target.replace('_', '')}"
        with open(os.path.join(BUILD, f"{stem}.ptx"), "w", encoding="utf-8") as f:
            f.write(lowered.ptx)
        copy = os.path.join("/tmp", f"{stem}.lined.ptx")
        with open(copy, "w", encoding="utf-8") as f:
            f.write(lined(lowered.ptx, f"{stem}.ptx"))
        cubin = os.path.join(BUILD, f"{stem}.cubin")
        subprocess.run(
            [os.path.join(_ptxas_dir(), ptxas), f"-arch={arch}", "-lineinfo", copy, "-o", cubin],
            check=True,
        )
        with open(os.path.join(BUILD, f"{stem}.map.csv"), "w", newline="") as f:
            csv.writer(f).writerows([("sass_offset", "ptx_line"), *sass_lines(cubin)])
        meta[stem] = {"target": target, "shared": lowered.shared}
        print(stem, meta[stem], flush=True)
    with open(os.path.join(BUILD, "kernels.json"), "w") as f:
        json.dump(meta, f, indent=1)


# --- on the H200 -------------------------------------------------------------------


def launch(stem: str) -> None:
    import cupy as cp
    import numpy as np

    fn = cp.RawModule(path=os.path.join(BUILD, f"{stem}.cubin")).get_function(KERNEL)
    data = cp.asarray(np.random.default_rng(26).uniform(-1, 1, ELEMENTS).astype(np.float32))
    null = np.uint64(0)  # Triton 3.9's global and profile scratch: none for this kernel
    fn((1,), (128,), (data, null, null), shared_mem=SHARED)
    cp.cuda.runtime.deviceSynchronize()
    print(f"{stem}: launched, no error", flush=True)


def measure(out: str) -> int:
    with open(os.path.join(BUILD, "kernels.json")) as f:
        meta = json.load(f)
    kernels = dict.fromkeys(meta, KERNEL)
    return profile(kernels, os.path.abspath(__file__), out, "triton_corpus_h200.measured.csv")


# --- here: verify's side and the table ----------------------------------------------


def verify_figures(target: str) -> tuple[dict[int, dict], str]:
    """verify ttgir --target's conflict_free check of each PTX line, and its PTX
    (checked to be the PTX assembled)."""
    module = os.path.join(BUILD, NAME)
    argv = [sys.executable, "-m", "verify.cli", "ttgir", "--target", target, "--json", module]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    if not done.stdout.strip():
        raise SystemExit(f"{' '.join(argv)}: {done.stderr}")
    by_line = {}
    for check in json.loads(done.stdout)["checks"]:
        line = check["facts"].get("ptx_line")
        if line and check["property"].split()[0] in ("conflict_free", "unknown"):
            by_line[line] = check
    return by_line, " ".join(argv[2:])


def _figure(check: dict | None) -> tuple[str, str, str]:
    if check is None:
        return "", "", "no check at this PTX line"
    if check["status"] == "unknown":
        return "UNKNOWN", "unknown", (check["reason"] or "")[:160]
    return str(check["wavefronts"]), check["status"], f"max_ways {check['max_ways']}"


def table(measured_csv: str) -> None:
    with open(os.path.join(BUILD, "kernels.json")) as f:
        meta = json.load(f)
    measured = []
    with open(measured_csv) as f:
        measured = list(csv.reader(f))[1:]
    out = [["kernel", "sass_offset", "sass", "ptx_line", "ptx", "executions",
            "h200_wavefronts_per_exec", "h200_ideal_per_exec", "verify_wavefronts",
            "verdict", "note"]]  # fmt: skip
    commands = []
    for stem, kernel in meta.items():
        with open(os.path.join(BUILD, f"{stem}.ptx")) as f:
            ptx = f.read().splitlines()
        with open(os.path.join(BUILD, f"{stem}.map.csv")) as f:
            lines = dict(list(csv.reader(f))[1:])
        figures, command = verify_figures(kernel["target"])
        commands.append(command)
        for row in measured:
            if row[0] != stem or row[2].startswith("@!PT"):
                continue  # ptxas's never-executed `@!PT LDS RZ, [RZ]` beside each cp.async
            line = int(lines.get(row[1], 0))
            execs = int(float(row[3].replace(",", "") or 0))
            waves = float(row[4].replace(",", "") or 0)
            ideal = float(row[5].replace(",", "") or 0)
            figure, verdict, note = _figure(figures.get(line))
            out.append([
                stem, row[1], row[2], str(line), ptx[line - 1].strip() if line else "",
                str(execs), f"{waves / execs:g}" if execs else "-",
                f"{ideal / execs:g}" if execs else "-", figure, verdict, note,
            ])  # fmt: skip
    with open(os.path.join(RESULTS, "triton_corpus_h200.csv"), "w", newline="") as f:
        csv.writer(f).writerows(out)
    agree = sum(r[6] == r[8] for r in out[1:])
    decided = sum(r[9] in ("proved", "refuted") for r in out[1:])
    print(f"{agree} of {len(out) - 1} SASS rows: verify's figure = the H200's; {decided} decided")
    for r in out[1:]:
        print(" | ".join(r))
    print("\n".join(commands))


if __name__ == "__main__":
    if sys.argv[1] == "build":
        build(sys.argv[2] if len(sys.argv) > 2 else MODULE)
    elif sys.argv[1] == "launch":
        launch(sys.argv[2])
    elif sys.argv[1] == "measure":
        sys.exit(measure(os.environ.get("OUT", ".")))
    else:
        table(sys.argv[2] if len(sys.argv) > 2 else MEASURED)
