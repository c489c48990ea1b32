"""``verify gpu`` (a spec's accesses run on this machine's GPU and compared with
the model) and ``verify fragments`` (which elements each lane's registers hold)."""

from __future__ import annotations

import sys

import click

from verify.cli.common import EXIT_OK, EXIT_REFUTED, fail


@click.command("fragments")
@click.argument("spec")
def fragments_cmd(spec):
    """Which logical elements each lane's registers receive (or store), per access."""
    from verify.errors import SpecError
    from verify.gpu.probe import GpuError
    from verify.gpu.spot import fragment_lines
    from verify.model.program import Program
    from verify.spec.parser import parse_file

    try:
        program = Program(parse_file(spec))
        for name in program.spec.accesses:
            access = program.access(name, None)
            click.echo(f"{spec}: access {name} ({access.instruction.name}), first instance:")
            for line in fragment_lines(program, access):
                click.echo(f"  {line}")
    except SpecError as e:
        fail(str(e.located(spec)))
    except GpuError as e:
        fail(f"{spec}: error: {e}")


@click.command("gpu")
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
    from verify.errors import SpecError
    from verify.gpu.probe import GpuError, Probe
    from verify.gpu.spot import spot_check
    from verify.model.program import Program
    from verify.spec.parser import parse_file

    try:
        program = Program(parse_file(spec))
        probe = Probe()
        if timing:
            probe.has_ncu = False
        rows = spot_check(program, probe, limit, samples, seed, use_ncu=not no_ncu)
    except SpecError as e:
        fail(str(e.located(spec)))
    except GpuError as e:
        fail(f"{spec}: error: {e}")
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
