"""What suggestions (verify.synth.repair) add to a run: every spec under specs/ with its
`expect` clauses removed (so that every refutation the specs document is a
failure to explain), plus one small spec per layout family; each run timed
without suggestions (`verify.engines.runner.run_spec`) and then the suggestions alone
(`verify.synth.repair.attach`). Every suggestion printed is substituted into the spec
and the spec run again: the failing check must be proved and no check that
passed may fail (a cross-check of the re-check the suggestion already made).

Writes benchmarks/results/suggest.csv and suggest.md. Times are wall-clock on
the machine named in the output (a shared 2-core box: noisy).

    python -m benchmarks.speed.suggest
"""

from __future__ import annotations

import csv
import glob
import os
import platform
import re
import statistics
import time

from verify.engines.runner import run_spec
from verify.errors import SpecError
from verify.integrations.triton_exit import hide_leak_report_at_exit
from verify.smt.solve import Status
from verify.spec.parser import parse_text
from verify.synth import repair as suggest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "benchmarks", "results")

_ROWS = (
    "dtype f16\nbuffer align 1024\nlayout A = {}\n"
    "access rd = ldmatrix.x1 A(lane, 8 * q) for q in 0..8\ncheck conflict_free rd\n"
)
_ALONG = (
    "dtype f16\nbuffer align 1024\nlayout A = {}\n"
    "access rd = ld.shared.v4.b32 A(k, 8 * (lane % 8)) for k in 0..64\ncheck max_ways <= 2 rd\n"
)
# One refuted spec per family (the shapes tests/synth/test_suggest.py checks).
FAMILY_SPECS = {
    "family/cute_plain": _ROWS.format("(8,64):(64,1)"),
    "family/cute_padded": _ROWS.format("(8,64):(80,1)"),
    "family/tile_to_shape": _ROWS.format("tile_to_shape(Sw<2,3,3> o (8,64):(64,1), (16, 64))"),
    "family/gmma": _ALONG.format("tile_to_shape(GMMA::Layout_K_SW32_Atom<half_t>, (64, 64))"),
    "family/nvmma_shared": _ALONG.format(
        "#ttg.nvmma_shared<{swizzlingByteWidth = 32, transposed = false, "
        "elementBitWidth = 16}> shape (64, 64)"
    ),
    "family/swizzled_shared": _ROWS.format(
        "#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 8, order = [1, 0]}> shape (8, 64)"
    ),
    "family/padded_shared": _ROWS.format(
        "#ttg.padded_shared<[128:+8] {order = [1, 0], shape = [8, 64]}> shape (8, 64)"
    ),
    "family/formula": _ROWS.format("A").replace(
        "layout A = A", "layout A(r in 0..8, c in 0..64) = 64*r + c"
    ),
    "family/two_accesses_clash": (
        "dtype f16\nbuffer align 128\nlayout A = (8,64):(64,1)\n"
        "access rd = ldmatrix.x1 A(lane, 0)\naccess other = ldmatrix.x1 A(lane, 8 * lane)\n"
        "check conflict_free rd\ncheck conflict_free other\n"
    ),
}
FIELDS = (
    "spec",
    "failing_bank_checks",
    "suggested",
    "no_suggestion_said",
    "silent",
    "rechecked_ok",
    "check_seconds",
    "suggest_seconds",
)


def _cases() -> list[tuple[str, str]]:
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "specs", "**", "*.spec"), recursive=True)):
        with open(path, encoding="utf-8") as f:
            text = re.sub(r"[ \t]+expect (?:proved|refuted)", "", f.read())
        out.append((os.path.relpath(path, ROOT), text))
    return out + list(FAMILY_SPECS.items())


def measure(name: str, text: str) -> dict | None:
    try:
        spec = parse_text(text, name)
        started = time.perf_counter()
        results = run_spec(spec)
    except SpecError:
        return None  # a synthesis question (?(R, C)) or a spec that needs its expects
    checked = time.perf_counter() - started
    failing = [r for r in results if not r.passed]
    started = time.perf_counter()
    suggest.attach(spec, results, text)
    added = time.perf_counter() - started
    bank = [r for r in failing if r.max_ways is not None and r.counterexample is not None]
    said = [r for r in bank if _no_suggestion(r)]
    suggested = [r for r in bank if r.counterexample and r.counterexample.suggestion]
    return {
        "spec": name,
        "failing_bank_checks": len(bank),
        "suggested": len(suggested),
        "no_suggestion_said": len(said),
        "silent": len(bank) - len(suggested) - len(said),
        "rechecked_ok": sum(_fixes(spec.file, text, results, r) for r in suggested),
        "check_seconds": round(checked, 3),
        "suggest_seconds": round(added, 3),
    }


def _no_suggestion(result) -> bool:
    return any(t.startswith("no suggestion") for _, t in result.counterexample.explanation)


def _fixes(file: str, text: str, before, result) -> bool:
    """The suggested statement in place: the check proved, nothing that passed fails
    but the exact figures of the conflict that the detail names."""
    statement, detail = result.counterexample.suggestion.split("\n", 1)
    name = statement.split()[1].split("(")[0]
    pattern = rf"(?m)^layout {re.escape(name)}\b.*$"
    after = run_spec(parse_text(re.sub(pattern, lambda _: statement, text, count=1), file))
    now = {(r.line, r.property): r for r in after}
    target = now.get((result.line, result.property))
    named = [r for r in before if f"'{r.property}' (line {r.line}), the figure" in detail]
    named += [r for r in before if f"'{r.property}' (line {r.line}) and '" in detail]
    kept = all(now[(r.line, r.property)].passed for r in before if r.passed and r not in named)
    return target is not None and target.status == Status.PROVED and kept


def machine() -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"{platform.node() or 'dev box'}: {os.cpu_count()} cores ({platform.machine()}), "
        f"Python {platform.python_version()}, load average {load:.1f} at the end, shared "
        "with other agents: times are noisy"
    )


def write(rows: list[dict]) -> None:
    with open(os.path.join(RESULTS, "suggest.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    with open(os.path.join(RESULTS, "suggest.md"), "w") as f:
        f.write(_markdown(rows))


def _markdown(rows: list[dict]) -> str:
    with_failures = [r for r in rows if r["failing_bank_checks"]]
    added = [r["suggest_seconds"] for r in with_failures]
    checked = [r["check_seconds"] for r in with_failures]
    totals = {k: sum(r[k] for r in rows) for k in FIELDS[1:6]}
    lines = [
        "# Suggestions: the time they add (python -m benchmarks.speed.suggest)",
        "",
        f"Machine: {machine()}.",
        "",
        f"{len(rows)} specs ({len(with_failures)} with a failing bank check once their "
        f"`expect` clauses are removed); {totals['failing_bank_checks']} failing bank checks: "
        f"{totals['suggested']} suggested, {totals['no_suggestion_said']} told why there is "
        f"none, {totals['silent']} silent (a layout of no family, or no member that meets "
        "the check). "
        f"{totals['rechecked_ok']} of {totals['suggested']} suggestions, substituted and run "
        "again here, prove their check and break nothing that passed.",
        "",
        f"Specs with a failing bank check: checking took median {statistics.median(checked):.3f} s "
        f"(max {max(checked):.3f} s); suggestions added median "
        f"{statistics.median(added):.2f} s, max {max(added):.2f} s "
        f"(the search tries at most {suggest.SEARCH_MEMBERS} members a spec; the re-checks "
        "come after it).",
        "",
        "| " + " | ".join(FIELDS) + " |",
        "| " + " | ".join("---" for _ in FIELDS) + " |",
    ]
    lines += ["| " + " | ".join(str(r[k]) for k in FIELDS) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def main() -> None:
    hide_leak_report_at_exit()  # the thread-map specs load Triton
    rows = [row for name, text in _cases() if (row := measure(name, text)) is not None]
    write(rows)
    print(_markdown(rows))


if __name__ == "__main__":
    main()
