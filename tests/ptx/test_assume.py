"""What a kernel's verdicts rest on (verify/ptx/assume.py): the least alignment that
proves a failed check, asked cheaply (only the checks an alignment can change, by
bisection, identical questions asked once)."""

from __future__ import annotations

import os

import conftest

from verify.ptx import assume
from verify.ptx.check import Options, check_ptx
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
    assert assume._least_rungs(["x"], 5, lambda r, k: calls.append(r) or set()) == {}
    assert calls == [4]


def test_in_bounds_is_not_asked_again(monkeypatch):
    """The bare Triton matmul: every in_bounds is UNKNOWN (its dynamic shared memory
    has no stated size) and nothing else fails; no alignment changes an in_bounds,
    so no spec is run again."""
    runs = _runs(monkeypatch)
    results = check_ptx(os.path.join(PTX, "triton_matmul_sm80.ptx"), Options(timeout=30))
    failed = [r for r in results if r.status != Status.PROVED]
    assert failed and all(r.property.startswith("in_bounds") for r in failed)
    assert runs == []


def test_an_identical_question_is_asked_once(monkeypatch):
    """pipeline3 for sm_80 and for sm_90a puts the same accesses in the same spec:
    the second kernel's copies get their `proved_under` from the first's answers,
    each settled for its own access, with no spec run again."""
    assume._ANSWERS.clear()
    options = Options(kernel="pipeline3", timeout=30)
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
