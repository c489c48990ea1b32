"""`python -m verify.cli ...`: the `verify` command."""

from verify.cli import run

run()
