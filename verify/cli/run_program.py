"""``verify run [OPTIONS] -- PROGRAM [ARGS...]``: run a Python program, as
``coverage run`` does, with `verify.integrations.triton_hook` installed, and
check every kernel it compiles with Triton.

``--target sm_80`` checks each kernel as compiled for sm_80: one the program
compiles for another target is compiled again from its source for the check
(the program's own kernel stays as Triton made it).

PROGRAM is a script (``prog.py``), ``-m module``, or either after ``python``
(``verify run -- python prog.py`` runs it in this process, hook installed).
The program's stdout is its own: everything verify says goes to stderr, each
finding as its kernel is compiled and a summary at exit. The exit status is the
program's; with ``--strict`` a refuted check (or a kernel verify could not
read) makes it 1 when the program itself succeeded.
"""

from __future__ import annotations

import json
import os
import re
import runpy
import sys
import traceback
from typing import NoReturn

import click

_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")


@click.command(
    "run", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False}
)
@click.option("--strict", is_flag=True, help="A refuted check fails the run (exit 1).")
@click.option("--json", "json_file", metavar="FILE", help="Write every check as one JSON document.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["github", "sarif", "junit"]),
    help="Also write the checks in this format (to --output, else stderr).",
)
@click.option("--output", metavar="FILE", help="Where --format's document goes.")
@click.option("--timeout", default=60.0, show_default=True, type=click.FloatRange(min=0.001))
@click.option(
    "--engine", default="auto", show_default=True, type=click.Choice(["auto", "z3", "enumeration"])
)
@click.option(
    "--target",
    "targets",
    multiple=True,
    metavar="sm_NN",
    help="Check each kernel as compiled for this target (repeatable; default: its own).",
)
@click.option("--no-cache", is_flag=True, help="Check every kernel afresh; keep no answers.")
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Print every check as it is decided: proved, and ops not modelled, too.",
)
@click.argument("program", nargs=-1, required=True, type=click.UNPROCESSED)
def run_cmd(strict, json_file, fmt, output, timeout, engine, targets, no_cache, verbose, program):
    """Run PROGRAM and check every Triton kernel it compiles (needs the triton
    extra). Findings go to stderr at the kernels' Python lines; the exit status
    is the program's unless --strict."""
    from verify.errors import SpecError
    from verify.integrations.triton_hook import Session
    from verify.ttgir.kernel import parse_target

    try:
        caps = tuple(parse_target(t) for t in targets)
    except SpecError as e:
        _fail(e.message)
    target = _target(list(program))
    cache = "" if no_cache else None
    session = Session(timeout, engine, cache, sys.stderr, verbose, caps)
    try:
        session.install()
    except SpecError as e:  # Triton is not installed
        _fail(e.message)
    try:
        status = _run_program(*target)
    finally:
        session.uninstall()
    sys.stdout.flush()
    click.echo(session.summary(), err=True)
    _write_reports(session, json_file, fmt, output)
    refuted = bool(session.refuted or session.errors)
    sys.exit(1 if strict and refuted and status == 0 else status)


def _target(args: list[str]) -> tuple[str, str, list[str]]:
    """("module" | "script", name, argv) of PROGRAM [ARGS...]; `python` and its
    own flags before a script or ``-m`` are dropped (this process runs it)."""
    if args and _PYTHON.match(os.path.basename(args[0])):
        args = args[1:]
    if args[:1] == ["-m"] and len(args) > 1:
        return "module", args[1], args[1:]
    if not args or args[0].startswith("-"):
        found = args[0] if args else "none"
        _fail(f"expected a Python script or -m MODULE to run, found {found}")
    if not os.path.isfile(args[0]):
        _fail(f"cannot run {args[0]}: no such file")
    return "script", args[0], args


def _run_program(kind: str, name: str, argv: list[str]) -> int:
    """Run the program as ``python`` would, as __main__; its exit status."""
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = list(argv)
    try:
        if kind == "module":
            sys.path.insert(0, os.getcwd())
            runpy.run_module(name, run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(name)))
            runpy.run_path(name, run_name="__main__")
    except SystemExit as e:
        return _exit_status(e.code)
    except KeyboardInterrupt:
        return 130
    except BaseException as e:  # noqa: BLE001 -- the program's own error, shown as python shows it
        traceback.print_exception(type(e), e, e.__traceback__.tb_next if e.__traceback__ else None)
        return 1
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return 0


def _exit_status(code) -> int:
    """SystemExit's code as the process status, as Python gives it."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _write_reports(session, json_file: str | None, fmt: str | None, output: str | None):
    from verify.report import render
    from verify.report.text import json_report

    results, errors = session.results, session.errors
    if json_file:
        doc = json.loads(json_report(results, errors))
        doc["kernels"] = [_kernel_json(k) for k in session.kernels]
        with open(json_file, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2)
    if fmt:
        text = render(fmt, results, errors)
        if output:
            with open(output, "w", encoding="utf-8") as f:
                f.write(text)
        else:
            click.echo(text, err=True)


def _kernel_json(kernel) -> dict:
    return {
        "name": kernel.name,
        "hash": kernel.hash,
        "target": kernel.target,
        "defined_at": kernel.source,
        "checks": len(kernel.results),
        "refuted": len(kernel.refuted),
        "error": kernel.error.header if kernel.error else None,
        "from_cache": kernel.cached,
        "verify_seconds": round(kernel.seconds, 6),
        "triton_compile_seconds": round(kernel.compile_seconds, 6),
        "checked_as": kernel.checked_as,
    }


def _fail(message: str) -> NoReturn:
    click.echo(f"<args>: error: {message}", err=True)
    sys.exit(2)
