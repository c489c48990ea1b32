"""One long-lived child that reads compiled kernels' TTGIR for `verify run`.

`verify.ttgir.module.read_module` starts a fresh child per module (Triton's
native parser may abort, and a child that dies cannot take the verifier with
it); that child spends about a second importing verify and Triton before a
read of a few milliseconds, more than Triton takes to compile most kernels.
A program that compiles many kernels keeps this one child instead, started
when checking starts, and sends it one TTGIR file at a time: the child runs
`verify.ttgir.extract` on it with its diagnostics captured to a file the
parent names. If the child dies on a kernel, that kernel gets the error (with
Triton's first diagnostic) and the next kernel starts a new child.

Protocol: one JSON line per request on the child's stdin, ``{"ttgir": PATH,
"stderr": PATH}``; one JSON line per answer on its stdout, ``{"stdout": TEXT,
"cpu": SECONDS}`` (what `extract.main` printed: its JSON document; the child's CPU
seconds on the request, so that the parent can count them as verify's cost).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import select
import subprocess
import sys
import tempfile
import time

from verify.errors import Pos, SpecError

# How long one kernel's read may take before the child is taken for hung.
READ_TIMEOUT_S = 300.0


class WorkerDied(Exception):
    """The child exited or hung on a kernel: its first diagnostic line, if any."""


class ExtractWorker:
    """The parent's side: `read(text)` -> `extract`'s JSON document."""

    command = (sys.executable, "-m", "verify.integrations.extract_worker")

    def __init__(self):
        self._child: subprocess.Popen | None = None
        self.cpu_seconds = 0.0  # the child's CPU seconds on all the reads answered
        self._tmp = tempfile.TemporaryDirectory(prefix="verify-run-")

    def start(self):
        """Start the child now (it imports while the program runs)."""
        if self._child is None or self._child.poll() is not None:
            self._child = subprocess.Popen(
                list(self.command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,  # requests capture their own; exit noise is dropped
                env={**os.environ, "PYTHONPATH": _package_path()},
            )

    def read(self, text: str, name: str) -> dict:
        """What `verify.ttgir.extract` finds in `text`; a SpecError named `name`
        if Triton cannot parse it or the child dies on it."""
        ttgir, stderr = (os.path.join(self._tmp.name, f) for f in ("kernel.ttgir", "stderr"))
        with open(ttgir, "w", encoding="utf-8") as f:
            f.write(text)
        try:
            # Locations MLIR takes from the parsed file itself (TTGIR without
            # Python locations) name the kernel, not this copy.
            answer = self._ask({"ttgir": ttgir, "stderr": stderr})
            found = json.loads(answer.replace(json.dumps(ttgir), json.dumps(name)))
        except WorkerDied as e:
            self.stop()
            raise SpecError(
                f"Triton's MLIR bindings stopped on this kernel ({e}): {_first_line(stderr)}",
                Pos(1, 1),
                name,
            ) from None
        if found.get("error"):
            raise _diagnostic(stderr, ttgir, name) or SpecError(
                f"Triton could not read this kernel's TTGIR: {_first_line(stderr)}",
                Pos(1, 1),
                name,
            )
        return found

    def _ask(self, request: dict) -> str:
        self.start()
        child = self._child
        assert child is not None and child.stdin is not None and child.stdout is not None
        try:
            child.stdin.write((json.dumps(request) + "\n").encode())
            child.stdin.flush()
        except OSError:
            raise WorkerDied(f"exit status {child.wait()}") from None
        ready, _, _ = select.select([child.stdout], [], [], READ_TIMEOUT_S)
        line = child.stdout.readline() if ready else b""
        if not line:
            if not ready:
                child.kill()
                raise WorkerDied(f"no answer in {READ_TIMEOUT_S:.0f} s")
            raise WorkerDied(f"exit status {child.wait()}")
        answer = json.loads(line)
        self.cpu_seconds += answer["cpu"]
        return answer["stdout"]

    def stop(self):
        """End the child (closing its stdin ends its loop)."""
        child, self._child = self._child, None
        if child is None:
            return
        with contextlib.suppress(OSError):
            assert child.stdin is not None
            child.stdin.close()
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()

    def close(self):
        self.stop()
        self._tmp.cleanup()


def _package_path() -> str:
    """PYTHONPATH with the directory holding this verify package first."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)


def _diagnostic(stderr_path: str, copy: str, name: str) -> SpecError | None:
    """MLIR's first diagnostic, at its line and column of the kernel."""
    from verify.ttgir.module import _parse_error

    try:
        with open(stderr_path, encoding="utf-8", errors="replace") as f:
            return _parse_error(name, f.read().replace(copy, name))
    except OSError:
        return None


def _first_line(stderr_path: str) -> str:
    try:
        with open(stderr_path, encoding="utf-8", errors="replace") as f:
            lines = [line.strip() for line in f if line.strip()]
    except OSError:
        return "no diagnostic"
    lines = [line for line in lines if "nanobind" not in line and "leaked" not in line]
    return lines[0][:300] if lines else "no diagnostic"


# -- the child ------------------------------------------------------------------------


def serve(requests, answers) -> None:
    """Answer each request line of `requests` on `answers` until stdin closes."""
    from verify.ttgir import extract

    for line in requests:
        request = json.loads(line)
        printed = io.StringIO()
        started = time.process_time()
        with _stderr_to(request["stderr"]), contextlib.redirect_stdout(printed):
            extract.main(request["ttgir"], reuse_context=True)
        spent = time.process_time() - started
        answers.write(json.dumps({"stdout": printed.getvalue(), "cpu": spent}) + "\n")
        answers.flush()


@contextlib.contextmanager
def _stderr_to(path: str):
    """File descriptor 2 (where MLIR prints its diagnostics) into `path`."""
    sys.stderr.flush()
    saved = os.dup(2)
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(target, 2)
    os.close(target)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


if __name__ == "__main__":
    serve(sys.stdin, sys.stdout)
