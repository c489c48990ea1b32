"""Benchmark of `verify synth` on specs/synth/: each problem in each family and by
each method (the solver over the family's parameters; listing every member),
timed; the curve as tiles grow (8x64 up to 256x256, the sw and xor families);
and the optimum compared with what CUTLASS and Triton choose for the same tile.

Writes benchmarks/results/synth.csv, synth_curve.csv and synth.md. Times are
wall-clock on the machine named in the output (a shared 2-core box: noisy).

    python benchmarks/speed/synth.py [--timeout 60] [--curve-timeout 120]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from benchmarks.speed.catalog import write_csv  # noqa: E402
from verify.engines.runner import run_spec  # noqa: E402
from verify.spec.parser import parse_text  # noqa: E402
from verify.synth import gf2, synthesize_file  # noqa: E402
from verify.synth.certificate import spec_with  # noqa: E402
from verify.synth.problem import problem_of  # noqa: E402

# (family, method): the solver where the family has one, listing as the cross-check.
RUNS = (
    ("sw", "solver"),
    ("sw", "list"),
    ("tile", "solver"),
    ("tile", "list"),
    ("triton", "solver"),
    ("triton", "list"),
    ("pad", "list"),
    ("pad+sw", "solver"),
    ("pad+sw", "list"),
    ("xor", "solver"),
    ("all", "solver"),
)
# The growing tiles: fp16, 16-byte stores along rows, ldmatrix.x4 of 8x32 blocks.
CURVE = ((8, 64), (16, 64), (32, 64), (64, 64), (64, 128), (128, 128), (128, 256), (256, 256))
CURVE_FAMILIES = ("sw", "xor")
# What the libraries choose for each problem (sources in the specs' comments and
# specs/cutlass_sm80): CuTe text. Triton's choices are read from compiled kernels
# (`library_choices`).
CHOICES = {
    "ldmatrix_x1_8x64": {"CUTLASS": "Sw<3,3,3> o (8,64):(64,1)"},
    "cutlass_sm80_f16_kmajor_64x64": {
        "CUTLASS": "tile_to_shape(Sw<3,3,3> o (8,64):(64,1), (64, 64))",
    },
    "b_operand_trans_32x64": {
        "CUTLASS": "tile_to_shape(Sw<3,3,3> o (8,64):(64,1), (32, 64))",
        "CUTLASS #3172 (Sw<3,3,4>)": "tile_to_shape(Sw<3,3,4> o (8,64):(64,1), (32, 64))",
    },
    "f32_transpose_32x32": {
        "seed article (pad 33)": "(32,32):(33,1)",
        "hand-written swizzled_shared (vec 1, maxPhase 32)": "#ttg.swizzled_shared<{vec = 1, "
        "perPhase = 1, maxPhase = 32, order = [1, 0]}> shape (32, 32)",
    },
    "cutlass_sm80_tf32_kmajor_64x32": {
        "CUTLASS": "tile_to_shape(Sw<3,2,3> o (8,32):(32,1), (64, 32))",
    },
    "cutlass_sm80_i8_kmajor_64x64": {
        "CUTLASS": "tile_to_shape(Sw<2,4,3> o (16,64):(64,1), (64, 64))",
    },
    "stmatrix_epilogue_64x64": {
        "CUTLASS sm90 epilogue": "tile_to_shape(Sw<3,3,3> o (8,64):(64,1), (64, 64))",
    },
    "two_consumers_64x64": {
        "CUTLASS": "tile_to_shape(Sw<3,3,3> o (8,64):(64,1), (64, 64))",
    },
}
# fp16 problems with 128-byte rows that are no tl.dot operand of their own shape
# (8 rows is below mma's 16; an epilogue; a buffer with a copy reader): Triton's
# fp16 operand parameters, compiled for the 64x64 A tile, at the problem's shape.
FP16_LIKE = ("ldmatrix_x1_8x64", "stmatrix_epilogue_64x64", "two_consumers_64x64")


def library_choices() -> dict[str, dict[str, str]]:
    """CHOICES plus Triton's: the shared encoding of each tl.dot operand problem read
    from the TTGIR of a kernel compiled for sm_80 (`synth_triton.dot_encodings`)."""
    try:
        from benchmarks.campaigns import synth_triton

        compiled = synth_triton.dot_encodings()
    except ImportError:  # Triton is an optional extra
        return CHOICES
    out = {name: dict(choices) for name, choices in CHOICES.items()}
    for name, encoding in compiled.items():
        out[name]["Triton (compiled tl.dot, sm_80)"] = encoding
    fp16 = compiled["cutlass_sm80_f16_kmajor_64x64"].rsplit(" shape ", 1)[0]
    for name in FP16_LIKE:
        rows, cols = read_shape(name)
        out[name]["Triton (compiled fp16 tl.dot operand's parameters)"] = (
            f"{fp16} shape ({rows}, {cols})"
        )
    return out


def read_shape(name: str) -> tuple[int, int]:
    path = os.path.join(ROOT, "specs", "synth", f"{name}.synth")
    source = read(path)
    return problem_of(parse_text(source, path), source).shape


def read(path: str) -> str:
    with open(path) as f:
        return f.read()


def figures_of(path: str, layout: str) -> str:
    """max-ways per access of `layout` substituted into the problem, by the ordinary checks."""
    source = read(path)
    problem = problem_of(parse_text(source, path), source)
    claims = [f"check max_ways <= 32 {a.name}" for a in problem.accesses]
    results = run_spec(parse_text(spec_with(problem, layout, claims), path))
    banks = [r for r in results if r.property.startswith("max_ways <= 32")]
    return ", ".join(f"{r.property.split()[-1]} {r.max_ways}-way/{r.wavefronts} wf" for r in banks)


def instance_totals(path: str) -> tuple[str, str, int, int]:
    """The sw optimum of a problem, its instructions, and the wavefronts and worst
    ways summed over every instance of every access: the whole tile's traffic,
    comparable with the instructions a compiler emits for it."""
    import numpy as np

    from verify.engines.enumeration import phase_costs
    from verify.synth.search import synthesize

    source = read(path)
    problem = problem_of(parse_text(source, path), source)
    answer = synthesize(problem, "sw", 60.0)
    table, notation = answer.table, answer.notation
    assert table is not None and notation is not None, f"{path}: no sw layout ({answer.reason})"
    waves = ways = 0
    for a in problem.accesses:
        costs = phase_costs(
            a.access, problem.elem_bytes * table[a.coords[..., 0], a.coords[..., 1]]
        )
        waves += int(np.sum(costs))
        ways = max(ways, int(costs.max()))
    # One instance is one warp's instruction: the catalog's warp index is a loop variable.
    used = ", ".join(f"{len(a.instances)} {a.instruction.name}" for a in problem.accesses)
    return notation, used, waves, ways


def generic_swizzling_lines() -> list[str]:
    """Triton's GenericSwizzling against verify's optimum (benchmarks/campaigns/synth_triton.py)."""
    try:
        from benchmarks.campaigns import synth_triton
    except ImportError as e:  # Triton is an optional extra
        return [f"Not run: {e}."]
    lines = [
        "| problem | Triton: instructions | Triton: wavefronts, worst ways | verify "
        "optimum (sw) | verify: instructions | verify: wavefronts, worst ways |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name in synth_triton.KERNELS:
        figures = synth_triton.triton_figures(name)
        used = ", ".join(
            f"{n} {i}" for side in figures.values() for i, n in side["instructions"].items()
        )
        waves = sum(side["wavefronts"] for side in figures.values())
        ways = max(side["max_ways"] for side in figures.values())
        layout, ours, our_waves, our_ways = instance_totals(
            os.path.join(ROOT, "specs", "synth", f"{name}.synth")
        )
        lines.append(
            f"| {name} | {used} | {waves}, {ways}-way | `{layout}` | {ours} | "
            f"{our_waves}, {our_ways}-way |"
        )
    return lines


def grown_spec(rows: int, cols: int) -> str:
    """The curve's problem on an R x C fp16 tile: each warp's 32 lanes store 16
    bytes each along rows (C/8 lanes a row), ldmatrix.x4 reads 8x32 blocks."""
    per_row = cols // 8
    return (
        f"dtype f16\nbuffer align 128\nlayout A = ?({rows}, {cols})\n"
        f"access fill = st.shared.v4.b32 A({32 // per_row} * i + lane / {per_row}, "
        f"8 * (lane % {per_row})) for i in 0..{rows * per_row // 32}\n"
        f"access read = ldmatrix.x4 A(8 * m + lane % 8, 32 * k + 8 * (lane / 8)) "
        f"for m in 0..{rows // 8}, k in 0..{cols // 32}\ncheck bijective A\n"
    )


def timed(path: str, family: str, method: str, timeout: float) -> dict:
    gf2.forget_proved_lemmas()  # each run proves its own lemmas: the times compare
    started = time.monotonic()
    _, answer, cert = synthesize_file(path, family, timeout, method)
    seconds = time.monotonic() - started
    o = answer.objective
    return {
        "family": family,
        "method": method,
        "layout": cert.layout if cert else "-",
        "max_ways": o.max_ways if o else "-",
        "wavefronts": o.wavefronts if o else "-",
        "footprint": o.footprint if o else "-",
        "xor_terms": o.xor_terms if o else "-",
        "optimal": answer.optimal and o is not None,
        "queries": len(answer.steps) if method == "solver" else len(answer.rows),
        "seconds": round(seconds, 2),
    }


def curve(timeout: float, scratch: str) -> list[dict]:
    rows = []
    for r, c in CURVE:
        path = os.path.join(scratch, f"grown_{r}x{c}.synth")
        with open(path, "w") as f:
            f.write(grown_spec(r, c))
        for family in CURVE_FAMILIES:
            row = {"tile": f"{r}x{c}", **timed(path, family, "solver", timeout)}
            rows.append(row)
            print(row, flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--curve-timeout", type=float, default=120.0)
    parser.add_argument("--scratch", default="/tmp")
    args = parser.parse_args()
    rows = []
    for name in CHOICES:
        path = os.path.join(ROOT, "specs", "synth", f"{name}.synth")
        for family, method in RUNS:
            rows.append({"problem": name, **timed(path, family, method, args.timeout)})
            print(rows[-1], flush=True)
    write(rows, curve(args.curve_timeout, args.scratch))


def _table(rows: list[dict]) -> list[str]:
    keys = list(rows[0])
    return [
        "| " + " | ".join(keys) + " |",
        "| " + " | ".join("---" for _ in keys) + " |",
        *["| " + " | ".join(str(v) for v in r.values()) + " |" for r in rows],
    ]


def _agreement(rows: list[dict]) -> list[str]:
    """Solver against listing, family by family: the same optimum, and the times."""
    out = []
    for family in ("sw", "tile", "triton", "pad+sw"):
        pairs = [
            (a, b)
            for a in rows
            for b in rows
            if a["problem"] == b["problem"]
            and a["family"] == b["family"] == family
            and (a["method"], b["method"]) == ("solver", "list")
        ]
        same = sum(
            (a["max_ways"], a["wavefronts"], a["footprint"], a["xor_terms"])
            == (b["max_ways"], b["wavefronts"], b["footprint"], b["xor_terms"])
            for a, b in pairs
        )
        out.append(
            f"- `{family}`: the same optimum on {same} of {len(pairs)} problems; "
            f"solver {sum(a['seconds'] for a, _ in pairs):.1f} s in all (max "
            f"{max(a['seconds'] for a, _ in pairs):.1f} s), listing "
            f"{sum(b['seconds'] for _, b in pairs):.1f} s (max "
            f"{max(b['seconds'] for _, b in pairs):.1f} s)."
        )
    return out


def _targets(rows: list[dict], grown: list[dict]) -> list[str]:
    sw = max(r["seconds"] for r in rows if (r["family"], r["method"]) == ("sw", "solver"))
    xor64 = [r["seconds"] for r in rows if r["family"] == "xor" and "64x64" in r["problem"]]
    xor64 += [r["seconds"] for r in grown if r["family"] == "xor" and r["tile"] == "64x64"]
    union = max(r["seconds"] for r in rows if r["family"] == "all")
    unproved = [f"{r['tile']} {r['family']}" for r in grown if not r["optimal"]]
    met = lambda ok: "met" if ok else "NOT met"  # noqa: E731
    return [
        f"- Sw family, each catalog problem synthesised and certified under 10 s: "
        f"{met(sw < 10)} (slowest {sw:.1f} s).",
        f"- xor family on 64x64 tiles under 60 s: {met(max(xor64) < 60)} (slowest "
        f"{max(xor64):.1f} s).",
        f"- `--family all` (every family, optimal over their union) under 10 s per "
        f"catalog problem: {met(union < 10)} (slowest {union:.1f} s).",
        "- Curve: "
        + (
            f"not proved optimal within the timeout: {', '.join(unproved)}."
            if unproved
            else "every tile proved optimal."
        ),
    ]


def write(rows: list[dict], grown: list[dict]):
    out = os.path.join(ROOT, "benchmarks", "results")
    for name, table in (("synth.csv", rows), ("synth_curve.csv", grown)):
        write_csv(os.path.join(out, name), table)
    machine = (
        f"{platform.node() and 'dev box'}: {os.cpu_count()} cores "
        f"({platform.processor() or platform.machine()}), Python "
        f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f} at the "
        "end, shared with other agents: times are noisy"
    )
    lines = [
        "# verify synth on specs/synth/",
        "",
        f"Machine: {machine}.",
        "",
        "Synthesis and certificate (search, re-check of the whole spec) per family "
        "and method; wall seconds. `queries`: the solver's queries, or the members "
        "listed.",
        "",
        *_table(rows),
        "",
        "## The solver against listing",
        "",
        *_agreement(rows),
        "",
        "## The curve as tiles grow",
        "",
        "fp16, 16-byte stores along rows and ldmatrix.x4 of 8x32 blocks "
        "(`grown_spec`), by the solver.",
        "",
        *_table(grown),
        "",
        "## Speed targets (issue 14), on this machine",
        "",
        *_targets(rows, grown),
        "",
        "## Triton's GenericSwizzling, on the problems it applies to",
        "",
        "One writer and one reader of a `convert_layout`, written as a Gluon kernel "
        "(the catalog spec's warps and lanes), compiled for sm_90 on this CPU by "
        "Triton 3.9; the shared-memory instructions and each lane's address are read "
        "from the LLVM IR (`benchmarks/campaigns/synth_triton.py`: libtriton exposes no "
        "`optimalSwizzling` binding) and costed by verify's bank model. Both sides: "
        "every instruction moving the whole tile, summed.",
        "",
        *generic_swizzling_lines(),
        "",
        "## What the libraries choose, by the ordinary checks",
        "",
        "Triton's rows are read from compiled kernels: a one-block `tl.dot` (fp16, "
        'tf32 from fp32 with `input_precision="tf32"`, int8) at the catalog '
        "problem's block sizes, compiled for sm_80 on this CPU by Triton 3.9, its "
        "operand's `ttg.local_alloc` encoding read from the TTGIR "
        "(`benchmarks/campaigns/synth_triton.py`, `dot_encodings`).",
        "",
        "| problem | library | layout | per access |",
        "| --- | --- | --- | --- |",
    ]
    for name, choices in library_choices().items():
        path = os.path.join(ROOT, "specs", "synth", f"{name}.synth")
        for library, layout in choices.items():
            lines.append(f"| {name} | {library} | `{layout}` | {figures_of(path, layout)} |")
    with open(os.path.join(out, "synth.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
