"""`verify sweep`: every combination of a spec template's parameters, each distinct
question asked once (`key`), answers kept on disk (`cache`), asked on local
processes or a Dask cluster (`engine`), reported as one table (`table`).
"""
from __future__ import annotations

from dataclasses import dataclass

from verify.errors import SpecError
from verify.spec.parser import parse_text
from verify.sweep import key
from verify.sweep.engine import Engine
from verify.sweep.question import Outcome, Question, answer
from verify.sweep.template import Param, Template, combinations


@dataclass
class Row:
    values: dict[str, str]
    question: str | None        # its question key; None when the text does not parse
    outcome: Outcome | None = None


@dataclass
class Sweep:
    """A sweep planned: its rows, the answers the cache holds and the questions left
    to ask; `ask` fills in the rest."""

    template: str                       # its path
    params: list[Param]
    rows: list[Row]
    answers: dict[str, Outcome]         # by question key
    to_ask: dict[str, Question]         # by question key
    cached: int = 0                     # distinct questions the cache answered

    @property
    def distinct(self) -> int:
        return self.cached + len(self.to_ask)

    def ask(self, engine: Engine, cache, on_answer=lambda: None) -> "Sweep":
        """Answers every question left, keeping each answer in `cache` as it comes;
        `on_answer()` after each (a progress bar's step)."""
        with engine.run(_answer_keyed, self.to_ask.items()) as run:
            for (question, asked), outcome in run:
                self.answers[question] = outcome
                cache.put(key.answer_key(question, asked.engine, asked.timeout), outcome)
                on_answer()
        for row in self.rows:
            row.outcome = row.outcome or self.answers[row.question]
        return self


def plan(template: Template, params: list[Param], cache, timeout: float = 60.0,
         check_engine: str = "auto") -> Sweep:
    """Every combination, parsed here to find which ask the same question (parsing
    is cheap; checking is not). Raises the template's mistakes as SpecErrors."""
    template.check(params)
    rows, texts = [], {}
    for values in combinations(params):
        text = template.fill(values)
        row = _parsed_row(template.path, text, values)
        rows.append(row)
        if row.question is not None:
            texts.setdefault(row.question, text)
    answers = {}
    for question in texts:
        found = cache.get(key.answer_key(question, check_engine, timeout))
        if found is not None:
            answers[question] = found
    to_ask = {q: Question(t, template.path, timeout, check_engine)
              for q, t in texts.items() if q not in answers}
    return Sweep(template.path, params, rows, answers, to_ask, len(answers))


def _parsed_row(path: str, text: str, values: dict[str, str]) -> Row:
    """The combination's question key, or its parse errors as its outcome."""
    try:
        return Row(values, key.question_key(parse_text(text, path)))
    except SpecError as e:
        return Row(values, None, Outcome.of_error(e.located(path), text))


def _answer_keyed(item: tuple[str, Question]) -> Outcome:
    return answer(item[1])
