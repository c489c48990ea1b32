"""Start-up: the CPU seconds a quick command costs above Python's own start
(issue 23: the seed spec in at most 0.3 s, ``verify --help`` in at most 0.15 s).

    python -m benchmarks.speed.startup [--before COMMIT] [--tree DIR]   # results/startup.md

Each command runs ROUNDS times in its own process, one after another; a run's
figure is its user + system CPU time (`resource.RUSAGE_CHILDREN`), and the table
gives the median less the median of ``python -c pass``. CPU time, not wall time,
so that the other users of a shared machine change the figures little. Bytecode
is written (into a private PYTHONPYCACHEPREFIX) and the grammar's analysis cached
(in a private XDG_CACHE_HOME) by one warm-up run of each command, as after an
install and a first use; the ``first run`` column is that warm-up, with neither.
The heavy libraries each command loaded are read from ``python -X importtime``.
``--before COMMIT`` measures that commit's tree too, for comparison; ``--tree DIR``
a tree given as a directory holding `verify/` (a proposed change not yet
committed, say), run from there as `python -m verify.cli`. The trees take turns
run by run, so the machine's load weighs on each alike.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile

from benchmarks.speed.catalog import machine

RESULTS = "benchmarks/results/startup.md"
ROUNDS = 9
SEED = "specs/seed/ldmatrix_x1_8x64_swizzled.spec"
HEAVY = ("numpy", "lark", "z3", "sympy", "triton", "matplotlib")
# (name, arguments after `verify`, target in CPU seconds above Python's start)
QUESTIONS = [
    ("verify --help", ["--help"], 0.15),
    (f"verify {SEED}", [SEED], 0.3),
    ("verify map 'Sw<3,3,3> o (8,64):(64,1)'", ["map", "Sw<3,3,3> o (8,64):(64,1)"], None),
    (
        "verify wavefronts ld.shared.b32 0 4 ... 124",
        ["wavefronts", "ld.shared.b32"] + [str(4 * lane) for lane in range(32)],
        None,
    ),
]


def commands(verify: list[str]) -> list[tuple[str, list[str], float | None]]:
    """Python alone, importing the command line, then each question to `verify`."""
    return [
        ("python -c pass", [sys.executable, "-c", "pass"], None),
        ("python -c 'import verify.cli'", [sys.executable, "-c", "import verify.cli"], None),
        *[(name, [*verify, *args], target) for name, args, target in QUESTIONS],
    ]


def cpu_seconds(command: list[str], env: dict[str, str], cwd: str) -> float:
    """User + system CPU seconds of one run of `command`, in its own process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def heavy_loaded(command: list[str], env: dict[str, str], cwd: str) -> list[str]:
    """Which of HEAVY the command imported, from the names -X importtime prints."""
    done = subprocess.run(
        [command[0], "-X", "importtime", *command[1:]],
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    names = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    return [m for m in HEAVY if m in names]


def measure(trees: list[tuple[list[str], str]], env: dict[str, str]) -> list[list[dict]]:
    """Each command's rows for each (verify command, working directory) in `trees`.
    The trees take turns run by run, so a change of the machine's load while this
    runs weighs on every tree alike."""
    listed = [commands(verify) for verify, _ in trees]
    out: list[list[dict]] = [[] for _ in trees]
    for i, (name, _, target) in enumerate(listed[0]):
        runs: list[list[float]] = [[] for _ in trees]
        firsts = [cpu_seconds(listed[t][i][1], env, cwd) for t, (_, cwd) in enumerate(trees)]
        for _ in range(ROUNDS):
            for t, (_, cwd) in enumerate(trees):
                runs[t].append(cpu_seconds(listed[t][i][1], env, cwd))
        for t, (_, cwd) in enumerate(trees):
            out[t].append(
                {
                    "name": name,
                    "target": target,
                    "first": firsts[t],
                    "median": statistics.median(runs[t]),
                    "spread": (min(runs[t]), max(runs[t])),
                    "heavy": heavy_loaded(listed[t][i][1], env, cwd),
                }
            )
    return out


def exported(commit: str, scratch: str) -> str:
    """`commit`'s tree, exported with git archive into `scratch`: run from there as
    `python -m verify.cli`, so that its verify is the one imported."""
    archive = subprocess.run(["git", "archive", commit], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", scratch], input=archive.stdout, check=True)
    return scratch


def table(rows: list[dict]) -> list[str]:
    python = rows[0]["median"]
    lines = [
        "| command | CPU s above Python | target | first run | min-max of runs "
        "| heavy modules loaded |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        above = "-" if r is rows[0] else f"{r['median'] - python:.3f}"
        target = "-" if r["target"] is None else f"<= {r['target']}"
        low, high = r["spread"]
        heavy = ", ".join(r["heavy"]) or "none"
        lines.append(
            f"| `{r['name']}` | {above} | {target} | {r['first']:.3f} | "
            f"{low:.3f}-{high:.3f} | {heavy} |"
        )
    return lines


def main():
    parser = argparse.ArgumentParser(description="Start-up CPU seconds (results/startup.md).")
    parser.add_argument("--before", metavar="COMMIT", help="also measure this commit's tree")
    parser.add_argument("--tree", metavar="DIR", help="also measure the tree in DIR")
    args = parser.parse_args()
    before, other = args.before, args.tree
    verify = [sys.executable, os.path.join(os.path.dirname(sys.executable), "verify")]
    with tempfile.TemporaryDirectory() as scratch:
        bytecode, cache, tree = (os.path.join(scratch, d) for d in ("pyc", "cache", "tree"))
        os.makedirs(tree)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(PYTHONPYCACHEPREFIX=bytecode, XDG_CACHE_HOME=cache)
        module = [sys.executable, "-m", "verify.cli"]
        trees = [(verify, os.getcwd())]
        if before:
            trees.append((module, exported(before, tree)))
        if other:
            trees.append((module, os.path.abspath(other)))
        rows, *rest = measure(trees, env)
        earlier = rest.pop(0) if before else None
        proposed = rest.pop(0) if other else None
    load = os.getloadavg()[0]
    lines = [
        "# Start-up: CPU seconds above Python's own start",
        "",
        f"Machine: {machine()}; {platform.system()} {platform.release()}; load average "
        f"{load:.1f} at the end. `python -m benchmarks.speed.startup"
        f"{f' --before {before}' if before else ''}{f' --tree {other}' if other else ''}`: "
        f"median of {ROUNDS} runs after one "
        "warm-up run (bytecode written, grammar analysis cached); `python -c pass` itself "
        f"took {rows[0]['median']:.3f} s. `first run`: the warm-up, with no bytecode and "
        "no cached grammar (raw seconds, Python included).",
        "",
        *table(rows),
        "",
    ]
    if earlier:
        lines += [
            f"Before, at commit {before} (its tree run as `python -m verify.cli`):",
            "",
            *table(earlier),
            "",
        ]
    if proposed:
        lines += [f"The tree in {other} (run as `python -m verify.cli`):", "", *table(proposed), ""]
    with open(RESULTS, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
