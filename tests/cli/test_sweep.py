"""verify sweep: templates and their mistakes, one question per canonical spec, the
on-disk cache, exit codes, and the same table from local processes and from a
Dask cluster the test starts."""

import glob
import json
import os
import re

import pytest
from click.testing import CliRunner
from conftest import ROOT, SPECS

from verify.cli import main
from verify.engines.runner import run_spec
from verify.errors import SpecError, SpecErrors
from verify.spec.parser import parse_file, parse_text
from verify.sweep import key, plan
from verify.sweep.cache import Cache, NoCache
from verify.sweep.engine import Engine
from verify.sweep.question import CheckRow, Outcome
from verify.sweep.template import Template, parse_param

TEMPLATE = os.path.join(ROOT, "templates", "operand_tile.spec")
BENCH_TEMPLATE = os.path.join(ROOT, "benchmarks", "speed", "sweep_template.spec")


def sweep(*args, cache_dir=None):
    """(exit code, stdout) of `verify sweep ...` in this process."""
    cache = ["--cache-dir", str(cache_dir)] if cache_dir else ["--no-cache"]
    result = CliRunner().invoke(main, ["sweep", *args, *cache])
    return result.exit_code, result.output


def table_part(output: str) -> str:
    """The table and the failing configurations: all but the summary's last line,
    which says where the questions were asked."""
    return output.rsplit("\n", 2)[0]


# -- templates -----------------------------------------------------------------------


def test_values_split_at_top_level_commas_so_a_layout_is_one_value():
    param = parse_param("L=Sw<3,3,3> o (8,64):(64,1), (8,64):(64,1)")
    assert param.values == ("Sw<3,3,3> o (8,64):(64,1)", "(8,64):(64,1)")


@pytest.mark.parametrize(
    "text, message",
    [
        ("BLOCK_M", "expected NAME=V1,V2,..."),
        ("1X=1", "expected NAME=V1,V2,..."),
        ("X=1,,2", "expected a value between every two commas"),
        ("X=1,1", "value '1' is given twice"),
    ],
)
def test_a_malformed_param_is_an_args_error(text, message):
    with pytest.raises(SpecError, match=message) as found:
        parse_param(text)
    assert found.value.header.startswith("<args>: error: --param")


def test_an_unknown_parameter_is_reported_at_its_place_in_the_template():
    template = Template(
        "t.spec",
        "dtype f16\nlayout A = (${BLOKC_M},64):(64,1)\n"
        "# ${BLOKC_M} rows: reported once, at its first place\n",
    )
    with pytest.raises(SpecErrors) as found:
        template.check([parse_param("BLOCK_M=64,128")])
    unknown, unused = found.value.errors
    assert str(unknown) == (
        "t.spec:2:13: error: unknown parameter '${BLOKC_M}': expected one given by --param "
        "(BLOCK_M); did you mean 'BLOCK_M'?\n"
        " 2 | layout A = (${BLOKC_M},64):(64,1)\n"
        "   |             ^"
    )
    assert unused.header == "<args>: error: --param BLOCK_M: t.spec never uses ${BLOCK_M}"


def test_a_malformed_placeholder_and_a_stray_dollar_are_located():
    template = Template("t.spec", "dtype ${1x}\nlayout A = ($X,64):(64,1)\n")
    with pytest.raises(SpecErrors) as found:
        template.check([])
    headers = [e.header for e in found.value.errors]
    assert headers == [
        "t.spec:2:13: error: expected ${NAME}, found '$' without '{'",
        "t.spec:1:7: error: expected ${NAME} with NAME a letter or '_' followed "
        "by letters, digits or '_', found '${1x}'",
    ]


def test_a_parameter_given_twice_is_refused():
    with pytest.raises(SpecErrors, match="--param X is given twice"):
        Template("t.spec", "dtype ${X}\n").check([parse_param("X=f16"), parse_param("X=bf16")])


def test_template_mistakes_exit_2_before_anything_runs():
    code, out = sweep(TEMPLATE, "--param", "BLOCK_M=64", "--param", "dtype=f16")
    assert code == 2
    assert "unknown parameter '${SW}'" in out


# -- questions and their keys ----------------------------------------------------------


def test_every_spec_of_the_repository_has_a_canonical_key():
    for path in glob.glob(os.path.join(SPECS, "**", "*.spec"), recursive=True):
        try:
            spec = parse_file(path)
        except SpecError:
            continue  # the traps: specs that must be refused
        assert len(key.question_key(spec)) == 64


def test_spellings_of_one_question_share_its_key():
    a = parse_text(
        "dtype half\nlayout A = (_8,_64):(_64,_1)   # plain\n\n"
        "access rd = ldmatrix.x1 A(lane, 8*q) for q in 0..8\ncheck conflict_free rd\n",
        "a.spec",
    )
    b = parse_text(
        "dtype f16\nlayout A = (8,64):(64,1)\n"
        "access rd = ldmatrix.x1 A(lane,8 * q) for q in 0..8\ncheck conflict_free rd\n",
        "b.spec",
    )
    c = parse_text(
        "dtype f16\nlayout A = (8,64):(64,1)\n"
        "access rd = ldmatrix.x1 A(lane, 8*q) for q in 0..4\ncheck conflict_free rd\n",
        "c.spec",
    )
    assert key.question_key(a) == key.question_key(b) != key.question_key(c)


def test_combinations_asking_one_question_are_answered_once():
    with open(TEMPLATE) as f:
        template = Template(TEMPLATE, f.read())
    params = [parse_param(p) for p in ("BLOCK_M=64,128", "dtype=f16,half", "SW=2,3")]
    planned = plan(template, params, NoCache())
    assert len(planned.rows) == 8 and planned.distinct == 4
    done = planned.ask(Engine(1), NoCache())
    by_dtype: dict[tuple[str, str], list[Outcome]] = {}
    for row in done.rows:
        by_dtype.setdefault((row.values["BLOCK_M"], row.values["SW"]), []).append(done.outcome(row))
    assert all(f16 == half for f16, half in by_dtype.values())


# -- the cache ---------------------------------------------------------------------------

ARGS = (
    TEMPLATE,
    "--param",
    "BLOCK_M=64,128",
    "--param",
    "dtype=f16",
    "--param",
    "SW=0,3",
    "-j",
    "1",
)


def test_a_second_sweep_is_answered_from_the_cache_with_the_same_table(tmp_path):
    first_code, first = sweep(*ARGS, cache_dir=tmp_path)
    second_code, second = sweep(*ARGS, cache_dir=tmp_path)
    assert first_code == second_code == 1
    assert table_part(first) == table_part(second)
    assert "(0 from the cache, 4 checked)" in first
    assert "(4 from the cache, 0 checked)" in second


def test_changed_code_does_not_read_older_answers(tmp_path, monkeypatch):
    sweep(*ARGS, cache_dir=tmp_path)
    key.code_fingerprint.cache_clear()
    monkeypatch.setattr(key, "code_fingerprint", lambda: "another version of verify")
    assert "(0 from the cache, 4 checked)" in sweep(*ARGS, cache_dir=tmp_path)[1]


def test_no_cache_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("VERIFY_CACHE_DIR", str(tmp_path))
    sweep(*ARGS)
    assert os.listdir(tmp_path) == []


def test_unknown_verdicts_and_crashes_are_not_cached(tmp_path):
    cache = Cache(str(tmp_path))
    unknown = Outcome((CheckRow(3, "conflict_free rd", "unknown"),))
    cache.put("k1", unknown)
    cache.put("k2", Outcome(internal="IndexError: boom"))
    proved = Outcome((CheckRow(3, "conflict_free rd", "proved", max_ways=1, wavefronts=4),))
    cache.put("k3", proved)
    assert cache.get("k1") is None and cache.get("k2") is None
    assert cache.get("k3") == proved


# -- the table and the exit code -----------------------------------------------------------


def test_the_table_has_a_row_per_combination_and_the_failures_are_listed():
    code, out = sweep(*ARGS)
    lines = out.splitlines()
    assert code == 1
    assert lines[0].split() == [
        "BLOCK_M",
        "dtype",
        "SW",
        "verdict",
        "failing",
        "rd",
        "ways/wf",
        "wr",
        "ways/wf",
    ]
    assert lines[2].split() == ["64", "f16", "0", "REFUTED", "1", "8/32", "1/4"]
    assert lines[3].split() == ["64", "f16", "3", "PROVED", "0", "1/4", "1/4"]
    assert "failing configurations:" in out
    assert "BLOCK_M=64, dtype=f16, SW=0:\n  " + TEMPLATE + ":15: REFUTED conflict_free rd" in out
    assert "BLOCK_M=64, dtype=f16, SW=3:" not in out
    assert out.rstrip().endswith("2 pass, 2 fail; asked on this process")


def test_json_has_a_configuration_per_combination_with_its_checks_and_cache_flag(tmp_path):
    first_code, first = sweep(*ARGS, "--json", cache_dir=tmp_path)
    second_code, second = sweep(*ARGS, "--format", "json", cache_dir=tmp_path)
    assert first_code == second_code == 1
    doc, again = json.loads(first), json.loads(second)
    assert doc["schema_version"] == 1 and doc["parameters"] == ["BLOCK_M", "dtype", "SW"]
    configs = doc["configurations"]
    assert [c["parameters"] for c in configs][:2] == [
        {"BLOCK_M": "64", "dtype": "f16", "SW": "0"},
        {"BLOCK_M": "64", "dtype": "f16", "SW": "3"},
    ]
    assert [c["verdict"] for c in configs] == ["refuted", "proved", "refuted", "proved"]
    rd = next(c for c in configs[0]["checks"] if c["check"] == "conflict_free rd")
    assert (rd["status"], rd["ok"], rd["max_ways"], rd["wavefronts"]) == ("refuted", False, 8, 32)
    assert "8-way" in rd["why"]
    assert not any(c["cached"] for c in configs) and all(
        c["cached"] for c in again["configurations"]
    )
    assert doc["summary"] == {
        "configurations": 4,
        "distinct_questions": 4,
        "from_cache": 0,
        "checked": 4,
        "pass": 2,
        "fail": 2,
        "verdicts": {"internal error": 0, "error": 0, "refuted": 2, "unknown": 0, "proved": 2},
    }
    assert (again["summary"]["from_cache"], again["summary"]["checked"]) == (4, 0)
    code, out = sweep(*ARGS, "--json", "--format", "text")
    assert code == 2 and "--json asks for --format json" in out


def test_all_proved_exits_0():
    code, out = sweep(
        TEMPLATE,
        "--param",
        "BLOCK_M=64,128",
        "--param",
        "dtype=f16,bf16",
        "--param",
        "SW=3",
        "-j",
        "1",
    )
    assert code == 0 and "failing configurations" not in out


def test_a_combination_that_is_not_a_valid_spec_is_an_error_row_and_exits_2():
    code, out = sweep(
        TEMPLATE, "--param", "BLOCK_M=64", "--param", "dtype=f16,f17", "--param", "SW=3", "-j", "1"
    )
    assert code == 2
    assert out.splitlines()[3].split() == ["64", "f17", "3", "ERROR", "1", "-", "-"]
    assert f"BLOCK_M=64, dtype=f17, SW=3:\n  {TEMPLATE}:6:7: error: unknown dtype 'f17'" in out
    assert "   6 | dtype f17\n" in out


# -- engines ---------------------------------------------------------------------------------

BENCH_ARGS = (
    BENCH_TEMPLATE,
    "--param",
    "ROWS=16,48,160",
    "--param",
    "PITCH=64,72,80",
    "--param",
    "SW=0,2,3",
    "--param",
    "READ=ldmatrix.x2,ldmatrix.x4.trans",
)


@pytest.fixture(scope="module")
def dask_cluster():
    """A local Dask cluster of two single-threaded worker processes, as a user would
    start one (`dask scheduler`, `dask worker --nthreads 1`)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster:
        yield cluster.scheduler_address


def test_local_processes_and_a_dask_cluster_give_the_same_table(dask_cluster):
    in_process = sweep(*BENCH_ARGS, "-j", "1")
    local = sweep(*BENCH_ARGS, "-j", "2")
    cluster = sweep(*BENCH_ARGS, "--dask", dask_cluster)
    assert in_process[0] == local[0] == cluster[0] == 1
    assert table_part(in_process[1]) == table_part(local[1]) == table_part(cluster[1])
    table = table_part(local[1]).split("failing configurations:")[0]
    assert len(table.strip().splitlines()) == 2 + 54
    assert cluster[1].rstrip().endswith(f"asked on dask cluster at {dask_cluster}")


def _slow_square(x):
    import time

    time.sleep(x)
    return x * x


def test_a_stopped_run_knows_what_it_handed_out_and_did_not_get_back():
    with Engine(2).run(_slow_square, [0.0, 0.0, 30.0, 30.0, 30.0], one_per_worker=True) as run:
        finished = [next(run), next(run)]
    assert sorted(finished) == [(0.0, 0.0), (0.0, 0.0)]
    assert run.unfinished()[: run.workers] == [30.0, 30.0]


# -- Triton kernel configurations ---------------------------------------------------------

GLUON = os.path.join(ROOT, "specs", "triton_kernels", "gluon_transpose.py")
F32 = ("--signature", "x_ptr:*fp32,y_ptr:*fp32", "-j", "1")


def test_kernel_configurations_with_one_ttgir_are_one_question_and_cached(tmp_path):
    pytest.importorskip("triton")
    args = [GLUON + ":transpose_swizzled", "--target", "sm_90", *F32, "--param", "num_stages=2,3"]
    args = ["--triton", *args, "--json"]
    first_code, first = sweep(*args, cache_dir=tmp_path)
    second_code, second = sweep(*args, cache_dir=tmp_path)
    assert first_code == second_code == 0
    doc, again = json.loads(first), json.loads(second)
    assert [c["parameters"] for c in doc["configurations"]] == [
        {"num_stages": "2"},
        {"num_stages": "3"},
    ]
    assert [c["verdict"] for c in doc["configurations"]] == ["proved", "proved"]
    assert (doc["summary"]["distinct_questions"], doc["summary"]["checked"]) == (1, 1)
    assert (again["summary"]["from_cache"], again["summary"]["checked"]) == (1, 0)
    assert all(c["cached"] for c in again["configurations"])


def test_a_kernel_sweep_lists_refuted_and_uncompilable_configurations():
    pytest.importorskip("triton")
    code, out = sweep(
        "--triton",
        GLUON + ":transpose_plain",
        "--target",
        "sm_80",
        *F32,
        "--param",
        "num_warps=4,8",
    )
    assert code == 2  # a configuration Triton cannot compile is an error row
    lines = out.splitlines()
    assert lines[2].split() == ["4", "REFUTED", "1", "1/1", "32/32"]
    assert lines[3].split()[:3] == ["8", "ERROR", "1"]
    assert "gluon_transpose.py:32: REFUTED conflict_free local_load %column_major" in out
    assert "lanes 0-31 hit bank 0 with 32 distinct words: 32-way" in out
    assert "error: compiling transpose_plain for sm_80 failed" in out


PHASE = os.path.join(ROOT, "tests", "data", "kernels", "gluon_phase.py") + ":column_reads"


def test_a_define_reaches_every_configuration_and_the_cache_tells_its_values_apart(tmp_path):
    pytest.importorskip("triton")

    def swept(rows: str) -> dict:
        args = ["--triton", PHASE, "-D", f"ROWS={rows}", *F32, "--param", "MAX_PHASE=1,32"]
        code, out = sweep(*args, "--json", cache_dir=tmp_path)
        assert code == 1  # MAX_PHASE=1 reads columns 32-way
        return json.loads(out)

    first, other, again = swept("32"), swept("64"), swept("32")
    for doc in (first, other):
        assert [(c["parameters"], c["verdict"]) for c in doc["configurations"]] == [
            ({"MAX_PHASE": "1"}, "refuted"),
            ({"MAX_PHASE": "32"}, "proved"),
        ]
    # ROWS=64 compiles to other TTGIR (other tensor shapes): none of ROWS=32's
    # answers is reused, and ROWS=32 again is answered wholly from the cache.
    assert (first["summary"]["checked"], first["summary"]["from_cache"]) == (2, 0)
    assert (other["summary"]["checked"], other["summary"]["from_cache"]) == (2, 0)
    assert (again["summary"]["checked"], again["summary"]["from_cache"]) == (0, 2)


def test_a_define_and_a_param_naming_one_constexpr_is_refused():
    pytest.importorskip("triton")
    code, out = sweep("--triton", PHASE, "-D", "ROWS=32", *F32, "--param", "ROWS=32,64")
    assert code == 2 and "ROWS" in out


def test_a_kernel_sweep_decides_its_checks_by_the_engine_asked_for(tmp_path, monkeypatch):
    pytest.importorskip("triton")
    from verify.ttgir import module

    engines = []

    def recording(spec, options):
        engines.append(options.engine)
        return run_spec(spec, options)

    monkeypatch.setattr(module, "run_spec", recording)
    args = ["--triton", PHASE, "-D", "ROWS=32", *F32, "--param", "MAX_PHASE=1,32"]
    by_z3 = sweep(*args, "--engine", "z3", cache_dir=tmp_path)
    assert set(engines) == {"z3"}
    engines.clear()
    by_auto = sweep(*args, cache_dir=tmp_path)  # the cache keeps engines apart
    assert set(engines) == {"auto"}
    assert table_part(by_z3[1]) == table_part(by_auto[1]) and by_z3[0] == by_auto[0] == 1


def test_verify_triton_takes_the_engine_too():
    pytest.importorskip("triton")
    args = [PHASE, "-D", "ROWS=32", "-D", "MAX_PHASE=32", *F32[:2], "--engine", "z3"]
    result = CliRunner().invoke(main, ["triton", *args])
    assert result.exit_code == 0, result.output
    summary = re.search(r"^(\d+) checks", result.output, re.M)
    assert summary, result.output
    checks = int(summary.group(1))
    assert checks > 7 and result.output.count("by z3]") == checks  # one per PTX instruction


@pytest.mark.parametrize(
    "args, message",
    [
        (("--param", "BLOCK=32"), "transpose_plain has no such parameter"),
        (("--param", "num_warps=4,x"), "--param num_warps: expected positive integers"),
        (("--param", "num_warps=4", TEMPLATE), "expected a TEMPLATE.spec or --triton"),
        (("--param", "num_warps=4", "--target", "gfx90"), "target 'gfx90'"),
    ],
)
def test_kernel_sweep_argument_mistakes_exit_2_before_compiling(args, message):
    pytest.importorskip("triton")
    result = CliRunner().invoke(
        main, ["sweep", "--triton", GLUON + ":transpose_plain", *args, "--no-cache"]
    )
    assert result.exit_code == 2 and message in result.output
