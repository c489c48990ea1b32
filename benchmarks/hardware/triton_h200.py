"""The catalog kernels on the H200: measured shared-memory wavefronts per op kind
(Nsight Compute) against verify's prediction summed over every execution of
every op it models.

Three steps:

    python -m benchmarks.hardware.triton_h200 device "$OUT"      # on the H200
    python -m benchmarks.hardware.triton_h200 table MEASURED.csv   # results/triton_h200.md
    python -m benchmarks.hardware.triton_h200 table                # here, predictions only

**device** (Python 3.12, cupy, ncu; no verify and no Triton 3.9 needed) loads
each sm_90 cubin Triton 3.9 compiled here (benchmarks/hardware/triton_h200/, written by
benchmarks/campaigns/triton_kernels.py with kernels.json: entry name, warps, dynamic shared
bytes, the PTX ``.entry`` parameters, scratch sizes) through
``cupy.RawModule``, launches it once on random inputs (`LAUNCHES`) and checks the
output against numpy, then launches them all again under ``ncu --metrics
<wavefronts and instructions per op kind>`` and writes ``$OUT/triton_h200.csv``
(kernel, metric, value), ``$OUT/triton_h200_ncu.csv`` (ncu's raw CSV) and
``$OUT/triton_h200_check.txt`` (the output checks: every kernel ``ok`` except
gluon_transpose_disagree, whose reader and writer disagree by design, so its
output is a permutation of the transpose: ``WRONG`` is the expected result there,
the hardware's side of verify's REFUTED equivalence).

**table** predicts, per kernel and op kind (ld, st, ldsm, stsm), verify's
wavefronts and instructions: for each op `verify ttgir` models in the kernel's
sm_90 TTGIR, the exact wavefronts of every warp instruction of one execution
(each register group ``r`` and warp, the buffer at offset 0; averaged over the
stages and subslice positions it may take, which are other executions), times
the op's executions per CTA, times the CTAs of the grid. Executions per CTA: the
product of the trip counts of the ``scf.for`` loops around the op, each derived
from the launch (`Launch.trips`, keyed by the loop's Python source line).
Assumption: Triton's software pipelining keeps every loop's trip count (it
predicates the prologue's and last iterations' loads instead of peeling them),
so an op inside a loop runs once per iteration and one outside runs once; the
measured instruction counts test it. Ops verify does not model (convert_layout
and reduction scratch, cp.async, wgmma) are listed beside the kind they may add
to; measured minus predicted is theirs.
"""

from __future__ import annotations

import csv
import json
import math
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CUBINS = os.path.join(HERE, "triton_h200")
RESULTS = os.path.join(ROOT, "benchmarks", "results", "triton_h200.md")
KINDS = ("ld", "st", "ldsm", "stsm")
WAVEFRONTS = "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_{}.sum"
# Warp-level instruction counts per kind, where this ncu knows them (queried first).
INSTRUCTIONS = {
    "ld": "smsp__sass_inst_executed_op_shared_ld.sum",
    "st": "smsp__sass_inst_executed_op_shared_st.sum",
    "ldsm": "smsp__sass_inst_executed_op_ldsm.sum",
    "stsm": "smsp__sass_inst_executed_op_stsm.sum",
}
NUMPY_DTYPES = {"fp16": "float16", "fp32": "float32"}


@dataclass(frozen=True)
class Launch:
    """How one catalog kernel runs: its runtime arguments (a buffer is
    ``("fp16", elements)``, any other value is passed as the parameter's
    type), grid, the trip count of each loop (keyed by the start of its Python
    line), and the numpy reference of one output buffer."""

    args: dict
    grid: tuple
    trips: dict = field(default_factory=dict)
    output: str = ""
    reference: str = ""

    @property
    def ctas(self) -> int:
        return math.prod(self.grid)


MM = 512  # M = N = K of the matmul
ROWS, COLS, SM_GRID = 1024, 1024, 256
HEADS, N_CTX, HEAD_DIM = 4, 256, 64
LAUNCHES = {
    "matmul": Launch(
        {
            "a_ptr": ("fp16", MM * MM),
            "b_ptr": ("fp16", MM * MM),
            "c_ptr": ("fp16", MM * MM),
            "M": MM,
            "N": MM,
            "K": MM,
            "stride_am": MM,
            "stride_bk": MM,
            "stride_cm": MM,
        },
        (math.ceil(MM / 128) * math.ceil(MM / 128), 1, 1),
        {"for k in range(": math.ceil(MM / 64)},
        "c_ptr",
        "matmul",
    ),
    "transpose": Launch(
        {"x_ptr": ("fp32", 64 * 64), "y_ptr": ("fp32", 64 * 64)},
        (1, 1, 1),
        {},
        "y_ptr",
        "transpose",
    ),
    "softmax": Launch(
        {
            "output_ptr": ("fp32", ROWS * COLS),
            "input_ptr": ("fp32", ROWS * COLS),
            "input_row_stride": COLS,
            "output_row_stride": COLS,
            "n_rows": ROWS,
            "n_cols": COLS,
        },
        (SM_GRID, 1, 1),
        {"for row_idx in tl.range(": ROWS // SM_GRID},
        "output_ptr",
        "softmax",
    ),
    "attention": Launch(
        {
            "Q": ("fp16", HEADS * N_CTX * HEAD_DIM),
            "K": ("fp16", HEADS * N_CTX * HEAD_DIM),
            "V": ("fp16", HEADS * N_CTX * HEAD_DIM),
            "Out": ("fp16", HEADS * N_CTX * HEAD_DIM),
            "sm_scale": 0.125,
            "N_CTX": N_CTX,
        },
        (N_CTX // 64, HEADS, 1),
        {"for start_n in range(": N_CTX // 32},
        "Out",
        "attention",
    ),
    **{
        f"gluon_transpose_{name}": Launch(
            {"x_ptr": ("fp32", 32 * 32), "y_ptr": ("fp32", 32 * 32)},
            (1, 1, 1),
            {},
            "y_ptr",
            "transpose",
        )
        for name in ("plain", "swizzled", "disagree")
    },
    "gluon_columns_swizzled_fp16": Launch(
        {"x_ptr": ("fp16", 32 * 64), "y_ptr": ("fp16", 32 * 64)}, (1, 1, 1), {}, "y_ptr", "copy"
    ),
}


# -- the parameter list Triton's launcher passes --------------------------------------


def marshal(params: list[dict], values: dict, pointers: dict) -> list:
    """The kernel's arguments in ``.entry`` order as numpy scalars of the PTX
    parameter types: buffers by device address (`pointers`), scalars from
    `values`; Triton 3.9's trailing scratch pointers (``global_scratch``,
    ``profile_scratch``) from `pointers`, null where Triton allocates none."""
    import numpy as np

    types = {
        "u64": np.uint64,
        "s64": np.int64,
        "u32": np.uint32,
        "s32": np.int32,
        "b32": np.uint32,
        "f32": np.float32,
        "f64": np.float64,
    }
    out = []
    for p in params:
        name, ptx = p["name"], p["ptx"]
        if ptx not in types:
            raise ValueError(f"parameter {name}: PTX type .{ptx} is not marshalled here")
        if p["signature"].startswith("*"):
            if ptx != "u64":
                raise ValueError(f"parameter {name}: a pointer passed as .{ptx}")
            out.append(np.uint64(pointers.get(name, 0)))
        elif p["signature"] in ("i32", "i64", "fp32", "fp64"):
            value = values[name]
            if p["signature"].startswith("i") and ptx in ("u32", "b32"):
                out.append(np.int32(value).view(np.uint32))  # i32 travels as 32 bits
            else:
                out.append(types[ptx](value))
        else:
            raise ValueError(f"parameter {name}: signature type {p['signature']} not handled")
    return out


# -- on the H200 -------------------------------------------------------------------------


def references(kind: str, inputs: dict, launch: Launch):
    """The expected output of a kernel on `inputs` (its input buffers in argument
    order, float64 numpy)."""
    import numpy as np

    arrays = [v.astype(np.float64) for v in inputs.values()]
    if kind == "matmul":
        return (arrays[0].reshape(MM, MM) @ arrays[1].reshape(MM, MM)).ravel()
    if kind == "transpose":
        side = math.isqrt(arrays[0].size)
        return arrays[0].reshape(side, side).T.ravel()
    if kind == "softmax":
        x = arrays[0].reshape(ROWS, COLS)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return (e / e.sum(axis=1, keepdims=True)).ravel()
    if kind == "attention":
        q, k, v = (a.reshape(HEADS, N_CTX, HEAD_DIM) for a in arrays[:3])
        s = q @ k.transpose(0, 2, 1) * launch.args["sm_scale"]
        p = np.exp(s - s.max(axis=2, keepdims=True))
        return ((p / p.sum(axis=2, keepdims=True)) @ v).ravel()
    if kind == "copy":
        return arrays[0].ravel()
    raise ValueError(kind)


def allow_shared(fn, nbytes: int):
    """Opt a kernel in to more than 48 KiB of dynamic shared memory, as Triton's
    launcher does (``cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)``):
    through cupy's RawKernel property, else its driver binding."""
    try:
        fn.max_dynamic_shared_size_bytes = nbytes
    except AttributeError:
        from cupy.cuda import driver

        driver.funcSetAttribute(
            fn.ptr, driver.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes
        )


def launch_all(check_path: str | None):
    """Launch every kernel of kernels.json once; with `check_path`, compare each
    output with its numpy reference and write the relative errors there."""
    import cupy as cp
    import numpy as np

    with open(os.path.join(CUBINS, "kernels.json")) as f:
        kernels = json.load(f)
    rng = np.random.default_rng(12)
    lines = []
    for meta in kernels:
        launch = LAUNCHES[meta["stem"]]
        module = cp.RawModule(path=os.path.join(CUBINS, meta["cubin"]))
        fn = module.get_function(meta["name"])
        if meta["shared"] > 48 * 1024:
            allow_shared(fn, meta["shared"])
        host, device = {}, {}
        for name, spec in launch.args.items():
            if isinstance(spec, tuple):  # a buffer: (element type, elements)
                kind: str
                elements: int
                kind, elements = spec
                host[name] = rng.uniform(-1, 1, elements).astype(NUMPY_DTYPES[kind])
                device[name] = cp.asarray(host[name])
        scratch = {}
        for which in ("global_scratch", "profile_scratch"):
            size = meta[f"{which}_size"] * launch.ctas
            if size:
                scratch[which] = cp.zeros(size, dtype=cp.uint8)
        if launch.output:
            device[launch.output].fill(float("nan"))  # poison: every element written?
        pointers = {n: a.data.ptr for n, a in {**device, **scratch}.items()}
        args = marshal(meta["params"], launch.args, pointers)
        fn(launch.grid, (32 * meta["num_warps"], 1, 1), tuple(args), shared_mem=meta["shared"])
        cp.cuda.runtime.deviceSynchronize()
        if check_path and launch.output:
            got = cp.asnumpy(device[launch.output]).astype(np.float64)
            inputs = {n: host[n] for n in launch.args if n in host and n != launch.output}
            want = references(launch.reference, inputs, launch)
            error = np.linalg.norm(got - want) / np.linalg.norm(want)
            # fp16 operands and outputs land near 1e-3 (METHOD.md); NaN never passes.
            verdict = "ok" if error < 1e-2 else "WRONG"
            lines.append(f"{meta['stem']}: relative error {error:.2e} {verdict}")
    if check_path:
        with open(check_path, "w") as f:
            f.write("\n".join(lines) + "\n")
        print("\n".join(lines), flush=True)


def available_metrics(ncu: str) -> list[str]:
    """The wavefront metrics, plus the instruction counts this ncu knows."""
    wanted = [WAVEFRONTS.format(k) for k in KINDS]
    listed = subprocess.run(
        [ncu, "--query-metrics", "--chip", "gh100"], capture_output=True, text=True
    ).stdout
    names = {line.split()[0] for line in listed.splitlines() if line.strip()}
    return wanted + [m for m in INSTRUCTIONS.values() if m.rsplit(".", 1)[0] in names]


def device(out: str) -> int:
    """On the H200: check the outputs, then profile every launch (see the module doc)."""
    os.makedirs(out, exist_ok=True)
    launch_all(os.path.join(out, "triton_h200_check.txt"))
    ncu = shutil.which("ncu")
    if ncu is None:
        print("ncu not found", file=sys.stderr)
        return 1
    metrics = available_metrics(ncu)
    raw = os.path.join(out, "triton_h200_ncu.csv")
    with open(raw, "w") as f:
        done = subprocess.run(
            [
                ncu,
                "--clock-control",
                "none",
                "--metrics",
                ",".join(metrics),
                "--csv",
                "--page",
                "raw",
                sys.executable,
                os.path.abspath(__file__),
                "launch",
            ],
            stdout=f,
            stderr=subprocess.PIPE,
            text=True,
        )
    if done.returncode:
        print(done.stderr[-4000:], file=sys.stderr)
        return done.returncode
    with open(raw) as f:
        rows = measured_rows(f.read(), metrics)
    with open(os.path.join(out, "triton_h200.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["kernel", "metric", "value"])
        writer.writerows(rows)
    print(f"{len(rows)} measurements of {len({r[0] for r in rows})} kernels", flush=True)
    return 0


def measured_rows(ncu_csv: str, metrics: list[str]) -> list[tuple[str, str, float]]:
    """(kernel, metric, value) of every profiled catalog launch in ncu's raw CSV."""
    start = ncu_csv.find('"ID"')
    if start < 0:
        raise RuntimeError("ncu printed no metrics (is profiling permitted on this machine?)")
    with open(os.path.join(CUBINS, "kernels.json")) as f:
        stems = {k["name"]: k["stem"] for k in json.load(f)}
    reader = csv.DictReader(ncu_csv[start:].splitlines())
    out = []
    for row in reader:
        stem = stems.get(row.get("Kernel Name", ""))
        if stem is None:
            continue
        for m in metrics:
            value = row.get(m, "").replace(",", "")
            if value and value.replace(".", "", 1).isdigit():
                out.append((stem, m, float(value)))
    return out


# -- here: verify's prediction and the table -----------------------------------------------


def kind_of(instruction: str) -> str:
    """ncu's op kind of one of verify's instructions."""
    for prefix, kind in (
        ("ldmatrix", "ldsm"),
        ("stmatrix", "stsm"),
        ("ld.shared", "ld"),
        ("st.shared", "st"),
    ):
        if instruction.startswith(prefix):
            return kind
    raise ValueError(instruction)


def per_execution(spec_text: str, access_name: str) -> tuple[float, float]:
    """(warp instructions, wavefronts) of one execution of an op in one CTA: the
    sum over the access's register groups and warps, averaged over its stages
    and subslice positions (one of which each execution takes), base 0."""
    import itertools

    from verify.model.bank import bank_cost
    from verify.model.program import BASE, LANE, STAGE, Program
    from verify.spec.parser import parse_text

    access = Program(parse_text(spec_text, "kernel")).access(access_name, None)
    names = [v for v in access.ranges if v not in (LANE, BASE)]
    positions = [v for v in names if v == STAGE or v.startswith("s")]
    total, count = 0, 0
    for values in itertools.product(
        *(range(access.ranges[v].lo, access.ranges[v].hi) for v in names)
    ):
        env = {**dict(zip(names, values)), BASE: 0}
        total += bank_cost(access.instruction, access.lane_addresses(env)).wavefronts
        count += 1
    spread = math.prod(access.ranges[v].hi - access.ranges[v].lo for v in positions)
    return count / spread, total / spread


def executions(loops: list[dict], launch: Launch) -> int:
    """Executions of an op per CTA: the trip counts of its loops (`Launch.trips`,
    matched by the start of each loop's Python line)."""
    n = 1
    for loc in loops:
        with open(os.path.join(ROOT, loc["file"])) as f:
            text = f.read().splitlines()[loc["line"] - 1].strip()
        trips = [t for key, t in launch.trips.items() if text.startswith(key)]
        if len(trips) != 1:
            raise ValueError(f"{loc['file']}:{loc['line']}: no trip count for loop {text!r}")
        n *= trips[0]
    return n


def predict(stem: str) -> tuple[dict, dict, list[str]]:
    """verify's (wavefronts, instructions) per kind for one launch of a kernel, and
    the ops it does not model that are thread shared-memory instructions."""
    from verify.ttgir.module import run_kernel

    launch = LAUNCHES[stem]
    checker = run_kernel(os.path.join("specs", "triton_kernels", f"{stem}.sm90.ttgir"))
    waves = dict.fromkeys(KINDS, 0.0)
    insts = dict.fromkeys(KINDS, 0.0)
    for d in checker.decisions:
        per_inst, per_wave = per_execution(d["spec"].text, d["access"])
        scale = executions(d["loops"], launch) * launch.ctas
        kind = kind_of(d["instruction"])
        insts[kind] += per_inst * scale
        waves[kind] += per_wave * scale
    unmodelled = {
        f"{r.property.removeprefix('not modelled: ').split()[0]} (line {r.line})"
        for r in checker.results
        if r.property.startswith("not modelled: ")
    }
    # verify checks cp.async copies (rule C / rule S), but this table's kinds hold no
    # ldgsts and the measured run has no ldgsts metric: they stay outside the sums.
    unmodelled |= {f"async_copy_global_to_local (line {c['line']})" for c in checker.copies}
    return waves, insts, sorted(unmodelled)


def read_measured(path: str | None) -> dict:
    """(kernel, metric) -> value from the device's triton_h200.csv."""
    if not path:
        return {}
    with open(path) as f:
        return {(r["kernel"], r["metric"]): float(r["value"]) for r in csv.DictReader(f)}


def show(value) -> str:
    if value is None:
        return "-"
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"


def table(measured_path: str | None) -> int:
    measured = read_measured(measured_path)
    with open(os.path.join(CUBINS, "kernels.json")) as f:
        kernels = json.load(f)
    parts = []
    for meta in kernels:
        stem = meta["stem"]
        waves, insts, unmodelled = predict(stem)
        launch = LAUNCHES[stem]
        parts.append(
            f"### {stem}\n\ngrid {launch.grid}, {meta['num_warps']} warps, "
            f"{meta['shared']} shared bytes; loop trips "
            f"{launch.trips or 'none'}. Outside the predicted sums (not modelled; cp.async, "
            "checked but with no ldgsts row measured): "
            f"{', '.join(unmodelled) or 'nothing'}.\n\n"
            "| kind | predicted wavefronts | measured wavefronts | predicted "
            "instructions | measured instructions |\n| --- | --- | --- | --- | --- |"
        )
        for kind in KINDS:
            got_w = measured.get((stem, WAVEFRONTS.format(kind)))
            got_i = measured.get((stem, INSTRUCTIONS[kind]))
            if not (waves[kind] or insts[kind] or got_w or got_i):
                continue
            parts.append(
                f"| {kind} | {show(waves[kind])} | {show(got_w)} | "
                f"{show(insts[kind])} | {show(got_i)} |"
            )
        parts.append("")
    source = (
        f"measured: `{os.path.relpath(measured_path, ROOT)}`"
        if measured_path
        else "not measured yet: the device step has not run"
    )
    with open(RESULTS, "w") as f:
        f.write(
            "# The catalog kernels on the H200: predicted and measured shared-memory "
            "wavefronts\n\n"
            "`python -m benchmarks.hardware.triton_h200 table [MEASURED.csv]` (see its module doc "
            f"for the method and the trip-count assumption); {source}. Predicted: "
            "verify's exact wavefronts of every warp instruction of the ops it models, "
            "summed over their executions (loop trips x CTAs); measured: Nsight "
            "Compute's `smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_<kind>"
            ".sum` and the instruction counts, over the whole launch, so they include "
            "the ops listed not modelled.\n\n" + "\n".join(parts)
        )
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["device"] and len(argv) == 2:
        return device(argv[1])
    if argv[:1] == ["launch"]:
        launch_all(None)
        return 0
    if argv[:1] == ["table"] and len(argv) <= 2:
        return table(argv[1] if len(argv) == 2 else None)
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
