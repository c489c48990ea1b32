"""Baselines: the regression gate CI needs without pinning every figure in a spec.

`verify --update-baseline --baseline FILE` records each check's status, max-ways
and wavefronts; `verify --baseline FILE` then fails when a figure got worse than
recorded: max-ways or wavefronts higher (or gone), a proof turned unknown or
refuted. Checks are keyed by spec path, property as written and occurrence, not
by line, so moving a check keeps its record. A `--format json` report reads as a
baseline too: it has the same fields.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from verify.errors import SpecError

if TYPE_CHECKING:
    from verify.results import CheckResult

BASELINE_VERSION = 1
FIGURES = ("max_ways", "wavefronts")


@dataclass
class Comparison:
    regressions: list[str] = field(default_factory=list)  # one line per worse figure
    improvements: int = 0
    compared: int = 0
    new: list[CheckResult] = field(default_factory=list)  # checks with no record


def keyed(results: list[CheckResult]) -> dict[tuple[str, str, int], CheckResult]:
    """Each result under (spec, property, occurrence): a property written twice
    in one spec is told apart by its order."""
    out: dict[tuple[str, str, int], CheckResult] = {}
    seen: dict[tuple[str, str], int] = {}
    for r in results:
        file, prop = os.path.normpath(r.file), r.property
        seen[file, prop] = seen.get((file, prop), -1) + 1
        out[file, prop, seen[file, prop]] = r
    return out


def load(path: str) -> dict[tuple[str, str, int], dict]:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise SpecError(f"no baseline at {path}: record one with --update-baseline") from None
    except (OSError, ValueError) as e:
        raise SpecError(f"cannot read baseline {path}: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("checks"), list):
        raise SpecError(
            f"baseline {path}: expected a JSON object with a 'checks' list "
            "(written by --update-baseline, or a --format json report)"
        )
    entries: dict[tuple[str, str, int], dict] = {}
    seen: dict[tuple[str, str], int] = {}
    for i, entry in enumerate(doc["checks"]):
        problem = _malformed(entry)
        if problem:
            raise SpecError(f"baseline {path}: checks[{i}]: {problem}")
        file, prop = os.path.normpath(entry["spec"]), entry["property"]
        seen[file, prop] = seen.get((file, prop), -1) + 1
        entries[file, prop, seen[file, prop]] = entry
    return entries


STATUSES = ("proved", "refuted", "unknown")


def _malformed(entry) -> str:
    """What is wrong with one record ('' when nothing is), as ``expected ..., found ...``."""
    if not isinstance(entry, dict):
        return f"expected an object with 'spec' and 'property', found {json.dumps(entry)}"
    for name in ("spec", "property"):
        if not isinstance(entry.get(name), str):
            return f"'{name}': expected a string, found {_found(entry, name)}"
    if entry.get("status") not in STATUSES:
        return f"'status': expected one of {', '.join(STATUSES)}, found {_found(entry, 'status')}"
    for name in FIGURES:
        value = entry.get(name)
        if value is not None and (type(value) is not int or value < 0):
            return f"'{name}': expected a non-negative integer or null, found {json.dumps(value)}"
    return ""


def _found(entry: dict, name: str) -> str:
    return json.dumps(entry[name]) if name in entry else "none"


def differences(r: CheckResult, entry: dict) -> tuple[list[str], int]:
    """What got worse than `entry` records (as lines), and how many figures got better."""
    worse, better = [], 0
    if entry["status"] == "proved" and r.status.value != "proved":
        worse.append(f"proved -> {r.status.value}")
    elif entry["status"] != "proved" and r.status.value == "proved":
        better += 1
    for name in FIGURES:
        before, now = entry.get(name), getattr(r, name)
        if before is None:
            continue
        if now is None:
            worse.append(f"{name} {before} -> none ({r.status.value}: {r.reason or 'no figure'})")
        elif now > before:
            worse.append(f"{name} {before} -> {now}")
        elif now < before:
            better += 1
    return worse, better


def write(path: str, results: list[CheckResult], specs_run: list[str]):
    """Record `results`; entries of specs not run this time are kept, so a run
    over part of a repository updates only that part."""
    ran = {os.path.normpath(p) for p in specs_run}
    kept = []
    if os.path.exists(path):
        kept = [entry for key, entry in load(path).items() if key[0] not in ran]
    checks = kept + [_entry(r) for r in results]
    checks.sort(key=lambda e: os.path.normpath(e["spec"]))  # stable: file order kept
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"schema_version": BASELINE_VERSION, "checks": checks}, f, indent=1)
        f.write("\n")


def _entry(r: CheckResult) -> dict:
    return {
        "spec": os.path.normpath(r.file),
        "line": r.line,
        "property": r.property,
        "status": r.status.value,
        "max_ways": r.max_ways,
        "wavefronts": r.wavefronts,
    }
