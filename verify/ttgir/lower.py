"""A TTGIR module lowered to PTX by the installed Triton, on this machine's CPU.

Triton compiles from any of its stages: ``triton.compile(PATH.ttgir,
target=GPUTarget("cuda", CC, 32))`` parses the file (``IRSource`` in
triton/compiler/compiler.py) and runs the NVIDIA backend's remaining stages,
``make_llir`` (where shared memory is allocated: ``metadata.shared``) and
``make_ptx`` (triton/backends/nvidia/compiler.py); no GPU is needed. The PTX is
what the GPU runs, so `verify.ttgir.from_ptx` takes every shared-memory
instruction from it: the widths, register groups and addresses Triton really
chose, ``convert_layout`` and reduction scratch included.

The lowering runs in a child process, as `verify.ttgir.extract` does: Triton's
native code may abort on a module it cannot lower, and the child's death is then
a reason (`NotLowered`), never the verifier's. The child (`main`) prints
``{"ptx": TEXT, "shared": BYTES}`` or ``{"error": TEXT}``.

The target: the module's own ``ttg.target``; a module without one (most of
Triton's lit tests: their RUN lines give it) is lowered for the target given
(``verify ttgir --target``), written into the copy lowered as Triton's own
TTGIR writes it (`with_target`: ``ttg.target`` among the module's attributes),
so that its instructions come from the PTX like any other module's.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass

LOWER_TIMEOUT_S = 300
# Triton prints the key bare (``ttg.target = ...``); its lit tests quote it.
_TARGET = re.compile(r'"?ttg\.target"?\s*=\s*"cuda:(\d+)"')
# The temporary copy `lower` writes, as a PTX .file directive names it.
_COPY = re.compile(r'"' + re.escape(tempfile.gettempdir()) + r'/tmp[^"/]*/kernel\.ttgir"')
# The child's program (not ``-m``: the package imports this module first).
_CHILD = "import sys; from verify.ttgir.lower import main; main(sys.argv[1])"


@dataclass(frozen=True)
class Lowered:
    ptx: str
    shared: int | None  # bytes of dynamic shared memory the launch gives (Triton's)
    name: str  # how results name the PTX: ``matmul.sm80.ttgir.ptx``


class NotLowered(Exception):
    """Why Triton gave no PTX for the module (the first line of its diagnostic)."""


def lower(text: str, name: str, target: str | None = None) -> Lowered:
    """`text` (a TTGIR module) lowered to PTX for its own ``ttg.target``, else for
    `target` (``cuda:90``, ``--target``) written into it (`with_target`)."""
    if not _TARGET.search(text) and target is not None and target.startswith("cuda:"):
        text = with_target(text, target)
        if not _TARGET.search(text):  # ops at the top level: an implicit module
            raise NotLowered(f"no module op to write ttg.target = {json.dumps(target)} into")
    if not _TARGET.search(text):
        raise NotLowered('the module names no NVIDIA target (ttg.target = "cuda:NN")')
    env = {**os.environ, "PYTHONPATH": _package_root()}
    try:
        child, path = run_on_module(text, ["-c", _CHILD], LOWER_TIMEOUT_S, env)
    except subprocess.TimeoutExpired:
        raise NotLowered(f"Triton did not finish lowering in {LOWER_TIMEOUT_S} s") from None
    found = last_json(child.stdout)
    if found is None:
        why = _first(child.stderr)
        status = child.returncode
        how = f"signal {-status}" if status < 0 else f"exit status {status}"
        found = {"error": f"Triton stopped ({how}): {why}"}
    if "error" in found:
        # MLIR prints its diagnostic on stderr; the exception only says it failed
        said = _first(child.stderr)
        detail = f": {said}" if said != "no diagnostic" else ""
        raise NotLowered((found["error"] + detail).replace(path, name))
    # The PTX's .file names the copy lowered (here, or when Triton's cache got the
    # kernel: its PTX is reused for the same module): results name the module given.
    ptx = _COPY.sub(lambda _: json.dumps(name), found["ptx"])
    return Lowered(ptx, found.get("shared"), os.path.basename(name) + ".ptx")


_ATTRIBUTES = re.compile(r"^module(?:\s+@[\w$.-]+)?\s+attributes\s*\{", re.MULTILINE)
_BARE = re.compile(r"^module(?:\s+@[\w$.-]+)?\s*\{", re.MULTILINE)


def with_target(text: str, target: str) -> str:
    """`text` with ``ttg.target = "<target>"`` first among its top-level module's
    attributes (a ``module {`` gets an attribute dictionary), as Triton writes the
    attribute; the text itself is unchanged when it has no such module line."""
    attribute = f'ttg.target = "{target}"'
    found = _ATTRIBUTES.search(text)
    if found:
        return f"{text[: found.end()]}{attribute}, {text[found.end() :]}"
    found = _BARE.search(text)
    if found:
        opening = found.group(0)[:-1].rstrip()
        return (
            f"{text[: found.start()]}{opening} attributes {{{attribute}}} {{{text[found.end() :]}"
        )
    return text


def run_on_module(
    text: str, argv: list[str], timeout: float, env: dict | None = None
) -> tuple[subprocess.CompletedProcess, str]:
    """`python ARGV PATH` in a child, PATH a temporary file holding the module `text`
    (Triton's native code may abort: it must not take this process with it); the
    child's result and PATH. Raises subprocess.TimeoutExpired after `timeout` s."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernel.ttgir")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        child = subprocess.run(
            [sys.executable, *argv, path], capture_output=True, text=True, timeout=timeout, env=env
        )
    return child, path


def last_json(stdout: str):
    """The JSON value a child printed on its last line, else None."""
    try:
        return json.loads(stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return None


def _package_root() -> str:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)


def _first(stderr: str) -> str:
    lines = [
        line.strip()
        for line in stderr.splitlines()
        if line.strip() and "nanobind" not in line and "leaked" not in line
    ]
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines or ["no diagnostic"])[0][:300]


def main(path: str) -> None:
    """The child: lower `path` and print one JSON line."""
    try:
        import triton
        from triton.backends.compiler import GPUTarget
    except ImportError:
        print(json.dumps({"error": "Triton is not installed: pip install 'verify-smem[triton]'"}))
        return
    with open(path, encoding="utf-8") as f:
        match = _TARGET.search(f.read())
    assert match is not None, "lower() checks the target before starting the child"
    # Triton 3.9 warns unless this is set; "1" is its default (fused multiply-adds).
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    try:
        compiled = triton.compile(path, target=GPUTarget("cuda", int(match[1]), 32))
    except Exception as e:  # noqa: BLE001 -- Triton's own failure is the reason reported
        lines = [line for line in str(e).splitlines() if line.strip()]
        print(json.dumps({"error": f"{type(e).__name__}: {(lines or [''])[-1][:300]}"}))
        return
    shared = getattr(compiled.metadata, "shared", None)
    print(json.dumps({"ptx": compiled.asm["ptx"], "shared": shared}))
