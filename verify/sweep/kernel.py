"""`verify sweep --triton path/kernel.py:fn`: every combination of a Triton kernel's
configuration, compiled on this machine's CPU and checked as `verify triton` does.

A parameter names a constexpr of the kernel (what ``-D NAME=VALUE`` gives) or
``num_warps`` / ``num_stages``. Compiling is the costly half of a question here,
so it runs on the sweep's engine too: a task carries the configuration as plain
data (the kernel's path and name, the target, the values) and returns the TTGIR
text. The TTGIR is the question: configurations whose compiled text is the same
(a constexpr the kernel ignores, a num_stages with no loop to pipeline) are
checked once, and the answer is cached under the text's digest.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from verify.errors import SpecError, each_error
from verify.sweep.template import ARGS, Param, combinations

OPTIONS = ("num_warps", "num_stages")


@dataclass(frozen=True)
class Kernel:
    """What `verify sweep --triton` was given besides the parameters."""

    reference: str  # path/kernel.py:name
    target: str = "sm_90"
    defines: tuple[str, ...] = ()  # NAME=VALUE, fixed for every combination
    signature: str | None = None
    num_warps: int = 4
    num_stages: int = 3

    @property
    def path(self) -> str:
        return self.reference.rpartition(":")[0] or self.reference


@dataclass(frozen=True)
class Config:
    """One combination, as it travels to a worker."""

    kernel: Kernel
    defines: tuple[str, ...]
    num_warps: int
    num_stages: int


@dataclass(frozen=True)
class Compiled:
    """A worker's answer: the TTGIR text, or the compile error as the CLI prints it."""

    ttgir: str = ""
    errors: tuple[str, ...] = ()


def configs(kernel: Kernel, params: list[Param]) -> list[tuple[dict[str, str], Config]]:
    """Every combination with its configuration; a parameter that is neither a
    parameter of the kernel nor num_warps/num_stages, or an option's value that is
    not a positive integer, is an error of the command line (before anything runs)."""
    from verify.ttgir.kernel import load_kernel, parse_defines, parse_target

    parse_target(kernel.target)
    fixed = parse_defines(kernel.defines)
    fn = load_kernel(kernel.reference)
    names = {p.name for p in fn.params}
    given = [p.name for p in params]
    for param in params:
        if given.count(param.name) > 1:
            raise SpecError(f"--param {param.name}: given twice", file=ARGS)
        if param.name not in names and param.name not in OPTIONS:
            raise SpecError(
                f"--param {param.name}: {fn.__name__} has no such parameter; a parameter "
                f"names one of its constexprs ({', '.join(sorted(names))}) or "
                "num_warps/num_stages",
                file=ARGS,
            )
        if param.name in fixed:
            raise SpecError(f"--param {param.name}: also given by -D", file=ARGS)
        if param.name in OPTIONS and not all(v.isdigit() and int(v) > 0 for v in param.values):
            raise SpecError(f"--param {param.name}: expected positive integers", file=ARGS)
    out = []
    for values in combinations(params):
        options = {name: int(values[name]) for name in OPTIONS if name in values}
        defines = tuple(kernel.defines) + tuple(
            f"{k}={v}" for k, v in values.items() if k not in OPTIONS
        )
        config = Config(
            kernel,
            defines,
            options.get("num_warps", kernel.num_warps),
            options.get("num_stages", kernel.num_stages),
        )
        out.append((values, config))
    return out


def compile_config(config: Config) -> Compiled:
    """Runs in a worker: loads the kernel, compiles it for the configuration."""
    from verify.ttgir.kernel import (
        compile_kernel,
        load_kernel,
        located,
        parse_defines,
        parse_signature,
    )

    kernel = config.kernel
    fn = None
    try:
        fn = load_kernel(kernel.reference)
        compiled = compile_kernel(
            fn,
            kernel.target,
            parse_defines(config.defines),
            parse_signature(kernel.signature),
            config.num_warps,
            config.num_stages,
        )
        text = compiled.asm["ttgir"]
    except SpecError as e:
        return Compiled(errors=_printed(e.located(kernel.path), kernel.path))
    except (Exception, SystemExit) as e:  # noqa: BLE001 -- Triton's or the user's, located
        what = f"compiling {kernel.reference.rpartition(':')[2]} for {kernel.target} failed"
        return Compiled(errors=_printed(located(e, kernel.path, what, fn), kernel.path))
    # As `verify triton`: source paths under the working directory are relative.
    return Compiled(ttgir=text.replace(f'"{os.getcwd()}/', '"'))


def _printed(error: SpecError, path: str) -> tuple[str, ...]:
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    except (OSError, UnicodeDecodeError):
        source = ""
    return tuple(str(e.with_source(source)) for e in each_error(error))


def question_key(ttgir: str) -> str:
    """The TTGIR's canonical key: its text with trailing blanks and blank lines
    dropped (the text is what the checks read, so nothing else can be)."""
    lines = [line.rstrip() for line in ttgir.splitlines() if line.strip()]
    return hashlib.sha256(("ttgir\n" + "\n".join(lines)).encode()).hexdigest()
