"""Every repository path a document or docstring cites exists.

Scanned: README.md, docs/*.md, and the docstrings and comments of verify/**/*.py and
benchmarks/*.py. A citation is a path starting with one of the repository's
top-level folders below (backticked or plain). Braces expand (`slow_cases_{auto,z3}.md`
is two paths), and `*` or a `<placeholder>` matches any name. Facts the code relies
on belong in docs/ and benchmarks/results/, inside the repository: a path outside
it (such as shared/...) is a broken citation too.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
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
    return sorted([*ROOT.glob("verify/**/*.py"), *ROOT.glob("benchmarks/*.py")])


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


def _cases() -> list[tuple[str, str]]:
    cases = []
    for path in _documents():
        cases.append((str(path.relative_to(ROOT)), path.read_text()))
    for path in _sources():
        cases.append((str(path.relative_to(ROOT)), _docstrings_and_comments(path)))
    return cases


@pytest.mark.parametrize(("where", "text"), _cases(), ids=[c[0] for c in _cases()])
def test_cited_paths_exist(where: str, text: str) -> None:
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
    for name in ("design.md", "guarantees.md", "hardware.md", "speed.md"):
        assert (ROOT / "docs" / name).is_file()
    readme = (ROOT / "README.md").read_text()
    for name in ("docs/design.md", "docs/guarantees.md", "docs/hardware.md", "docs/speed.md"):
        assert name in readme, f"README.md does not link {name}"
