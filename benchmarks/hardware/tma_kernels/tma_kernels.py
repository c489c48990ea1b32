"""Triton's sm_90 TMA kernels run on the H200 beside what verify proves of them
(issue 25 items 1 and 5): tutorial 09's matmul with host-built tensor maps
(``t09_tma``) and a matmul that builds its two maps on the device (``device_matmul``),
both from ``tests/data/hopper/tensormaps/`` (Triton 3.9, sm_90a PTX, 128x128x64 tiles,
4 warps, 3 stages).

    python benchmarks/hardware/tma_kernels/tma_kernels.py build     # here: cubins
    python3 benchmarks/hardware/tma_kernels/tma_kernels.py measure  # on the H200 ($OUT)
    python benchmarks/hardware/tma_kernels/tma_kernels.py table [MEASURED_DIR]

**build** assembles each kernel's PTX with Triton's bundled ptxas (``-arch=sm_90a
-lineinfo``, every instruction's ``.loc`` set to its own PTX line, as
``benchmarks/hardware/ptx/triton_tutorials.py`` does) into ``cubin/<stem>.cubin`` and
the SASS-offset-to-PTX-line map ``cubin/<stem>.map.csv``. One variant is a new PTX
file, ``cubin/t09_tma_pad128.ptx``: tutorial 09 with 128 bytes of static shared memory
declared (and stored to), which moves the dynamic base from 1024 to 1152 (the
tilelang#2379 mechanism, ``benchmarks/results/smem_base_h200.txt``).

``cubin/device_matmul_a_swnone.ptx`` is the device-built-map matmul with A's map built
without swizzle (its ``tensormap.replace.tile.swizzle_mode`` 0), read by 128B descriptors.

**measure** (CuPy and the driver API through ctypes; no Triton) launches every
`RUNS` entry twice on fresh random fp16 inputs at M = N = K = `MM` with the output
poisoned (NaN), compares the product with numpy's in float64 (‖out − ref‖ / ‖ref‖,
right under 1e-2), then profiles the `PROFILED` runs under ``ncu --section
SourceCounters --page source --print-source sass`` (per SASS instruction: L1
Wavefronts Shared) and under ``--metrics`` for the gmma counters. The host maps
are made by ``cuTensorMapEncodeTiled`` as Triton's launcher makes them (box =
``tensordesc_meta``'s ``block_size`` reversed); ``t09_tma_swnone`` encodes A's and
B's maps without swizzle while the kernel's wgmma descriptors still read 128B:
a mismatch verify must refute. Everything lands in $OUT: ``results.json``, the
per-instruction ``tma_kernels_h200.measured.csv`` and ncu's raw pages in
``tma_kernels_h200.raw.tar.gz``.

**table** (here) runs verify on the same PTX (`verify_results`) and writes
``benchmarks/results/tma_kernels_h200.{csv,md}``: per SASS instruction the H200's
wavefronts per execution beside verify's figure for its PTX line, and per kernel
the product's error beside verify's writer = reader and placement verdicts.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, ROOT)  # run as a script, here and on the H200 (measure: no Triton)
from benchmarks.hardware.ptx import triton_tutorials as tt  # noqa: E402

DATA = os.path.join(ROOT, "tests", "data", "hopper", "tensormaps")
BUILD = os.path.join(HERE, "cubin")
RESULTS = os.path.join(ROOT, "benchmarks", "results")
MEASURED = os.path.join(RESULTS, "tma_kernels_h200.measured.csv")  # measure's, as committed
MM = 512  # M = N = K: 4 x 4 tiles of 128 x 128, 8 k-tiles of 64
TILE = 128
PAD = 128  # static shared bytes of the pad variant
SHARED_BASE = 1024  # where the H200 puts the dynamic shared memory with no static memory

# cubin stem -> (PTX it is assembled from, kernel entry, Triton's dynamic shared bytes)
KERNELS = {
    "t09_tma": (os.path.join(DATA, "t09_tma.sm90.ptx"), "matmul_kernel_tma", 98328),
    "device_matmul": (os.path.join(DATA, "device_matmul.sm90.ptx"), "device_matmul", 98328),
    "t09_tma_pad128": (os.path.join(BUILD, "t09_tma_pad128.ptx"), "matmul_kernel_tma", 98328),
    "device_matmul_a_swnone": (
        os.path.join(BUILD, "device_matmul_a_swnone.ptx"),
        "device_matmul",
        98328,
    ),
}
# run -> (cubin stem, A's and B's host-map swizzle: CUtensorMapSwizzle; None: no host map)
RUNS = {
    "t09_tma": ("t09_tma", 3),
    "t09_tma_swnone": ("t09_tma", 0),
    "t09_tma_pad128": ("t09_tma_pad128", 3),
    "device_matmul": ("device_matmul", None),
    "device_matmul_a_swnone": ("device_matmul_a_swnone", None),
}
PROFILED = tuple(RUNS)
GMMA = (
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum",
    "sm__inst_executed_pipe_tensor_op_gmma.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
)


def pad_variant(ptx: str) -> str:
    """Tutorial 09 with `PAD` static shared bytes before its dynamic memory: declared
    beside ``global_smem`` and stored to once (so that ptxas keeps it)."""
    decl = ".extern .shared .align 16 .b8 global_smem[];"
    first = "\tmov.u32 \t%r19, %ctaid.x;"
    assert ptx.count(decl) == 1 and ptx.count(first) == 1
    ptx = ptx.replace(decl, f"{decl}\n.shared .align 128 .b8 h9_pad[{PAD}];")
    return ptx.replace(first, f"{first}\n\tst.shared.u32 \t[h9_pad], %r19;")


def a_unswizzled(ptx: str) -> str:
    """device_matmul with A's map built without swizzle (``swizzle_mode`` 0 in its
    first ``tensormap.replace``); its wgmma descriptors still read 128B."""
    first = "tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [ %rd9 + 0 ], 0x3;"
    assert ptx.count(first) == 1
    return ptx.replace(first, first.replace("0x3;", "0x0;"))


def build() -> None:
    os.makedirs(BUILD, exist_ok=True)
    for variant, source, change in (
        ("t09_tma_pad128", "t09_tma", pad_variant),
        ("device_matmul_a_swnone", "device_matmul", a_unswizzled),
    ):
        with open(KERNELS[source][0], encoding="utf-8") as f:
            text = change(f.read())
        with open(KERNELS[variant][0], "w", encoding="utf-8") as f:
            f.write(text)
    for stem, (ptx_path, _, _) in KERNELS.items():
        with open(ptx_path, encoding="utf-8") as f:
            ptx = f.read()
        copy = os.path.join("/tmp", f"{stem}.lined.ptx")
        with open(copy, "w", encoding="utf-8") as f:
            f.write(tt.lined(ptx, os.path.basename(ptx_path)))
        cubin = os.path.join(BUILD, f"{stem}.cubin")
        ptxas = os.path.join(tt._ptxas_dir(), "ptxas-blackwell")  # PTX .version 9.4
        subprocess.run([ptxas, "-arch=sm_90a", "-lineinfo", copy, "-o", cubin], check=True)
        with open(os.path.join(BUILD, f"{stem}.map.csv"), "w", newline="") as f:
            csv.writer(f).writerows([("sass_offset", "ptx_line"), *tt.sass_lines(cubin)])
        print(stem, "->", cubin, flush=True)


# --- on the H200 -------------------------------------------------------------------


class Driver:
    """The few driver API calls CuPy does not wrap: a launch with a 128-byte
    by-value parameter (a ``CUtensorMap``) and ``cuTensorMapEncodeTiled``."""

    def __init__(self):
        import ctypes

        self.c = ctypes
        self.lib = ctypes.CDLL("libcuda.so.1")
        c = ctypes
        self.lib.cuTensorMapEncodeTiled.argtypes = [
            c.c_void_p, c.c_int, c.c_uint32, c.c_void_p, c.POINTER(c.c_uint64),
            c.POINTER(c.c_uint64), c.POINTER(c.c_uint32), c.POINTER(c.c_uint32),
            c.c_int, c.c_int, c.c_int, c.c_int,
        ]  # fmt: skip
        self.lib.cuLaunchKernel.argtypes = [
            c.c_void_p,
            *[c.c_uint] * 6,
            c.c_uint,
            c.c_void_p,
            c.POINTER(c.c_void_p),
            c.c_void_p,
        ]
        self.keep: list = []

    def check(self, code: int, what: str) -> None:
        if code:
            raise RuntimeError(f"{what}: CUresult {code}")

    def tensor_map(self, ptr: int, rows: int, cols: int, box: tuple[int, int], swizzle: int):
        """A 2-D fp16 row-major map (rows x cols elements), box {inner, outer}, as
        Triton's ``fill_tma_descriptor_tiled`` encodes it: no interleave, L2 promotion
        128B, no OOB fill. Returns the 64-byte-aligned 128-byte object."""
        c = self.c
        raw = c.create_string_buffer(128 + 64)
        at = (c.addressof(raw) + 63) // 64 * 64
        self.keep.append(raw)
        dims = (c.c_uint64 * 2)(cols, rows)
        strides = (c.c_uint64 * 1)(cols * 2)
        boxes = (c.c_uint32 * 2)(*box)
        ones = (c.c_uint32 * 2)(1, 1)
        self.check(
            self.lib.cuTensorMapEncodeTiled(
                c.c_void_p(at), 6, 2, c.c_void_p(ptr), dims, strides, boxes, ones, 0,
                swizzle, 2, 0,
            ),
            "cuTensorMapEncodeTiled",
        )  # fmt: skip
        return c.c_void_p(at)

    def launch(self, fn, grid: int, shared: int, args: list) -> None:
        """``args``: ctypes values, or a `tensor_map` (passed by pointer to it)."""
        c = self.c
        ptrs = [a if isinstance(a, c.c_void_p) else c.cast(c.pointer(a), c.c_void_p) for a in args]
        self.keep.append(args)
        params = (c.c_void_p * len(ptrs))(*ptrs)
        code = self.lib.cuLaunchKernel(
            c.c_void_p(getattr(fn, "kernel", fn).ptr),
            grid,
            1,
            1,
            128,
            1,
            1,
            shared,
            None,
            params,
            None,
        )
        self.check(code, "cuLaunchKernel")


def launch(run: str) -> dict:
    """One launch of `run` on fresh inputs, checked against numpy."""
    import ctypes as c

    import cupy as cp
    import numpy as np

    stem, swizzle = RUNS[run]
    _, entry, shared = KERNELS[stem]
    fn = cp.RawModule(path=os.path.join(BUILD, f"{stem}.cubin")).get_function(entry)
    fn.max_dynamic_shared_size_bytes = shared
    rng = np.random.default_rng()
    a = rng.uniform(-1, 1, (MM, MM)).astype(np.float16)
    b = rng.uniform(-1, 1, (MM, MM)).astype(np.float16)  # t09: N x K (b.T); else K x N
    da, db = cp.asarray(a), cp.asarray(b)
    dc = cp.full((MM, MM), np.nan, dtype=np.float16)
    drv = Driver()
    tiles = (MM // TILE) ** 2
    null = c.c_uint64(0)
    if swizzle is None:  # device_matmul: its maps built in a 256-byte scratch per program
        scratch = cp.zeros(256 * tiles, dtype=np.uint8)
        grid = (MM // TILE, MM // TILE, 1)
        fn(grid, (128,), (da, db, dc, np.int32(MM), np.int32(MM), np.int32(MM), scratch,
                          np.uint64(0)), shared_mem=shared)  # fmt: skip
        want = a.astype(np.float64) @ b.astype(np.float64)
    else:
        maps = []
        for x, box_swizzle in ((da, swizzle), (db, swizzle), (dc, 3)):
            maps.append(drv.tensor_map(x.data.ptr, MM, MM, (64, TILE), box_swizzle))
        args = []
        for m in maps:  # the map, its shape (2 x i32) and strides (2 x i64)
            args += [m, c.c_uint32(MM), c.c_uint32(MM), c.c_uint64(MM), c.c_uint64(1)]
        args += [c.c_int32(MM), c.c_int32(MM), c.c_int32(MM), null, null]
        drv.launch(fn, tiles, shared, args)
        want = a.astype(np.float64) @ b.astype(np.float64).T
    cp.cuda.runtime.deviceSynchronize()
    got = cp.asnumpy(dc).astype(np.float64)
    rows = np.arange(MM) % 8
    if run == "t09_tma_swnone":  # wgmma reads chunk j ^ (row % 8) of each unswizzled row
        predicted = chunks(a, rows).astype(np.float64) @ chunks(b, rows).astype(np.float64).T
    elif run == "device_matmul_a_swnone":  # A only, its box rows read as t09_tma_swnone's
        predicted = chunks(a, rows).astype(np.float64) @ b.astype(np.float64)
    elif run == "t09_tma_pad128":  # the store reads chunk j ^ (row % 8) ^ ((row + 1) % 8)
        predicted = chunks(want, rows ^ ((rows + 1) % 8))
    else:
        predicted = want
    unwritten = int(np.isnan(got).sum())
    bad = np.abs(got - want) > 0.05 * np.abs(want).max()
    error = float(np.linalg.norm(np.nan_to_num(got, nan=1e4) - want) / np.linalg.norm(want))
    out = {
        "run": run,
        "relative_error": error,
        "unwritten": unwritten,
        "wrong_elements": int(bad.sum()),
        "elements": MM * MM,
        "right": bool(error < 1e-2 and not unwritten),
        # against what verify's counterexample says lands where: the model's wrong product
        "error_against_prediction": float(
            np.linalg.norm(np.nan_to_num(got, nan=1e4) - predicted) / np.linalg.norm(predicted)
        ),
    }
    print(json.dumps(out), flush=True)
    return out


def chunks(x, mask):
    """`x` (rows x cols, cols a multiple of 64) with each row's 16-byte chunks of fp16
    (8 elements) permuted within each 128-byte box row: chunk j takes chunk j ^ mask[row]."""
    import numpy as np

    view = x.reshape(x.shape[0], -1, 8, 8)
    out = np.empty_like(view)
    for m in range(8):
        sel = mask == m
        out[sel] = view[sel][:, :, np.arange(8) ^ m, :]
    return out.reshape(x.shape)


def measure(out: str) -> int:
    import cupy as cp

    raw = os.path.join(out, "raw")
    os.makedirs(raw, exist_ok=True)
    info = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,"
                           "noheader"], capture_output=True, text=True).stdout.strip()  # fmt: skip
    ncu = subprocess.run(["ncu", "--version"], capture_output=True, text=True).stdout
    import time

    results = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "gpu": info,
        "ncu": ncu.strip().splitlines()[-1],
        "cupy": cp.__version__,
    }
    results["runs"] = []
    for run in (r for r in RUNS for _ in range(2)):  # twice each: fresh inputs
        try:
            results["runs"].append(launch(run))
        except Exception as e:  # noqa: BLE001 - recorded, and the other runs go on
            print(run, "FAILED", repr(e), flush=True)
            results["runs"].append({"run": run, "failed": repr(e)})
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    script = os.path.abspath(__file__)
    status = 0
    for run in PROFILED:
        entry = KERNELS[RUNS[run][0]][1]
        with open(os.path.join(raw, f"{run}.gmma.csv"), "w") as f:
            done = subprocess.run(
                ["ncu", "--clock-control", "none", "--metrics", ",".join(GMMA), "--csv",
                 "--page", "raw", "-k", entry, "--launch-count", "1", sys.executable,
                 script, "launch", run],
                stdout=f, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
        print(run, "gmma ncu rc", done.returncode, done.stderr[-800:], flush=True)
        status = status or done.returncode
    profiled = {run: KERNELS[RUNS[run][0]][1] for run in PROFILED}
    status = tt.profile(profiled, script, raw, "tma_kernels_h200.measured.csv") or status
    shutil.move(os.path.join(raw, "tma_kernels_h200.measured.csv"), out)
    with tarfile.open(os.path.join(out, "tma_kernels_h200.raw.tar.gz"), "w:gz") as tar:
        tar.add(raw, arcname="tma_kernels_h200")
    shutil.rmtree(raw)
    return status


if __name__ == "__main__":
    if sys.argv[1] == "build":
        build()
    elif sys.argv[1] == "launch":
        launch(sys.argv[2])
    elif sys.argv[1] == "measure":
        sys.exit(measure(os.environ.get("OUT", ".")))
    else:
        from benchmarks.hardware.tma_kernels import table

        table.main(sys.argv[2] if len(sys.argv) > 2 else MEASURED)
