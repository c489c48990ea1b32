"""verify SPECS... shows each spec's results as soon as it is checked (file order,
with -j too), a progress line only on a terminal, and no Triton leak report."""

import io
import os
import re
import subprocess
import sys

from conftest import ROOT, SPECS

from verify.engines import stream

SEED = [
    os.path.join(SPECS, "seed", name)
    for name in (
        "ldmatrix_x1_8x64_plain.spec",
        "ldmatrix_x1_8x64_swizzled.spec",
        "f32_32x32_column.spec",
    )
]


def test_each_file_is_handed_back_before_the_next_is_checked(monkeypatch):
    checked = []

    def check_one(path, *_):
        checked.append(path)
        return [], []

    monkeypatch.setattr(stream, "check_one", check_one)
    files = iter(stream.outcomes(SEED, 60.0, 1, "auto"))
    assert next(files)[0] == SEED[0] and checked == SEED[:1]
    assert next(files)[0] == SEED[1] and checked == SEED[:2]


def test_parallel_results_come_back_in_file_order():
    paths = [path for path, _, _ in stream.outcomes(SEED[::-1] + SEED, 60.0, 2, "auto")]
    assert paths == SEED[::-1] + SEED


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_is_drawn_and_cleared_on_a_terminal_only():
    tty, log = Terminal(), io.StringIO()
    for out in (tty, log):
        progress = stream.Progress(3, out)
        progress.show(1, "b.spec")
        progress.clear()
    assert tty.getvalue() == "\r\x1b[K[1/3] b.spec\r\x1b[K"
    assert log.getvalue() == ""


def untimed(text: str) -> str:
    return re.sub(r"\[\d+ ms", "[ms", text)


def run_cli(*args):
    env = {**os.environ, "PYTHONPATH": ROOT}
    return subprocess.run(
        [sys.executable, "-m", "verify.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )


def test_streamed_output_is_the_whole_report_in_file_order_without_progress_in_a_pipe():
    one = run_cli(*SEED)
    two = run_cli("-j", "2", *SEED)
    assert untimed(one.stdout) == untimed(two.stdout)
    # The CLI checks files in path order (api.spec_paths), the order they print in.
    files = [line.split(":")[0] for line in one.stdout.splitlines() if ".spec:" in line]
    assert list(dict.fromkeys(files)) == sorted(SEED)
    assert one.stdout.splitlines()[-1].startswith("17 checks:")
    assert "\r" not in one.stderr


def test_no_nanobind_leak_report_after_triton_was_used():
    done = run_cli(os.path.join(SPECS, "examples", "triton_blocked_store.spec"))
    # Its one refutation is expected (`expect refuted`), so the run passes.
    assert "nanobind" not in done.stderr and done.returncode == 0
