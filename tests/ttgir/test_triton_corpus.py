"""A sample of Triton's own lit corpus, as benchmarks/campaigns/triton_corpus.py
checks it (issue 26, item 5): modules written for verify after Triton's lit
modules (tests/data/triton_corpus/, each naming the upstream module it reduces),
one per op kind and per case that once crashed or was refused whole: no
internal error, every refusal located, and each module's ops split between
decided and not modelled as pinned here. Read with Triton's own parser (one
reading child for all), checked by TTGIR's rules (no lowering, no network)."""

from __future__ import annotations

import shutil
from pathlib import Path

import conftest
import pytest

from benchmarks.campaigns import triton_corpus as corpus

DATA = Path(conftest.DATA) / "triton_corpus"

# module -> (outcome, target and where it came from, {op kind: (proved, refuted,
# not modelled)}): ops counted once each, as the benchmark's table counts them.
EXPECTED = {
    "amd_target.mlir": ("not NVIDIA", None, {}),
    "barrier_argument_only.mlir": ("nothing to check", None, {}),
    "cga_layout_split.mlir": (
        "checked",
        "cuda:90 (module)",
        {"local_alloc": (0, 0, 1), "local_load": (0, 0, 1)},
    ),
    "cga_layout_whole.mlir": (
        "checked",
        "cuda:90 (module)",
        {"local_alloc": (1, 0, 0), "local_load": (1, 0, 0)},
    ),
    "convert_scratch.mlir": (
        "checked",
        "cuda:90 (default)",
        {
            "async_copy_global_to_local": (0, 0, 0),
            "convert_layout": (0, 0, 1),
            "local_alloc": (1, 0, 0),
        },
    ),
    "copy_from_argument.mlir": (
        "checked",
        "cuda:90 (module)",
        {"async_copy_global_to_local": (0, 0, 1), "local_alloc": (1, 0, 0)},
    ),
    "copy_traced.mlir": (
        "checked",
        "cuda:80 (module)",
        {"async_copy_global_to_local": (0, 1, 0), "local_alloc": (1, 0, 0)},
    ),
    "mbarrier.mlir": ("checked", "cuda:90 (module)", {"local_alloc": (1, 0, 1)}),
    "mma_v3_store.mlir": (
        "checked",
        "cuda:90 (inferred)",
        {"local_alloc": (1, 0, 0), "local_store": (1, 0, 0)},
    ),
    "no_target_mma_v2.mlir": (
        "checked",
        "cuda:80 (inferred)",
        {"local_alloc": (1, 0, 0), "local_load": (1, 0, 0)},
    ),
    "nvmma_other_width.mlir": ("checked", "cuda:90 (module)", {"local_alloc": (0, 1, 0)}),
    "padded_shared.mlir": ("checked", "cuda:90 (module)", {"local_alloc": (1, 0, 1)}),
    "plain_transpose.mlir": (
        "checked",
        "cuda:80 (module)",
        {"local_alloc": (1, 0, 0), "local_load": (0, 1, 0)},
    ),
    "run_line_target.mlir": (
        "checked",
        "cuda:90 (RUN line)",
        {"local_alloc": (1, 0, 0), "local_load": (1, 0, 0)},
    ),
    "shared_linear_rank3.mlir": ("checked", "cuda:90 (module)", {"local_alloc": (0, 0, 1)}),
    "staged_index.mlir": (
        "checked",
        "cuda:80 (module)",
        {"local_alloc": (1, 0, 0), "local_load": (1, 0, 0), "local_store": (1, 0, 0)},
    ),
    "tensor_memory.mlir": (
        "checked",
        "cuda:100 (inferred)",
        {"tmem_load": (0, 0, 1), "tmem_store": (0, 0, 1)},
    ),
    "triton_rejects.mlir": ("triton refused", None, {}),
    "two_modules.mlir": ("checked", "cuda:80 (RUN line)", {"local_alloc": (2, 0, 0)}),
    "wgmma_convert_reduce.mlir": (
        "checked",
        "cuda:90 (module)",
        {
            "convert_layout": (0, 0, 1),
            "local_alloc": (2, 0, 0),
            "reduce": (0, 0, 1),
            "warp_group_dot": (0, 0, 1),
        },
    ),
}


def item(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    return {
        "kind": "lit",
        "id": path.name,
        "file": str(path),
        "run_target": corpus.target_of_run_lines(text),
        "ptx": False,
    }


@pytest.fixture(scope="module")
def answers() -> dict[str, dict]:
    pytest.importorskip("triton._C.libtriton")
    return {p.name: corpus.check_item(item(p), 20.0) for p in sorted(DATA.glob("*.mlir"))}


def split(answer: dict) -> dict[str, tuple[int, int, int]]:
    table = corpus.per_op([({"id": "m"}, answer)])
    return {
        kind: (c["ops proved"], c["ops refuted"], c["ops not modelled"])
        for kind, c in sorted(table.items())
    }


def test_every_sample_module_is_pinned():
    assert sorted(EXPECTED) == sorted(p.name for p in DATA.glob("*.mlir"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_module_gets_its_outcome_and_split(answers, name):
    outcome, target, ops = EXPECTED[name]
    answer = answers[name]
    assert answer["outcome"] == outcome, answer.get("error")
    assert answer.get("target") == target
    assert split(answer) == ops


def test_no_internal_error_and_every_refusal_located(answers):
    for name, answer in answers.items():
        assert answer["outcome"] not in ("traceback", "abort", "hang", "unlocated"), name
        if answer["outcome"] != "checked":
            assert answer["error"].startswith(f"{DATA / name}:"), answer["error"]


def test_triton_diagnostic_is_at_its_line(answers):
    error = answers["triton_rejects.mlir"]["error"]
    assert error.startswith(f"{DATA / 'triton_rejects.mlir'}:9:12: error: ")


def test_results_name_the_input_file(answers):
    """A module without Python locations: every result at the file given, not
    at the reading child's temporary copy."""
    for name, answer in answers.items():
        for r in answer.get("results", []):
            assert r["file"] == str(DATA / name), (name, r)


def test_a_file_named_module_is_read_as_a_file(tmp_path):
    pytest.importorskip("triton._C.libtriton")
    path = tmp_path / "module_store.mlir"
    shutil.copy(DATA / "mma_v3_store.mlir", path)
    answer = corpus.check_item(item(path), 20.0)
    assert answer["outcome"] == "checked"
    assert {r["file"] for r in answer["results"]} == {str(path)}


def test_op_kinds_are_read_from_every_property_form():
    assert corpus.op_kind("conflict_free local_load %y") == "local_load"
    assert corpus.op_kind("aligned 16 async_copy_global_to_local %t from global") == (
        "async_copy_global_to_local"
    )
    assert corpus.op_kind("not modelled: tmem_load %t") == "tmem_load"
    assert corpus.op_kind("aligned 16 convert_layout: ld.shared.v4.b32 [k.ptx:12]") == (
        "convert_layout"
    )
    assert corpus.is_not_modelled("not modelled: tmem_load %t")
    assert not corpus.is_not_modelled("conflict_free local_load %y")


def line_of(path: Path, op: str) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if op in line)


def test_a_store_without_a_printed_location_is_at_its_own_line(answers):
    """MLIR's location of an op parsed without one is its place in the file, not
    the stored value's (here a function argument, on the tt.func line)."""
    stores = [r for r in answers["mma_v3_store.mlir"]["results"] if "local_store" in r["property"]]
    assert stores and {r["line"] for r in stores} == {
        line_of(DATA / "mma_v3_store.mlir", "ttg.local_store")
    }


def test_lowered_module_results_name_the_input_and_attach_to_the_op():
    """Checked from the PTX Triton lowers the module to (as verify ttgir does):
    every result names the input file, not the lowering's temporary copy (nor
    the copy an earlier lowering cached), and each stmatrix is the store's."""
    pytest.importorskip("triton._C.libtriton")
    path = DATA / "mma_v3_store.mlir"
    answer = corpus.check_item({**item(path), "ptx": True}, 20.0)
    assert answer["instructions"] == "ptx"
    assert {r["file"] for r in answer["results"]} == {str(path)}
    stmatrix = [r for r in answer["results"] if "stmatrix" in r["property"]]
    assert stmatrix and all(
        r["property"].startswith(("in_bounds", "aligned", "conflict_free")) for r in stmatrix
    )
    assert all("local_store %acc" in r["property"] for r in stmatrix)


# -- the unit-test kernels (benchmarks/campaigns/triton_corpus_unit.py) ----------------

UNIT_TEST = """
import pytest
import triton
import triton.language as tl


@triton.jit
def helper(x):
    return tl.sum(x, axis=0)


@triton.jit
def top_level(X, BLOCK: tl.constexpr):
    tl.store(X, helper(tl.load(X + tl.arange(0, BLOCK))))


@pytest.mark.parametrize("n, width", [(128, 4), (256, 8)])
def test_transpose(n, width):
    rows = n // 4

    @triton.jit
    def kernel(X, Y, ROWS: tl.constexpr, N: tl.constexpr):
        r = tl.arange(0, ROWS)[:, None]
        c = tl.arange(0, N)[None, :]
        x = tl.load(X + r * N + c)
        tl.store(Y + c * ROWS + r, tl.trans(tl.trans(x)) + width)

    kernel[(1,)](None, None, ROWS=rows, N=n, num_warps=4)
"""


def test_unit_kernels_are_the_uncalled_jit_functions_top_level_or_nested():
    from benchmarks.campaigns import triton_corpus_unit as unit

    names = [name for name, _ in unit.kernels_of(UNIT_TEST)]
    assert names == ["top_level", "test_transpose.kernel"]  # helper is called: not a kernel
    assert unit.spread(list("abcdefgh"), 3) == ["a", "c", "f"]
    assert unit.spread(list("ab"), 3) == ["a", "b"]


def test_a_nested_unit_kernel_compiles_with_its_tests_first_case_and_launch(tmp_path):
    """The test's first parametrize case (n=128, width=4) and its launch's keywords
    (ROWS=rows=32, N=n) give the kernel its constexprs, as the test runs it; the
    transposed store goes through shared memory (a convert_layout), checked."""
    pytest.importorskip("triton._C.libtriton")
    from benchmarks.campaigns import triton_corpus_unit as unit

    path = tmp_path / "test_sample.py"
    path.write_text(UNIT_TEST)
    fn, launch = unit.load_unit_kernel(str(path), "test_transpose.kernel")
    assert launch == {"ROWS": 32, "N": 128, "num_warps": 4}
    item = {
        "kind": "unit-kernel",
        "id": "sample",
        "file": str(path),
        "kernel": "test_transpose.kernel",
        "target": "sm_80",
    }
    answer = corpus.check_item(item, 20.0)
    assert answer["outcome"] == "checked", answer
    converts = [r for r in answer["results"] if "convert_layout" in r["property"]]
    assert converts and {r["status"] for r in converts} == {"PROVED"}


def test_target_table_counts_each_op_before_and_after_over_modules_checked_both_times():
    from benchmarks.campaigns.triton_corpus_target import table

    def result(prop, status):
        return {"property": prop, "status": status, "file": "m", "line": 3}

    before: list[tuple[dict, dict]] = [
        (
            {"id": "a"},
            {"outcome": "checked", "results": [result("not modelled: convert_layout", "UNKNOWN")]},
        ),
        ({"id": "b"}, {"outcome": "triton refused"}),
    ]
    after = [
        ({"id": "a"}, {"outcome": "checked", "results": [
            result("conflict_free convert_layout: ld.shared.b32 [m.ptx:9]", "REFUTED"),
        ]}),
        ({"id": "b"}, {"outcome": "checked", "results": [
            result("bijective local_alloc %x", "PROVED"),
        ]}),
    ]  # fmt: skip
    lines = table(before, after)
    assert lines[0] == "1 modules checked both times."
    assert "| convert_layout | 1 | 0 | 0 | 1 | 1 | 1 | 1 | 0 |" in lines
    assert not any(line.startswith("| local_alloc") for line in lines)  # b: refused before
