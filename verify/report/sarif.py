"""SARIF 2.1.0 for GitHub code scanning (and any SARIF viewer), written with the
json module: one result per check the gate fails or notes (`verify.report.gate`:
by default, one that did not end as its `expect` says; level ``warning`` for an
unknown one, ``note`` for a failure a baseline accepts) and per spec error, at
its spec line. Checks that passed are not results: code scanning turns every
result into an alert.

Rule ids are stable, one per property kind (``verify/conflict_free``, ...), so
an alert keeps its rule across runs; each result's partial fingerprint hashes the
spec path, the property as written and its occurrence, not the line, so moving a
check does not open a new alert.
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING

from verify.report.text import ErrorRecord, default_gate, result_text

if TYPE_CHECKING:
    from verify.report.gate import Gate
    from verify.results import CheckResult

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
FINGERPRINT = "verifyCheck/v1"
SPEC_ERROR = "spec_error"
# The gate's level of a check -> SARIF's.
SARIF_LEVEL = {"error": "error", "warning": "warning", "notice": "note"}

# Property kind -> what it proves; the first word of a check as written.
RULES = {
    "in_bounds": "Every coordinate an access uses lies inside its layout's domain.",
    "aligned": "Every address of an access has the stated (or the instruction's natural) "
    "alignment.",
    "base_aligned": "The buffer's base alignment is what the layout's hardware unit needs "
    "(TMA box, GMMA atom, nvmma_shared encoding).",
    "bijective": "No two coordinates of a layout share memory.",
    "conflict_free": "No instance of an access hits a shared-memory bank more than once per phase.",
    "max_ways": "The worst bank conflict of an access meets its bound.",
    "wavefronts": "The wavefronts an access takes meet their bound.",
    "equivalent": "Two layouts (or expressions) give the same address everywhere.",
    SPEC_ERROR: "The spec parses and its names resolve.",
}


def sarif_report(
    results: list[CheckResult], errors: list[ErrorRecord], gate: Gate | None = None
) -> str:
    gate = default_gate(gate)
    gate.judge(results)
    kinds = list(RULES) + sorted({_kind(r) for r in results} - set(RULES))
    index = {kind: i for i, kind in enumerate(kinds)}
    occurrences: dict[tuple[str, str], int] = {}
    found = []
    for r in results:
        key = (r.file, r.property)
        occurrences[key] = occurrences.get(key, -1) + 1
        level = gate.level(r)
        if level:
            found.append(_check_result(r, index, occurrences[key], SARIF_LEVEL[level]))
    found += [_error_result(e, index) for e in errors]
    run = {
        "tool": {
            "driver": {
                "name": "verify",
                "version": _version(),
                "rules": [_rule(kind) for kind in kinds],
            }
        },
        "invocations": [{"executionSuccessful": not errors}],
        "columnKind": "unicodeCodePoints",
        "results": found,
    }
    return json.dumps({"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}, indent=2)


def _kind(r: CheckResult) -> str:
    return r.property.split()[0]


def _rule(kind: str) -> dict:
    text = RULES.get(kind, f"The spec's '{kind}' checks hold.")
    return {
        "id": f"verify/{kind}",
        "name": kind,
        "shortDescription": {"text": text},
        "fullDescription": {"text": text},
        "help": {
            "text": f"{text} A failing check's message is verify's report: the "
            "verdict, the figures and the counterexample."
        },
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["gpu", "shared-memory"], "precision": "very-high"},
    }


def _check_result(r: CheckResult, index: dict[str, int], occurrence: int, level: str) -> dict:
    kind = _kind(r)
    fingerprint = hashlib.sha256(f"{r.file}\0{r.property}\0{occurrence}".encode()).hexdigest()
    return {
        "ruleId": f"verify/{kind}",
        "ruleIndex": index[kind],
        "level": level,
        "message": {"text": "\n".join(result_text(r, located=False))},
        "locations": [_location(r.file, r.line)],
        "partialFingerprints": {FINGERPRINT: fingerprint[:32]},
        "properties": {
            "status": r.status.value,
            "expect": r.expect,
            "max_ways": r.max_ways,
            "wavefronts": r.wavefronts,
        },
    }


def _error_result(e: ErrorRecord, index: dict[str, int]) -> dict:
    fingerprint = hashlib.sha256(f"{e.file}\0{e.message}".encode()).hexdigest()
    return {
        "ruleId": f"verify/{SPEC_ERROR}",
        "ruleIndex": index[SPEC_ERROR],
        "level": "error",
        "message": {"text": e.text},
        "locations": [_location(e.file, e.line, e.col)],
        "partialFingerprints": {FINGERPRINT: fingerprint[:32]},
    }


def _location(file: str, line: int, col: int = 0) -> dict:
    region = {"startLine": max(1, line)}
    if col:
        region["startColumn"] = col
    return {"physicalLocation": {"artifactLocation": {"uri": artifact_uri(file)}, "region": region}}


def artifact_uri(path: str) -> str:
    """A path relative to the working directory (code scanning resolves relative
    URIs against the repository root, where CI runs verify), with '/' separators;
    a file elsewhere as an absolute file: URI."""
    relative = os.path.relpath(os.path.abspath(path))
    if relative.startswith(os.pardir):
        return Path(path).resolve().as_uri()
    return Path(relative).as_posix()


# The distribution pyproject.toml names (PyPI's "verify" is another project).
DISTRIBUTION = "verify-smem"


def _version() -> str:
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "0"
