"""One question of a sweep, answered in a worker, and its answer as plain data.

The answer keeps what the sweep reports (each check's verdict, figures and why it
failed), so it is small to send back from a cluster and to keep in the cache.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from verify.engines.options import RunOptions
from verify.engines.runner import run_spec
from verify.errors import InternalError, SpecError, each_error
from verify.results import CheckResult
from verify.spec.parser import parse_text
from verify.verdicts import Status

# Worst first: how a configuration's verdict is summed up.
SEVERITY = (
    "internal error",
    "error",
    Status.REFUTED.value,
    Status.UNKNOWN.value,
    Status.PROVED.value,
)


@dataclass(frozen=True)
class Question:
    """What travels to a worker: the spec as text, never parsed objects."""

    text: str
    file: str  # the template's path, so errors point into it
    options: RunOptions  # how each check is decided, and what it may spend
    ttgir: bool = False  # the text is a compiled kernel's TTGIR, not a spec


@dataclass(frozen=True)
class CheckRow:
    line: int
    text: str  # the check as written
    status: str
    expect: str | None = None
    max_ways: int | None = None
    wavefronts: int | None = None
    why: str = ""  # the counterexample's summary, or the reason it is unknown

    def fails(self, check_expect: bool) -> bool:
        """Fails as `verify` judges it: not proved, or with `check_expect` not as expected."""
        return self.status != ((self.expect if check_expect else None) or Status.PROVED.value)

    @property
    def access(self) -> str | None:
        """The access a bank check measures (its property's last word), when it has figures."""
        return self.text.split()[-1] if self.max_ways is not None else None

    @classmethod
    def of(cls, r: CheckResult) -> CheckRow:
        why = r.counterexample.summary if r.counterexample else r.reason
        return cls(
            r.line,
            r.property,
            r.status.value,
            r.expect,
            r.max_ways,
            r.wavefronts,
            "" if r.status == Status.PROVED else why,
        )


@dataclass(frozen=True)
class Outcome:
    checks: tuple[CheckRow, ...] = ()
    errors: tuple[str, ...] = ()  # spec errors as the CLI prints them, source line included
    internal: str = ""  # a bug in verify

    @property
    def verdict(self) -> str:
        if self.internal:
            return "internal error"
        if self.errors:
            return "error"
        return min((c.status for c in self.checks), key=SEVERITY.index)

    def failing(self, check_expect: bool) -> list[CheckRow]:
        return [c for c in self.checks if c.fails(check_expect)]

    def fails(self, check_expect: bool) -> bool:
        return bool(self.internal or self.errors or self.failing(check_expect))

    def figures(self) -> dict[str, tuple[int | None, int | None]]:
        """Max-ways and wavefronts of each access that a bank check measured."""
        return {c.access: (c.max_ways, c.wavefronts) for c in self.checks if c.access}

    @property
    def cacheable(self) -> bool:
        """An UNKNOWN depends on the machine's load and a crash on luck: asked again next time."""
        return not self.internal and all(c.status != Status.UNKNOWN.value for c in self.checks)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict) -> Outcome:
        return cls(
            tuple(CheckRow(**c) for c in doc["checks"]), tuple(doc["errors"]), doc["internal"]
        )

    @classmethod
    def of_error(cls, error: SpecError, text: str) -> Outcome:
        return cls(errors=tuple(str(e.with_source(text)) for e in each_error(error)))


def answer(question: Question) -> Outcome:
    """Runs in a worker: parses the text (a spec, or TTGIR) and builds every solver here."""
    try:
        if question.ttgir:
            from verify.ttgir.module import check_module

            results = check_module(question.text, question.options)
        else:
            spec = parse_text(question.text, question.file)
            results = run_spec(spec, question.options)
    except SpecError as e:
        if question.ttgir:  # located in the kernel's file, not in the TTGIR
            return Outcome(errors=tuple(str(e) for e in each_error(e.located(question.file))))
        return Outcome.of_error(e.located(question.file), question.text)
    except (InternalError, Exception) as e:  # noqa: BLE001 -- reported per configuration, exit 4
        return Outcome(internal=f"{type(e).__name__}: {e}")
    return Outcome(tuple(CheckRow.of(r) for r in results))
