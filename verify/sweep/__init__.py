"""`verify sweep`: every combination of a spec template's parameters, each distinct
question asked once (`key`), answers kept on disk (`cache`), asked on local
processes or a Dask cluster (`engine`), reported as one table (`table`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from verify.engines.options import RunOptions
from verify.errors import SpecError
from verify.spec.parser import parse_text
from verify.sweep import kernel as kernel_sweep
from verify.sweep import key
from verify.sweep.engine import Engine
from verify.sweep.kernel import Kernel
from verify.sweep.question import Outcome, Question, answer
from verify.sweep.template import Param, Template, combinations


@dataclass
class Row:
    values: dict[str, str]
    question: str  # its question key; a text that does not parse has a key of its own


@dataclass
class Sweep:
    """A sweep planned: its rows, the answers the cache holds and the questions left
    to ask; `ask` fills in the rest."""

    template: str  # its path
    params: list[Param]
    rows: list[Row]
    answers: dict[str, Outcome]  # by question key
    to_ask: dict[str, Question]  # by question key
    from_cache: set[str] = field(default_factory=set)  # question keys the cache answered

    @property
    def cached(self) -> int:
        """Distinct questions the cache answered."""
        return len(self.from_cache)

    @property
    def distinct(self) -> int:
        return self.cached + len(self.to_ask)

    def outcome(self, row: Row) -> Outcome:
        """The row's answer; every row has one once `ask` has run."""
        return self.answers[row.question]

    def outcomes(self) -> list[Outcome]:
        return [self.outcome(row) for row in self.rows]

    def ask(self, engine: Engine, cache, on_answer=lambda: None) -> Sweep:
        """Answers every question left, keeping each answer in `cache` as it comes;
        `on_answer()` after each (a progress bar's step)."""
        with engine.run(_answer_keyed, self.to_ask.items()) as run:
            for (question, asked), outcome in run:
                self.answers[question] = outcome
                cache.put(key.answer_key(question, asked.options), outcome)
                on_answer()
        return self


def plan(
    template: Template,
    params: list[Param],
    cache,
    options: RunOptions | None = None,
) -> Sweep:
    """Every combination, parsed here to find which ask the same question (parsing
    is cheap; checking is not), each check of it run under `options`. Raises the
    template's mistakes as SpecErrors."""
    template.check(params)
    rows: list[Row] = []
    texts: dict[str, str] = {}
    answers: dict[str, Outcome] = {}
    for number, values in enumerate(combinations(params)):
        text = template.fill(values)
        try:
            question = key.question_key(parse_text(text, template.path))
        except SpecError as e:
            # Its parse errors are its answer: never asked, never cached.
            question = f"unparsed {number}"
            answers[question] = Outcome.of_error(e.located(template.path), text)
        else:
            texts.setdefault(question, text)
        rows.append(Row(values, question))
    asked = Question("", template.path, options or RunOptions())
    return _keyed(params, rows, texts, answers, cache, asked)


def _keyed(params, rows, texts, answers, cache, asked: Question) -> Sweep:
    """The sweep of `rows` once each has its question key: the cache's answers, and
    the distinct questions (`texts`, by key) left to ask, each as `asked` with its text."""
    from_cache: set[str] = set()
    for question in texts:
        found = cache.get(key.answer_key(question, asked.options))
        if found is not None:
            answers[question] = found
            from_cache.add(question)
    to_ask = {q: replace(asked, text=t) for q, t in texts.items() if q not in answers}
    return Sweep(asked.file, params, rows, answers, to_ask, from_cache)


def plan_kernel(
    kernel: Kernel,
    params: list[Param],
    cache,
    engine: Engine,
    options: RunOptions | None = None,
    on_compiled=lambda: None,
) -> Sweep:
    """Every configuration of a Triton kernel, compiled on `engine` (`on_compiled()`
    after each); configurations with the same TTGIR ask one question, its checks
    run under `options`. Raises the command line's mistakes as SpecErrors
    before anything compiles."""
    planned = kernel_sweep.configs(kernel, params)
    compiled: dict[int, kernel_sweep.Compiled] = {}
    with engine.run(_compile_numbered, list(enumerate(c for _, c in planned))) as run:
        for (number, _), result in run:
            compiled[number] = result
            on_compiled()
    rows: list[Row] = []
    texts: dict[str, str] = {}
    answers: dict[str, Outcome] = {}
    for number, (values, _) in enumerate(planned):
        result = compiled[number]
        if result.errors:
            question = f"uncompiled {number}"
            answers[question] = Outcome(errors=result.errors)
        else:
            question = kernel_sweep.question_key(result.ttgir)
            texts.setdefault(question, result.ttgir)
        rows.append(Row(values, question))
    asked = Question("", kernel.path, options or RunOptions(), ttgir=True)
    return _keyed(params, rows, texts, answers, cache, asked)


def _compile_numbered(item):
    return kernel_sweep.compile_config(item[1])


def _answer_keyed(item: tuple[str, Question]) -> Outcome:
    return answer(item[1])
