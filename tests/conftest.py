import hashlib
import json
import os
import shutil
import subprocess

import pytest

from verify.engines.options import WORK_ENV, RunOptions
from verify.integrations.triton_exit import hide_leak_report_at_exit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPECS = os.path.join(ROOT, "specs")
DATA = os.path.join(ROOT, "tests", "data")

# A test's solver budget counts z3 resource units, never seconds, so no verdict in
# the suite changes with the machine's load. 400 M units is about twice the most
# any catalog check spends (fwd_hdim128: 204 M, benchmarks/results/rlimit_catalog.md);
# enumeration counts no units and always runs to its end.
WORK = RunOptions.units(400_000_000)
# The same for every command a test runs, in process or as a subprocess (which
# inherits the environment): its default --timeout counts these units instead.
os.environ[WORK_ENV] = str(WORK.rlimit)


def pytest_configure(config):
    # Triton's bindings leak a few objects; nanobind's report of them at exit is noise.
    hide_leak_report_at_exit()


@pytest.fixture(autouse=True, scope="session")
def _each_ttgir_module_parsed_once(tmp_path_factory):
    """Reading a TTGIR module runs Triton's MLIR parser in a child process (about
    0.6 s of CPU); tests/ttgir alone read 44 modules 110 times. What the child
    finds is a function of the module's name and text, so the session parses each
    once: its JSON is kept in a folder all xdist workers of this run share (a
    worker that finds it read it, whichever parsed it). Every call still runs
    `require_triton` first (a test hides Triton), and a module the parser
    refuses is not kept (its error is raised each time)."""
    from verify.ttgir import module

    parse = module.read_module
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # this run's folder, above each worker's own
    folder = shared / "ttgir_modules_parsed"
    folder.mkdir(exist_ok=True)

    def parsed_once(path_or_text: str) -> tuple[str, dict]:
        module.require_triton()
        key = json.dumps(module.read_source(path_or_text))
        kept = folder / f"{hashlib.sha256(key.encode()).hexdigest()}.json"
        if not kept.exists():
            name, found = parse(path_or_text)
            partial = kept.with_suffix(f".{os.getpid()}")
            partial.write_text(json.dumps([key, name, found]))
            os.replace(partial, kept)  # another worker reads it whole or not at all
        stored_key, name, found = json.loads(kept.read_text())
        assert stored_key == key, kept
        return name, found  # a fresh dict each call: callers add its target

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "read_module", parsed_once)
        yield


def _has_gpu() -> bool:
    if shutil.which("nvidia-smi") is None:
        return False
    return subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0


def pytest_collection_modifyitems(config, items):
    if _has_gpu():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
