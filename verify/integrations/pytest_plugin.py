"""pytest plugin: ``pytest --verify [PATHS]`` collects ``*.spec`` files, one test
item per check (each access's implicit checks included), and an item passes when
its check ends as its ``expect`` clause says (proved when it has none), as
``verify --check-expect`` judges. A failure is shown as verify's report of the
check, counterexample included.

Registered through the ``pytest11`` entry point, so it is loaded wherever verify
is installed; without ``--verify`` it only adds its options and collects nothing.
verify itself is imported only when a spec is collected, so other projects'
test runs do not pay for loading the solver.

``pytest --verify-triton`` checks every Triton kernel each test compiles
(`verify.integrations.triton_hook`, installed for the whole run) and fails the
test that compiled a kernel with a refuted check, naming the kernel, the check
and its Python line; kernels verify cannot read are listed in the summary.
Without the option nothing is installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr


def pytest_addoption(parser):
    group = parser.getgroup("verify", "verify: shared-memory layout specs")
    group.addoption(
        "--verify",
        action="store_true",
        default=False,
        help="collect *.spec files as tests, one item per check",
    )
    group.addoption(
        "--verify-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="seconds per check; a check that runs out is UNKNOWN (default 60)",
    )
    group.addoption(
        "--verify-engine",
        default="auto",
        choices=["auto", "z3", "enumeration"],
        help="who decides each check (default auto)",
    )
    group.addoption(
        "--verify-triton",
        action="store_true",
        default=False,
        help="check every Triton kernel each test compiles; a refuted one fails the test",
    )


_TRITON_SESSION = pytest.StashKey[object]()


def pytest_configure(config):
    if not config.getoption("verify_triton", False):
        return
    from verify.integrations.triton_exit import hide_leak_report_at_exit
    from verify.integrations.triton_hook import Session

    hide_leak_report_at_exit()  # Triton's bindings' report at exit, dozens of lines
    options = config.getoption
    session = Session(options("verify_timeout"), options("verify_engine"), report=None)
    session.install()
    config.stash[_TRITON_SESSION] = session
    config.add_cleanup(session.uninstall)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    session = item.config.stash.get(_TRITON_SESSION, None)
    if session is None:
        return (yield)
    first = len(session.compiled)
    outcome = yield  # the test's own failure propagates from here first
    from verify.integrations.triton_hook import failing_by_op
    from verify.report.text import counted
    from verify.smt.solve import Status

    compiled = dict.fromkeys(session.compiled[first:])
    refuted = [
        (session.kernel(h), r, more)
        for h in compiled
        for r, more in failing_by_op(session.kernel(h).refuted, (Status.REFUTED,))
    ]
    if refuted:  # the message alone: the plugin's frames say nothing of the kernel
        pytest.fail(
            "\n".join(
                f"{r.file}:{r.line}: REFUTED {r.property} in Triton kernel {k.name} "
                f"({k.target}, {k.source})\n    counterexample: {r.counterexample.summary}"
                + (
                    f"\n    and {counted(more, 'more instruction')} of this op alike"
                    if more
                    else ""
                )
                for k, r, more in refuted
                if r.counterexample is not None
            ),
            pytrace=False,
        )
    return outcome


def pytest_terminal_summary(terminalreporter, config):
    session = config.stash.get(_TRITON_SESSION, None)
    if session is None:
        return
    for error in session.errors:
        terminalreporter.write_line(f"verify: {error.header}")
    terminalreporter.write_line(session.summary())


def pytest_collect_file(file_path, parent):
    if parent.config.getoption("verify") and file_path.suffix == ".spec":
        return SpecFile.from_parent(parent, path=file_path)
    return None


class SpecFile(pytest.File):
    """One spec file. Its checks are planned from the parsed spec, so every
    pytest-xdist worker collects the same items without running anything; the
    whole spec runs once per process, when its first item runs."""

    def collect(self):
        from verify.errors import SpecError
        from verify.spec.parser import parse_file

        try:
            spec = parse_file(self._shown_path())
        except SpecError as e:
            raise SpecCollectError(str(e.located(self._shown_path()))) from None
        seen: dict[tuple[int, str], int] = {}
        for line, prop in planned_checks(spec):
            occurrence = seen[line, prop] = seen.get((line, prop), -1) + 1
            suffix = f" #{occurrence + 1}" if occurrence else ""
            yield CheckItem.from_parent(
                self,
                name=f"{prop} [line {line}]{suffix}",
                line=line,
                prop=prop,
                occurrence=occurrence,
            )

    def results(self):
        """(results, error text) of the whole spec, run on first use."""
        if not hasattr(self, "_outcome"):
            self._outcome = self._run()
        return self._outcome

    def _run(self):
        from verify import api
        from verify.errors import SpecError

        options = self.config.getoption
        try:
            return api.check(
                self._shown_path(), options("verify_timeout"), options("verify_engine")
            ), None
        except SpecError as e:
            return [], str(e)

    def _shown_path(self) -> str:
        """The path as the CLI would print it when run where pytest was."""
        try:
            return str(self.path.relative_to(self.config.invocation_params.dir))
        except ValueError:
            return str(self.path)

    # pytest's own Collector.repr_failure drops Node's `style` the same way (and
    # silences the same override error): a collector's failure has one style.
    def repr_failure(  # type: ignore[override]
        self, excinfo: pytest.ExceptionInfo[BaseException]
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, SpecCollectError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class CheckItem(pytest.Item):
    def __init__(self, *, line: int, prop: str, occurrence: int, **kwargs):
        super().__init__(**kwargs)
        self.line, self.prop, self.occurrence = line, prop, occurrence

    def runtest(self):
        assert isinstance(self.parent, SpecFile), "a check is collected from its spec file"
        results, error = self.parent.results()
        if error is not None:
            raise CheckFailed(error)
        matches = [r for r in results if (r.line, r.property) == (self.line, self.prop)]
        if len(matches) <= self.occurrence:
            raise CheckFailed(
                f"{self.path}:{self.line}: verify reported no check '{self.prop}' on this line"
            )
        result = matches[self.occurrence]
        if not result.passed:
            from verify.report.text import result_text

            raise CheckFailed("\n".join(result_text(result)))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, CheckFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, self.line - 1, f"{self.prop} [line {self.line}]"


class CheckFailed(Exception):
    """A check that did not end as expected; its message is verify's report."""


class SpecCollectError(Exception):
    """A spec that does not parse: its message is verify's located errors."""


def planned_checks(spec) -> list[tuple[int, str]]:
    """(line, property) of every check `verify.engines.runner` runs for `spec`, in its
    order: each access's in_bounds and natural alignment (unless an explicit
    'aligned N' covers it), a cp.async's in_bounds and alignment of its global
    source, each aligned-buffer layout's base alignment (unless checked
    explicitly), and the explicit checks."""
    from verify.model.instructions import parse_instruction

    items = []
    for access in spec.accesses.values():
        n = parse_instruction(access.instr_text).bytes_per_address
        implicit = [f"in_bounds {access.name}"]
        if not _explicitly_aligned(spec, access.name, n):
            implicit.append(f"aligned {n} {access.name}")
        if access.source is not None:
            where = f"{access.name} from {access.source.layout}"
            implicit += [f"in_bounds {where}", f"aligned {n} {where}"]
        items += [(access.pos.line, 0, prop) for prop in implicit]
    explicit = {c.target for c in spec.checks if c.kind == "base_aligned"}
    items += [
        (layout.pos.line, 0, f"base_aligned {layout.name}")
        for layout in spec.layouts.values()
        if layout.required_align > 1 and layout.name not in explicit
    ]
    items += [(check.pos.line, 1, check.text) for check in spec.checks]
    return [(line, prop) for line, _, prop in sorted(items, key=lambda t: t[:2])]


def _explicitly_aligned(spec, access: str, n: int) -> bool:
    return any(
        c.kind == "aligned" and c.target == access and c.bound >= n and c.bound % n == 0
        for c in spec.checks
    )
