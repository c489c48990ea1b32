"""``verify SPEC...`` (``verify check``): every spec file's checks, in any output
format, judged against a baseline when one is given."""

from __future__ import annotations

import sys

import click

from verify.cli.common import (
    EXIT_ERROR,
    EXIT_OK,
    engine_option,
    fail,
    output_format,
    raw_verdicts_option,
    timeout_option,
)
from verify.report import FORMATS


@click.command("check")
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
    from verify import api
    from verify.report import render
    from verify.report.gate import Gate
    from verify.report.text import summary_line

    fmt = output_format(fmt, as_json)
    if raw_verdicts and check_expect:
        fail("<args>: error: --raw-verdicts and --check-expect ask for opposite rules")
    recorded = _recorded_baseline(baseline_path, update_baseline)
    gate = Gate(raw_verdicts, recorded)
    files = api.spec_paths(list(paths))
    if not files:
        fail("no .spec files found in " + ", ".join(paths))
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
        fail("<args>: error: --update-baseline needs --baseline FILE.json to write")
    if path is None or update:
        return None
    from verify.errors import SpecError
    from verify.report import baseline

    try:
        return baseline.load(path)
    except SpecError as e:
        fail(f"<args>: error: {e.message}")


def _update_baseline(path: str, results, errors, files: list[str]) -> int:
    """Record this run; a spec with errors has no results to record, so nothing is written."""
    from verify.errors import SpecError
    from verify.report import baseline
    from verify.report.text import counted

    if errors:
        click.echo(f"baseline {path} not written: {counted(len(errors), 'spec error')}", err=True)
        return EXIT_ERROR
    try:
        baseline.write(path, results, files)
    except SpecError as e:  # the records it would keep are unreadable: overwrite nothing
        fail(f"<args>: error: {e.message}: not overwritten")
    click.echo(f"wrote baseline {path}: {counted(len(results), 'check')}", err=True)
    return EXIT_OK


def _tell_baseline(path: str, gate) -> None:
    """What the baseline made of the run (the gate fails what is worse than
    recorded; checks it has no record of are judged as without one)."""
    from verify.report.text import counted

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
            f"baseline {path}: {counted(diff.compared, 'check')} compared, none worse{better}",
            err=True,
        )
    if diff.new:
        click.echo(
            f"baseline {path}: {counted(len(diff.new), 'check')} not recorded, judged on their own",
            err=True,
        )


def _check_streaming(
    files: list[str], timeout: float, jobs: int, engine: str, fmt: str, quiet: bool, gate
):
    """Every file's results and errors; in text, each file's lines are printed as
    soon as it (and every file before it) is checked, with a progress line on a
    terminal. The other formats are whole documents, printed at the end."""
    from verify.engines.stream import Progress, outcomes
    from verify.report.text import results_text

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
