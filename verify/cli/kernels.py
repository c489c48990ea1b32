"""``verify ttgir`` and ``verify triton``: every shared-memory op of a compiled
Triton kernel checked (``verify ptx`` and ``verify cuda`` are in `verify.cli.ptx`)."""

from __future__ import annotations

import sys

import click

from verify.cli.common import engine_option, exit_code, fail, timeout_option
from verify.cli.ptx import instructions_line, triton_ptx, triton_ptx_options


@click.command("ttgir")
@click.argument("path")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@timeout_option()
@engine_option("How each check is decided, as for a spec.")
@click.option(
    "--target",
    default=None,
    help="sm_80, sm_90, ... for a module without ttg.target (default: what its "
    "encodings imply); a module whose own target differs is an error.",
)
@triton_ptx_options
def ttgir_cmd(path, as_json, timeout, engine, target, **ptx):
    """Check every shared-memory op of a compiled Triton kernel's TTGIR (needs the
    triton extra), reported at the kernel's Python source lines."""
    from dataclasses import replace

    from verify.errors import SpecError
    from verify.report.text import json_report, text_report
    from verify.ttgir import check as check_ttgir
    from verify.ttgir.kernel import parse_target

    try:
        cuda = f"cuda:{parse_target(target)}" if target else None
        results = check_ttgir(path, timeout, engine, replace(triton_ptx(ptx), target=cuda))
    except SpecError as e:
        fail(str(e.located(path)))
    click.echo(
        json_report(results)
        if as_json
        else f"{instructions_line(results)}{tensor_maps_lines(results)}\n{text_report(results)}"
    )
    sys.exit(exit_code(results, []))


@click.command("triton")
@click.argument("kernel", metavar="PATH.py:KERNEL")
@click.option("--target", default="sm_90", show_default=True, help="sm_80, sm_90, ...")
@click.option(
    "-D", "defines", multiple=True, metavar="NAME=VALUE", help="A constexpr's value (repeatable)."
)
@click.option("--num-warps", default=4, show_default=True, type=click.IntRange(min=1))
@click.option("--num-stages", default=3, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--signature",
    default=None,
    metavar="'a:*fp16,M:i32,...'",
    help="Types of the parameters that cannot be inferred.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@timeout_option()
@engine_option("How each check is decided, as for a spec.")
@triton_ptx_options
def triton_cmd(
    kernel, target, defines, num_warps, num_stages, signature, as_json, timeout, engine, **ptx
):
    """Compile a @triton.jit / @gluon.jit kernel for TARGET on this CPU (needs the
    triton extra) and check every shared-memory op, as `verify ttgir` does."""
    from verify.engines.options import RunOptions
    from verify.errors import SpecError
    from verify.report.text import json_report, text_report
    from verify.ttgir.kernel import check_reference

    try:
        results = check_reference(
            kernel, target, defines, signature, num_warps, num_stages,
            RunOptions(engine, timeout), triton_ptx(ptx),
        )  # fmt: skip
    except SpecError as e:
        fail(str(e.located(kernel.rpartition(":")[0] or kernel)))
    header = f"{instructions_line(results)}{tensor_maps_lines(results)}\n"
    header += specialisation_line(results)
    click.echo(json_report(results) if as_json else f"{header}\n{text_report(results)}")
    sys.exit(exit_code(results, []))


def specialisation_line(results) -> str:
    """The launcher specialisation `verify triton` compiled, in one header line."""
    what = next((r.facts["specialisation"] for r in results if "specialisation" in r.facts), None)
    return f"specialised as Triton's launcher would: {what}" if what else "not specialised"


def tensor_maps_lines(results) -> str:
    """The TMA maps read from the kernel (`verify.ptx.tensormaps`), each with where
    its fields come from, one line each after the first header line."""
    seen = {r.facts["tensor_map_read"]: r.facts["tensor_map_source"] for r in results
            if "tensor_map_read" in r.facts}  # fmt: skip
    return "".join(f"\ntensor map {key} (from {src})" for key, src in seen.items())
