"""``verify ptx KERNEL.ptx`` and ``verify cuda FILE.cu``: every shared-memory
instruction of a compiled kernel checked from its PTX (`verify.ptx.check`).

Exit status as the other commands: 0 all proved, 1 some refuted, 3 some unknown
(none refuted), 2 bad input (``file:line:col: error: ...``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:  # the checker is imported when a command runs, not for --help
    from verify.ptx.check import Options

EXIT_OK, EXIT_REFUTED, EXIT_ERROR, EXIT_UNKNOWN = 0, 1, 2, 3


GRID_OPTION = click.option(
    "--grid",
    default=None,
    metavar="X[,Y[,Z]]",
    help="Blocks per grid (default: every grid CUDA allows).",
)


def _alignment_options(global_default: str, shared_default: str) -> list:
    """--global-align and --shared-align, with the default each reader assumes."""
    return [
        click.option(
            "--global-align",
            type=click.IntRange(min=1),
            default=None,
            help=f"Bytes every global pointer is aligned to (default: {global_default}).",
        ),
        click.option(
            "--shared-align",
            type=click.IntRange(min=1),
            default=None,
            help=f"Bytes the dynamic shared memory is aligned to (default: {shared_default}).",
        ),
    ]


def _options(f):
    for option in reversed(
        [
            click.option(
                "--block",
                default=None,
                metavar="X[,Y[,Z]]",
                help="Threads per block (default: the kernel's .reqntid/.maxntid).",
            ),
            GRID_OPTION,
            click.option("--kernel", default=None, help="The .entry to check (default: all)."),
            *_alignment_options(
                "what cp.async needs, or the pointer's declared .align", "its declared .align"
            ),
            click.option(
                "--dynamic-shared",
                type=click.IntRange(min=1),
                default=None,
                help="Bytes of dynamic shared memory the launch gives.",
            ),
            click.option(
                "--assume",
                multiple=True,
                metavar="NAME=V | 'NAME%M==R' | 'NAME<B'",
                help="A parameter's value, residue class or bound (param_N or its name).",
            ),
            click.option(
                "--tma-map",
                multiple=True,
                metavar="dataType=T,boxDim={I,O},swizzle=S[,globalStrides={B,...}][,param=P]",
                help=(
                    "A host-built TMA tensor map (cuTensorMapEncodeTiled's arguments); "
                    "globalStrides (bytes, dimensions 1..) decide reads that cross a box's rows."
                ),
            ),
            click.option("--json", "as_json", is_flag=True, help="Print one JSON document."),
            click.option(
                "--timeout",
                default=60.0,
                show_default=True,
                type=click.FloatRange(min=0.001),
                help="Seconds per check.",
            ),
            click.option(
                "--engine",
                default="auto",
                show_default=True,
                type=click.Choice(["auto", "z3", "enumeration"]),
            ),
        ]
    ):
        f = option(f)
    return f


def _fail(message: str):
    click.echo(message if "error:" in message else f"<args>: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def _assumed(o: Options) -> str:
    """The assumptions every verdict below rests on, in one line."""
    parts = [
        f"block {','.join(map(str, o.block))}"
        if o.block
        else "the block the kernel declares (.reqntid; .maxntid is only a bound: --block)",
        f"grid {','.join(map(str, o.grid))}" if o.grid else "any grid",
        f"global pointers {o.global_align}-byte aligned"
        if o.global_align
        else "global pointers aligned as cp.async demands",
        f"dynamic shared memory {o.shared_align}-byte aligned"
        if o.shared_align
        else "dynamic shared memory as declared",
    ]
    if o.dynamic_shared:
        parts.append(f"{o.dynamic_shared} bytes of it")
    parts += list(o.assume) or ["every parameter value"]
    return "; ".join(parts)


def _run(path: str, o: dict) -> None:
    from verify.engines.options import RunOptions
    from verify.errors import SpecError
    from verify.ptx.check import Options, check_ptx, parse_dims
    from verify.report.text import json_report, text_report
    from verify.verdicts import Status

    try:
        options = Options(
            block=parse_dims(o["block"], "block") if o["block"] else None,
            grid=parse_dims(o["grid"], "grid") if o["grid"] else None,
            kernel=o["kernel"],
            global_align=o["global_align"],
            shared_align=o["shared_align"],
            dynamic_shared=o["dynamic_shared"],
            assume=tuple(o["assume"]),
            tma_maps=tuple(o["tma_map"]),
            run=RunOptions(o["engine"], o["timeout"]),
        )
        results = check_ptx(path, options)
    except SpecError as e:
        _fail(str(e.located(path)))
    if o["as_json"]:
        click.echo(json_report(results))
    else:
        click.echo(f"assuming {_assumed(options)}")
        click.echo(text_report(results))
    exits = {Status.PROVED: EXIT_OK, Status.REFUTED: EXIT_REFUTED, Status.UNKNOWN: EXIT_UNKNOWN}
    sys.exit(exits[Status.worst(r.status for r in results)])


@click.command("ptx")
@click.argument("path", metavar="KERNEL.ptx")
@_options
def ptx_cmd(path, **options):
    """Check every shared-memory instruction of a kernel's PTX (nvcc's or Triton's),
    reported at its PTX line and source line."""
    _run(path, options)


@click.command("cuda", context_settings={"ignore_unknown_options": True})
@click.argument("path", metavar="FILE.cu")
@click.option("--arch", default="sm_80", show_default=True, help="sm_80, sm_90a, ...")
@_options
@click.argument("nvcc_args", nargs=-1, type=click.UNPROCESSED)
def cuda_cmd(path, arch, nvcc_args, **options):
    """Compile FILE.cu with nvcc (-lineinfo -ptx) and check its PTX as `verify ptx`
    does; arguments after -- go to nvcc."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        _fail(
            f"{path}: error: nvcc is not on PATH: install the CUDA toolkit, or compile "
            "to PTX yourself (nvcc -lineinfo -ptx) and run 'verify ptx'"
        )
    if not os.path.isfile(path):
        _fail(f"{path}: error: cannot read the CUDA file: no such file")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, os.path.basename(path).rsplit(".", 1)[0] + ".ptx")
        command = [nvcc, f"-arch={arch}", "-lineinfo", "-ptx", path, "-o", out, *nvcc_args]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            first = next(
                (line for line in done.stderr.splitlines() if "error" in line),
                done.stderr.strip()[:300],
            )
            _fail(first if "error" in first else f"{path}: error: nvcc failed: {first}")
        _run(out, options)


# -- verify ttgir / verify triton: the PTX their ops are decided from ------------------


def triton_ptx_options(f):
    """Options of `verify ttgir` and `verify triton` (`verify.ttgir.from_ptx`):
    where the PTX comes from, and what the launch is assumed to be."""
    for option in reversed(
        [
            click.option(
                "--ptx",
                "ptx_file",
                default=None,
                metavar="FILE.ptx",
                help="Decide each op from this PTX of the module (default: lower it "
                "with the installed Triton, or the compiled kernel's own).",
            ),
            click.option(
                "--no-ptx",
                is_flag=True,
                help="Decide each op by TTGIR's lowering rules instead of the PTX.",
            ),
            GRID_OPTION,
            *_alignment_options(
                "what cp.async needs, or tt.divisibility", "128, where a Triton kernel's starts"
            ),
            click.option(
                "--assume",
                multiple=True,
                metavar="NAME=V | 'NAME%M==R' | 'NAME<B'",
                help="A parameter's value, residue class or bound (Triton's name or param_N).",
            ),
        ]
    ):
        f = option(f)
    return f


def triton_ptx(o: dict):
    """The `verify.ttgir.from_ptx.PtxOptions` of `triton_ptx_options`' values."""
    from verify.ptx.check import parse_dims
    from verify.ttgir.from_ptx import PtxOptions

    return PtxOptions(
        use=not o["no_ptx"],
        ptx=o["ptx_file"],
        grid=parse_dims(o["grid"], "grid") if o["grid"] else None,
        global_align=o["global_align"],
        shared_align=o["shared_align"],
        assume=tuple(o["assume"]),
    )


def instructions_line(results) -> str:
    """Where the checks' instructions come from, in one line before the report."""
    why = next((r.facts["instructions_why"] for r in results if "instructions_why" in r.facts), "")
    ptx = next((r.facts["ptx"] for r in results if "ptx" in r.facts), None)
    if ptx is not None:
        line = f"instructions from the PTX ({ptx})"
        return f"{line}; some ops by {why}" if why else line
    return f"instructions by {why}" if why else "instructions by TTGIR's lowering rules"
