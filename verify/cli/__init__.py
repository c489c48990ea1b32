"""Command line: ``verify SPEC...``, ``verify wavefronts``, ``verify map``.

Exit codes: 0 every check passed; 1 some check failed; 2 usage or spec error
(``file:line:col: error: ...``, no traceback); 3 some check unknown (solver
timeout) and none failed; 4 an internal error (a bug in verify). A check passes
when it ends as its ``expect`` clause says (proved when it has none), and every
format shows as failing what the exit status counts (`verify.report.gate`);
``--raw-verdicts`` judges verdicts alone (every refutation fails). With a
baseline, what it records fails only when worse than recorded.
"""

from __future__ import annotations

import json
import os
import sys
from typing import NoReturn

import click

from verify import api
from verify.errors import InternalError, SpecError
from verify.model.dtypes import DTYPE_BYTES, canonical_dtype
from verify.model.expr import Var
from verify.model.layout import coordinate_vars, domain_shape
from verify.model.program import Program
from verify.report import FORMATS, render
from verify.report.text import counted, json_report, results_text, summary_line, text_report
from verify.smt.solve import Status
from verify.spec.parser import parse_file

EXIT_OK, EXIT_REFUTED, EXIT_ERROR, EXIT_UNKNOWN = 0, 1, 2, 3


def timeout_option(help_text: str = "Seconds per check; a check that runs out is UNKNOWN."):
    """The --timeout every checking command takes (one definition, one default)."""
    return click.option(
        "--timeout",
        default=60.0,
        show_default=True,
        type=click.FloatRange(min=0.001),
        help=help_text,
    )


def engine_option(help_text: str):
    """The --engine of the commands that run checks."""
    return click.option(
        "--engine",
        default="auto",
        show_default=True,
        type=click.Choice(["auto", "z3", "enumeration"]),
        help=help_text,
    )


class _DefaultToCheck(click.Group):
    """`verify a.spec` means `verify check a.spec`; subcommands stay reachable."""

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = ["check", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_DefaultToCheck, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="verify")
def main():
    """Prove shared-memory layouts bijective, aligned and bank-conflict-free."""


def _exit_code(results, errors) -> int:
    """The exit status by the rule every format shows (`verify.report.gate`)."""
    from verify.report.gate import Gate

    return Gate().exit_status(results, len(errors))


def raw_verdicts_option(judged: str):
    """--raw-verdicts, and --check-expect: the default it replaces, still accepted."""

    def options(f):
        f = click.option(
            "--raw-verdicts",
            is_flag=True,
            help=f"Judge {judged} by verdict alone: every refutation fails, expected or not.",
        )(f)
        return click.option(
            "--check-expect",
            is_flag=True,
            hidden=True,
            help="The default (each check judged by its 'expect'); kept for old scripts.",
        )(f)

    return options


@main.command("check")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default=None,
    help="text (default), json, junit (XML), sarif (2.1.0, for code scanning) or "
    "github (workflow annotations).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document (--format json).")
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="Text: list only the checks that did not end as expected, and the summary.",
)
@timeout_option()
@raw_verdicts_option("the exit status and every format")
@click.option(
    "-j",
    "--jobs",
    default=1,
    show_default=True,
    type=click.IntRange(min=1),
    help="Check this many spec files in parallel processes.",
)
@engine_option(
    "Who decides each check: exhaustive evaluation for small domains and "
    "the solver for large ones (auto), or always one of them."
)
@click.option(
    "--baseline",
    "baseline_path",
    default=None,
    metavar="FILE.json",
    help="Fail (exit 1) when a figure is worse than this baseline records: max-ways "
    "or wavefronts higher, a proof turned unknown or refuted.",
)
@click.option(
    "--update-baseline",
    is_flag=True,
    help="Write the --baseline file from this run instead of comparing with it.",
)
def check_cmd(
    paths,
    fmt,
    as_json,
    quiet,
    timeout,
    raw_verdicts,
    check_expect,
    jobs,
    engine,
    baseline_path,
    update_baseline,
):
    """Check every spec file (directories are searched for *.spec). A check passes
    when it ends as its 'expect' says (proved without one), in the exit status and
    every format alike; --raw-verdicts judges verdicts alone."""
    from verify.report.gate import Gate

    fmt = _output_format(fmt, as_json)
    if raw_verdicts and check_expect:
        _fail("<args>: error: --raw-verdicts and --check-expect ask for opposite rules")
    recorded = _recorded_baseline(baseline_path, update_baseline)
    gate = Gate(raw_verdicts, recorded)
    files = api.spec_paths(list(paths))
    if not files:
        _fail("no .spec files found in " + ", ".join(paths))
    results, errors = _check_streaming(files, timeout, jobs, engine, fmt, quiet, gate)
    if fmt != "text":
        click.echo(render(fmt, results, errors, quiet, gate))
    elif results or not errors:
        click.echo(summary_line(results, len(errors)))
    if update_baseline:
        sys.exit(_update_baseline(baseline_path, results, errors, files))
    if recorded is not None:
        _tell_baseline(baseline_path, gate)
    sys.exit(gate.exit_status(results, len(errors)))


def _recorded_baseline(path: str | None, update: bool):
    """The baseline to compare with, read before any check runs so a missing one
    fails fast; None when there is none or it is to be written."""
    if update and path is None:
        _fail("<args>: error: --update-baseline needs --baseline FILE.json to write")
    if path is None or update:
        return None
    from verify.report import baseline

    try:
        return baseline.load(path)
    except SpecError as e:
        _fail(f"<args>: error: {e.message}")


def _update_baseline(path: str, results, errors, files: list[str]) -> int:
    """Record this run; a spec with errors has no results to record, so nothing is written."""
    from verify.report import baseline

    if errors:
        click.echo(f"baseline {path} not written: {len(errors)} spec errors", err=True)
        return EXIT_ERROR
    try:
        baseline.write(path, results, files)
    except SpecError as e:  # the records it would keep are unreadable: overwrite nothing
        _fail(f"<args>: error: {e.message}: not overwritten")
    click.echo(f"wrote baseline {path}: {counted(len(results), 'check')}", err=True)
    return EXIT_OK


def _tell_baseline(path: str, gate) -> None:
    """What the baseline made of the run (the gate fails what is worse than
    recorded; checks it has no record of are judged as without one)."""
    diff = gate.comparison
    if diff.regressions:
        click.echo(f"baseline {path}: {len(diff.regressions)} worse than recorded:", err=True)
        click.echo("\n".join(f"  {line}" for line in diff.regressions), err=True)
    else:
        better = (
            f"; {diff.improvements} better (--update-baseline records them)"
            if diff.improvements
            else ""
        )
        click.echo(
            f"baseline {path}: {diff.compared} checks compared, none worse{better}", err=True
        )
    if diff.new:
        click.echo(
            f"baseline {path}: {counted(len(diff.new), 'check')} not recorded, judged on their own",
            err=True,
        )


def _output_format(fmt: str | None, as_json: bool) -> str:
    """--json is --format json; asking for two formats at once is a usage error."""
    if as_json and fmt not in (None, "json"):
        _fail(f"<args>: error: --json asks for --format json, found --format {fmt}")
    return "json" if as_json else fmt or "text"


def _check_streaming(
    files: list[str], timeout: float, jobs: int, engine: str, fmt: str, quiet: bool, gate
):
    """Every file's results and errors; in text, each file's lines are printed as
    soon as it (and every file before it) is checked, with a progress line on a
    terminal. The other formats are whole documents, printed at the end."""
    from verify.engines.stream import Progress, outcomes

    results, errors = [], []
    progress = Progress(len(files))
    progress.show(0, files[0])
    for done, (_path, found, file_errors) in enumerate(outcomes(files, timeout, jobs, engine), 1):
        results += found
        errors += file_errors
        progress.clear()
        if fmt == "text":
            if file_errors:
                click.echo("\n".join(e.text for e in file_errors), err=True)
            if results_text(found, quiet, gate):
                click.echo(results_text(found, quiet, gate))
        if done < len(files):
            progress.show(done, files[done])
    return results, errors


@main.command("sweep")
@click.argument("template", metavar="TEMPLATE.spec", required=False)
@click.option(
    "--param",
    "params",
    multiple=True,
    required=True,
    metavar="NAME=V1,V2,...",
    help="Values of the template's ${NAME} (repeatable); every combination is checked.",
)
@timeout_option()
@engine_option("Who decides each check, as for verify SPEC.")
@raw_verdicts_option("each configuration")
@click.option(
    "-j",
    "--jobs",
    default=None,
    type=click.IntRange(min=1),
    help="Local worker processes  [default: one per core]",
)
@click.option(
    "--dask",
    "dask_address",
    default=None,
    metavar="ADDRESS",
    help="Ask the Dask cluster whose scheduler is at ADDRESS (tcp://host:8786) "
    "instead of local processes (needs the dask extra).",
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write cached answers.")
@click.option(
    "--cache-dir",
    default=None,
    metavar="DIR",
    help="Where answers are cached  [default: $VERIFY_CACHE_DIR, else ~/.cache/verify/sweep]",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default=None,
    help="text (default: the table and the failing configurations) or json.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document (--format json).")
@click.option(
    "--triton",
    "kernel",
    default=None,
    metavar="PATH.py:KERNEL",
    help="Sweep a Triton/Gluon kernel's configurations instead of a template: a --param "
    "names a constexpr (as -D) or num_warps/num_stages; each is compiled on this CPU "
    "and checked as by verify triton.",
)
@click.option(
    "--target", default="sm_90", show_default=True, help="With --triton: sm_80, sm_90, ..."
)
@click.option(
    "-D",
    "defines",
    multiple=True,
    metavar="NAME=VALUE",
    help="With --triton: a constexpr's value in every configuration (repeatable).",
)
@click.option("--num-warps", default=4, show_default=True, type=click.IntRange(min=1))
@click.option("--num-stages", default=3, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--signature",
    default=None,
    metavar="'a:*fp16,M:i32,...'",
    help="With --triton: types of the parameters that cannot be inferred.",
)
def sweep_cmd(
    template,
    params,
    timeout,
    engine,
    raw_verdicts,
    check_expect,
    jobs,
    dask_address,
    no_cache,
    cache_dir,
    fmt,
    as_json,
    kernel,
    target,
    defines,
    num_warps,
    num_stages,
    signature,
):
    """Check every combination of a spec template's parameters: one table row per
    combination (worst verdict, max-ways/wavefronts per access), then the failing
    configurations. Exit codes as for verify SPEC, over all combinations, and as
    there a check passes when it ends as its 'expect' says. With --triton
    PATH.py:KERNEL, the combinations are the kernel's configurations."""
    from verify.sweep import command
    from verify.sweep.engine import Engine
    from verify.sweep.kernel import Kernel

    fmt = _output_format(fmt, as_json)
    if raw_verdicts and check_expect:
        _fail("<args>: error: --raw-verdicts and --check-expect ask for opposite rules")
    check_expect = not raw_verdicts
    if (template is None) == (kernel is None):
        _fail("<args>: error: expected a TEMPLATE.spec or --triton PATH.py:KERNEL, not both")
    pool = Engine(jobs or command.default_jobs(), dask_address)
    how = (list(params), timeout, engine, pool, not no_cache, cache_dir, check_expect, fmt)
    try:
        if kernel is not None:
            found = Kernel(kernel, target, tuple(defines), signature, num_warps, num_stages)
            done = command.run_kernel(found, *how)
        else:
            done = command.run(template, *how)
    except SpecError as e:
        _fail(str(e))
    sys.exit(_sweep_exit_code(done.outcomes(), check_expect))


EXIT_INTERNAL = 4


def _sweep_exit_code(outcomes, check_expect: bool) -> int:
    """As `_exit_code`, over every combination; a bug in verify for any exits 4."""
    if any(o.internal for o in outcomes):
        return EXIT_INTERNAL
    if any(o.errors for o in outcomes):
        return EXIT_ERROR
    if check_expect:
        return EXIT_REFUTED if any(o.fails(True) for o in outcomes) else EXIT_OK
    verdicts = {o.verdict for o in outcomes}
    if Status.REFUTED.value in verdicts:
        return EXIT_REFUTED
    return EXIT_UNKNOWN if Status.UNKNOWN.value in verdicts else EXIT_OK


@main.command("synth")
@click.argument("spec")
@click.option(
    "--family",
    default="sw",
    show_default=True,
    type=click.Choice(["sw", "tile", "triton", "nvmma", "pad", "pad+sw", "xor", "all"]),
    help="Layouts searched: CuTe Sw<B,M,S> (row- or column-major), tile_to_shape "
    "of an Sw atom, Triton swizzled_shared or nvmma_shared (TMA modes), a "
    "padded row pitch, both, every invertible XOR map, or all of them (the "
    "best over families, naming the one that won).",
)
@click.option(
    "--method",
    default="solver",
    show_default=True,
    type=click.Choice(["solver", "list"]),
    help="Search the family's parameters in the solver, or evaluate every member.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@timeout_option(
    "Seconds for the search; past it the best layout found is printed, not proved optimal (exit 3)."
)
def synth_cmd(spec, family, method, as_json, timeout):
    """Find the best layout for a spec's unknown layout (layout A = ?(R, C)), with
    its certificate. Exit 0 optimal and re-checked; 1 no layout of the family meets
    the spec's bounds (the ones that clash are named); 3 not proved optimal."""
    from verify.synth import output, synthesize_file

    try:
        problem, answer, cert = synthesize_file(spec, family, timeout, method)
    except SpecError as e:
        _fail(str(e.located(spec)))
    click.echo(
        output.json_doc(problem, answer, cert) if as_json else output.text(problem, answer, cert)
    )
    if answer.objective is None:
        sys.exit(EXIT_REFUTED if answer.core is not None else EXIT_UNKNOWN)
    sys.exit(EXIT_OK if answer.optimal and cert.rechecked else EXIT_UNKNOWN)


@main.command("ttgir")
@click.argument("path")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@timeout_option()
@engine_option("How each check is decided, as for a spec.")
def ttgir_cmd(path, as_json, timeout, engine):
    """Check every shared-memory op of a compiled Triton kernel's TTGIR (needs the
    triton extra), reported at the kernel's Python source lines."""
    from verify.ttgir import check as check_ttgir

    try:
        results = check_ttgir(path, timeout, engine)
    except SpecError as e:
        _fail(str(e.located(path)))
    click.echo(json_report(results) if as_json else text_report(results))
    sys.exit(_exit_code(results, []))


@main.command("triton")
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
def triton_cmd(kernel, target, defines, num_warps, num_stages, signature, as_json, timeout, engine):
    """Compile a @triton.jit / @gluon.jit kernel for TARGET on this CPU (needs the
    triton extra) and check every shared-memory op, as `verify ttgir` does."""
    from verify.ttgir.kernel import check_reference

    try:
        results = check_reference(
            kernel, target, defines, signature, num_warps, num_stages, timeout, engine
        )
    except SpecError as e:
        _fail(str(e.located(kernel.rpartition(":")[0] or kernel)))
    click.echo(json_report(results) if as_json else text_report(results))
    sys.exit(_exit_code(results, []))


@main.command("wavefronts")
@click.argument("instr")
@click.argument("addresses", nargs=-1, required=True)
@click.option(
    "--sources",
    "sources",
    default=None,
    metavar="A0,A1,...",
    help="cp.async: each lane's global source byte address (32, comma-separated).",
)
@click.option("--json", "as_json", is_flag=True)
def wavefronts_cmd(instr, addresses, sources, as_json):
    """Predicted wavefronts of one warp instruction, from each lane's byte offset, by
    the H200's measured rules (the phase model; rule L for 64/128-bit loads; rule C
    for cp.async.ca, rule S or bound G for .cg; cp.async needs --sources)."""
    try:
        shared = [_parse_int(a) for a in addresses]
        source_list = None if sources is None else [_parse_int(a) for a in sources.split(",")]
        total = api.wavefronts(instr, shared, source_list)
        if source_list is not None:
            _print_copy(api.copy_wavefront_cost(instr, shared, source_list), as_json)
        else:
            _print_bank(api.wavefront_cost(instr, shared), total, as_json)
    except SpecError as e:
        _fail(f"<args>: error: {e.message}")


def _print_bank(cost, total: int, as_json: bool):
    """Per phase, the phase model's ways; then the hardware's total (rule L may merge
    phase pairs of 64/128-bit loads below the phase model's sum)."""
    instruction = cost.instruction
    if as_json:
        click.echo(
            json.dumps(
                {
                    "instruction": instruction.name,
                    "wavefronts": total,
                    "phase_model_wavefronts": cost.wavefronts,
                    "ideal": cost.ideal,
                    "max_ways": cost.max_ways,
                    "exact": instruction.hardware_exact,
                    "model_fidelity": instruction.fidelity,
                    "phases": [
                        {
                            "lanes": [p.lanes.start, p.lanes.stop - 1],
                            "ways": p.ways,
                            "worst_bank": p.worst_bank,
                        }
                        for p in cost.phases
                    ],
                },
                indent=2,
            )
        )
        return
    for p in cost.phases:
        click.echo(
            f"lanes {p.lanes.start:2}-{p.lanes.stop - 1:2}: {p.ways}-way (bank {p.worst_bank})"
        )
    merged = f", phase model {cost.wavefronts}" if total != cost.wavefronts else ""
    click.echo(
        f"{instruction.name}: max_ways {cost.max_ways}, ideal {cost.ideal}{merged}; "
        f"model {instruction.fidelity}"
    )
    click.echo(str(total))


def _print_copy(cost, as_json: bool):
    """Per phase, rule C's cost and the source -> destination bank edge attaining it."""
    instruction = cost.instruction
    if as_json:
        click.echo(
            json.dumps(
                {
                    "instruction": instruction.name,
                    "wavefronts": cost.wavefronts,
                    "ideal": cost.ideal,
                    "exact": cost.exact,
                    "model_fidelity": cost.fidelity,
                    "phases": [
                        {
                            "lanes": [p.lanes.start, p.lanes.stop - 1],
                            "wavefronts": p.cost,
                            "edge": list(p.edge),
                        }
                        for p in cost.phases
                    ],
                },
                indent=2,
            )
        )
        return
    for p in cost.phases:
        click.echo(
            f"lanes {p.lanes.start:2}-{p.lanes.stop - 1:2}: {p.cost} (source bank "
            f"{p.edge[0]} -> shared bank {p.edge[1]})"
        )
    click.echo(f"{instruction.name}: ideal {cost.ideal}; model {cost.fidelity}")
    click.echo(str(cost.wavefronts))


@main.command("map")
@click.argument("layout")
@click.option(
    "--dtype",
    default=None,
    help="Element type: checked against the layout's element width; adds byte offsets.",
)
@click.option(
    "--shape",
    default=None,
    metavar="D0,D1,...",
    help="Tensor shape, for a Triton encoding (#ttg.swizzled_shared<...>).",
)
@click.option("--json", "as_json", is_flag=True)
@click.option(
    "--draw",
    is_flag=True,
    help="Show the offsets as a grid, as CuTe's print_layout does (cut to the terminal).",
)
@click.option(
    "-o",
    "--output",
    default=None,
    metavar="FILE.svg|.png|.html|.tex",
    help="Draw the whole grid into a file: a picture, or LaTeX like print_latex.",
)
def map_cmd(layout, dtype, shape, as_json, draw, output):
    """Offsets L(0), ..., L(size-1) of a layout, in CuTe's 1-D index order.

    Every figure says its unit: offsets are elements; the formula is in the unit
    the layout's swizzle acts on (bytes at base 0 for smem_ptr, GMMA atoms and TMA
    boxes, elements otherwise), as a call of the layout in a spec expression is."""
    try:
        ldef = api.parse_layout(layout, _parse_shape(shape) if shape else None, dtype)
        offs = api.offsets(ldef, dtype)
        dtype = dtype and canonical_dtype(dtype)
    except SpecError as e:
        _fail(str(e))
    domain = coordinate_vars(ldef.function)
    names = [Var(n) for n, _ in domain]
    formula_unit = "elements" if ldef.pointer_swizzle is None else "bytes at base 0"
    from verify.report.formula import formula  # sympy: loaded only for `verify map`

    doc = {
        "layout": layout,
        "shape": domain_shape(ldef.function),
        "unit": "elements",
        "formula": f"L({', '.join(v.name for v in names)}) = {formula(ldef.value(names), domain)}",
        "formula_unit": formula_unit,
        "offsets": offs,
    }
    if dtype:
        doc["byte_offsets"] = [DTYPE_BYTES[dtype] * o for o in offs]
    if as_json:
        click.echo(json.dumps(doc))
        return
    why = "" if ldef.pointer_swizzle is None else " (the swizzle acts on byte addresses)"
    click.echo(f"{layout}\nshape {doc['shape']}, {len(offs)} offsets")
    click.echo(f"formula, in {formula_unit}{why}: {doc['formula']}")
    swizzle = ldef.pointer_swizzle or ldef.function.outer_swizzle()
    if swizzle is not None:
        on = "element offsets" if ldef.pointer_swizzle is None else "byte addresses"
        click.echo(f"{swizzle} on {on}:\n{swizzle.diagram()}")
    if draw or output:
        _draw_map(layout, domain, offs, dtype, output)
        return
    if dtype:
        click.echo(f"byte offsets, in bytes: {' '.join(map(str, doc['byte_offsets']))}")
    click.echo(f"offsets, in elements: {' '.join(map(str, offs))}")


def _draw_map(layout: str, domain, offs: list[int], dtype: str | None, output: str | None):
    """print_layout's grid on the terminal, or the whole grid into `output`."""
    import shutil

    from verify.draw import grid as grids

    title = f"{layout}, offsets in elements" + (f" of {dtype}" if dtype else "")
    grid = grids.layout_grid(
        title, [r.size for _, r in domain], offs, DTYPE_BYTES[dtype] if dtype else None
    )
    if output is None:
        click.echo(grids.text_grid(grid, shutil.get_terminal_size((100, 24)).columns))
        return
    if len(offs) > grids.MAX_PICTURE_CELLS:
        _fail(
            f"<args>: error: -o: the layout has {len(offs)} cells: expected at most "
            f"{grids.MAX_PICTURE_CELLS} to draw"
        )
    try:
        if output.lower().endswith(".tex"):
            with open(output, "w", encoding="utf-8") as f:
                f.write(grids.latex_grid(grid))
        else:
            from verify.draw.render import save_grid

            save_grid(grid, output)
    except (SpecError, OSError) as e:
        _fail(f"<args>: error: {getattr(e, 'message', e)}")
    click.echo(f"wrote {output}")


@main.command("draw")
@click.argument("spec")
@click.option(
    "--access", "access_name", default=None, help="The access to draw (default: the first)."
)
@click.option(
    "--instance",
    default=None,
    metavar="q=3,stage=1,base=0",
    help="Loop values, stage and base (bytes) to draw; default: a refuted bank "
    "check's counterexample, else the worst instance.",
)
@click.option(
    "--by",
    type=click.Choice(["chunk", "element"]),
    default=None,
    help="Cells of 16 bytes (the bank groups G0-G7) or of one element; default: "
    "chunks for 16-byte accesses, elements otherwise.",
)
@click.option("-o", "--output", required=True, metavar="FILE.svg|.png|.html")
@timeout_option("Seconds per check run to find the counterexample.")
def draw_cmd(spec, access_name, instance, by, output, timeout):
    """Draw an access's tile as the seed articles do: rows of 128 bytes, cells
    coloured by bank group and labelled with the lanes that touch them, one panel
    per phase, colliding lanes marked (needs the draw extra: matplotlib)."""
    from verify.draw.access import draw_access
    from verify.draw.render import format_of, save_picture

    try:
        format_of(output)
        picture = draw_access(parse_file(spec), access_name, instance, by, timeout)
        save_picture(picture, output)
    except SpecError as e:
        _fail(str(e.located(spec)))
    except OSError as e:
        _fail(f"<args>: error: -o {output}: {e.strerror}")
    click.echo(picture.title)
    for panel in picture.panels:
        click.echo(f"  {panel.title}")
    click.echo(f"wrote {output}")


@main.command("fragments")
@click.argument("spec")
def fragments_cmd(spec):
    """Which logical elements each lane's registers receive (or store), per access."""
    from verify.gpu.probe import GpuError
    from verify.gpu.spot import fragment_lines

    try:
        program = Program(parse_file(spec))
        for name in program.spec.accesses:
            access = program.access(name, None)
            click.echo(f"{spec}: access {name} ({access.instruction.name}), first instance:")
            for line in fragment_lines(program, access):
                click.echo(f"  {line}")
    except SpecError as e:
        _fail(str(e.located(spec)))
    except GpuError as e:
        _fail(f"{spec}: error: {e}")


@main.command("gpu")
@click.argument("spec")
@click.option("--samples", default=16, show_default=True, help="Sampled instances per access.")
@click.option(
    "--limit",
    default=64,
    show_default=True,
    help="Run every instance when an access has at most this many.",
)
@click.option("--seed", default=0, show_default=True)
@click.option("--no-ncu", is_flag=True, help="Data checks only; do not measure wavefronts.")
@click.option(
    "--timing", is_flag=True, help="Estimate wavefronts with clock64 even where ncu is available."
)
def gpu_cmd(spec, samples, limit, seed, no_ncu, timing):
    """Run a spec's accesses on this machine's GPU and compare with the model."""
    from verify.gpu.probe import GpuError, Probe
    from verify.gpu.spot import spot_check

    try:
        program = Program(parse_file(spec))
        probe = Probe()
        if timing:
            probe.has_ncu = False
        rows = spot_check(program, probe, limit, samples, seed, use_ncu=not no_ncu)
    except SpecError as e:
        _fail(str(e.located(spec)))
    except GpuError as e:
        _fail(f"{spec}: error: {e}")
    click.echo(f"{'access':10} {'instance':36} {'predicted':>9} {'measured':>8}  wavefronts  data")
    for r in rows:
        inst = ", ".join(f"{k}={v}" for k, v in r.instance.items())
        a = r.agreement
        if a is None:
            click.echo(f"{r.access:10} {inst:36} {'-':>9} {'-':>8}  {r.note}")
            continue
        wave = {True: "agree", False: "DISAGREE", None: "n/a"}[a.wavefronts_ok]
        if a.bound and a.wavefronts_ok:
            wave = "within"
        data = {True: "ok", False: f"WRONG: {a.detail}", None: "n/a"}[a.data_ok]
        measured = "-" if a.measured is None else str(a.measured) + ("~" if a.estimated else "")
        predicted = f"<={a.predicted}" if a.bound else str(a.predicted)
        click.echo(f"{r.access:10} {inst:36} {predicted:>9} {measured:>8}  {wave:10}  {data}")
    bad = sum(not r.ok for r in rows if r.agreement is not None)
    if any(r.agreement and r.agreement.bound for r in rows):
        click.echo(
            "<=N: an upper bound (cp.async.cg where two lanes copy one 16-byte source "
            "chunk into one line: bound G); 'within' = measured at most the bound"
        )
    if any(r.agreement and r.agreement.estimated for r in rows):
        click.echo(
            "~ ncu not found: wavefronts estimated from clock64 timing, calibrated per "
            "instruction on an ideal and a worst pattern"
        )
    click.echo(f"{len(rows)} instances: {bad} disagreements")
    sys.exit(EXIT_REFUTED if bad else EXIT_OK)


def _parse_shape(text: str) -> tuple[int, ...]:
    try:
        shape = tuple(int(n) for n in text.replace("x", ",").split(","))
    except ValueError:
        _fail(f"<args>: error: --shape: expected extents like 64,64, found {text!r}")
    if not shape or any(n < 1 or n > 1 << 24 for n in shape):
        _fail(f"<args>: error: --shape: expected extents from 1 to 2^24, found {text!r}")
    return shape


def _parse_int(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        _fail(f"<args>: error: expected an integer byte offset, found {text!r}")


def _fail(message: str) -> NoReturn:
    click.echo(message if "error:" in message else f"<args>: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def run():
    """Entry point: a bug in verify is reported as one clear line (exit 4);
    VERIFY_DEBUG=1 shows the traceback. Triton's leak report at exit is hidden."""
    from verify.integrations.triton_exit import hide_leak_report_at_exit

    hide_leak_report_at_exit()
    try:
        main()
    except (InternalError, Exception) as e:  # noqa: BLE001 -- last line of defence
        if os.environ.get("VERIFY_DEBUG"):
            raise
        click.echo(
            f"verify: internal error (a bug in verify, please report it with the "
            f"spec): {type(e).__name__}: {e}",
            err=True,
        )
        sys.exit(4)


from verify.cli.ptx import cuda_cmd, ptx_cmd  # noqa: E402 -- the commands join the group here
from verify.cli.run_program import run_cmd  # noqa: E402 -- not cli/run.py: it would hide run()

main.add_command(ptx_cmd)
main.add_command(cuda_cmd)
main.add_command(run_cmd)
