"""Command line: ``verify SPEC...``, ``verify wavefronts``, ``verify map``.

Exit codes: 0 every check passed; 1 some check failed; 2 usage or spec error
(``file:line:col: error: ...``, no traceback); 3 some check unknown (solver
timeout) and none failed; 4 an internal error (a bug in verify). A check passes
when it ends as its ``expect`` clause says (proved when it has none), and every
format shows as failing what the exit status counts (`verify.report.gate`);
``--raw-verdicts`` judges verdicts alone (every refutation fails). With a
baseline, what it records fails only when worse than recorded.

This file is the group alone; each command lives in the module of its kind:
check.py (``verify SPEC``), inspect.py (wavefronts, map, draw), kernels.py
(ttgir, triton), ptx.py (ptx, cuda), search.py (synth, sweep), gpu.py (gpu,
fragments), run_program.py (run). A command module imports what its command
needs inside the command, so ``verify --help`` loads click and little else, and
this group imports a command's module only when that command is looked up
(`COMMANDS`), so ``verify SPEC`` loads check.py alone.
"""

from __future__ import annotations

import importlib
import os
import sys

import click

# Each command: its module and name there, imported only when the command is
# asked for (``verify --help`` asks for every one, for its line of help).
COMMANDS = {
    "check": ("verify.cli.check", "check_cmd"),
    "sweep": ("verify.cli.search", "sweep_cmd"),
    "synth": ("verify.cli.search", "synth_cmd"),
    "ttgir": ("verify.cli.kernels", "ttgir_cmd"),
    "triton": ("verify.cli.kernels", "triton_cmd"),
    "wavefronts": ("verify.cli.inspect", "wavefronts_cmd"),
    "map": ("verify.cli.inspect", "map_cmd"),
    "draw": ("verify.cli.inspect", "draw_cmd"),
    "fragments": ("verify.cli.gpu", "fragments_cmd"),
    "gpu": ("verify.cli.gpu", "gpu_cmd"),
    "ptx": ("verify.cli.ptx", "ptx_cmd"),
    "cuda": ("verify.cli.ptx", "cuda_cmd"),
    "run": ("verify.cli.run_program", "run_cmd"),  # not cli/run.py: it would hide run()
}


class _DefaultToCheck(click.Group):
    """`verify a.spec` means `verify check a.spec`; subcommands stay reachable, each
    loaded from its module (`COMMANDS`) when it is first looked up."""

    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        if name not in self.commands and name in COMMANDS:
            module, attribute = COMMANDS[name]
            self.add_command(getattr(importlib.import_module(module), attribute), name)
        return self.commands.get(name)

    def parse_args(self, ctx, args):
        if args and args[0] not in COMMANDS and args[0] not in ("--help", "-h", "--version"):
            args = ["check", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_DefaultToCheck, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="verify-smem")
def main():
    """Prove shared-memory layouts bijective, aligned and bank-conflict-free."""


def run():
    """Entry point: a bug in verify is reported as one clear line (exit 4);
    VERIFY_DEBUG=1 shows the traceback. Triton's leak report at exit is hidden."""
    from verify.errors import InternalError
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
