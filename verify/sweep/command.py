"""What `verify sweep` does between reading its arguments and choosing its exit code."""

from __future__ import annotations

import contextlib
import os
import sys

import click

from verify.engines.options import RunOptions
from verify.errors import SpecError
from verify.sweep import Sweep, plan, plan_kernel, table
from verify.sweep.cache import Cache, NoCache, default_directory
from verify.sweep.engine import Engine
from verify.sweep.kernel import Kernel
from verify.sweep.template import Template, parse_param


def run(
    template_path: str,
    param_texts: list[str],
    options: RunOptions | float,
    check_engine: str | None,
    engine: Engine,
    use_cache: bool,
    cache_dir: str | None,
    check_expect: bool,
    fmt: str = "text",
) -> Sweep:
    """Plans, asks and prints the sweep; raises SpecError for a mistake in the
    template or the parameters (before anything runs). `options` and `check_engine`
    as `RunOptions.of` takes them (the command line gives --timeout and --engine)."""
    template = Template(template_path, _read(template_path))
    params = [parse_param(text) for text in param_texts]
    cache = Cache(cache_dir or default_directory()) if use_cache else NoCache()
    sweep = plan(template, params, cache, RunOptions.of(options, check_engine))
    return _ask_and_print(sweep, engine, cache, check_expect, fmt)


def run_kernel(
    kernel: Kernel,
    param_texts: list[str],
    options: RunOptions | float,
    check_engine: str | None,
    engine: Engine,
    use_cache: bool,
    cache_dir: str | None,
    check_expect: bool,
    fmt: str = "text",
) -> Sweep:
    """`verify sweep --triton ...`: compiles every configuration, then asks and
    prints as for a template; raises SpecError for a mistake in the arguments."""
    run = RunOptions.of(options, check_engine)
    params = [parse_param(text) for text in param_texts]
    cache = Cache(cache_dir or default_directory()) if use_cache else NoCache()
    configurations = 1
    for param in params:
        configurations *= len(param.values)
    with _progress(configurations, "compiling") as step:
        sweep = plan_kernel(kernel, params, cache, engine, run, step)
    return _ask_and_print(sweep, engine, cache, check_expect, fmt)


def _ask_and_print(sweep: Sweep, engine: Engine, cache, check_expect: bool, fmt: str) -> Sweep:
    with _progress(len(sweep.to_ask)) as step:
        sweep.ask(engine, cache, step)
    if fmt == "json":
        click.echo(table.json_doc(sweep, check_expect))
        return sweep
    click.echo(table.table(sweep, check_expect))
    failures = table.failures(sweep, check_expect)
    if failures:
        click.echo("\n" + failures)
    click.echo(table.summary(sweep, check_expect) + f"; asked on {engine.describe()}")
    return sweep


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise SpecError(
            f"cannot read the template: {getattr(e, 'strerror', None) or e}", file=path
        ) from None


@contextlib.contextmanager
def _progress(count: int, doing: str = "checking"):
    """A progress bar on stderr when it is a terminal (logs and pipes get none)."""
    if not count or not sys.stderr.isatty():
        yield lambda: None
        return
    what = "questions" if doing == "checking" else "configurations"
    with click.progressbar(
        length=count, label=f"{doing} {count} {what}", file=sys.stderr, show_pos=True
    ) as bar:
        yield lambda: bar.update(1)


def default_jobs() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
