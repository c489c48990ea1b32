"""Every repository path a document or docstring cites exists, and every example runs.

Scanned: README.md, docs/*.md, and the docstrings and comments of verify/**/*.py and
benchmarks/**/*.py. A citation is a path starting with one of the repository's
top-level folders below (backticked or plain). Braces expand (`slow_cases_{auto,z3}.md`
is two paths), and `*` or a `<placeholder>` matches any name. Facts the code relies
on belong in docs/ and benchmarks/results/, inside the repository: a path outside
it (such as shared/...) is a broken citation too.
"""

from __future__ import annotations

import ast
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("specs", "tests", "verify", "benchmarks", "docs", "shared")

# A path: one of FOLDERS, then path characters; not part of a longer path or name
# (so `github.com/x/docs/...`, `~/.cache/verify` and `my_specs/` are not citations).
CITATION = re.compile(r"(?<![\w/.~-])((?:" + "|".join(FOLDERS) + r")/[\w./{},*<>-]*)")

# Names that look like paths and are not: SARIF rule ids (`verify/conflict_free`, ...).
RULE_IDS = re.compile(
    r"verify/(aligned|base_aligned|bijective|conflict_free|equivalent|in_bounds|max_ways"
    r"|wavefronts|spec_error)$"
)


def _is_rule_id(text: str) -> bool:
    return bool(RULE_IDS.match(text)) and not (ROOT / text).exists()


def _documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _sources() -> list[Path]:
    return sorted([*ROOT.glob("verify/**/*.py"), *ROOT.glob("benchmarks/**/*.py")])


def _docstrings_and_comments(path: Path) -> str:
    source = path.read_text()
    parts = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                parts.append(doc)
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            parts.append(token.string)
    return "\n".join(parts)


def _expand(text: str) -> list[str]:
    brace = re.search(r"\{([^{}]*)\}", text)
    if not brace:
        return [text]
    head, tail = text[: brace.start()], text[brace.end() :]
    return [p for alt in brace.group(1).split(",") for p in _expand(head + alt + tail)]


def citations(text: str) -> list[str]:
    """The repository paths `text` cites, as written (trailing punctuation dropped)."""
    found = []
    for match in CITATION.finditer(text):
        cited = match.group(1).rstrip(".,:")
        if cited.count("{") != cited.count("}"):  # a brace list cut by a comma or space
            cited = cited[: cited.index("{")]
        if not _is_rule_id(cited):
            found.append(cited)
    return found


def exists(cited: str) -> bool:
    for path in _expand(cited):
        pattern = re.sub(r"<[^<>]*>", "*", path)
        if "*" in pattern:
            if not any(ROOT.glob(pattern.rstrip("/"))):
                return False
        elif not (ROOT / path).exists():
            return False
    return True


def _cases() -> list[str]:
    """The documents and sources scanned, relative to the repository; each is read
    (a source tokenized) by its own test, not at collection in every worker."""
    return [str(path.relative_to(ROOT)) for path in [*_documents(), *_sources()]]


def _text(where: str) -> str:
    path = ROOT / where
    return path.read_text() if path.suffix == ".md" else _docstrings_and_comments(path)


@pytest.mark.parametrize("where", _cases())
def test_cited_paths_exist(where: str) -> None:
    text = _text(where)
    missing = sorted({c for c in citations(text) if not exists(c)})
    assert not missing, f"{where} cites paths that do not exist: {missing}"


def test_the_scan_reads_what_it_should() -> None:
    # The scanner itself: the three citations issue 17 found broken are caught,
    # a brace list and a placeholder expand, and non-paths are left alone.
    text = (
        "see `specs/seed_8x64_swizzled.spec`, tests/test_enumerate.py and "
        "``shared/hardware/h200.md``; `benchmarks/results/slow_cases_{auto,z3}.md`, "
        "benchmarks/results/slow_cases_<engine>.md, rule `verify/conflict_free`, "
        "https://example.com/docs/x.md, ~/.cache/verify"
    )
    cited = citations(text)
    assert cited == [
        "specs/seed_8x64_swizzled.spec",
        "tests/test_enumerate.py",
        "shared/hardware/h200.md",
        "benchmarks/results/slow_cases_{auto,z3}.md",
        "benchmarks/results/slow_cases_<engine>.md",
    ]
    assert [exists(c) for c in cited] == [False, False, False, True, True]


def test_the_documents_are_there() -> None:
    # The README is the guide: it links every page of docs/.
    for name in OWNED:
        assert (ROOT / name).is_file(), f"{name} is gone"
    readme = (ROOT / "README.md").read_text()
    for page in sorted((ROOT / "docs").glob("*.md")):
        name = str(page.relative_to(ROOT))
        assert f"]({name}" in readme, f"README.md does not link {name}"


# ---------------------------------------------------------------------------
# Every example runs.
#
# The guide (README.md) and the reference pages it links (OWNED below) show
# examples as fenced blocks, and each kind is run or checked so none rots:
#
# - a block with lines starting `$ ` is a shell session: each command (with its
#   `\` continuation lines) runs under bash in a scratch folder holding a copy of
#   the repository's specs/ and templates/ (a fresh answer cache for each block,
#   as a reader's first run has), and what it prints (stdout and stderr)
#   must match the lines shown under it up to the next `$ `. Shown `...` alone on
#   a line stands for any lines, `...` inside a line for any text; runs of
#   spaces count as one and times (`3 ms`, `0.2 s`, `1.20s`) as any time; a
#   printed JSON document is compared on one line with the shown lines joined. A
#   command with nothing shown under it must still run: no traceback, no
#   internal error (exit 4), no usage or spec error (exit 2) unless the lines
#   shown are errors;
# - a ```spec block is a whole spec: every check must end as its `expect` says;
# - a ```python block runs (test_* functions it defines are called); trailing
#   comment lines `# SomeError: ...` are the exception it must raise, its message
#   matched as above;
# - ```text file=PATH is a file the page's sessions use, written into the
#   scratch folder before they run; ```text excerpt=PATH is lines of a repository
#   file, in order (a first line `# PATH` names it);
# - needs=gpu on a block marks it `gpu`: run only where a GPU is (conftest.py).
#
# Other blocks (grammar summaries, YAML, pictures of output without a command)
# are shown only.
# ---------------------------------------------------------------------------

OWNED = (
    "README.md",
    "docs/language.md",
    "docs/checks.md",
    "docs/catalog.md",
    "docs/tools.md",
    "docs/kernels.md",
    "docs/ci.md",
    "docs/api.md",
    "docs/synthesis.md",
    "docs/sweeps.md",
    "docs/design.md",
)
FENCE = re.compile(r"^```(\S*)(.*)$")
TIME = re.compile(r"\b\d+(?:\.\d+)? ?(?:ms|s)\b")
SESSION_TIMEOUT_S = 600


@dataclass(frozen=True)
class Block:
    doc: str  # relative to ROOT
    line: int  # of the opening fence, 1-based
    lang: str
    attrs: dict[str, str]
    lines: tuple[str, ...]

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def blocks(doc: str, text: str) -> list[Block]:
    """The fenced blocks of a Markdown page, with their info-string attributes."""
    found: list[Block] = []
    open_at, head, body = 0, ("", ""), list[str]()
    for number, line in enumerate(text.splitlines(), 1):
        fence = FENCE.match(line)
        if open_at and line.rstrip() == "```":
            lang, rest = head
            attrs = dict(w.partition("=")[::2] for w in rest.split())
            found.append(Block(doc, open_at, lang, attrs, tuple(body)))
            open_at = 0
        elif not open_at and fence:
            open_at, head, body = number, (fence.group(1), fence.group(2)), []
        elif open_at:
            body.append(line)
    return found


def sessions(block: Block) -> list[tuple[str, list[str]]]:
    """A shell session's (command, lines shown under it)."""
    out: list[tuple[str, list[str]]] = []
    lines = list(block.lines)
    while lines:
        line = lines.pop(0)
        if not line.startswith("$ "):
            if out:
                out[-1][1].append(line)
            continue
        command = line[2:]
        while command.endswith("\\") and lines:
            command += "\n" + lines.pop(0)
        out.append((command, []))
    return out


def _normal(line: str) -> str:
    return " ".join(TIME.sub("<time>", line).split())


def _line_pattern(shown: str) -> re.Pattern:
    parts = [re.escape(p.strip()) for p in _normal(shown).split("...")]
    return re.compile(".*".join(parts))


def matches(shown: list[str], printed: list[str]) -> bool:
    """Whether `printed` reads as `shown`, `...` standing for what is left out."""
    shown = [s for s in shown if s.strip()]
    printed = [_normal(p) for p in printed if p.strip()]
    # ends[j]: the shown lines so far can account for exactly printed[:j]
    ends = [True] + [False] * len(printed)
    for s in shown:
        if s.strip() == "...":
            ends = [any(ends[: j + 1]) for j in range(len(printed) + 1)]
            continue
        pattern = _line_pattern(s)
        ends = [False] + [
            ends[j] and bool(pattern.fullmatch(printed[j])) for j in range(len(printed))
        ]
    return ends[-1]


def _run_shell(command: str, cwd: Path, cache: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["VERIFY_CACHE_DIR"] = str(cwd / ".cache" / cache)  # a block's sweeps start cold
    env["TRITON_CACHE_DIR"] = str(cwd / ".triton")  # its kernels name their source's path
    env["COLUMNS"] = "80"
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleaved as printed
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=SESSION_TIMEOUT_S,
    )


_SCRATCH: dict[str, Path] = {}


def _scratch(doc: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder per page and process: the repository's inputs, the page's files."""
    if doc not in _SCRATCH:
        folder = tmp_path_factory.mktemp(Path(doc).stem)
        for name in ("specs", "templates"):  # copied: a link would show in resolved paths
            shutil.copytree(ROOT / name, folder / name)
        (folder / "docs" / "img").mkdir(parents=True)
        for block in blocks(doc, (ROOT / doc).read_text()):
            if "file" in block.attrs:
                path = folder / block.attrs["file"]
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("\n".join(block.lines) + "\n")
        _SCRATCH[doc] = folder
    return _SCRATCH[doc]


def _as_printed(stdout: str, shown: list[str]) -> tuple[list[str], list[str]]:
    """A JSON document is compared on one line: shown wrapped, printed indented."""
    try:
        document = json.loads(stdout)
    except ValueError:
        return shown, stdout.splitlines()
    return [" ".join(s.strip() for s in shown)], [json.dumps(document)]


def _check_session(block: Block, folder: Path) -> None:
    for command, shown_lines in sessions(block):
        done = _run_shell(command, folder, cache=str(block.line))
        shown, printed = _as_printed(done.stdout, shown_lines)
        report = f"{block.where}: $ {command}\nexit {done.returncode}, printed:\n{done.stdout}"
        assert "Traceback (most recent call last)" not in done.stdout, report
        assert done.returncode != 4, report
        if done.returncode == 2:
            assert any("error:" in s for s in shown_lines), report
        if shown_lines:
            assert matches(shown, printed), report


def _check_spec(block: Block, folder: Path) -> None:
    path = folder / f"example_{block.line}.spec"
    path.write_text("\n".join(block.lines) + "\n")
    done = _run_shell(f"verify --check-expect {path.name}", folder, cache=str(block.line))
    assert done.returncode == 0, f"{block.where}: exit {done.returncode}\n{done.stdout}"


def _expected_exception(lines: tuple[str, ...]) -> tuple[str, list[str]] | None:
    """The exception trailing comment lines `# Error: message` show, if any."""
    tail: list[str] = []
    for line in reversed(lines):
        if not line.startswith("#"):
            break
        tail.insert(0, line[2:] if line.startswith("# ") else line[1:])
    for i, line in enumerate(tail):
        name, colon, message = line.partition(": ")
        if colon and re.fullmatch(r"[A-Z]\w*(Error|Exception)", name):
            return name, [message, *tail[i + 1 :]]
    return None


def _check_python(block: Block, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(folder)
    namespace: dict = {"__name__": f"example_{block.line}"}
    expected = _expected_exception(block.lines)
    try:
        exec(compile("\n".join(block.lines), block.where, "exec"), namespace)
        for name, value in list(namespace.items()):
            if name.startswith("test_") and callable(value):
                value()
    except Exception as e:
        if expected is None or type(e).__name__ != expected[0]:
            raise
        assert matches(expected[1], str(e).splitlines()), f"{block.where}: raised\n{e}"
        return
    assert expected is None, f"{block.where}: expected {expected[0]}, nothing raised"


def _untimed(line: str) -> str:
    """A line without its check time: the goldens (tests/golden/) print `[ms, ...]`."""
    return re.sub(r"\[\d+ ms", "[ms", line.rstrip())


def _check_excerpt(block: Block) -> None:
    cited = block.attrs["excerpt"]
    lines = [line for line in block.lines if line.strip() and line != f"# {cited}"]
    source = iter((ROOT / cited).read_text().splitlines())
    for line in lines:
        assert any(_untimed(s) == _untimed(line) for s in source), (
            f"{block.where}: {line!r} is not a line of {cited} (after the lines before it)"
        )


def _examples() -> list:
    out = []
    for doc in OWNED:
        if not (ROOT / doc).is_file():
            continue
        for block in blocks(doc, (ROOT / doc).read_text()):
            runs = (
                any(line.startswith("$ ") for line in block.lines)
                or block.lang in ("spec", "python")
                or "excerpt" in block.attrs
            )
            if runs and "file" not in block.attrs:
                marks = [pytest.mark.gpu] if block.attrs.get("needs") == "gpu" else []
                out.append(pytest.param(block, id=block.where, marks=marks))
    return out


@pytest.mark.parametrize("block", _examples())
def test_every_example_runs(
    block: Block, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    if "excerpt" in block.attrs:
        _check_excerpt(block)
        return
    folder = _scratch(block.doc, tmp_path_factory)
    if block.lang == "python":
        _check_python(block, folder, monkeypatch)
    elif block.lang == "spec":
        _check_spec(block, folder)
    else:
        _check_session(block, folder)


def test_the_example_reader_reads_what_it_should() -> None:
    page = (
        "prose\n```text file=a.spec\ndtype f16\n```\n"
        "```text\n$ verify a \\\n  b   # note\nPROVED  x  [3 ms]\n...\n$ verify c\n```\n"
        "```yaml\non: [push]\n```\n"
    )
    found = blocks("p.md", page)
    assert [(b.line, b.lang, b.attrs) for b in found] == [
        (2, "text", {"file": "a.spec"}),
        (5, "text", {}),
        (12, "yaml", {}),
    ]
    assert sessions(found[1]) == [
        ("verify a \\\n  b   # note", ["PROVED  x  [3 ms]", "..."]),
        ("verify c", []),
    ]
    assert matches(["PROVED  x  [3 ms]", "..."], ["PROVED x [0 ms]", "more", "lines"])
    assert matches(["a ... z"], ["a, b and z"])
    assert not matches(["PROVED x"], ["REFUTED x"])
    assert not matches(["a", "b"], ["a"])
    assert not matches(["a"], ["a", "b"])  # an unshown line needs a `...`
    assert _expected_exception(("f()", "# AssertionError: REFUTED", "#   more")) == (
        "AssertionError",
        ["REFUTED", "  more"],
    )


def test_the_readme_starts_with_the_set_up_commands(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # Its first block installs and checks a bundled spec, then installs and runs the
    # tests; what the first one checks must prove (the text says it does).
    first = blocks("README.md", (ROOT / "README.md").read_text())[0]
    install, tests = first.lines
    assert first.lang == "sh" and install.startswith("python3 -m venv .venv && ")
    assert " && pip install -e '.[test]' && python -m pytest -q" in tests
    # CI runs the README's test command (after the same install).
    ci_lines = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci_lines[-1] == tests.rpartition(" && ")[2]
    check = install.rpartition(" && ")[2]
    assert check.startswith("verify specs/")
    done = _run_shell(check, _scratch("README.md", tmp_path_factory), cache="set-up")
    assert done.returncode == 0, done.stdout
