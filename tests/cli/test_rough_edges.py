"""What a new user and an adversary hit (issue 27): inputs that crashed verify
(exit 4) or were refused where they are valid. Each must end as the house rules
say: a located ``file:line:col: error: ...`` and exit 2, an INFEASIBLE answer
naming what cannot be met, or a result."""

import json
import os
import re
from pathlib import Path

import conftest
import pycute
import pytest
from click.testing import CliRunner
from conftest import SPECS

import verify
from verify.cli import main
from verify.engines import solver
from verify.model import shared_memory
from verify.model.program import Program
from verify.report import sarif
from verify.report.text import result_text, summary_line
from verify.results import CheckResult
from verify.smt.solve import Status
from verify.spec.parser import parse_text

SEED_SYNTH = """dtype f16
buffer align 128
layout A = ?(8, 64)
access rd = ldmatrix.sync.aligned.m8n8.x1.shared.b16 A(lane, 8 * q) for q in 0..8
check bijective A
check conflict_free rd
"""
PLAIN = os.path.join(SPECS, "seed", "ldmatrix_x1_8x64_plain.spec")


def run(*args):
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def synth(tmp_path, text, *args):
    path = tmp_path / "t.synth"
    path.write_text(text)
    return run("synth", str(path), *args)


# -- verify synth ----------------------------------------------------------------


def test_synth_on_overlapping_stages_is_infeasible_naming_the_stages(tmp_path):
    text = SEED_SYNTH.replace("align 128", "align 128 stages 2 stage_bytes 100")
    code, out = synth(tmp_path, text)
    assert code == 1, out
    assert "INFEASIBLE" in out and "stages of 100 bytes (line 2)" in out
    assert "the tile takes 1024 bytes" in out


@pytest.mark.parametrize("family", ["pad", "pad+sw"])
def test_synth_padded_families_keep_each_stage_inside_its_slot(tmp_path, family):
    # 1024 bytes a stage: the unpadded tile fits exactly, no padded one does.
    text = SEED_SYNTH.replace("align 128", "align 128 stages 2 stage_bytes 1024")
    code, out = synth(tmp_path, text, "--family", family, "--json")
    doc = json.loads(out)
    if doc["layout"] is None:
        assert code == 1 and any("stages of 1024 bytes" in c for c in doc["infeasible"])
    else:
        assert code == 0 and doc["footprint"] <= 512, out


def test_synth_stage_pitch_that_misaligns_an_access_is_infeasible(tmp_path):
    text = SEED_SYNTH.replace("align 128", "align 128 stages 2 stage_bytes 1100")
    code, out = synth(tmp_path, text, "--family", "all")
    assert code == 1, out
    assert "aligned 16 rd (stage 1 starts 1100 bytes in, line 2)" in out


def test_synth_buffer_aligned_below_the_access_width_is_infeasible(tmp_path):
    code, out = synth(tmp_path, SEED_SYNTH.replace("align 128", "align 4"))
    assert code == 1 and "aligned 16 rd (the buffer is aligned to 4 only)" in out, out


@pytest.mark.parametrize(
    "check, named",
    [
        ("max_ways <= 0 rd", "'max_ways <= 0 rd' (line 6) (max_ways of rd is at least 1)"),
        ("wavefronts <= 0 rd", "'wavefronts <= 0 rd' (line 6) (wavefronts of rd is at least 1)"),
    ],
)
def test_synth_bound_below_the_least_figure_is_infeasible_and_named(tmp_path, check, named):
    text = SEED_SYNTH.replace("check conflict_free rd", f"check {check}")
    code, out = synth(tmp_path, text)
    assert code == 1 and named in out, out


def test_synth_refuses_cp_async_at_the_users_own_line(tmp_path):
    text = SEED_SYNTH.replace(
        "layout A = ?(8, 64)\n",
        "layout A = ?(8, 64)\nlayout G = (8,64):(64,1)\n"
        "access cp = cp.async.cg.16 A(lane / 8, 8 * (lane % 8)) from G(lane / 8, 8 * (lane % 8))\n",
    )
    code, out = synth(tmp_path, text)
    assert code == 2, out
    assert "t.synth:5:8: error: access 'cp' is a cp.async.cg.16" in out
    assert "max_ways == 1 cp" not in out
    assert " 5 | access cp = cp.async" in out


# -- baselines -------------------------------------------------------------------


@pytest.mark.parametrize(
    "record, message",
    [
        ({"spec": 1}, "checks[0]: 'spec': expected a string, found 1"),
        ({"spec": "a.spec"}, "checks[0]: 'property': expected a string, found none"),
        (
            {"spec": "a.spec", "property": "p", "status": "fine"},
            "'status': expected one of proved, refuted, unknown, found \"fine\"",
        ),
        (
            {"spec": "a.spec", "property": "p", "status": "proved", "max_ways": "8"},
            "'max_ways': expected a non-negative integer or null, found \"8\"",
        ),
        (
            {"spec": "a.spec", "property": "p", "status": "proved", "wavefronts": True},
            "'wavefronts': expected a non-negative integer or null, found true",
        ),
        (3, "checks[0]: expected an object with 'spec' and 'property', found 3"),
    ],
)
def test_malformed_baseline_record_is_exit_2_naming_the_record(tmp_path, record, message):
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"checks": [record]}))
    code, out = run(PLAIN, "--baseline", str(path))
    assert code == 2, out
    assert f"baseline {path}: checks[0]: " in out and message in out


# -- verify ttgir ----------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "  \n\n\t\n"])
def test_ttgir_on_an_empty_file_is_a_located_error(tmp_path, text):
    path = tmp_path / "k.ttgir"
    path.write_text(text)
    code, out = run("ttgir", str(path))
    assert code == 2, out
    assert f"{path}:1:1: error: expected a TTGIR module" in out and "found an empty file" in out


def test_ttgir_module_without_a_target_is_a_located_error(tmp_path):
    path = tmp_path / "k.ttgir"
    path.write_text("// nothing but a comment\n")
    code, out = run("ttgir", str(path))
    assert code == 2, out
    assert f'{path}:1:1: error: expected a module with a "ttg.target" attribute' in out


# -- a footprint over the target's shared memory ---------------------------------


def test_a_footprint_over_the_targets_shared_memory_is_named_with_its_limit():
    # 163 KB a block on sm_80 and 227 KB on sm_90 (the guide's per-block row).
    warning = shared_memory.over_limit(192 * 1024, 80)
    assert warning is not None
    assert (
        "footprint 192 KB (196608 bytes)" in warning and "sm_80, 163 KB (166912 bytes)" in warning
    )
    assert shared_memory.over_limit(192 * 1024, 90) is None
    assert shared_memory.over_limit(227 * 1024, 90) is None
    assert "227 KB (232448 bytes)" in (shared_memory.over_limit(227 * 1024 + 2, 90) or "")
    assert shared_memory.over_limit(10**9, 0) is None  # a target with no table entry


def test_a_kernel_buffer_over_the_targets_shared_memory_warns(tmp_path):
    """tile_sum's 2-stage 32x32 f16 buffer made 96 stages: 192 KB, on sm_80."""
    pytest.importorskip("triton")
    with open(os.path.join(SPECS, "triton_kernels", "tile_sum_32.sm80.ttgir")) as f:
        text = f.read()
    path = tmp_path / "big.sm80.ttgir"
    path.write_text(text.replace("2x32x32xf16", "96x32x32xf16"))
    code, out = run("ttgir", str(path), "--json")
    (bijective,) = [c for c in json.loads(out)["checks"] if c["property"].startswith("bijective")]
    assert bijective["status"] == "proved" and bijective["facts"]["footprint_bytes"] == 196608
    (warning,) = bijective["facts"]["warnings"]
    assert "footprint 192 KB (196608 bytes)" in warning and "sm_80, 163 KB" in warning
    result = CheckResult("k.py", 1, "bijective B", Status.PROVED, facts={"warnings": [warning]})
    shown = "\n".join(result_text(result))
    assert "    warning: footprint 192 KB (196608 bytes) is more than one block" in shown


# -- the Python API on pycute objects ---------------------------------------------


def test_offsets_and_parse_layout_take_pycute_objects():
    plain = pycute.Layout((8, 64), (64, 1))
    swizzled = pycute.ComposedLayout(pycute.Swizzle(3, 3, 3), 0, plain)
    assert verify.offsets(plain) == [plain(i) for i in range(plain.size())]
    assert verify.offsets(swizzled) == [swizzled(i) for i in range(plain.size())]
    assert verify.parse_layout(plain) == verify.parse_layout("(8,64):(64,1)")


@pytest.mark.parametrize("entry", [verify.offsets, verify.parse_layout, verify.notation])
@pytest.mark.parametrize("value", [3, None, b"(8,64):(64,1)", [8, 64]])
def test_a_layout_of_the_wrong_type_is_a_type_error_saying_what_is_taken(entry, value):
    with pytest.raises(TypeError, match="expected a layout as text or a pycute Layout, Swizzle"):
        entry(value)


# -- suggestions count work, not seconds ---------------------------------------------

CLASH = (
    "dtype f16\nbuffer align 128\nlayout A = (8,64):(64,1)\n"
    "access rd = ldmatrix.x1 A(lane, 0)\naccess other = ldmatrix.x1 A(lane, 8 * lane)\n"
    "check conflict_free rd\ncheck conflict_free other\n"
)
PLAIN_ROWS = (
    "dtype f16\nbuffer align 128\nlayout A = (8,64):(64,1)\n"
    "access rd = ldmatrix.x1 A(lane, 8 * q) for q in 0..8\ncheck conflict_free rd\n"
)


def advice(text: str) -> list[str]:
    """Every suggestion and fix line of a spec's report."""
    return [
        " ".join(
            [
                r.counterexample.suggestion,
                *(s for label, s in r.counterexample.explanation if label == "fix"),
            ]
        )
        for r in verify.check_text(text)
        if r.counterexample
    ]


@pytest.mark.parametrize("text", [PLAIN_ROWS, CLASH])
def test_suggestion_text_is_the_same_however_slow_the_clock(monkeypatch, text):
    import time

    first = advice(text)
    clock = iter(range(0, 10**9, 7))  # every reading 7 s after the one before
    monkeypatch.setattr(time, "monotonic", lambda: float(next(clock)))
    assert advice(text) == first
    assert not any(" s)" in line or "allowance" in line for line in first), first


def test_a_search_past_its_member_budget_says_so_in_members():
    lines = advice(CLASH)
    assert any("before the budget of 4096 members ran out" in line for line in lines), lines


# -- verify triton: every missing parameter type at once -------------------------------

KERNEL_SOURCE = """import triton
import triton.language as tl


@triton.jit
def _store(p, n):
    tl.store(p + tl.arange(0, 16), n)


@triton.jit
def k(x_ptr, y_ptr, K, stride, scale, BLOCK: tl.constexpr = 16):
    offs = tl.arange(0, BLOCK)
    ptrs = x_ptr + offs * stride
    v = tl.load(ptrs, mask=offs < K) * (scale * 0.5)
    _store(y_ptr, K)
"""


def test_triton_names_every_untyped_parameter_with_the_type_its_use_implies(tmp_path):
    from verify.ttgir.kernel import build_signature, load_kernel

    path = tmp_path / "k.py"
    path.write_text(KERNEL_SOURCE)
    fn = load_kernel(f"{path}:k")
    with pytest.raises(verify.SpecError) as e:
        build_signature(fn, {}, {})
    message = e.value.message
    assert "parameters 'x_ptr', 'y_ptr', 'K', 'stride' and 'scale' of k" in message
    assert "--signature 'x_ptr:*fp16,y_ptr:*fp16,K:i32,stride:i32,scale:fp32'" in message
    assert e.value.pos.line == 11
    with pytest.raises(verify.SpecError, match="parameter 'y_ptr' of k: give it") as e:
        build_signature(fn, {"x_ptr": "*fp32", "K": "i32", "stride": "i32", "scale": "fp32"}, {})


# -- small things ----------------------------------------------------------------------


def test_one_check_is_counted_in_the_singular():
    from verify.report.text import summary_line

    report = verify.check_text("dtype f16\nlayout A = (8,8):(8,1)\ncheck bijective A\n")
    assert summary_line(report) == "1 check: 1 proved, 0 refuted, 0 unknown"
    assert summary_line([*report, *report]).startswith("2 checks: ")


def test_synth_header_names_the_family_asked_for_under_all():
    from verify.spec.parser import parse_text
    from verify.synth import output
    from verify.synth.problem import problem_of
    from verify.synth.search import Answer

    text = "dtype f32\nlayout A = ?(8, 8)\naccess rd = ld.shared.b32 A(lane / 8, lane % 8)\n"
    problem = problem_of(parse_text(text, "t.synth"), text)
    won_by_sw = Answer("sw", None, None, None, {}, True, core=["x"])
    won_by_sw.contenders = {"sw": won_by_sw}
    assert ", family all; accesses rd" in output.text(problem, won_by_sw, None)
    alone = Answer("sw", None, None, None, {}, True, core=["x"])
    assert ", family sw; accesses rd" in output.text(problem, alone, None)


# -- kernel sweeps: columns by source line and op ----------------------------------------


def test_kernel_sweep_columns_are_source_line_and_op_and_cp_async_has_one():
    from verify.sweep.question import CheckRow, Outcome
    from verify.sweep.table import columns

    def outcome(first: str, second: str, load: str) -> Outcome:
        return Outcome(
            (
                CheckRow(28, f"in_bounds async_copy_global_to_local {first}", "proved"),
                CheckRow(
                    28, f"conflict_free async_copy_global_to_local {first}", "proved", None, None, 4
                ),
                CheckRow(
                    28,
                    f"conflict_free async_copy_global_to_local {second}",
                    "proved",
                    None,
                    None,
                    8,
                ),
                CheckRow(32, f"conflict_free local_load {load}", "refuted", None, 2, 8),
                CheckRow(32, f"max_ways <= 2 local_load {load}", "proved", None, 2, 8),
            )
        )

    one, other = (
        columns(outcome("%a_47", "%a_67", "%x_52")),
        columns(outcome("%a_3", "%a_9", "%x_43")),
    )
    assert (
        one
        == other
        == {
            "28:async_copy_global_to_local": (None, 4),
            "28:async_copy_global_to_local#2": (None, 8),
            "32:local_load": (2, 8),
        }
    )
    template = Outcome((CheckRow(15, "conflict_free rd", "refuted", None, 8, 32),))
    assert columns(template) == {"rd": (8, 32)}


# -- every printed fix, applied literally, fixes ------------------------------------------


# Every catalog spec whose report prints a fix that names a layout change.
FIXED_SPECS = [
    "examples/cute_tv_ldsm.spec",
    "examples/triton_blocked_store.spec",  # a Triton thread map: no padding offered
    "seed/f32_32x32_column.spec",
    "seed/ldmatrix_x1_8x64_plain.spec",
    "seed/ldmatrix_x1_8x65_padded.spec",
    "seed/ldmatrix_x4_16x16.spec",
    "traps/padded_by_one.spec",
]
XOR_FIX = re.compile(r"XOR byte bits (\d+)-(\d+) into byte bits (\d+)-(\d+) \(a swizzle\)")
PAD_FIX = re.compile(r"pad mode (\d+)'s stride of \d+ bytes .* (\d+) -> (\d+) elements")
STRIDE_FIX = re.compile(
    r"a stride that is a multiple of \d+ elements in mode (\d+) \(for example (\d+)\)"
)


def _restrided(layout: str, mode: int, stride: int) -> str:
    shape, strides = re.fullmatch(r"\((.*)\):\((.*)\)", layout).groups()  # type: ignore[union-attr]
    parts = [p.strip() for p in strides.split(",")]
    parts[mode] = str(stride)
    return f"({shape}):({','.join(parts)})"


def fixes_applied(text: str, access: str, fix: str) -> list[str]:
    """The spec with each layout change `fix` names made to the layout `access` reads."""
    name = re.search(rf"^access {access} = \S+ (\w+)[( ]", text, re.M).group(1)  # type: ignore[union-attr]
    layout = re.search(rf"^layout {name} = (.*)$", text, re.M).group(1)  # type: ignore[union-attr]
    bits = {"f16": 16, "f32": 32}[re.search(r"^dtype (\w+)", text, re.M).group(1)]  # type: ignore[union-attr]
    changed = []
    if m := XOR_FIX.match(fix):
        lo, hi, to_lo, to_hi = map(int, m.groups())
        assert hi - lo == to_hi - to_lo, fix  # as many bits read as written
        changed.append(
            f"Sw<{hi - lo + 1},{to_lo},{lo - to_lo}> o smem_ptr[{bits}b](unset) o {layout}"
        )
    if m := PAD_FIX.search(fix):
        mode, old, padded = map(int, m.groups())
        assert f"{old}" in layout, (layout, fix)
        changed.append(_restrided(layout, mode, padded))
    if m := STRIDE_FIX.search(fix):
        changed.append(_restrided(layout, int(m.group(1)), int(m.group(2))))
    assert changed, fix
    return [text.replace(f"layout {name} = {layout}", f"layout {name} = {c}") for c in changed]


@pytest.mark.parametrize("spec", FIXED_SPECS)
def test_every_printed_fix_applied_literally_proves_its_check(spec):
    """A fix line is a claim: each layout it names, written into the spec, proves the
    refuted check (a padded stride under a Triton thread map, which that spec would
    refuse as not linear over GF(2), is no longer offered)."""
    with open(os.path.join(SPECS, spec), encoding="utf-8") as f:
        text = f.read().replace(" expect refuted", "")
    tried = 0
    for refuted in verify.check_text(text):
        if refuted.counterexample is None:
            continue
        for label, fix in refuted.counterexample.explanation:
            if label != "fix":
                continue
            for fixed in fixes_applied(text, refuted.property.split()[-1], fix):
                checked = {r.property: r.status for r in verify.check_text(fixed)}
                assert checked[refuted.property] == verify.Status.PROVED, (fix, fixed)
                tried += 1
    assert tried >= 1


def test_bank_bits_are_named_with_the_access_width_they_belong_to():
    four = verify.check(os.path.join(SPECS, "seed", "f32_32x32_column.spec"))
    sixteen = verify.check(os.path.join(SPECS, "seed", "ldmatrix_x1_8x64_plain.spec"))
    for report, named in (
        (four, "byte bits 2-6, the bits that pick a 4-byte access's bank"),
        (sixteen, "byte bits 4-6, the bits that pick a 16-byte access's bank"),
    ):
        text = str(report).replace("\n        ", " ").replace("  ", " ")
        assert named in " ".join(text.split()), text


# -- one rule for the exit status and every format ----------------------------------

EXPECTED_REFUTATION = PLAIN  # one check 'expect refuted' that is refuted; the rest proved


def failures_shown(fmt: str, out: str) -> int:
    """How many checks the output of `fmt` shows as failing."""
    if fmt == "github":
        return out.count("::error ")
    if fmt == "sarif":
        doc = json.loads(out)
        return sum(r["level"] == "error" for r in doc["runs"][0]["results"])
    if fmt == "junit":
        return out.count("<failure")
    if fmt == "json":
        return sum(c["level"] == "error" for c in json.loads(out)["checks"])
    return out.count("REFUTED")  # -q text lists only failing checks


@pytest.mark.parametrize("fmt", ["github", "sarif", "junit", "json", "quiet"])
def test_an_expected_refutation_passes_in_the_exit_status_and_every_format(fmt):
    args = ["-q"] if fmt == "quiet" else ["--format", fmt]
    code, out = run(EXPECTED_REFUTATION, *args)
    assert (code, failures_shown(fmt, out.split("\n6 checks")[0] if fmt == "quiet" else out)) == (
        0,
        0,
    ), out


@pytest.mark.parametrize("fmt", ["github", "sarif", "junit", "json", "quiet"])
def test_raw_verdicts_fail_every_refutation_and_every_format_shows_it(fmt):
    args = ["-q"] if fmt == "quiet" else ["--format", fmt]
    code, out = run(EXPECTED_REFUTATION, "--raw-verdicts", *args)
    assert code == 1, out
    assert failures_shown(fmt, out.split("\n6 checks")[0] if fmt == "quiet" else out) == 1, out


def test_check_expect_is_still_accepted_and_is_the_default():
    assert run(EXPECTED_REFUTATION, "--check-expect")[0] == 0
    assert run(EXPECTED_REFUTATION)[0] == 0


def test_an_unmet_expectation_fails_in_every_format(tmp_path):
    path = tmp_path / "t.spec"
    with open(PLAIN, encoding="utf-8") as f:
        path.write_text(f.read().replace("expect refuted", "expect proved"))
    for fmt in ("github", "sarif", "junit", "json"):
        code, out = run(str(path), "--format", fmt)
        assert (code, failures_shown(fmt, out)) == (1, 1), (fmt, out)


def test_a_failure_the_baseline_accepts_is_a_notice_not_an_error(tmp_path):
    path = tmp_path / "t.spec"
    with open(PLAIN, encoding="utf-8") as f:
        path.write_text(f.read().replace(" expect refuted", ""))
    base = tmp_path / "base.json"
    assert run(str(path), "--baseline", str(base), "--update-baseline")[0] == 0
    code, out = run(str(path), "--baseline", str(base), "--format", "github")
    assert code == 0, out
    assert "::error" not in out and out.count("::notice ") == 1
    code, out = run(str(path), "--baseline", str(base), "--format", "sarif")
    levels = [r["level"] for r in json.loads(out.split("\nbaseline")[0])["runs"][0]["results"]]
    assert (code, levels) == (0, ["note"])
    code, out = run(str(path), "--baseline", str(base), "--format", "junit")
    assert code == 0 and "<failure" not in out and "accepted by the baseline" in out


def test_a_regression_is_an_error_in_every_format_even_on_a_passing_check(tmp_path):
    # `max_ways <= 8` holds under both layouts, but its figure went 1 -> 8.
    tile = (
        "dtype f16\nbuffer align 128\nlayout A = {}(_8,_64):(_64,_1)\n"
        "access rd = ldmatrix.x1 A(lane, 8 * q) for q in 0..8\ncheck max_ways <= 8 rd\n"
    )
    path, base = tmp_path / "t.spec", tmp_path / "base.json"
    path.write_text(tile.format("Sw<3,3,3> o "))
    assert run(str(path), "--baseline", str(base), "--update-baseline")[0] == 0
    path.write_text(tile.format(""))
    for fmt in ("github", "sarif", "junit", "json"):
        code, out = run(str(path), "--baseline", str(base), "--format", fmt)
        document = out.split("\nbaseline ")[0]
        assert (code, failures_shown(fmt, document)) == (1, 1), (fmt, out)


def test_quiet_text_lists_what_fails_and_not_what_the_baseline_accepts(tmp_path):
    path, base = tmp_path / "t.spec", tmp_path / "base.json"
    with open(PLAIN, encoding="utf-8") as f:
        path.write_text(f.read().replace(" expect refuted", ""))
    assert run(str(path), "--baseline", str(base), "--update-baseline")[0] == 0
    code, out = run(str(path), "--baseline", str(base), "-q")
    assert code == 0 and "REFUTED" not in out, out
    code, out = run(str(path), "-q")
    assert code == 1 and "REFUTED  conflict_free rd" in out, out


def test_a_malformed_list_in_a_triton_encoding_is_a_located_error(tmp_path):
    # found by tests/cli/test_fuzz_commands.py at VERIFY_FUZZ_SCALE=16
    path = tmp_path / "t.spec"
    path.write_text(
        "dtype f16\nlayout B = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, "
        "order = [, 0]}> shape (8, 64)\n"
    )
    code, out = run(str(path))
    assert code == 2 and "order: expected an integer, true, false or a list" in out, out


def test_a_sweep_honours_expect_by_default_too(tmp_path):
    template = tmp_path / "t.spec"
    template.write_text(
        "dtype f16\nbuffer align 128\nlayout A = (${M},64):(64,1)\n"
        "access rd = ldmatrix.x1 A(lane, 8 * q) for q in 0..8\n"
        "check conflict_free rd expect refuted\n"
    )
    args = ["sweep", str(template), "--param", "M=8", "-j", "1", "--no-cache"]
    code, out = run(*args)
    assert code == 0 and "1 pass, 0 fail" in out, out
    code, out = run(*args, "--raw-verdicts")
    assert code == 1 and "0 pass, 1 fail" in out, out


def test_a_kernel_copys_source_rows_are_labelled_global_not_the_generated_name():
    path = os.path.join(SPECS, "triton_kernels", "gluon_async_copy.sm80.ttgir")
    code, out = run("ttgir", path, "--json")
    doc = json.loads(out)
    labels = {
        lane["label"]
        for check in doc["checks"]
        if check["counterexample"]
        for lane in check["counterexample"]["lanes"]
        if lane["label"]
    }
    assert code == 1 and labels == {"global <-"}, labels
    assert "Gop" not in out


# -- words, not Python lists; one of a thing is singular --------------------------

NAMES_SPEC = """dtype f16
buffer align 128
layout A = (8,64):(72,1)
access rd = ldmatrix.x1 A(lane, 0)
access v = ld.shared.v2.b32 A(0, 0)
check conflict_free rdd
check bijective rd
check conflict_free Aa
check equivalent r + x == r for r in 0..4
"""


def test_unknown_names_are_listed_in_words_as_the_parser_lists_its_choices(tmp_path):
    path = tmp_path / "names.spec"
    path.write_text(NAMES_SPEC)
    code, out = run(str(path))
    assert code == 2 and "['" not in out, out
    assert "unknown access 'rdd': expected one of 'rd', 'v'; did you mean 'rd'?" in out
    assert "'rd' is an access: expected a layout here: 'A', the only layout defined" in out
    assert "unknown access 'Aa': expected one of 'rd', 'v'" in out
    assert "unknown variable 'x': expected the loop variable 'r'; add it to the loops" in out
    path.write_text(NAMES_SPEC.replace("access v = ld.shared.v2.b32 A(0, 0)\n", ""))
    assert "unknown access 'rdd': expected 'rd', the only access defined\n" in run(str(path))[1]


def test_one_check_one_spec_error_and_one_wavefront_are_singular(tmp_path):
    path = tmp_path / "one.spec"
    body = NAMES_SPEC.split("check ")[0]
    path.write_text(body + "check wavefronts == 2 rd\ncheck wavefronts == 2 v\n")
    out = run(str(path))[1]
    assert "the worst gives 1: ldmatrix.x1: 1 wavefront (ideal 1)" in out
    assert "the worst gives 1: 1 wavefront by rule L (1 conflict-free phase pair merged)" in out
    result = CheckResult("one.spec", 1, "conflict_free rd", Status.PROVED)
    assert summary_line([result], 1) == "1 check: 1 proved, 0 refuted, 0 unknown; 1 spec error"


# -- the distribution's name ------------------------------------------------------

ROOT = conftest.ROOT


def test_the_distribution_is_verify_smem_and_the_command_and_package_stay_verify():
    """PyPI's 'verify' is an unrelated project: every install line names ours."""
    tomllib = pytest.importorskip("tomllib")
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)
    assert project["project"]["name"] == sarif.DISTRIBUTION == "verify-smem"
    assert project["project"]["scripts"] == {"verify": "verify.cli:run"}
    grammars = {
        os.path.relpath(os.path.join(d, n), ROOT)
        for d, _, names in os.walk(os.path.join(ROOT, "verify"))
        for n in names
        if n.endswith(".lark")
    }
    data = project["tool"]["setuptools"]["package-data"]
    shipped = {
        os.path.join(*p.split("."), "x.lark") for p, globs in data.items() if "*.lark" in globs
    }
    assert {os.path.join(os.path.dirname(g), "x.lark") for g in grammars} <= shipped  # in a wheel
    installs = []
    for folder in ("verify", "docs"):
        for d, _, names in os.walk(os.path.join(ROOT, folder)):
            for n in names:
                if n.endswith((".py", ".md")):
                    with open(os.path.join(d, n), encoding="utf-8") as f:
                        installs += re.findall(r"pip install '?(verify\b[\w-]*)", f.read())
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        installs += re.findall(r"pip install '?(verify\b[\w-]*)", f.read())
    assert installs and set(installs) == {"verify-smem"}


# -- the docs say what the code does ------------------------------------------------

CG_SPEC = """dtype f32
buffer align 128
global align 128
layout S = (_32,_32):(_32,_1)
layout G = (_32,_32):(_32,_1)
access cp = cp.async.cg.16 S(lane / 8, 4 * (lane % 8)) from G(lane / 8, 4 * (lane % 8))
"""


def test_the_solver_decides_cp_async_cg_by_rule_s_as_the_docs_now_say():
    """README and docs/guarantees.md disagreed: the solver encodes rule S (RuleSQuery)
    and gives an exact .cg figure, not bound G."""
    program = Program(parse_text(CG_SPEC, "cg.spec"))
    figures = solver.copy_wavefronts(program, program.access("cp"), conftest.WORK.budget())
    assert figures.bound is None and figures.exact is not None and figures.exact.value == 4
    docs = {
        name: Path(ROOT, "docs", name).read_text(encoding="utf-8")
        for name in ("guarantees.md", "hardware.md", "ci.md", "checks.md")
    }
    assert "no encoding of rule S" not in docs["guarantees.md"]
    assert "the solver keeps\nbound G" not in docs["hardware.md"]
    assert all("RuleSQuery" in docs[n] for n in ("guarantees.md", "hardware.md"))
    assert all("--raw-verdicts" in docs[n] for n in ("ci.md", "checks.md"))
    assert "`global <-`" in docs["checks.md"]


# -- verify synth on 64/128-bit loads: rule L, as the engines count it ------------

PAIRED_LOADS = """dtype f32
buffer align 128
layout A = ?(16, 32)
access rd = ld.shared.v4.b32 A(lane / 2, 4 * q) for q in 0..8
check bijective A
check conflict_free rd
"""


def test_synth_scores_paired_128_bit_loads_by_rule_l(tmp_path):
    """Lanes 2k and 2k+1 read one chunk: a layout whose half-warp unions are
    conflict-free merges its phase pairs (2 wavefronts, not 4). Synthesis scored
    the phase model: it stopped at a 4-wavefront swizzle called optimal, and where
    the plain layout merges, its certificate failed the engines (exit 4)."""
    code, out = synth(tmp_path, PAIRED_LOADS, "--json")
    doc = json.loads(out)
    assert code == 0 and doc["layout"] == "Sw<3,2,3> o (16,32):(32,1)", out
    assert (doc["max_ways"], doc["wavefronts"], doc["optimal"]) == (1, 2, True)
    assert all(c["status"] == "proved" for c in doc["checks"])
    plain = PAIRED_LOADS.replace("?(16, 32)", "?(8, 64)").replace(
        "A(lane / 2, 4 * q)", "A(q, 4 * (lane / 2))"
    )
    code, out = synth(tmp_path, plain, "--json")
    assert code == 0 and json.loads(out)["wavefronts"] == 2, out
    required = PAIRED_LOADS + "check wavefronts <= 2 rd\n"
    assert synth(tmp_path, required)[0] == 0  # rule L's least, not the phase model's 4
    code, out = synth(tmp_path, PAIRED_LOADS, "--family", "xor")
    assert code == 2 and "t.synth:4:8: error: --family xor: expected accesses whose" in out
