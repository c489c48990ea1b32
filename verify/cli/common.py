"""What every command module shares: the exit codes, the options several
commands take, and the one way a command fails on bad input (exit 2, no
traceback). Only click is imported here, so that ``verify --help`` stays light."""

from __future__ import annotations

import sys
from typing import NoReturn

import click

EXIT_OK, EXIT_REFUTED, EXIT_ERROR, EXIT_UNKNOWN = 0, 1, 2, 3
EXIT_INTERNAL = 4


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


def exit_code(results, errors) -> int:
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


def output_format(fmt: str | None, as_json: bool) -> str:
    """--json is --format json; asking for two formats at once is a usage error."""
    if as_json and fmt not in (None, "json"):
        fail(f"<args>: error: --json asks for --format json, found --format {fmt}")
    return "json" if as_json else fmt or "text"


def parse_shape(text: str) -> tuple[int, ...]:
    try:
        shape = tuple(int(n) for n in text.replace("x", ",").split(","))
    except ValueError:
        fail(f"<args>: error: --shape: expected extents like 64,64, found {text!r}")
    if not shape or any(n < 1 or n > 1 << 24 for n in shape):
        fail(f"<args>: error: --shape: expected extents from 1 to 2^24, found {text!r}")
    return shape


def parse_int(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        fail(f"<args>: error: expected an integer byte offset, found {text!r}")


def fail(message: str) -> NoReturn:
    click.echo(message if "error:" in message else f"<args>: error: {message}", err=True)
    sys.exit(EXIT_ERROR)
