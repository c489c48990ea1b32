"""Checking every kernel a program compiles: the context manager, `verify run`
and `pytest --verify-triton`, on a program that compiles two Gluon transposes
for sm_80 on the CPU (tests/data/programs/two_transposes.py): the plain one
reads columns 32-way, the swizzled one is conflict-free."""

import io
import json
import os
import runpy
import subprocess
import sys

import conftest
import pytest

pytest.importorskip("triton")

from triton import knobs  # noqa: E402

from verify.integrations.triton_hook import checking  # noqa: E402
from verify.smt.solve import Status  # noqa: E402

PROGRAM = os.path.join(conftest.DATA, "programs", "two_transposes.py")
pytest_plugins = ["pytester"]

LOAD_LINE = 27  # columns = smem.load(reader)
DEF_LINE = 19  # def transpose(...)


@pytest.fixture
def fresh_caches(tmp_path, monkeypatch):
    """Triton's and verify's caches in scratch directories, for this process
    and for the children it starts."""
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    monkeypatch.setenv("VERIFY_CACHE_DIR", str(tmp_path / "verify"))
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
    return tmp_path


def run_program(argv=()):
    saved = sys.argv
    sys.argv = [PROGRAM, *argv]
    try:
        runpy.run_path(PROGRAM, run_name="__main__")
    except SystemExit as e:
        return e.code
    finally:
        sys.argv = saved


def local_loads(kernel):
    """The column read's conflict_free checks, one per ld.shared of its PTX."""
    return [r for r in kernel.results if r.property.startswith("conflict_free local_load")]


def local_load(kernel):
    return local_loads(kernel)[0]


def test_each_kernel_is_checked_once_at_its_lines_and_the_listener_is_restored(fresh_caches):
    calls = []

    def theirs(**kwargs):
        calls.append(kwargs["metadata"]["hash"])

    knobs.compilation.listener = theirs
    report = io.StringIO()
    try:
        with checking(cache_dir=str(fresh_caches / "verify"), report=report) as session:
            run_program()
            run_program()  # Triton's cache hits: seen again, checked once
        assert knobs.compilation.listener is theirs
    finally:
        knobs.compilation.listener = None
    assert len(session.compiled) == 4 and calls == session.compiled
    plain, swizzled = session.kernels
    assert (plain.name, plain.target, plain.source) == (
        "transpose",
        "sm_80",
        f"{os.path.relpath(PROGRAM)}:{DEF_LINE}",
    )
    refuted = local_loads(plain)
    assert len(refuted) > 1  # one per ld.shared Triton emitted for the load
    assert all(r.facts["instructions"] == "ptx" for r in refuted)
    assert all(r.facts["instruction"] == "ld.shared.b32" for r in refuted)
    assert {(r.status, r.line) for r in refuted} == {(Status.REFUTED, LOAD_LINE)}
    assert all("32-way" in r.counterexample.summary for r in refuted)
    assert {r.status for r in local_loads(swizzled)} == {Status.PROVED}
    assert all(r.status == Status.PROVED for r in swizzled.results)
    assert session.refuted == refuted
    assert [k.instructions.split(" (")[0] for k in session.kernels] == ["the PTX"] * 2
    printed = report.getvalue()
    line = f"{refuted[0].file}:{LOAD_LINE}: REFUTED  conflict_free local_load %columns: ld.shared"
    assert line in printed and f"(and {len(refuted) - 1} more instructions" in printed
    assert printed.count("REFUTED") == 1 and "PROVED" not in printed


def test_verbose_prints_every_check_at_its_line(fresh_caches):
    report = io.StringIO()
    with checking(cache_dir="", report=report, verbose=True):
        run_program()
    loads = [line for line in report.getvalue().splitlines() if "conflict_free local_load" in line]
    shown = [line.split(": ", 3)[1:3] for line in loads]
    at = f"{os.path.relpath(PROGRAM)}:{LOAD_LINE}"
    half = len(shown) // 2  # each ld.shared of each kernel, the plain one first
    assert (
        shown
        == [[at, "REFUTED  conflict_free local_load %columns"]] * half
        + [[at, "PROVED   conflict_free local_load %columns"]] * half
    )


def test_a_second_session_answers_from_verify_s_cache(fresh_caches):
    cache = str(fresh_caches / "verify")
    with checking(cache_dir=cache, report=None) as first:
        run_program()
    with checking(cache_dir=cache, report=None) as second:
        run_program()
    assert [k.cached for k in first.kernels] == [False, False]
    assert [k.cached for k in second.kernels] == [True, True]
    # the reading child's CPU counts as verify's where it read, and not from the cache
    assert all(k.reader_cpu_seconds > 0 for k in first.kernels)
    assert [k.reader_cpu_seconds for k in second.kernels] == [0.0, 0.0]
    assert [(r.file, r.line, r.property, r.status) for r in second.results] == [
        (r.file, r.line, r.property, r.status) for r in first.results
    ]
    assert local_load(second.kernels[0]).counterexample.summary == (
        local_load(first.kernels[0]).counterexample.summary
    )
    assert knobs.compilation.listener is None


def test_targets_check_each_kernel_as_compiled_for_them(fresh_caches):
    with checking(cache_dir="", report=None, targets=(80,)) as session:
        run_program(["0", "90"])
    programs, retargeted = session.kernels[0::2], session.kernels[1::2]
    assert [k.target for k in programs] == ["sm_90", "sm_90"]
    assert [k.target for k in retargeted] == ["sm_80", "sm_80"]
    assert [k.checked_as for k in programs] == [[k.hash] for k in retargeted]
    assert all(not k.results for k in programs)
    assert {(r.line, r.status) for r in session.refuted} == {(LOAD_LINE, Status.REFUTED)}
    assert "2 kernels compiled for another target, checked as compiled for sm_80" in (
        session.summary()
    )


def test_a_kernel_whose_ptx_is_gone_is_decided_by_ttgir_s_rules_and_says_why(fresh_caches):
    def remove_ptx(**kwargs):  # runs before ours: Triton's group lists no PTX
        group = kwargs["metadata_group"]
        for name in [n for n in group if n.endswith(".ptx")]:
            del group[name]

    knobs.compilation.listener = remove_ptx
    report = io.StringIO()
    try:
        with checking(cache_dir="", report=report) as session:
            run_program()
    finally:
        knobs.compilation.listener = None
    plain, swizzled = session.kernels
    assert plain.instructions.startswith("TTGIR's lowering rules: the PTX cannot be read")
    (refuted,) = session.refuted  # one check per op, as TTGIR's rules write them
    assert (refuted.line, refuted.property) == (LOAD_LINE, "conflict_free local_load %columns")
    assert refuted.facts["instructions"] == "ttgir"
    assert refuted.facts["instructions_why"] == plain.instructions
    assert {r.status for r in local_loads(swizzled)} == {Status.PROVED}
    assert f"kernel transpose ({plain.source}): TTGIR's lowering rules" in report.getvalue()


def test_a_kernel_the_reader_dies_on_is_a_located_error_and_the_program_goes_on(
    fresh_caches, monkeypatch
):
    from verify.integrations.extract_worker import ExtractWorker

    dying = (
        sys.executable,
        "-c",
        "import sys; print('abort: no layout', file=sys.stderr); sys.exit(6)",
    )
    monkeypatch.setattr(ExtractWorker, "command", dying)
    report = io.StringIO()
    with checking(cache_dir=str(fresh_caches / "verify"), report=report) as session:
        assert run_program(["5"]) == 5
    assert [k.results for k in session.kernels] == [[], []]
    assert [e.message.split(" (")[0] for e in session.errors] == [
        "Triton's MLIR bindings stopped on this kernel"
    ] * 2
    assert all(e.file.endswith("transpose.ttgir") for e in session.errors)
    assert "stopped on this kernel (exit status 6)" in report.getvalue()
    assert "2 kernels checked" in session.summary() and "2 spec errors" in session.summary()
    with checking(cache_dir=str(fresh_caches / "verify"), report=None) as again:
        run_program()
    assert [k.cached for k in again.kernels] == [False, False]  # an error is not kept


def verify_run(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "verify.cli", "run", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def test_verify_run_keeps_the_programs_stdout_and_exit_status(fresh_caches):
    alone = subprocess.run(
        [sys.executable, PROGRAM, "3"], capture_output=True, text=True, timeout=300
    )
    report = fresh_caches / "report.json"
    run = verify_run("--json", str(report), "--", "python", PROGRAM, "3", cwd=fresh_caches)
    assert (alone.returncode, run.returncode) == (3, 3)
    assert run.stdout == alone.stdout
    assert f"two_transposes.py:{LOAD_LINE}: REFUTED  conflict_free local_load" in run.stderr
    assert "2 kernels checked (0 from verify's cache" in run.stderr
    doc = json.loads(report.read_text())
    refuted = doc["summary"]["refuted"]
    assert refuted > 1  # each ld.shared of the column read
    assert [k["refuted"] for k in doc["kernels"]] == [refuted, 0]
    assert [k["from_cache"] for k in doc["kernels"]] == [False, False]

    strict = verify_run("--strict", "--format", "github", "--", PROGRAM, cwd=fresh_caches)
    assert strict.returncode == 1
    assert "2 kernels checked (2 from verify's cache" in strict.stderr
    assert "::error file=" in strict.stderr and f"line={LOAD_LINE}" in strict.stderr


def test_verify_run_refuses_a_missing_program_and_a_bad_target(tmp_path):
    run = verify_run("--", "python", str(tmp_path / "absent.py"), cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr.startswith("<args>: error: cannot run") and "Traceback" not in run.stderr
    run = verify_run("--target", "volta", "--", PROGRAM, cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr.startswith("<args>: error: target 'volta': expected sm_NN")


TEST_FILE = f"""import runpy, sys


def run(argv):
    sys.argv = [{PROGRAM!r}, *argv]
    try:
        runpy.run_path({PROGRAM!r}, run_name="__main__")
    except SystemExit:
        pass


def test_compiles_the_transposes():
    run([])


def test_compiles_nothing():
    pass
"""


def test_pytest_option_fails_the_test_that_compiled_a_refuted_kernel(pytester, fresh_caches):
    pytester.makepyfile(test_user=TEST_FILE)
    result = pytester.runpytest_subprocess("--verify-triton", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            f"*two_transposes.py:{LOAD_LINE}: REFUTED conflict_free local_load %columns: "
            f"ld.shared.b32 * in Triton kernel transpose (sm_80, *two_transposes.py:{DEF_LINE})",
            "*counterexample: ld.shared.b32: lanes 0-31 hit bank 0*32-way",
            "*and * more instructions of this op alike",
            "*2 kernels checked*",
        ]
    )
    inert = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    inert.assert_outcomes(passed=2)
    assert "kernels checked" not in inert.stdout.str()


def test_the_worked_example_of_docs_run_md_runs(fresh_caches, tmp_path_factory, monkeypatch):
    """docs/run.md's sessions and Python block, run as tests/house/test_docs.py runs
    the guide's examples (each session's printed lines matched)."""
    import test_docs

    doc = "docs/run.md"
    folder = test_docs._scratch(doc, tmp_path_factory)
    ran = 0
    for block in test_docs.blocks(doc, (test_docs.ROOT / doc).read_text()):
        if "file" in block.attrs:
            continue
        if block.lang == "python":
            test_docs._check_python(block, folder, monkeypatch)
            ran += 1
        elif any(line.startswith("$ ") for line in block.lines):
            test_docs._check_session(block, folder)
            ran += 1
    assert ran == 3
