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
needs inside the command, so ``verify --help`` loads click and little else.
"""

from __future__ import annotations

import os
import sys

import click

from verify.cli.check import check_cmd
from verify.cli.gpu import fragments_cmd, gpu_cmd
from verify.cli.inspect import draw_cmd, map_cmd, wavefronts_cmd
from verify.cli.kernels import triton_cmd, ttgir_cmd
from verify.cli.ptx import cuda_cmd, ptx_cmd
from verify.cli.run_program import run_cmd  # not cli/run.py: it would hide run()
from verify.cli.search import sweep_cmd, synth_cmd


class _DefaultToCheck(click.Group):
    """`verify a.spec` means `verify check a.spec`; subcommands stay reachable."""

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = ["check", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_DefaultToCheck, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="verify-smem")
def main():
    """Prove shared-memory layouts bijective, aligned and bank-conflict-free."""


for _command in (
    check_cmd,
    sweep_cmd,
    synth_cmd,
    ttgir_cmd,
    triton_cmd,
    wavefronts_cmd,
    map_cmd,
    draw_cmd,
    fragments_cmd,
    gpu_cmd,
    ptx_cmd,
    cuda_cmd,
    run_cmd,
):
    main.add_command(_command)


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
