"""verify against Triton's Gluon `bank_conflicts`, on patterns both can express.

    python -m benchmarks.campaigns.gluon_compare   # benchmarks/results/gluon_compare.{csv,md}

A pattern is a 2-D fp16 tensor held in registers by a Gluon BlockedLayout
(sizePerThread [1, v], threadsPerWarp [32/t, t], one warp) and stored to (or
loaded from) shared memory with a Triton shared encoding. Gluon answers with
`gl.bank_conflicts(register type, shared type)` while tracing a kernel for an
sm_90 target (no GPU needed). verify answers with a spec: the same encoding,
and the st.shared / ld.shared access each lane makes for every repetition of the
blocked layout over the tensor, with the worst instance's wavefronts.

Gluon documents its figure as "the excess number of memory accesses that each
wavefront needs"; the table sets it beside verify's excess wavefronts per
instruction (wavefronts - ideal) and verify's max-ways - 1. Times are per query,
each side's fastest of REPEAT runs: verify's check (its wall time, as the report
prints it), and Gluon's whole kernel trace (its count is one call inside the trace,
so its figure is an upper bound on the count's own cost).
"""

from __future__ import annotations

import contextlib
import io
import itertools
import os
import sys
import time

from benchmarks.speed.catalog import write_csv
from verify.engines.runner import run_spec
from verify.spec.parser import parse_text

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
ROWS, COLS = 32, 64
REPEAT = 3  # each side timed as its fastest of REPEAT runs
SWIZZLES = [(1, 1, 1), (8, 1, 8), (8, 2, 4), (4, 1, 8), (2, 1, 4), (8, 4, 2), (1, 1, 8)]
VECTORS = {1: "b16", 2: "b32", 4: "v2.b32", 8: "v4.b32"}


def patterns():
    for (vec, per, most), v, t, op in itertools.product(
        SWIZZLES, VECTORS, (1, 2, 4, 8, 16, 32), ("st", "ld")
    ):
        if v * t <= COLS:
            yield {"vec": vec, "per_phase": per, "max_phase": most, "v": v, "t": t, "op": op}


def encoding(p) -> str:
    return (
        f"#ttg.swizzled_shared<{{vec = {p['vec']}, perPhase = {p['per_phase']}, "
        f"maxPhase = {p['max_phase']}, order = [1, 0]}}>"
    )


def verify_answer(p) -> dict:
    rows_per_rep, t, v = 32 // p["t"], p["t"], p["v"]
    text = (
        "\n".join(
            [
                "dtype f16",
                "buffer align 128",
                f"layout S = {encoding(p)} shape ({ROWS}, {COLS})",
                f"access a = {p['op']}.shared.{VECTORS[v]} S(lane / {t} + {rows_per_rep} * i, "
                f"{v} * (lane % {t}) + {v * t} * j) for i in 0..{ROWS // rows_per_rep}, "
                f"j in 0..{COLS // (v * t)}",
                "check wavefronts <= 1000 a",
            ]
        )
        + "\n"
    )
    result = next(
        r for r in run_spec(parse_text(text, "gluon.spec")) if r.property.startswith("wave")
    )
    if result.wavefronts is None:  # a vector that a swizzle splits: misaligned
        return {
            "verify_excess": "misaligned",
            "verify_ways_minus_1": "misaligned",
            "verify_ms": 1000 * result.seconds,
        }
    assert result.ideal_wavefronts is not None and result.max_ways is not None, "bank figures"
    return {
        "verify_excess": result.wavefronts - result.ideal_wavefronts,
        "verify_ways_minus_1": result.max_ways - 1,
        "verify_ms": 1000 * result.seconds,
    }


class Gluon:
    """Traces one kernel per pattern for an sm_90 target and reads the count."""

    def __init__(self):
        from triton._C.libtriton import ir
        from triton.backends.compiler import GPUTarget
        from triton.compiler.compiler import make_backend
        from triton.experimental import gluon
        from triton.experimental.gluon import language as gl

        self.gl, self.gluon, self.ir = gl, gluon, ir
        self.target = GPUTarget("cuda", 90, 32)
        self.backend = make_backend(self.target)
        self.options = self.backend.parse_options({"num_warps": 1})

        @gluon.jit
        def kernel(
            out, blocked: gl.constexpr, shared: gl.constexpr, rows: gl.constexpr, cols: gl.constexpr
        ):
            smem = gl.allocate_shared_memory(gl.float16, [rows, cols], shared)
            x = gl.full([rows, cols], 0, gl.float16, blocked)
            gl.static_print("BANK_CONFLICTS", gl.bank_conflicts(x.type, smem.type))

        self.kernel = kernel

    def answer(self, p) -> dict:
        gl = self.gl
        blocked = gl.BlockedLayout([1, p["v"]], [32 // p["t"], p["t"]], [1, 1], [1, 0])
        shared = gl.SwizzledSharedLayout(p["vec"], p["per_phase"], p["max_phase"], [1, 0])
        src = self.gluon._runtime.GluonASTSource(
            self.kernel,
            signature={
                "out": "*fp16",
                "blocked": "constexpr",
                "shared": "constexpr",
                "rows": "constexpr",
                "cols": "constexpr",
            },
            constexprs={(1,): blocked, (2,): shared, (3,): ROWS, (4,): COLS},
        )
        context = self.ir.context()
        self.ir.load_dialects(context)
        self.backend.load_dialects(context)
        printed = io.StringIO()
        started = time.monotonic()
        with contextlib.redirect_stdout(printed):
            src.make_ir(
                self.target,
                self.options,
                self.backend.get_codegen_implementation(self.options),
                self.backend.get_module_map(),
                context,
            )
        elapsed = 1000 * (time.monotonic() - started)
        count = int(printed.getvalue().split("BANK_CONFLICTS")[1].split()[0])
        return {"gluon": count, "gluon_ms": elapsed}


def main() -> int:
    gluon = Gluon()
    rows = []
    for p in patterns():
        rows.append(
            {**p, **fastest(verify_answer, p, "verify_ms"), **fastest(gluon.answer, p, "gluon_ms")}
        )
    write_csv(os.path.join(RESULTS, "gluon_compare.csv"), rows)
    print(summary(rows))
    return 0


def fastest(answer, pattern, timing: str) -> dict:
    """The answer, timed as the fastest of REPEAT runs: each side is asked the same
    question again, so the other side's caches and the machine's load weigh alike."""
    runs = [answer(pattern) for _ in range(REPEAT)]
    return {**runs[0], timing: min(r[timing] for r in runs)}


def summary(rows) -> str:
    import statistics

    from benchmarks.speed.catalog import machine

    misaligned = [r for r in rows if r["verify_excess"] == "misaligned"]
    rows = [r for r in rows if r["verify_excess"] != "misaligned"]
    same_excess = sum(r["gluon"] == r["verify_excess"] for r in rows)
    same_ways = sum(r["gluon"] == r["verify_ways_minus_1"] for r in rows)
    lines = [
        f"# verify vs Gluon bank_conflicts ({len(rows) + len(misaligned)} patterns)",
        "",
        f"Machine: {machine()}",
        "",
        f"- Gluon's count equals verify's excess wavefronts in {same_excess} patterns "
        f"and verify's max-ways - 1 in {same_ways}.",
        f"- {len(misaligned)} more patterns split a thread's vector across a swizzle "
        f"(vec smaller than the access): verify refutes their alignment; Gluon counts them "
        f"(its lowering would split the vector).",
        "- Median time per query: verify "
        f"{statistics.median(r['verify_ms'] for r in rows):.1f} ms, "
        f"Gluon trace {statistics.median(r['gluon_ms'] for r in rows):.1f} ms.",
        "",
        "Patterns where the two differ (v: halves per thread, t: threads along a row):",
        "",
        "| op | v | t | swizzle (vec,per,max) | gluon | verify excess | verify ways-1 |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r["gluon"] != r["verify_excess"]:
            lines.append(
                f"| {r['op']} | {r['v']} | {r['t']} | {r['vec']},{r['per_phase']},"
                f"{r['max_phase']} | {r['gluon']} | {r['verify_excess']} | "
                f"{r['verify_ways_minus_1']} |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
