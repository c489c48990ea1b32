"""verify.engines.cases: the verdict of a check that enumerates its own cases.

The cases and tests here are plain Python integers and predicates written for the
test, sharing nothing with the Hopper checks that use the engine."""

from verify.engines.cases import Undecided, closed_form, decide_cases
from verify.errors import SpecError
from verify.results import Counterexample
from verify.verdicts import Status


def _odd(n: int) -> Counterexample | None:
    return Counterexample(f"{n} is odd", {"n": n}) if n % 2 else None


def test_every_case_of_a_complete_domain_holding_is_proved():
    verdict = decide_cases(range(0, 20, 2), _odd)
    assert verdict.status is Status.PROVED
    assert verdict.figures == {"cases": 10} and verdict.counterexample is None


def test_the_first_failing_case_refutes_with_that_case_and_how_many_were_tested():
    tested = []

    def odd(n: int) -> Counterexample | None:
        tested.append(n)
        return _odd(n)

    verdict = decide_cases([4, 8, 7, 9], odd)
    assert verdict.status is Status.REFUTED
    assert verdict.counterexample == Counterexample("7 is odd", {"n": 7})
    assert verdict.figures == {"cases": 3, "case": 7}
    assert tested == [4, 8, 7]  # it stops at the refutation


def test_an_incomplete_domain_is_unknown_never_a_pass():
    verdict = decide_cases([2, 4], _odd, incomplete="only 2 of 9 values enumerated")
    assert verdict.status is Status.UNKNOWN
    assert verdict.reason == "only 2 of 9 values enumerated"
    empty = decide_cases([], _odd, incomplete="no case could be built")
    assert empty.status is Status.UNKNOWN and empty.figures == {"cases": 0}


def test_an_incomplete_domain_is_still_refuted_by_a_counterexample():
    verdict = decide_cases([2, 3], _odd, incomplete="only 2 of 9 values enumerated")
    assert verdict.status is Status.REFUTED and verdict.figures["case"] == 3


def test_a_case_that_raises_is_unknown_and_later_cases_are_still_tested():
    def divided(n: int) -> Counterexample | None:
        if n == 0:
            raise ZeroDivisionError("division by zero")
        if n == 5:
            raise SpecError("expected a bounded value, found x")
        return None if 60 % n == 0 else Counterexample(f"{n} does not divide 60", {"n": n})

    raised = decide_cases([1, 0, 5, 2], divided)
    assert raised.status is Status.UNKNOWN
    assert raised.reason == "a case cannot be evaluated: division by zero"
    assert raised.figures == {"cases": 4}
    refuted = decide_cases([0, 7], divided)
    assert refuted.status is Status.REFUTED and refuted.figures["case"] == 7


def test_an_undecided_case_is_unknown_with_the_first_reason():
    def undecided(n: int) -> Counterexample | Undecided | None:
        return Undecided(f"{n} may not run") if n > 2 else None

    verdict = decide_cases([1, 3, 4], undecided)
    assert verdict.status is Status.UNKNOWN and verdict.reason == "3 may not run"
    assert decide_cases([3, 5], lambda n: undecided(n) or _odd(n)).status is Status.UNKNOWN
    later = decide_cases([3, 1], lambda n: undecided(n) or _odd(n))
    assert later.status is Status.REFUTED and later.counterexample == _odd(1)


def test_a_closed_form_figure_is_proved():
    assert closed_form().status is Status.PROVED
