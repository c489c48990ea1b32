"""What a kernel's verdicts rest on (verify/ptx/assume.py): the least alignment that
proves a failed check, asked cheaply (only the checks an alignment can change, by
bisection, identical questions asked once)."""

from __future__ import annotations

import os

import conftest

from verify.errors import SpecError
from verify.model.expr import Range, free_vars
from verify.ptx import assume
from verify.ptx.check import Options, check_ptx
from verify.ptx.parse import read_ptx
from verify.ptx.values import Context, Unknown
from verify.smt.solve import Status

PTX = os.path.join(conftest.DATA, "ptx")


def _runs(monkeypatch) -> list:
    """Every spec run that `assume` makes, from now on."""
    runs: list = []
    real = assume.run_spec

    def counted(*args, **kwargs):
        runs.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(assume, "run_spec", counted)
    return runs


def test_the_least_rung_is_found_by_bisection():
    """Checks whose least proving rung is 0..4 (and one that none proves) on a ladder
    of 5: each gets its own least rung, every rung stated was asked and proved, and
    no rung is asked twice."""
    least = {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4, "never": 9}
    asked: list[tuple[int, tuple]] = []

    def decide(rung, keys):
        asked.append((rung, tuple(keys)))
        return {k for k in keys if least[k] <= rung}

    found = assume._least_rungs(list(least), 5, decide)
    assert found == {k: v for k, v in least.items() if k != "never"}
    rungs = [r for r, _ in asked]
    assert rungs[0] == 4 and len(rungs) == len(set(rungs)) <= assume.MAX_REDECISIONS
    for k, rung in found.items():
        assert any(r == rung and k in keys for r, keys in asked)


def test_checks_of_one_least_rung_share_their_runs():
    """Two checks proved from rung 2 of 4 (pipeline3's 128 bytes on 32..256):
    3 runs where asking from the weakest up took 4; on a ladder of 5, 4 runs."""
    calls: list[int] = []

    def decide(rung, keys):
        calls.append(rung)
        return set(keys) if rung >= least else set()

    least = 2
    assert assume._least_rungs(["x", "y"], 4, decide) == {"x": 2, "y": 2}
    assert calls == [3, 1, 2]
    calls.clear()
    least = 3
    assert assume._least_rungs(["x", "y"], 5, decide) == {"x": 3, "y": 3}
    assert calls == [4, 1, 2, 3]


def test_nothing_is_asked_when_the_strongest_rung_proves_nothing():
    calls = []

    def decide(rung, keys):
        calls.append(rung)
        return set()

    assert assume._least_rungs(["x"], 5, decide) == {}
    assert calls == [4]


def test_in_bounds_is_not_asked_again(monkeypatch):
    """The bare Triton matmul: every in_bounds is UNKNOWN (its dynamic shared memory
    has no stated size) and nothing else fails; no alignment changes an in_bounds,
    so no spec is run again."""
    runs = _runs(monkeypatch)
    results = check_ptx(os.path.join(PTX, "triton_matmul_sm80.ptx"), Options(run=conftest.WORK))
    failed = [r for r in results if r.status != Status.PROVED]
    assert failed and all(r.property.startswith("in_bounds") for r in failed)
    assert runs == []


def test_an_identical_question_is_asked_once(monkeypatch):
    """pipeline3 for sm_80 and for sm_90a puts the same accesses in the same spec:
    the second kernel's copies get their `proved_under` from the first's answers,
    each settled for its own access, with no spec run again."""
    assume._ANSWERS.clear()
    options = Options(kernel="pipeline3", run=conftest.WORK)
    runs = _runs(monkeypatch)
    first = check_ptx(os.path.join(PTX, "pipeline_sm80.ptx"), options)
    assert 0 < len(runs) <= 3  # 256, then 64, then 128 bytes
    second = check_ptx(os.path.join(PTX, "pipeline_sm90a.ptx"), options)
    assert len(runs) <= 3

    def under(results):
        return sorted(
            (r.property.split(" [")[0], str(r.facts["proved_under"]))
            for r in results
            if "proved_under" in r.facts
        )

    assert under(first) == under(second) and len(under(first)) == 8


# -- bounds and residue classes -------------------------------------------------

MATMUL = os.path.join(conftest.DATA, "ttgir_ptx", "matmul_64x64x32.sm80.ptx")
# The tutorial matmul's launch (E) (docs/ptx.md) but for B's row stride, stride_bk
# (param_7), bounded instead of fixed: its i32 products then stay non-negative.
FREE_STRIDE = (*(f"param_{n}=512" for n in (3, 4, 5, 6, 8)), "param_7<1024")


def _matmul(*extra: str):
    options = Options(
        assume=FREE_STRIDE + extra, grid=(64,), global_align=256, shared_align=128,
        run=conftest.WORK,
    )  # fmt: skip
    return check_ptx(MATMUL, options)


def _b_tile(results) -> dict:
    """The B-tile copies' source alignment and conflict_free checks (PTX lines 168,
    175, 217, 225), by (line, check)."""
    out = {}
    for r in results:
        line, what = r.facts.get("ptx_line"), r.property.split()[0]
        wanted = what == "conflict_free" or what == "aligned" and " from " in r.property
        if line in (168, 175, 217, 225) and wanted:
            out[(line, what)] = r
    return out


def _pipeline3():
    return next(
        f
        for f in read_ptx(os.path.join(PTX, "pipeline_sm80.ptx")).entries()
        if "pipeline3" in f.name
    )


def test_a_row_stride_states_its_least_class():
    """With stride_bk free below 1024, B's rows of 64 fp16 start anywhere: the
    copies' sources are misaligned (REFUTED) and, aligned, cross 128-byte lines.
    The search states what proves each: a source aligned to 16 bytes when stride_bk
    % 8 == 0, every copy ideal (4 of 4 wavefronts) when stride_bk % 64 == 0
    (a row is 128 bytes: the issue's "lda*2 % 128 == 0")."""
    b = _b_tile(_matmul())
    assert len(b) == 8 and all(r.status == Status.REFUTED for r in b.values())
    for (_, what), r in b.items():
        mod = 64 if what == "conflict_free" else 8
        assert r.facts["proved_when"] == {"assume": f"param_7%{mod}==0"}
        holds = "ideal" if what == "conflict_free" else "proved"
        assert r.counterexample.notes[-1] == (
            f"{holds} when param_7 % {mod} == 0 (--assume 'param_7%{mod}==0'); refuted without it"
        )


def test_the_stated_class_is_decided_proved_and_the_next_weaker_is_not():
    """The claim above, checked directly: PROVED under --assume 'param_7%64==0'
    (4 wavefronts, the ideal), REFUTED at % 32 (6 wavefronts: rows of 128 bytes
    that start 64 bytes into a line); the sources aligned at % 8, not at % 4."""
    at64 = _b_tile(_matmul("param_7%64==0"))
    assert len(at64) == 8 and all(r.status == Status.PROVED for r in at64.values())
    assert all(r.wavefronts == 4 for (_, w), r in at64.items() if w == "conflict_free")
    at32 = _b_tile(_matmul("param_7%32==0"))
    assert {w: r.status for (_, w), r in at32.items()} == {
        "aligned": Status.PROVED,
        "conflict_free": Status.REFUTED,
    }
    assert all(r.wavefronts == 6 for (_, w), r in at32.items() if w == "conflict_free")
    at4 = _b_tile(_matmul("param_7%4==0"))
    assert all(r.status == Status.REFUTED for (_, w), r in at4.items() if w == "aligned")
    # under a class given, no class is searched
    assert not any("proved_when" in r.facts for r in at32.values())


def test_a_parameter_read_only_by_a_guard_is_not_searched(monkeypatch):
    """pipeline3's copies read ktiles (param_2) only through their loop's guard,
    which a class cannot make whole: no kernel is checked again for a class."""
    asked = []

    def checked_under(*a):
        asked.append(a)
        return {}

    monkeypatch.setattr(assume, "_checked_under", checked_under)
    results = check_ptx(os.path.join(PTX, "pipeline_sm80.ptx"), Options(kernel="pipeline3"))
    assert any("proved_under" in r.facts for r in results) and asked == []


def test_a_class_that_only_repeats_an_alignment_proves_nothing_new():
    """Under a class, a check REFUTED with the same `proved_under` as without it
    owes that to the alignment alone; PROVED, or a weaker alignment, counts."""
    from verify.results import CheckResult

    def result(status, under=None):
        r = CheckResult("k.ptx", 1, "conflict_free x", status)
        if under:
            r.facts["proved_under"] = under
        return r

    without = result(Status.REFUTED, {"global_align": 128})
    assert not assume._holds(result(Status.REFUTED, {"global_align": 128}), without)
    assert assume._holds(result(Status.REFUTED, {"global_align": 64}), without)
    assert assume._holds(result(Status.PROVED), without)
    assert not assume._holds(result(Status.REFUTED), without)


def test_a_bound_and_a_class_give_every_value_and_no_other():
    """'NAME<B' and 'NAME%M==R' together: M * q + R for q in 0..ceil((B - R) / M),
    every value below B in the class (9 is 1 mod 4 and below 10)."""
    fn = _pipeline3()
    ctx = Context({})
    a = assume.Assumptions(fn, ("param_2<10", "param_2%4==1"), ctx)
    value = a.value("param_2", bits=32)
    assert not isinstance(value, Unknown)
    (q,) = free_vars(value)
    assert ctx.ranges[q] == Range(0, 3) and a.vars[q] == (2, 0) and not q.startswith("param_")
    assert assume.Assumptions(fn, ("param_2<7",), Context({})).value("param_2", bits=32)
    # a class without a bound keeps its name, param_2_q, as the messages name it
    unbounded = assume.Assumptions(fn, ("param_2%4==1",), Context({})).value("param_2", bits=32)
    assert not isinstance(unbounded, Unknown)
    assert free_vars(unbounded) == {"param_2_q"}


def test_contradictory_or_malformed_assumptions_are_refused():
    fn = _pipeline3()
    texts: tuple[str, ...]
    for texts in (("param_2<0",), ("param_2<<3",)):
        try:
            assume.Assumptions(fn, texts, Context({}))
        except SpecError as e:
            assert "--assume" in e.message
        else:
            raise AssertionError(f"{texts} accepted")
    for texts in (("param_2<3", "param_2%8==5"), ("param_2<3", "param_2=7")):
        try:
            assume.Assumptions(fn, texts, Context({})).value("param_2", bits=32)
        except SpecError as e:
            assert "param_2" in e.message
        else:
            raise AssertionError(f"{texts} accepted")
