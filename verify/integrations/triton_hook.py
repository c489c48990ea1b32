"""Check every kernel a Python program compiles with Triton, as it compiles them.

``with checking() as session:`` installs a listener in Triton
(``triton.knobs.compilation.listener``: Triton calls it after every
``triton.compile``, cache hits included, with the kernel's metadata and the
paths of its TTGIR and PTX in Triton's cache). The listener only reads: the
user's kernels, Triton's cache keys and the compiled results are untouched, a
listener installed before is still called first, and it is put back on exit.

Each distinct kernel (by Triton's kernel hash, once per session) is checked as
`verify ttgir` checks it: TTGIR's buffer checks (`verify.ttgir.module.KernelChecker`)
and every shared-memory instruction decided from the kernel's own PTX, the file
Triton's cache keeps beside the TTGIR (`verify.ttgir.from_ptx.merge`: no second
lowering), each reported at the TTGIR op and Python line it comes from. Where the
PTX cannot be read, TTGIR's rules decide each op and the report says why. Each
finding that fails or stays unknown is written to `report` (stderr) as it
happens, at the Python line of the op, and `session.results` holds every check, in the order
kernels were compiled. An op verify does not model is an UNKNOWN result,
``not modelled: <op>``, counted in the summary rather than printed; with
`verbose` every check is printed, proved ones and those too.

Answers are cached by kernel hash and verify's code fingerprint
(`verify.sweep.cache`): a kernel checked in an earlier run costs a file read.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from dataclasses import dataclass, field

from verify.engines.decide import AUTO
from verify.engines.options import RunOptions
from verify.errors import InternalError, Pos, SpecError
from verify.integrations.extract_worker import ExtractWorker
from verify.report.text import ErrorRecord, counted, summary_line
from verify.results import CheckResult, Counterexample
from verify.smt.solve import Status
from verify.sweep.cache import Cache, default_directory
from verify.sweep.key import answer_key
from verify.sweep.question import CheckRow, Outcome

NOT_MODELLED = "not modelled: "
# The reasons of an UNKNOWN that another run may not give (verify.smt.solve,
# verify.engines.enumeration): such an answer is not cached.
RUN_DEPENDENT = ("timeout", "solver error", "solver gave up")


@dataclass
class KernelCheck:
    """One distinct kernel the program compiled, and what verify found in it."""

    name: str
    hash: str
    target: str  # "sm_80"
    source: str  # where its @jit function is defined, "file:line" ("" if unknown)
    results: list[CheckResult] = field(default_factory=list)
    error: ErrorRecord | None = None  # verify could not read it (located)
    cached: bool = False  # answered from verify's cache
    seconds: float = 0.0  # verify's time on it
    cpu_seconds: float = 0.0  # verify's CPU time on it in this process
    reader_cpu_seconds: float = 0.0  # the reading child's CPU time on its TTGIR
    compile_seconds: float = 0.0  # Triton's, as its listener reports it
    # With `targets`: the hashes of this kernel compiled again for them (each
    # its own KernelCheck); this one is not checked itself.
    checked_as: list[str] = field(default_factory=list)
    # Where each op's instructions came from: "the PTX (FILE)", or why TTGIR's
    # lowering rules decided them ("" before a check, or with no op).
    instructions: str = ""

    @property
    def refuted(self) -> list[CheckResult]:
        return [r for r in self.results if r.status == Status.REFUTED]


class Session:
    """The kernels checked while installed; see the module doc."""

    def __init__(
        self,
        timeout: float = 60.0,
        engine: str = AUTO,
        cache_dir: str | None = None,
        report=None,
        verbose: bool = False,
        targets: tuple[int, ...] = (),
    ):
        self.options, self.verbose = RunOptions(engine, timeout), verbose
        self.targets = targets  # compute capabilities to check kernels for (default: theirs)
        self._retargeting = False
        self.cache: Cache | None = None if cache_dir == "" else KernelCache(cache_dir)
        self.report = report
        self.kernels: list[KernelCheck] = []
        self._by_hash: dict[str, KernelCheck] = {}
        self._worker = ExtractWorker()
        self._lock = threading.RLock()  # a kernel compiled again for a target calls back in
        self._previous = None
        self._installed = False
        self.compiled: list[str] = []  # the hash of every compile Triton reported, in order

    # -- what was found ---------------------------------------------------------

    @property
    def results(self) -> list[CheckResult]:
        return [r for k in self.kernels for r in k.results]

    @property
    def errors(self) -> list[ErrorRecord]:
        return [k.error for k in self.kernels if k.error is not None]

    @property
    def refuted(self) -> list[CheckResult]:
        return [r for k in self.kernels for r in k.refuted]

    def kernel(self, hash: str) -> KernelCheck:
        return self._by_hash[hash]

    # -- installing -------------------------------------------------------------

    def install(self):
        """Set the listener; a SpecError naming the extra if Triton is missing."""
        from verify.ttgir.module import require_triton

        require_triton()
        from triton import knobs

        if self._installed:
            return
        self._worker.start()
        self._previous = knobs.compilation.listener
        knobs.compilation.listener = self._listen
        self._installed = True

    def uninstall(self):
        """Put the previous listener back (unless someone replaced ours since,
        whose listener then stays), and end the reading child."""
        from triton import knobs

        if self._installed and knobs.compilation.listener == self._listen:
            knobs.compilation.listener = self._previous
        self._installed = False
        self._worker.close()

    def _listen(self, *, src, metadata, metadata_group, times, cache_hit):
        if self._previous is not None and not self._retargeting:  # ours, not the program's
            self._previous(
                src=src,
                metadata=metadata,
                metadata_group=metadata_group,
                times=times,
                cache_hit=cache_hit,
            )
        with self._lock:
            self.compiled.append(metadata["hash"])
            if metadata["hash"] in self._by_hash:
                return
            if self.targets and _arch(metadata["target"]) not in self.targets and _is_ast(src):
                self._retarget(src, metadata, times.total / 1e6)
            else:
                self._check(src, metadata, metadata_group, times.total / 1e6)

    def _retarget(self, src, metadata: dict, compile_seconds: float):
        """Compile `src` again for each of `targets` (Triton's listener, ours,
        checks each); the program's own kernel is left as Triton made it."""
        from triton import compile as triton_compile
        from triton.backends.compiler import GPUTarget

        kernel = self._record(src, metadata, compile_seconds)
        options = {k: metadata[k] for k in ("num_warps", "num_stages", "num_ctas") if k in metadata}
        self._retargeting = True
        try:
            for cap in self.targets:
                first = len(self.compiled)
                try:
                    triton_compile(src, target=GPUTarget("cuda", cap, 32), options=options)
                except Exception as e:  # noqa: BLE001 -- Triton's refusal, reported for the kernel
                    file, _, line = kernel.source.rpartition(":")
                    why = f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[0]}"
                    message = f"compiling {kernel.name} for sm_{cap} failed: {why}"
                    at = Pos(int(line), 1) if line.isdigit() else None
                    kernel.error = ErrorRecord.of(SpecError(message, at, file or None))
                kernel.checked_as += self.compiled[first:]
        finally:
            self._retargeting = False

    # -- one kernel -------------------------------------------------------------

    def _record(self, src, metadata: dict, compile_seconds: float) -> KernelCheck:
        kernel = KernelCheck(
            metadata["name"],
            metadata["hash"],
            f"sm_{_arch(metadata['target'])}",
            _defined_at(src),
            compile_seconds=compile_seconds,
        )
        self._by_hash[kernel.hash] = kernel
        self.kernels.append(kernel)
        return kernel

    def _check(self, src, metadata: dict, group: dict, compile_seconds: float):
        start, cpu_start = time.perf_counter(), time.process_time()
        reader_start = self._worker.cpu_seconds
        kernel = self._record(src, metadata, compile_seconds)
        key = answer_key(f"triton-kernel {kernel.hash} {os.getcwd()}", self.options)
        cached = self.cache.get(key) if self.cache is not None else None
        if isinstance(cached, KernelOutcome):
            kernel.results, kernel.cached = cached.results(), True
            kernel.error = cached.error_record()
            kernel.instructions = cached.instructions
        else:
            meta = metadata.get("tensordesc_meta")  # its TMA maps (verify.ptx.tensormaps)
            self._read_and_check(kernel, group, metadata.get("shared"), meta)
            if self.cache is not None:
                self.cache.put(key, KernelOutcome.of(kernel))
        kernel.seconds = time.perf_counter() - start
        kernel.cpu_seconds = time.process_time() - cpu_start
        kernel.reader_cpu_seconds = self._worker.cpu_seconds - reader_start
        self._tell(kernel)

    def _read_and_check(self, kernel: KernelCheck, group: dict, shared: int | None, meta=None):
        path = _in_group(group, ".ttgir")
        try:
            if path is None:
                raise SpecError("Triton kept no TTGIR for this kernel", Pos(1, 1), kernel.source)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            results = self._checks(kernel, path, text, _in_group(group, ".ptx"), shared, meta)
        except SpecError as e:
            kernel.error = ErrorRecord.of(e.located(path or kernel.source))
            return
        except (InternalError, Exception) as e:  # noqa: BLE001 -- the program must go on
            kernel.error = ErrorRecord(
                path or kernel.source,
                1,
                1,
                "internal error",
                f"{path or kernel.source}: internal error (a bug in verify): "
                f"{type(e).__name__}: {e}",
            )
            return
        for r in results:
            r.file = _shown(r.file)
        kernel.results = results

    def _checks(
        self,
        kernel: KernelCheck,
        path: str,
        text: str,
        ptx_path: str | None,
        shared: int | None,
        meta: list | None = None,
    ) -> list[CheckResult]:
        """TTGIR's buffer checks and each op's checks from the kernel's own PTX
        (`verify.ttgir.from_ptx.check_first`, as `verify ttgir` decides them); TTGIR's
        rules for every op, with the reason, where the PTX cannot be read."""
        from verify.ttgir import from_ptx
        from verify.ttgir.module import KernelChecker

        checker = KernelChecker(path, self._worker.read(text, path), self.options)
        try:
            if ptx_path is None:
                raise OSError("Triton kept no PTX for this kernel")
            with open(ptx_path, encoding="utf-8", errors="replace") as f:
                ptx = f.read()
        except OSError as e:
            kernel.instructions = f"TTGIR's lowering rules: the PTX cannot be read ({e})"
            return from_ptx.mark_ttgir(checker.run(), kernel.instructions)
        kernel.instructions = f"the PTX ({_shown(ptx_path)})"
        options = from_ptx.PtxOptions(
            ptx_text=ptx, ptx_name=ptx_path, shared_bytes=shared, tensordesc_meta=meta
        )
        return from_ptx.check_first(checker, text, options)

    # -- reporting --------------------------------------------------------------

    def _tell(self, kernel: KernelCheck):
        if self.report is None:
            return
        lines = []
        if kernel.error is not None:
            lines.append(f"{kernel.error.header}  [kernel {kernel.name}]")
        if kernel.instructions.startswith("TTGIR"):
            lines.append(f"kernel {kernel.name} ({kernel.source}): {kernel.instructions}")
        for r, more in self._shown_results(kernel.results):
            also = f"  (and {counted(more, 'more instruction')} of this op alike)" if more else ""
            lines.append(f"{r.file}:{r.line}: {r.status.value.upper():8} {r.property}{also}")
            if r.status == Status.PROVED:
                continue
            why = r.counterexample.summary if r.counterexample else r.reason
            lines.append(f"    {'counterexample' if r.counterexample else 'reason'}: {why}")
            lines.append(f"    in kernel {kernel.name} ({kernel.target}, {kernel.source})")
        if lines:
            print("\n".join(f"verify: {line}" for line in lines), file=self.report, flush=True)

    def _shown_results(self, results: list[CheckResult]) -> list[tuple[CheckResult, int]]:
        """Every check with `verbose`; else `failing_by_op`."""
        return [(r, 0) for r in results] if self.verbose else failing_by_op(results)

    def summary(self) -> str:
        """One paragraph: kernels, checks by verdict, ops not modelled, errors."""
        results = self.results
        unmodelled = sum(r.property.startswith(NOT_MODELLED) for r in results)
        checked = [k for k in self.kernels if not k.checked_as]
        cached = sum(k.cached for k in checked)
        empty = sum(not (k.results or k.error) for k in checked)
        lines = [
            f"{counted(len(checked), 'kernel')} checked ({cached} from verify's cache, "
            f"{empty} with no shared-memory op); {summary_line(results, len(self.errors))}",
        ]
        moved = len(self.kernels) - len(checked)
        if moved:
            shown = ", ".join(f"sm_{t}" for t in self.targets)
            lines.append(
                f"{counted(moved, 'kernel')} compiled for another target, checked as compiled for "
                f"{shown}"
            )
        if unmodelled:
            lines.append(
                f"{counted(unmodelled, 'op')} not modelled (UNKNOWN, not a pass: "
                "listed with --verbose and in --json)"
            )
        return "\n".join(f"verify: {line}" for line in lines)


@dataclass(frozen=True)
class KernelOutcome(Outcome):
    """A kernel's answer as the sweep cache keeps it, with each check's file
    (a kernel's ops may lie in several files) and its error, if any."""

    files: tuple[str, ...] = ()
    error: tuple | None = None  # an ErrorRecord's fields
    instructions: str = ""  # KernelCheck.instructions

    @property
    def cacheable(self) -> bool:
        """An UNKNOWN that says what is not modelled or cannot be known stays so;
        one that ran out of time or met a solver failure is asked again, and so
        is a kernel verify could not read (the reading child may have died)."""
        return not (self.internal or self.errors) and not any(
            c.status == Status.UNKNOWN.value and any(w in c.why for w in RUN_DEPENDENT)
            for c in self.checks
        )

    @classmethod
    def of(cls, kernel: KernelCheck) -> KernelOutcome:
        e = kernel.error
        internal = e.text if e is not None and e.message == "internal error" else ""
        return cls(
            tuple(CheckRow.of(r) for r in kernel.results),
            () if e is None or internal else (e.text,),
            internal,
            tuple(r.file for r in kernel.results),
            None if e is None else (e.file, e.line, e.col, e.message, e.text),
            kernel.instructions,
        )

    @classmethod
    def from_json(cls, doc: dict) -> KernelOutcome:
        checks = tuple(CheckRow(**c) for c in doc["checks"])
        error = tuple(doc["error"]) if doc["error"] is not None else None
        files = tuple(doc["files"])
        return cls(checks, tuple(doc["errors"]), doc["internal"], files, error, doc["instructions"])

    def results(self) -> list[CheckResult]:
        return [_result(row, file) for row, file in zip(self.checks, self.files)]

    def error_record(self) -> ErrorRecord | None:
        return None if self.error is None else ErrorRecord(*self.error)


class KernelCache(Cache):
    """`verify.sweep.cache.Cache` holding `KernelOutcome`s."""

    def __init__(self, directory: str | None = None):
        super().__init__(os.path.join(directory or default_directory(), "triton-kernels"))

    def get(self, key: str) -> KernelOutcome | None:
        try:
            with open(self._path(key), encoding="utf-8") as f:
                return KernelOutcome.from_json(json.load(f))
        except (OSError, ValueError, KeyError, TypeError):
            return None  # absent, or written by an incompatible version: check again


def failing_by_op(
    results: list[CheckResult], statuses=(Status.REFUTED, Status.UNKNOWN)
) -> list[tuple[CheckResult, int]]:
    """Each check of `statuses` that is not a not-modelled op, one per op, check
    and verdict (an op lowers to several PTX instructions, which mostly fail
    alike: the first stands for them), with how many more it stands for."""
    groups: dict[tuple, list[CheckResult]] = {}
    for r in results:
        if r.status in statuses and not r.property.startswith(NOT_MODELLED):
            head = r.property.split(": ", 1)[0]
            groups.setdefault((r.file, r.line, r.status, head), []).append(r)
    return [(group[0], len(group) - 1) for group in groups.values()]


def _result(row: CheckRow, file: str) -> CheckResult:
    """A cached check as a result; a refutation keeps its counterexample's summary."""
    status = Status(row.status)
    refuted = status == Status.REFUTED
    return CheckResult(
        file,
        row.line,
        row.text,
        status,
        row.expect,
        row.max_ways,
        row.wavefronts,
        counterexample=Counterexample(row.why, {}) if refuted else None,
        reason="" if refuted else row.why,
    )


def _in_group(group: dict, suffix: str) -> str | None:
    """The path in Triton's cache of the kernel's file ending in `suffix`."""
    return next((p for name, p in group.items() if name.endswith(suffix)), None)


def _arch(target) -> int:
    """A GPUTarget's compute capability (a dict on a cache hit's metadata)."""
    return target["arch"] if isinstance(target, dict) else target.arch


def _is_ast(src) -> bool:
    """A @jit function's source (which can be compiled again), not a TTGIR file."""
    return hasattr(src, "fn")


def _defined_at(src) -> str:
    """``file:line`` of the @jit function of an ASTSource; a TTGIR source's path."""
    fn = getattr(src, "fn", None)
    code = getattr(getattr(fn, "fn", None), "__code__", None)
    if code is not None:
        line = getattr(fn, "def_file_line_number", code.co_firstlineno)
        return f"{_shown(code.co_filename)}:{line}"
    return _shown(str(getattr(src, "path", "")))


def _shown(path: str) -> str:
    """A path under the working directory relative to it, as verify prints files."""
    cwd = os.getcwd() + os.sep
    return path[len(cwd) :] if path.startswith(cwd) else path


@contextlib.contextmanager
def checking(
    timeout: float = 60.0,
    engine: str = AUTO,
    cache_dir: str | None = None,
    report=sys.stderr,
    verbose: bool = False,
    targets: tuple[int, ...] = (),
):
    """Check every kernel Triton compiles inside the block; yields the `Session`.
    ``cache_dir=""`` reads and writes no cache; ``report=None`` prints nothing;
    ``targets=(80,)`` checks each kernel as compiled for sm_80 (compiled again
    from its source when the program compiled it for another target)."""
    session = Session(timeout, engine, cache_dir, report, verbose, targets)
    session.install()
    try:
        yield session
    finally:
        session.uninstall()
