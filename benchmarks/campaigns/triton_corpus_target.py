"""``verify ttgir --target`` before and after it lowered the module (issue 26):
the lit modules of benchmarks/campaigns/triton_corpus.py that carry no
``ttg.target`` of their own, checked twice, per op kind.

    python -m benchmarks.campaigns.triton_corpus_target          # both runs, then the table
    python -m benchmarks.campaigns.triton_corpus_target --before B.jsonl --after A.jsonl

*Before*: such a module was read by TTGIR's lowering rules for the target given
(``--no-ptx``: what ``verify ttgir --target`` did while `verify.ttgir.lower`
lowered only a module's own ``ttg.target``). *After*: the target is written into
the module and Triton lowers it, so each op's checks are its PTX instructions
(`verify.ttgir.lower.with_target`). The modules: those without ``ttg.target``
(or ``ttg.compute-capability``), their target from the RUN line, else the
encodings, else sm_90, as the corpus finds it; the table counts those checked
in both runs. Writes
``benchmarks/results/triton_corpus_target.{md,csv}``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time

from benchmarks.campaigns import triton_corpus as corpus

RESULTS = "benchmarks/results/triton_corpus_target"
READ_BY_HAND = "## Read by hand"  # the md's section a person writes, kept


def _load(path: str) -> list[tuple[dict, dict]]:
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [({"id": r["item"], "kind": r["kind"]}, r) for r in rows]


def _run(work: str, ids: str | None, out: str, ptx: bool) -> str:
    assert ids is not None, "a run needs its ids (main gives none only with both runs)"
    argv = [sys.executable, "-m", "benchmarks.campaigns.triton_corpus", "--only", "lit"]
    argv += ["--work", work, "--ids", ids, "--out", out] + ([] if ptx else ["--no-ptx"])
    subprocess.run(argv, check=True)
    return os.path.join(work, os.path.basename(out) + ".jsonl")


def _without_target(work: str) -> str:
    """The ids of the lit modules without a target of their own, one a line, in a
    file under `work` (those Triton refuses are refused in both runs)."""
    root = corpus.unpack(corpus.TRITON_GIT, corpus.COMMIT, work)
    ids = []
    for item in corpus.lit_modules(root, work):
        with open(item["file"], encoding="utf-8") as f:
            if not corpus._MODULE_TARGET.search(f.read()):
                ids.append(item["id"])
    path = os.path.join(work, "without_target.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(ids) + "\n")
    return path


def table(before: list[tuple[dict, dict]], after: list[tuple[dict, dict]]) -> list[str]:
    """Per op kind, ops decided (proved + refuted), refuted and not modelled, before
    and after, over the modules checked in both."""
    both = {i["id"] for i, a in before if a["outcome"] == "checked"} & {
        i["id"] for i, a in after if a["outcome"] == "checked"
    }
    old = corpus.per_op([(i, a) for i, a in before if i["id"] in both])
    new = corpus.per_op([(i, a) for i, a in after if i["id"] in both])
    head = "| op kind | ops before | decided before | refuted before | not modelled before "
    head += "| ops after | decided after | refuted after | not modelled after |"
    lines = [head, "|---" * 9 + "|"]
    kinds = sorted(set(old) | set(new), key=lambda k: -(new[k]["ops"] or old[k]["ops"]))
    totals: collections.Counter[str] = collections.Counter()
    for kind in kinds:
        cells = []
        for side, c in (("before", old[kind]), ("after", new[kind])):
            decided = c["ops proved"] + c["ops refuted"]
            cells += [c["ops"], decided, c["ops refuted"], c["ops not modelled"]]
            totals.update(
                {
                    f"ops {side}": c["ops"],
                    f"decided {side}": decided,
                    f"refuted {side}": c["ops refuted"],
                    f"not modelled {side}": c["ops not modelled"],
                }
            )
        lines.append(f"| {kind} | " + " | ".join(map(str, cells)) + " |")
    total = [
        totals[f"{what} {side}"]
        for side in ("before", "after")
        for what in ("ops", "decided", "refuted", "not modelled")
    ]
    lines.append("| **all** | " + " | ".join(f"**{n}**" for n in total) + " |")
    return [f"{len(both)} modules checked both times.", "", *lines]


def instructions(after: list[tuple[dict, dict]]) -> collections.Counter:
    return collections.Counter(
        (a.get("instructions") or "").split(" (")[0] for _, a in after if a["outcome"] == "checked"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "verify-corpus"))
    parser.add_argument("--ids", help="the modules, one id a line (default: all without target)")
    parser.add_argument("--before", help="a --no-ptx run's jsonl (skips that run)")
    parser.add_argument("--after", help="a lowering run's jsonl (skips that run)")
    parser.add_argument("--out", default=RESULTS)
    args = parser.parse_args(argv)
    started = time.time()
    ids = args.ids or (None if args.before and args.after else _without_target(args.work))
    before = args.before or _run(args.work, ids, os.path.join(args.work, "before"), ptx=False)
    after = args.after or _run(args.work, ids, os.path.join(args.work, "after"), ptx=True)
    old, new = _load(before), _load(after)
    lines = table(old, new)
    corpus.write_csv(args.out + ".csv", [(dict(i, kind="lit after"), a) for i, a in new])
    how = instructions(new)
    outcomes = collections.Counter(a["outcome"] for _, a in new)
    text = [
        "# verify ttgir --target: lit modules without ttg.target, before and after lowering",
        "",
        f"Issue 26. `python -m benchmarks.campaigns.triton_corpus_target` (its module doc "
        f"says what before and after are). Triton {corpus._triton_version()}; verify "
        f"{corpus.verify_commit()}; triton-lang/triton {corpus.COMMIT[:12]}. Machine: "
        f"{corpus.machine_line()}; {time.time() - started:.0f} s here (the runs' own "
        f"times: the csv). After: "
        f"{len(new)} modules, outcomes {dict(outcomes)}; per-op checks from "
        + ", ".join(f"{k or '?'}: {n}" for k, n in sorted(how.items()))
        + " (`ptx`: Triton lowered the module; `ttgir`: it could not, TTGIR's rules "
        "kept, with why). No traceback, abort, hang or unlocated error in either run"
        + ("" if not (set(outcomes) - {"checked", "nothing to check"}) else " (see csv)")
        + ". Per module: `triton_corpus_target.csv`.",
        "",
        "An op is counted once per module by its worst result, as in "
        "`triton_corpus.md`; decided = proved + refuted. A PTX instruction that "
        "matches no TTGIR op is counted under its opcode.",
        "",
        *lines,
        "",
    ]
    kept = ""  # the section a person writes, kept when the tables are written again
    if os.path.exists(args.out + ".md"):
        with open(args.out + ".md", encoding="utf-8") as f:
            old_text = f.read()
        if READ_BY_HAND in old_text:
            kept = old_text[old_text.index(READ_BY_HAND) :]
    with open(args.out + ".md", "w", encoding="utf-8") as f:
        f.write("\n".join(text) + ("\n" + kept if kept else ""))
    print("\n".join(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
