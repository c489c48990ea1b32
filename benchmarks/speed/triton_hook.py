"""What checking every compiled kernel costs (`verify run`, `pytest
--verify-triton`): verify's time per newly compiled kernel against Triton's own
compile time of it, on the kernels of benchmarks/campaigns/triton_kernels.py (Triton's
tutorial matmul, softmax, fused attention and transpose, and Gluon kernels),
compiled for sm_80 on this machine's CPU.

    python -m benchmarks.speed.triton_hook      # results/triton_hook.{csv,md}

Per kernel and round (median of ROUNDS): Triton's wall time of ``triton.compile``
with no listener, then with `verify.integrations.triton_hook` installed (both
with ``always_compile``, so Triton's cache never answers), verify's own seconds
inside the listener, and verify's seconds when its cache answers (a new session
over the same cache). The first kernel of a process also pays for starting the
TTGIR reading child (once per run): measured apart, on a kernel outside the
table.
"""

from __future__ import annotations

import csv
import os
import runpy
import statistics
import sys
import tempfile
import time

import triton
from triton import knobs
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon._runtime import GluonASTSource

from benchmarks.campaigns.triton_kernels import CATALOG, source
from benchmarks.speed.catalog import machine
from verify.integrations.triton_hook import Session

RESULTS = "benchmarks/results/triton_hook"
TARGET = GPUTarget("cuda", 80, 32)
ROUNDS = 3
TUTORIALS = {"matmul", "softmax", "attention", "transpose"}


def compile_seconds(src, options) -> float:
    started = time.perf_counter()
    triton.compile(src, target=TARGET, options=options)
    return time.perf_counter() - started


def one_round(cache_dir: str) -> dict[str, dict]:
    """Each kernel's figures in one round: no hook, hook (fresh), hook (cached)."""
    rows: dict[str, dict] = {}
    sources = [(k.stem, source(k), k.options) for k in CATALOG]
    for stem, src, options in sources:
        rows[stem] = {"alone": compile_seconds(src, options)}
    for answered in ("fresh", "cached"):
        session = Session(cache_dir=cache_dir, report=None)
        session.install()
        warm_up(session)
        try:
            for stem, src, options in sources:
                wall = compile_seconds(src, options)
                kernel = session.kernels[-1]
                assert kernel.cached == (answered == "cached"), f"{stem}: cache state"
                rows[stem].update(
                    {
                        f"hooked_{answered}": wall,
                        f"verify_{answered}": kernel.seconds,
                        "checks": len(kernel.results),
                        "refuted": len(kernel.refuted),
                        "not_modelled": sum(
                            r.property.startswith("not modelled") for r in kernel.results
                        ),
                    }
                )
        finally:
            session.uninstall()
    return rows


def warm_up(session: Session) -> float:
    """Verify's seconds on a kernel outside the table: the child's start."""
    column_reads = runpy.run_path("tests/data/kernels/gluon_phase.py")["column_reads"]
    src = GluonASTSource(column_reads, WARM_SIGNATURE, {"ROWS": 32, "MAX_PHASE": 1}, {})
    triton.compile(src, target=TARGET, options={"num_warps": 4})
    return session.kernels[-1].seconds


WARM_SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "ROWS": "constexpr", "MAX_PHASE": "constexpr"}


def first_kernel_seconds(cache_dir: str) -> tuple[float, float]:
    """(verify's seconds on the first kernel of a session, on the second): the
    first includes starting the reading child."""
    session = Session(cache_dir="", report=None)
    session.install()
    try:
        first = warm_up(session)
        src = CATALOG[0]
        triton.compile(source(src), target=TARGET, options=src.options)
        return first, session.kernels[-1].seconds
    finally:
        session.uninstall()


def main() -> int:
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    knobs.compilation.always_compile = True
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TRITON_CACHE_DIR"] = os.path.join(tmp, "triton")
        first, second = first_kernel_seconds(tmp)
        rounds = [one_round(os.path.join(tmp, f"verify{i}")) for i in range(ROUNDS)]
    rows = [
        {
            "kernel": stem,
            **{k: statistics.median(r[stem][k] for r in rounds) for k in FIGURES},
            **counts(rounds, stem),
        }
        for stem in rounds[0]
    ]
    write(rows, first, second)
    return 0


FIGURES = ("alone", "hooked_fresh", "verify_fresh", "hooked_cached", "verify_cached")


def counts(rounds, stem) -> dict:
    last = rounds[-1][stem]
    return {k: last[k] for k in ("checks", "refuted", "not_modelled")}


def write(rows: list[dict], first: float, second: float):
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(f"{RESULTS}.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: f"{v:.4f}" if isinstance(v, float) else v for k, v in row.items()})
    total_alone = sum(r["alone"] for r in rows)
    total_verify = sum(r["verify_fresh"] for r in rows)
    total_hooked = sum(r["hooked_fresh"] for r in rows)
    lines = [
        "# Cost of checking every compiled kernel (verify run, pytest --verify-triton)",
        "",
        f"Machine: {machine()}; load average {os.getloadavg()[0]:.1f} at the end; "
        f"Triton {triton.__version__}, target sm_80, compiled on the CPU. "
        f"Median of {ROUNDS} rounds; `python -m benchmarks.speed.triton_hook`.",
        "",
        "`alone`: wall seconds of `triton.compile` with no listener; `hooked`: with "
        "verify's listener installed; `verify`: verify's seconds inside the listener "
        "(reading the TTGIR in the long-lived child and checking every op), `fresh` "
        "when verify checks the kernel, `cached` when verify's cache answers. "
        "Triton's cache never answers here (`always_compile`); on a Triton cache hit of "
        "a kernel already seen in the session verify does nothing.",
        "",
        "| kernel | tutorial | checks | refuted | not modelled | triton alone (s) | "
        "hooked (s) | verify (s) | overhead | verify cached (s) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['kernel']} | {'yes' if r['kernel'] in TUTORIALS else 'gluon'} | "
            f"{r['checks']} | {r['refuted']} | {r['not_modelled']} | {r['alone']:.3f} | "
            f"{r['hooked_fresh']:.3f} | {r['verify_fresh']:.3f} | "
            f"{100 * r['verify_fresh'] / r['alone']:.1f}% | {r['verify_cached']:.4f} |"
        )
    lines += [
        "",
        f"All kernels: verify {total_verify:.3f} s over Triton's {total_alone:.3f} s: "
        f"{100 * total_verify / total_alone:.1f}% (target: at most 25%). The worst kernel: "
        f"{max(100 * r['verify_fresh'] / r['alone'] for r in rows):.1f}%. Wall time of "
        f"the compiles with the listener against without: {total_hooked:.3f} s against "
        f"{total_alone:.3f} s (+{100 * (total_hooked / total_alone - 1):.1f}%; it includes "
        "the noise of a shared 2-core machine, and Python's work after each check).",
        "",
        f"Once per process: verify's first kernel took {first:.3f} s (the reading child "
        f"starts: it imports verify and Triton), the next {second:.3f} s.",
    ]
    with open(f"{RESULTS}.md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
