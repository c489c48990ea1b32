"""``verify synth`` (the best layout of a family for a spec) and ``verify sweep``
(every combination of a template's or a kernel's parameters checked)."""

from __future__ import annotations

import sys

import click

from verify.cli.common import (
    EXIT_ERROR,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_REFUTED,
    EXIT_UNKNOWN,
    engine_option,
    fail,
    output_format,
    raw_verdicts_option,
    timeout_option,
)


@click.command("sweep")
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
    from verify.errors import SpecError
    from verify.sweep import command
    from verify.sweep.engine import Engine
    from verify.sweep.kernel import Kernel

    fmt = output_format(fmt, as_json)
    if raw_verdicts and check_expect:
        fail("<args>: error: --raw-verdicts and --check-expect ask for opposite rules")
    check_expect = not raw_verdicts
    if (template is None) == (kernel is None):
        fail("<args>: error: expected a TEMPLATE.spec or --triton PATH.py:KERNEL, not both")
    pool = Engine(jobs or command.default_jobs(), dask_address)
    how = (list(params), timeout, engine, pool, not no_cache, cache_dir, check_expect, fmt)
    try:
        if kernel is not None:
            found = Kernel(kernel, target, tuple(defines), signature, num_warps, num_stages)
            done = command.run_kernel(found, *how)
        else:
            done = command.run(template, *how)
    except SpecError as e:
        fail(str(e))
    sys.exit(_sweep_exit_code(done.outcomes(), check_expect))


def _sweep_exit_code(outcomes, check_expect: bool) -> int:
    """As `exit_code`, over every combination; a bug in verify for any exits 4."""
    from verify.verdicts import Status

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


@click.command("synth")
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
    from verify.errors import SpecError
    from verify.synth import output, synthesize_file

    try:
        problem, answer, cert = synthesize_file(spec, family, timeout, method)
    except SpecError as e:
        fail(str(e.located(spec)))
    click.echo(
        output.json_doc(problem, answer, cert) if as_json else output.text(problem, answer, cert)
    )
    if answer.objective is None:
        sys.exit(EXIT_REFUTED if answer.core is not None else EXIT_UNKNOWN)
    sys.exit(EXIT_OK if answer.optimal and cert.rechecked else EXIT_UNKNOWN)
