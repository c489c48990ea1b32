"""What `check_ptx` decides for every PTX sample, and the CPU seconds it takes.

Each case is a sample under tests/data/{ptx,ttgir_ptx,hopper} with the options its
tests use (bare, and the launch values where a test gives them). Every result is
recorded as (PTX line, property, status, figures), so a speed change can be shown
to leave every verdict and figure as it was:

    python -m benchmarks.speed.kernel_check --record before.json
    python -m benchmarks.speed.kernel_check --compare before.json

``--parser``: each generated spec read by the spec parser (lark) instead of
`verify.spec.direct`, as before that module; both give the same results, so
``--parser --record F`` then ``--compare F`` shows it, and the CPU columns
what reading without lark saves. ``--rounds N``: each case's least CPU of N runs.

Results: benchmarks/results/kernel_check.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from benchmarks.speed.ptx_front import record
from verify.engines.options import RunOptions
from verify.ptx import specgen
from verify.ptx.check import Options, check_ptx
from verify.spec.parser import parse_text

P, T, H = "tests/data/ptx/", "tests/data/ttgir_ptx/", "tests/data/hopper/"
# The launches the tests give (tests/ptx/test_ptx.py, tests/ptx/test_ptx_hopper.py).
SOFTMAX = ("param_2=1024", "param_3=1024", "param_4=4096", "param_5=1024")
CUTE = ("param_0=4096", "param_0+4=4096", "param_0+8=4096", "param_3=4096", "param_8=4096")
CUTE_WGMMA = ("param_0=4096", "param_0+4=4096", "param_0+8=4096", "param_3=4096", "param_7=4096")
TRITON_512 = tuple(f"param_{n}=512" for n in range(3, 9))

CASES: list[tuple[str, dict]] = [
    (P + "cute_sgemm_sm80.ptx", {}),
    (
        P + "cute_sgemm_sm80.ptx",
        dict(assume=CUTE, grid=(32, 32, 1), global_align=256, dynamic_shared=98304),
    ),
    (
        P + "cute_wgmma_sm90a.ptx",
        dict(block=(128,), grid=(32, 32), shared_align=1024, assume=CUTE_WGMMA),
    ),
    (P + "ldmatrix_swizzle_sm80.ptx", {}),
    (P + "ldmatrix_swizzle_sm90a.ptx", {}),
    (P + "pipeline_sm80.ptx", dict(kernel="pipeline3")),
    (P + "pipeline_sm80.ptx", dict(kernel="tail_dynamic", dynamic_shared=1024)),
    (P + "pipeline_sm90a.ptx", dict(kernel="pipeline3")),
    (P + "transpose_sm80.ptx", dict(block=(32, 8))),
    (P + "transpose_sm90a.ptx", dict(block=(32, 8))),
    (P + "triton_attention_sm80.ptx", {}),
    (P + "triton_attention_sm90.ptx", {}),
    (P + "triton_matmul_sm80.ptx", {}),
    (P + "triton_matmul_sm90.ptx", {}),
    (P + "triton_softmax_sm80.ptx", {}),
    (
        P + "triton_softmax_sm80.ptx",
        dict(assume=SOFTMAX, grid=(64, 1, 1), global_align=256, dynamic_shared=16384),
    ),
    (P + "triton_softmax_sm90.ptx", {}),
    (P + "triton_transpose_sm80.ptx", {}),
    (P + "triton_transpose_sm90.ptx", {}),
    (T + "matmul_64x64x32.sm80.ptx", {}),
    (
        T + "matmul_64x64x32.sm80.ptx",
        dict(assume=TRITON_512, grid=(64,), global_align=256, shared_align=128),
    ),
    (T + "permuted_store.sm80.ptx", {}),
    (H + "matmul.sm90.ptx", dict(shared_align=1024, assume=TRITON_512, grid=(16,))),
    (H + "tma_matmul.sm90.ptx", {}),
]


def _key(path: str, options: dict) -> str:
    return f"{path} {json.dumps(options, sort_keys=True)}"


def run(rounds: int = 1) -> tuple[dict, dict]:
    found: dict[str, list[list]] = {}
    seconds: dict[str, float] = {}
    for _ in range(rounds):
        for path, options in CASES:
            start = time.process_time()
            try:
                results = check_ptx(path, Options(run=RunOptions(seconds=30), **options))
                rows = [record(r) for r in results]
            except Exception as e:  # a case that errors is recorded as its error
                rows = [["error", type(e).__name__, str(e)]]
            spent = time.process_time() - start
            key = _key(path, options)
            seconds[key] = min(spent, seconds.get(key, spent))
            found[key] = rows
    return found, seconds


def read_with_parser(self, file: str, lines: list[str] | None = None):
    """`SharedSpec.read` as it was: the spec parser reads the generated text."""
    return parse_text(self.text if lines is None else "\n".join(lines) + "\n", file)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--record", help="write every case's results here (JSON)")
    parser.add_argument("--compare", help="compare with results written by --record")
    parser.add_argument("--parser", action="store_true", help="read generated specs with lark")
    parser.add_argument("--rounds", type=int, default=1, help="each case's least CPU of N runs")
    args = parser.parse_args()
    if args.parser:
        specgen.SharedSpec.read = read_with_parser  # type: ignore[method-assign]
    found, seconds = run(args.rounds)
    for key, s in seconds.items():
        print(f"{s:8.3f}  {len(found[key]):4d}  {key}")
    print(f"{sum(seconds.values()):8.3f}  total CPU seconds")
    if args.record:
        with open(args.record, "w") as f:
            json.dump(found, f, indent=0)
    if args.compare:
        with open(args.compare) as f:
            before = json.load(f)
        differ = [k for k in before if before[k] != found.get(k)]
        for k in differ:
            print(f"DIFFERS: {k}")
        print(f"{len(differ)} of {len(before)} cases differ")
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
