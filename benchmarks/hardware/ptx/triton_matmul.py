"""The tutorial matmul at BLOCK 64x64x32 (tests/data/ttgir_ptx/matmul_64x64x32.sm80.ptx,
Triton 3.9's PTX for sm_80) measured per SASS instruction on the H200, to compare
with what `verify ttgir` / `verify ptx` decide for each cp.async and ldmatrix.

Here: ``ptxas -arch=sm_90 -lineinfo`` (Triton's bundled ptxas) turns the sm_80 PTX
into triton/matmul_64x64x32.sm90.cubin; its SASS is ``nvdisasm -g``'s. On the
H200 (cupy, ncu): ``python3 benchmarks/hardware/ptx/triton_matmul.py measure``
launches it once at M = N = K = 512 (row strides 512, grid 64, 128 threads,
16384 bytes of dynamic shared memory, as verify's --assume and --grid say) under
``ncu --section SourceCounters --page source --print-source sass --csv`` and
writes $OUT/triton_matmul_h200.csv (SASS offset, opcode, executions, L1
Wavefronts Shared, ideal) for every shared-memory SASS instruction."""

from __future__ import annotations

import csv
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CUBIN = os.path.join(HERE, "triton", "matmul_64x64x32.sm90.cubin")
M = N = K = 512
SHARED = 16384
SHARED_OPS = ("LDGSTS", "LDSM", "LDS", "STS")


def launch() -> None:
    import cupy as cp
    import numpy as np

    fn = cp.RawModule(path=CUBIN).get_function("matmul_kernel")
    rng = np.random.default_rng(24)
    a = cp.asarray(rng.uniform(-1, 1, (M, K)).astype(np.float16))
    b = cp.asarray(rng.uniform(-1, 1, (K, N)).astype(np.float16))
    c = cp.zeros((M, N), dtype=cp.float16)
    ints = [np.int32(x) for x in (M, N, K, K, N, N)]  # M, N, K, stride_am, stride_bk, stride_cm
    null = np.uint64(0)  # Triton 3.9's global and profile scratch: none for this kernel
    fn(((M // 64) * (N // 64),), (128,), (a, b, c, *ints, null, null), shared_mem=SHARED)
    cp.cuda.runtime.deviceSynchronize()
    want = a.astype(cp.float32) @ b.astype(cp.float32)
    error = float(cp.linalg.norm(c.astype(cp.float32) - want) / cp.linalg.norm(want))
    print(f"relative error {error:.2e} {'ok' if error < 1e-2 else 'WRONG'}", flush=True)


def measure(out: str) -> int:
    raw = os.path.join(out, "triton_matmul_ncu.csv")
    with open(raw, "w") as f:
        done = subprocess.run(
            ["ncu", "--section", "SourceCounters", "--page", "source", "--print-source",
             "sass", "--csv", "-k", "regex:matmul", "--launch-count", "1",
             sys.executable, os.path.abspath(__file__), "launch"],
            stdout=f, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
    if done.returncode:
        print(done.stderr[-3000:], file=sys.stderr)
        return done.returncode
    with open(raw) as f:
        rows = list(csv.reader(f))
    head = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    col = {name: i for i, name in enumerate(rows[head])}
    keep = ["Address", "Source", "Instructions Executed", "L1 Wavefronts Shared",
            "L1 Wavefronts Shared Ideal"]  # fmt: skip
    with open(os.path.join(out, "triton_matmul_h200.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["sass_offset", "sass", "executions", "wavefronts", "ideal"])
        for r in rows[head + 1 :]:
            if len(r) == len(rows[head]) and any(op in r[col["Source"]] for op in SHARED_OPS):
                writer.writerow([r[col[k]].strip() for k in keep])
    with open(os.path.join(out, "triton_matmul_h200.csv")) as f:
        print(f.read())
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "launch":
        launch()
    else:
        sys.exit(measure(os.environ.get("OUT", ".")))
