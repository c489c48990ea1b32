"""Triton's own corpus through verify (issue 26, item 5): every module of Triton's
lit tests that holds a shared-memory descriptor, its tutorials' kernels, and the
kernels its compile-only Python unit tests compile, each checked in a child
process with a timeout, so that a native abort or a hang costs one item.

    python -m benchmarks.campaigns.triton_corpus       # results/triton_corpus.{csv,md}
    python -m benchmarks.campaigns.triton_corpus --only lit --limit 40

The Triton sources come from a git directory (``--triton-git``, default the
snapshot `fetch` brings of github:torch-spyre/triton, a fork whose history holds
triton-lang/triton's main: the upstream snapshot is over fetch's size limit) at
``--commit``, an upstream triton-lang/triton commit; they are unpacked under
``--work`` (outside the repository: nothing of Triton's is committed here).

The corpus, by kind:

- ``lit``: test/TritonGPU, test/Conversion and test/TritonNvidiaGPU (AMD's
  subfolders left out: verify models NVIDIA GPUs only), each file split on
  ``// -----`` as ``triton-opt -split-input-file`` splits it, each module whose
  code (not its FileCheck comments) holds a ``!ttg.memdesc`` type, written to a
  file of its own and checked as ``verify ttgir`` checks a file: read by Triton's
  parser in one long-lived reading child (`verify run`'s, restarted after a
  native abort), TTGIR's checks, then each op's checks from the PTX Triton
  lowers the module to (`verify.ttgir.from_ptx`; a module Triton cannot lower
  keeps TTGIR's rules, and ``--no-ptx`` skips lowering). The target: the
  module's own ``ttg.target`` (or ``ttg.compute-capability``), else the RUN
  line's ``compute-capability=``/``target=``, else what verify infers from the
  encodings, else sm_90 (``default`` in the csv).
- ``tutorial``: the @triton.jit / @gluon.jit functions of python/tutorials and
  python/tutorials/gluon, loaded without their host code (which needs torch and
  a GPU: only imports, constants, classes and functions are kept), compiled for
  sm_80 and sm_90 on the CPU by `verify.ttgir.kernel.compile_kernel` and checked
  as ``verify triton`` checks a kernel (`check_compiled`: its PTX). Parameters
  are typed as ``verify triton`` types them (annotations, defaults, else the
  type their use implies); a constexpr without a default gets the first
  ``triton.autotune`` config's value, else 64 for a name with BLOCK/SIZE/TILE
  in it, else 1 (so a kernel compiles at one stated configuration). A kernel
  Triton will not compile so is counted ``not compiled``, apart from verify's
  outcomes.
- ``unit-kernel``: a sample of the kernels of python/test/unit's test files,
  compiled for sm_80 and sm_90 and checked as the tutorials' are
  (`benchmarks.campaigns.triton_corpus_unit` says which and how).
- ``unit``: ``verify run --target sm_80 --target sm_90 --json`` over pytest on
  the compile-only unit tests (UNIT_TESTS): every kernel those tests compile,
  recompiled by verify's hook for both targets.

Per item the outcome is one of ``checked`` (verify returned results), ``nothing
to check`` (verify's located error for a module or kernel without a
shared-memory op it checks), ``triton refused`` (Triton's parser or verifier,
at the module's line and column), ``not NVIDIA`` (an AMD target, a located
error), ``verify refused`` (any other located error of verify's), ``unlocated``
(an error without a line), ``traceback`` (an internal error: an exception other
than verify's SpecError, or the reading child exiting 1), ``abort`` (a signal
ended the reading child: Triton's native code), ``hang`` (past ``--timeout``),
``not compiled`` (Triton refused the Python kernel at the stated configuration:
not verify's). Each result is counted by the kind of its op (``local_load``,
``async_copy_global_to_local``, ...): PROVED or REFUTED (decided), UNKNOWN, and
``not modelled`` (UNKNOWN with the reason verify does not model the op). The md
keeps its hand-written section (READ_BY_HAND) when it is written again.
"""

from __future__ import annotations

import argparse
import ast
import collections
import csv
import glob
import json
import os
import platform
import re
import select
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback

RESULTS = "benchmarks/results/triton_corpus"
TRITON_GIT = "/work/.mirror/torch-spyre+triton/repo"
# triton-lang/triton main, 2026-04-14: "[BACKEND] Add multicast flag to tcgen05
# scaled_mma (#9974)", the upstream commit the fork above starts from.
COMMIT = "bceeb9ed7c0a3bcbdf9e35869de841656c1a5760"
LIT_DIRS = ("test/TritonGPU", "test/Conversion", "test/TritonNvidiaGPU")
TUTORIAL_DIRS = ("python/tutorials", "python/tutorials/gluon")
# The unit tests that compile kernels (triton.compile for a named target) with no
# GPU and no torch; test_frontend needs the expecttest package.
UNIT_TESTS = (
    "python/test/unit/language/test_compile_only.py",
    "python/test/gluon/test_frontend.py",
)
TARGETS = ("sm_80", "sm_90")
SPLIT = re.compile(r"^// -----\s*$", re.MULTILINE)
_RUN_TARGET = re.compile(r"compute-capability=(\d+)|target=cuda:(\d+)")
_MODULE_TARGET = re.compile(
    r'"?ttg\.target"?\s*=\s*"(?P<target>[^"]*)"|"ttg\.compute-capability"\s*=\s*(?P<cap>\d+)'
)
_LOCATED = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): error: ")
OUTCOMES = (
    "checked",
    "nothing to check",
    "triton refused",
    "not NVIDIA",
    "verify refused",
    "unlocated",
    "traceback",
    "abort",
    "hang",
    "not compiled",
)


# -- the corpus ----------------------------------------------------------------------


def unpack(git_dir: str, commit: str, work: str) -> str:
    """The Triton tree's corpus folders at `commit`, under `work`."""
    from benchmarks.campaigns.triton_corpus_unit import FOLDERS as UNIT_KERNEL_FOLDERS

    root = os.path.join(work, commit[:12])
    paths = [*LIT_DIRS, *TUTORIAL_DIRS[:1], *(os.path.dirname(p) for p in UNIT_TESTS)]
    paths += UNIT_KERNEL_FOLDERS
    # a tree unpacked by an earlier version of this script gets the folders it lacks
    missing = sorted({p for p in paths if not os.path.isdir(os.path.join(root, p))})
    if not missing:
        return root
    archive = subprocess.run(
        ["git", "-C", git_dir, "archive", "--format=tar", commit, *missing],
        capture_output=True,
        check=True,
    ).stdout
    into = root if os.path.isdir(root) else root + ".part"
    os.makedirs(into, exist_ok=True)
    with tempfile.TemporaryFile() as f:
        f.write(archive)
        f.seek(0)
        with tarfile.open(fileobj=f) as tar:
            tar.extractall(into, filter="data")
    if into != root:
        os.rename(into, root)
    return root


def lit_modules(root: str, work: str) -> list[dict]:
    """Each lit module with a memdesc, written to its own file (so that results
    name it): ``modules/<upstream path>.<index>.mlir``."""
    items = []
    for folder in LIT_DIRS:
        for path in sorted(glob.glob(os.path.join(root, folder, "**", "*.mlir"), recursive=True)):
            upstream = os.path.relpath(path, root)
            if "/amd/" in upstream:
                continue
            with open(path, encoding="utf-8") as f:
                text = f.read()
            run_target = target_of_run_lines(text)
            for index, module in enumerate(SPLIT.split(text)):
                if "!ttg.memdesc" not in _code(module):
                    continue
                out = os.path.join(work, "modules", f"{upstream}.{index}.mlir")
                os.makedirs(os.path.dirname(out), exist_ok=True)
                with open(out, "w", encoding="utf-8") as f:
                    f.write(module)
                items.append(
                    {
                        "kind": "lit",
                        "id": f"{upstream}#{index}",
                        "file": out,
                        "run_target": run_target,
                    }
                )
    return items


def _code(module: str) -> str:
    """A module without its comment lines (FileCheck's patterns name types too)."""
    return "\n".join(line for line in module.splitlines() if not line.lstrip().startswith("//"))


def _run_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("// RUN")]


def target_of_run_lines(text: str) -> str | None:
    """The NVIDIA target a lit file's RUN lines lower for (``cuda:90``), if any."""
    match = _RUN_TARGET.search("\n".join(_run_lines(text)))
    return f"cuda:{match[1] or match[2]}" if match else None


def tutorial_kernels(root: str) -> list[dict]:
    """Each jit function of each tutorial, for each target."""
    items = []
    for folder in TUTORIAL_DIRS:
        for path in sorted(glob.glob(os.path.join(root, folder, "*.py"))):
            if os.path.basename(path) == "conftest.py":
                continue
            for name in _jit_functions(path):
                for target in TARGETS:
                    upstream = os.path.relpath(path, root)
                    items.append(
                        {
                            "kind": "tutorial",
                            "id": f"{upstream}:{name}@{target}",
                            "file": path,
                            "kernel": name,
                            "target": target,
                        }
                    )
    return items


def _jit_functions(path: str) -> list[str]:
    """The file's kernels: its top-level jit functions that no other one calls
    (those are helpers, compiled as part of their callers)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    jitted = [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and any(_is_jit(d) for d in node.decorator_list)
    ]
    called = {
        call.func.id
        for node in jitted
        for call in ast.walk(node)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
    }
    return [node.name for node in jitted if node.name not in called]


def _is_jit(decorator: ast.expr) -> bool:
    text = ast.unparse(decorator)
    return "jit" in text or "autotune" in text


def unit_tests(root: str) -> list[dict]:
    return [
        {"kind": "unit", "id": test, "file": os.path.join(root, test)}
        for test in UNIT_TESTS
        if os.path.isfile(os.path.join(root, test))
    ]


# -- one item, in the worker ---------------------------------------------------------


def check_item(item: dict, timeout: float) -> dict:
    """What verify made of one item: its outcome and its results."""
    from verify.errors import SpecError

    try:
        if item["kind"] == "lit":
            return _check_lit(item, timeout, item.get("ptx", True))
        if item["kind"] == "tutorial":
            return _check_tutorial(item, timeout)
        if item["kind"] == "unit-kernel":
            from benchmarks.campaigns.triton_corpus_unit import check_unit_kernel

            return check_unit_kernel(item, timeout)
        return _check_unit(item, timeout)
    except SpecError as e:
        return _refusal(e.header)
    except Exception as e:  # noqa: BLE001 -- an internal error: counted, with its traceback
        return {"outcome": "traceback", "error": f"{type(e).__name__}: {e}", "trace": _trace()}


def _trace() -> str:
    return "".join(traceback.format_exc().splitlines(keepends=True)[-12:])


def _refusal(message: str, refused: str = "verify refused") -> dict:
    """A SpecError's outcome. The reading child's death is an abort when a
    signal ended it (Triton's native code), a traceback when it exited 1 (a
    Python exception in verify's reading code), a hang when it did not answer."""
    first = message.splitlines()[0] if message else ""
    died = re.search(r"stopped on this \w+ \((exit status (-?\d+)|no answer)", first)
    if died:
        outcome = "hang" if died[1] == "no answer" else "abort"
        if died[2] is not None and int(died[2]) > 0:
            outcome = "traceback"
        return {"outcome": outcome, "error": first}
    if not _LOCATED.match(first):
        return {"outcome": "unlocated", "error": first}
    if "nothing to verify" in first:
        refused = "nothing to check"
    elif "verify models NVIDIA targets" in first:
        refused = "not NVIDIA"
    return {"outcome": refused, "error": first}


def _check_lit(item: dict, timeout: float, ptx: bool) -> dict:
    from verify.engines.options import RunOptions
    from verify.errors import Pos, SpecError
    from verify.ttgir import module

    with open(item["file"], encoding="utf-8") as f:
        text = f.read()
    own = _MODULE_TARGET.search(text)
    if own:
        target, source = own["target"] or f"cuda:{own['cap']}", "module"
    else:
        target, source = item["run_target"], "RUN line"
    if target is None:
        target, source = module.infer_target(text), "inferred"
    if target is None:
        target, source = "cuda:90", "default"
    name, text = module.read_source(item["file"])
    try:
        found = _reader().read(text, name)
    except SpecError as e:  # Triton's parser or verifier: the module is not valid TTGIR
        return _refusal(e.header, "triton refused")
    found["target"] = found.get("target") or target
    checker = module.KernelChecker(name, found, RunOptions(seconds=timeout))
    if not checker.run():
        raise SpecError(
            "nothing to verify: no shared-memory allocation or operation found", Pos(1, 1), name
        )
    results, instructions = (
        _with_ptx(checker, text, name, target, timeout)
        if ptx
        else (
            checker.results,
            "ttgir (--no-ptx)",
        )
    )
    return {
        "outcome": "checked",
        "target": f"{target} ({source})",
        "instructions": instructions,
        "results": [_result(r) for r in results],
    }


def _with_ptx(checker, text: str, name: str, target: str, timeout: float):
    """The checks `verify ttgir --target` gives: each op's from the PTX Triton
    lowers the module to (`verify.ttgir.from_ptx`), for the target found (written
    into the module when it has none, `verify.ttgir.lower.with_target`), else
    TTGIR's rules, with why."""
    from verify.ttgir import from_ptx, lower

    try:
        lowered = lower.lower(text, name, target)
    except lower.NotLowered as e:
        return checker.results, f"ttgir (not lowered: {str(e)[:160]})"
    options = from_ptx.PtxOptions(
        target=target, ptx_text=lowered.ptx, ptx_name=lowered.name, shared_bytes=lowered.shared
    )
    merged = from_ptx.merge(checker, text, options)
    return merged, "ptx"


_READER: list = []


def _reader():
    """One long-lived reading child for the worker's modules (`verify run`'s)."""
    from verify.integrations.extract_worker import ExtractWorker

    if not _READER:
        _READER.append(ExtractWorker())
    return _READER[0]


def _check_tutorial(item: dict, timeout: float) -> dict:
    from verify.ttgir.kernel import check_compiled, compile_kernel

    try:
        fn, config = _load_tutorial_kernel(item["file"], item["kernel"])
    except Exception as e:  # noqa: BLE001 -- the tutorial's host code, not verify
        return {"outcome": "not compiled", "error": f"not loaded: {type(e).__name__}: {e}"}
    constexprs = {**_constexpr_values(fn), **config.get("kwargs", {})}
    try:
        compiled = compile_kernel(
            fn,
            item["target"],
            constexprs,
            _implied_signature(fn, constexprs),
            config.get("num_warps", 4),
            config.get("num_stages", 3),
        )
    except Exception as e:  # noqa: BLE001 -- Triton's refusal at this configuration
        return {"outcome": "not compiled", "error": f"{type(e).__name__}: {_last_line(e)}"}
    return {
        "outcome": "checked",
        "target": item["target"],
        "results": [_result(r) for r in check_compiled(compiled, timeout)],
    }


def _last_line(e: BaseException) -> str:
    lines = [line for line in str(e).splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def _load_tutorial_kernel(path: str, name: str):
    """The jit function `name` of a tutorial, from its source without host code:
    imports (torch's may fail), constants, classes and functions; and the first
    ``triton.autotune`` config's kwargs, warps and stages, if it is autotuned."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    namespace: dict = {"__name__": "tutorial", "__file__": path}
    sys.path.insert(0, os.path.dirname(path))
    try:
        for node in tree.body:
            if isinstance(node, _DEFINITIONS):
                _try_exec(node, path, namespace)
    finally:
        sys.path.pop(0)
    fn = namespace[name]
    config: dict = {}
    configs = getattr(fn, "configs", None)
    if configs:
        first = configs[0]
        config = {"kwargs": dict(first.kwargs), "num_warps": first.num_warps}
        config["num_stages"] = first.num_stages
    while not hasattr(fn, "params"):  # autotune / heuristics wrap the jit function
        fn = fn.fn
    return fn, config


_DEFINITIONS = (
    ast.Import,
    ast.ImportFrom,
    ast.Assign,
    ast.AnnAssign,
    ast.FunctionDef,
    ast.ClassDef,
)


def _try_exec(node: ast.stmt, path: str, namespace: dict):
    """Run one top-level statement; a function whose decorators need the host
    (``triton.autotune(configs=get_autotune_config())`` asks the driver) is
    defined again with its jit decorator alone."""
    try:
        exec(compile(ast.Module(body=[node], type_ignores=[]), path, "exec"), namespace)  # noqa: S102
    except Exception:  # noqa: BLE001 -- host-side setup (torch, a GPU): not needed to compile
        if isinstance(node, ast.FunctionDef) and any(_is_jit(d) for d in node.decorator_list):
            node.decorator_list = [d for d in node.decorator_list if "jit" in ast.unparse(d)]
            _try_exec(node, path, namespace)


def _constexpr_values(fn) -> dict:
    """A value for each constexpr parameter without a default (the module doc)."""
    out = {}
    for param in fn.params:
        if param.is_constexpr and param._param.default is param._param.empty:
            big = any(word in param.name.upper() for word in ("BLOCK", "SIZE", "TILE"))
            out[param.name] = 64 if big else 1
    return out


def _implied_signature(fn, constexprs: dict) -> dict:
    from verify.ttgir.kernel import _param_type, implied_type

    return {
        p.name: implied_type(fn, p.name)
        for p in fn.params
        if _param_type(p, {}, constexprs) is None
    }


def _check_unit(item: dict, timeout: float) -> dict:
    """verify run over pytest on one unit-test file, both targets."""
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.json")
        # The installed `verify` command, as a user runs it (verify.cli:run).
        cli = "import sys; from verify.cli import run; sys.argv[0] = 'verify'; sys.exit(run())"
        command = [sys.executable, "-c", cli, "run", "--json", report, "--timeout", str(timeout)]
        for target in TARGETS:
            command += ["--target", target]
        command += ["--", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        command += ["-o", "addopts=", item["file"]]
        child = subprocess.run(command, capture_output=True, text=True, cwd=tmp)
        if not os.path.exists(report):
            return {"outcome": "traceback", "error": child.stderr[-2000:]}
        with open(report, encoding="utf-8") as f:
            found = json.load(f)
    tail = [line for line in child.stdout.splitlines() if line.strip()][-1:]
    return {
        "outcome": "checked",
        "pytest": tail[0] if tail else "",
        "kernels": [
            {
                **{k: kernel.get(k) for k in ("name", "target", "error", "checks", "refuted")},
                "outcome": _kernel_outcome(kernel),
            }
            for kernel in found.get("kernels", [])
        ],
        "results": [
            {
                "file": r.get("spec"),
                "line": r.get("line"),
                "property": r.get("property"),
                "status": (r.get("status") or "").upper(),
                "reason": (r.get("reason") or "")[:300],
                "counterexample": (r.get("counterexample") or {}).get("summary", ""),
            }
            for r in found.get("checks", [])
        ],
    }


def _kernel_outcome(kernel: dict) -> str:
    """A `verify run` kernel's outcome, from the error its report gives."""
    error = kernel.get("error") or ""
    if not error:
        return "checked" if kernel.get("checks") else "nothing to check"
    if "internal error" in error:
        return "traceback"
    if "stopped on this kernel" in error:
        return "abort"
    if re.search(r"compiling \S+ for sm_\d+ failed", error):
        return "not compiled"
    return "verify refused" if _LOCATED.match(error) else "unlocated"


def _result(result) -> dict:
    counterexample = result.counterexample.summary if result.counterexample else ""
    return {
        "file": result.file,
        "line": result.line,
        "property": result.property,
        "status": result.status.name,
        "reason": (result.reason or "")[:300],
        "counterexample": counterexample,
    }


def worker(timeout: float) -> int:
    """Answer one JSON item per stdin line with one JSON line, on a copy of
    stdout: what the checked code prints goes to stderr."""
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        item = json.loads(line)
        started = time.perf_counter()
        answer = check_item(item, timeout)
        answer["seconds"] = round(time.perf_counter() - started, 3)
        answers.write(json.dumps(answer) + "\n")
        answers.flush()
    return 0


# -- the parent: one worker, restarted after an abort or a hang ---------------------


class Worker:
    def __init__(self, check_timeout: float):
        self.check_timeout = check_timeout
        self.child: subprocess.Popen | None = None

    def ask(self, item: dict, limit: float) -> dict:
        if self.child is None or self.child.poll() is not None:
            self.child = subprocess.Popen(
                [sys.executable, "-m", "benchmarks.campaigns.triton_corpus", "--worker"]
                + ["--check-timeout", str(self.check_timeout)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
        assert self.child.stdin is not None and self.child.stdout is not None
        started = time.perf_counter()
        self.child.stdin.write(json.dumps(item) + "\n")
        self.child.stdin.flush()
        ready, _, _ = select.select([self.child.stdout], [], [], limit)
        line = self.child.stdout.readline() if ready else ""
        if line:
            return json.loads(line)
        self.stop()
        seconds = round(time.perf_counter() - started, 3)
        if ready:  # the worker itself died (an abort in verify's own process)
            return {"outcome": "abort", "error": "the checking process died", "seconds": seconds}
        return {"outcome": "hang", "error": f"no answer in {limit:.0f} s", "seconds": seconds}

    def stop(self):
        if self.child is not None:
            self.child.kill()
            self.child.wait()
            self.child = None


# -- the tables ----------------------------------------------------------------------

# Words of a result's property that name the check, not the op.
_CHECK_WORDS = {
    "conflict_free",
    "in_bounds",
    "aligned",
    "bijective",
    "equivalent",
    "base_aligned",
    "unknown",
    "not",
    "modelled",
    "max_ways",
    "placement",
    "wavefronts",
    "writer_reader",
}


def op_kind(prop: str) -> str:
    """The kind of op a result is about: ``conflict_free local_load %y`` ->
    local_load; ``not modelled: tmem_load %t`` -> tmem_load; a buffer's
    ``bijective local_alloc %a`` -> local_alloc; ``aligned 16 convert_layout:
    ld.shared.v4.b32 [k.ptx:12]`` (an op read from the PTX) -> convert_layout."""
    for word in prop.split():
        word = word.rstrip(":,")
        if word and word not in _CHECK_WORDS and not word.isdigit():
            return word
    return prop


def is_not_modelled(prop: str) -> bool:
    words = prop.replace(":", " ").split()
    return words[:1] == ["not"] and "modelled" in words


def per_op(answers: list[tuple[dict, dict]]) -> dict[str, collections.Counter]:
    """Per op kind: ops (distinct op per item), checks PROVED / REFUTED / UNKNOWN,
    ops not modelled."""
    table: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for item, answer in answers:
        ops: dict[tuple, set] = collections.defaultdict(set)
        for r in answer.get("results", []):
            kind = op_kind(r["property"])
            modelled = not is_not_modelled(r["property"])
            names = [w for w in r["property"].split() if w.startswith("%")]
            key = (item["id"], kind, tuple(names), r["file"], r["line"], answer.get("target"))
            status = r["status"] if modelled else "NOT_MODELLED"
            ops[(kind, key)].add(status)
            table[kind][f"checks {status}"] += 1
        for (kind, _), statuses in ops.items():
            # worst first: a refuted check decides the op, whatever else it has
            table[kind]["ops"] += 1
            if "REFUTED" in statuses:
                table[kind]["ops refuted"] += 1
            elif "NOT_MODELLED" in statuses:
                table[kind]["ops not modelled"] += 1
            elif "UNKNOWN" in statuses:
                table[kind]["ops unknown"] += 1
            else:
                table[kind]["ops proved"] += 1
    return table


def write_csv(path: str, answers: list[tuple[dict, dict]]):
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(
            ["kind", "item", "target", "outcome", "seconds", "proved", "refuted", "unknown"]
            + ["not_modelled", "error"]
        )
        for item, answer in answers:
            results = answer.get("results", [])
            count = collections.Counter(
                "NOT_MODELLED" if is_not_modelled(r["property"]) else r["status"] for r in results
            )
            out.writerow(
                [
                    item["kind"],
                    item["id"],
                    answer.get("target", item.get("target", "")),
                    answer["outcome"],
                    answer.get("seconds", ""),
                    count["PROVED"],
                    count["REFUTED"],
                    count["UNKNOWN"],
                    count["NOT_MODELLED"],
                    (answer.get("error") or "").replace("\n", " ")[:300],
                ]
            )


def summary_lines(answers: list[tuple[dict, dict]]) -> list[str]:
    by_kind: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for item, answer in answers:
        if "kernels" in answer:  # a unit-test file: its kernels are the items
            for kernel in answer["kernels"]:
                # A kernel the test compiled for another target is checked as
                # its recompiles for TARGETS: counted once each, unless they failed.
                if kernel["target"] in TARGETS or kernel["error"]:
                    by_kind["unit (kernels)"][kernel["outcome"]] += 1
        else:
            by_kind[item["kind"]][answer["outcome"]] += 1
    head = "| corpus | items | " + " | ".join(OUTCOMES) + " |"
    lines = [head, "|---|---|" + "---|" * len(OUTCOMES)]
    for kind, counts in sorted(by_kind.items()):
        row = [kind, str(sum(counts.values()))] + [str(counts[o]) for o in OUTCOMES]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def op_table_lines(answers: list[tuple[dict, dict]]) -> list[str]:
    table = per_op(answers)
    head = ["op kind", "ops", "proved", "refuted", "not modelled", "unknown", "checks"]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for kind, c in sorted(table.items(), key=lambda kv: -kv[1]["ops"]):
        checks = sum(v for k, v in c.items() if k.startswith("checks "))
        cells = [c["ops"], c["ops proved"], c["ops refuted"], c["ops not modelled"]]
        cells += [c["ops unknown"], checks]
        lines.append(f"| {kind} | " + " | ".join(str(n) for n in cells) + " |")
    return lines


def machine_line() -> str:
    cores = os.cpu_count()
    load = os.getloadavg()[0]
    return (
        f"{platform.processor() or platform.machine()}, {cores} cores, Python "
        f"{platform.python_version()}; load average {load:.1f} at the end"
    )


def verify_commit() -> str:
    """HEAD, and whether verify's own files differed from it when measured."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "verify"], capture_output=True, text=True
    )
    changed = " (with uncommitted changes under verify/)" if dirty.stdout.strip() else ""
    return head.stdout.strip()[:12] + changed


# -- main ----------------------------------------------------------------------------


def collect(root: str, work: str, only: set[str]) -> list[dict]:
    items: list[dict] = []
    if "lit" in only:
        items += lit_modules(root, work)
    if "tutorial" in only:
        items += tutorial_kernels(root)
    if "unit" in only:
        items += unit_tests(root)
    if "unit-kernel" in only:
        from benchmarks.campaigns.triton_corpus_unit import unit_kernels

        items += unit_kernels(root, TARGETS)
    return items


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--triton-git", default=TRITON_GIT)
    parser.add_argument("--commit", default=COMMIT)
    parser.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "verify-corpus"))
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per item")
    parser.add_argument("--check-timeout", type=float, default=20.0, help="seconds per check")
    parser.add_argument("--only", default="lit,tutorial,unit,unit-kernel")
    parser.add_argument("--match", default="", help="only items whose id contains this")
    parser.add_argument("--ids", help="only the items listed in this file, one id a line")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument(
        "--no-ptx", action="store_true", help="lit modules: TTGIR's rules only, no lowering"
    )
    parser.add_argument("--out", default=RESULTS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args.check_timeout)
    root = unpack(args.triton_git, args.commit, args.work)
    items = [
        i for i in collect(root, args.work, set(args.only.split(","))) if args.match in i["id"]
    ]
    if args.ids:
        with open(args.ids, encoding="utf-8") as f:
            wanted = {line.strip() for line in f if line.strip()}
        items = [i for i in items if i["id"] in wanted]
    if args.limit:
        items = items[: args.limit]
    for item in items:
        item["ptx"] = not args.no_ptx
    pool = Worker(args.check_timeout)
    answers = []
    started = time.time()
    details_path = os.path.join(args.work, os.path.basename(args.out) + ".jsonl")
    with open(details_path, "w", encoding="utf-8") as details:
        for n, item in enumerate(items, 1):
            limit = args.timeout * (4 if item["kind"] == "unit" else 1)
            answer = pool.ask(item, limit)
            answers.append((item, answer))
            details.write(json.dumps({"item": item["id"], "kind": item["kind"], **answer}) + "\n")
            details.flush()
            print(f"[{n}/{len(items)}] {answer['outcome']:10s} {item['id']}", flush=True)
    pool.stop()
    write_csv(args.out + ".csv", answers)
    seconds = time.time() - started
    write_md(args.out + ".md", answers, args, seconds)
    print("\n".join(summary_lines(answers)))
    print("\n".join(op_table_lines(answers)))
    print(f"{len(items)} items in {seconds:.0f} s; {machine_line()}; details: {details_path}")
    return 0


READ_BY_HAND = "## Refutations, read by hand"


def write_md(path: str, answers: list[tuple[dict, dict]], args, seconds: float):
    """The tables, every refuted check, and (kept from the file as it was) the
    section that says what each refutation is, which a person writes."""
    kept = ""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if READ_BY_HAND in text:
            kept = text[text.index(READ_BY_HAND) :]
    lines = [
        "# Triton's own corpus through verify (issue 26, item 5)",
        "",
        f"Triton: triton-lang/triton {args.commit} (test/ and python/ at that commit; "
        f"parsed and lowered by the installed Triton {_triton_version()}). "
        f"verify: {verify_commit()}. Machine: {machine_line()}. "
        f"{len(answers)} items in {seconds:.0f} s. Lit modules: "
        f"{_instructions(answers)}. "
        "`python -m benchmarks.campaigns.triton_corpus` (the module doc says what each "
        "corpus and outcome is).",
        "",
        "## Outcomes",
        "",
        *summary_lines(answers),
        "",
        "## Per op kind",
        "",
        "An op is counted once per module (or kernel and target), by its worst "
        "result: `refuted`, a check REFUTED; `not modelled`, else listed UNKNOWN with "
        "the reason verify does not model it (or a part of it); `unknown`, else a "
        "check UNKNOWN; `proved`, every check PROVED. `proved` and `refuted` are the "
        "decided ops.",
        "",
        *op_table_lines(answers),
        "",
        "## Every refuted check",
        "",
        *refuted_lines(answers),
        "",
    ]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + ("\n" + kept if kept else ""))


def _instructions(answers: list[tuple[dict, dict]]) -> str:
    """Where the lit modules' per-op checks came from, counted."""
    sources = collections.Counter(
        answer.get("instructions", "").split(" (")[0]
        for item, answer in answers
        if item["kind"] == "lit" and answer["outcome"] == "checked"
    )
    names = {"ttgir": "TTGIR's lowering rules", "ptx": "the PTX Triton lowers them to"}
    return ", ".join(f"{n} decided by {names.get(how, how)}" for how, n in sorted(sources.items()))


def refuted_lines(answers: list[tuple[dict, dict]]) -> list[str]:
    lines = ["| item | line | check | counterexample |", "|---|---|---|---|"]
    for item, answer in answers:
        for r in answer.get("results", []):
            if r["status"] == "REFUTED":
                cex = r.get("counterexample", "").replace("|", "/")
                lines.append(f"| {item['id']} | {r['line']} | {r['property']} | {cex} |")
    return lines


def _triton_version() -> str:
    try:
        import triton

        return triton.__version__
    except ImportError:
        return "(not installed)"


if __name__ == "__main__":
    sys.exit(main())
