"""The CPU seconds of verify.model.expr alone in a kernel check, load aside.

``--capture LOG``: run `benchmarks.speed.kernel_check`'s cases once, recording every
call made into verify.model.expr from outside it (free_vars, bounds,
max_intermediate, substitute, evaluate, compiled and each call of what compiled
returned), with its arguments, into a pickle. ``--replay LOG``: make those calls
again in a new process (fresh nodes, nothing kept on them) and print their CPU
seconds. Capture once with one tree, replay with each tree to compare
(PYTHONPATH=<tree>): the other 80% of a check is not timed, so the machine's load
disturbs the comparison less. ``--no-gc``: replay with the collector off.

Results: benchmarks/results/expr_speed.md.
"""

from __future__ import annotations

import argparse
import gc
import pickle
import sys
import time
from collections.abc import Callable
from typing import Any

NAMES = ("free_vars", "bounds", "max_intermediate", "substitute", "evaluate", "compiled")


def capture(path: str) -> int:
    import verify.model.expr as X

    log: list = []
    depth = [0]

    def wrap(name, f):
        def outer(e, *args):
            if depth[0]:
                return f(e, *args)
            depth[0] += 1
            try:
                r = f(e, *args)
            finally:
                depth[0] -= 1
            if name == "compiled":
                k = len(log)
                log.append(("compiled", k, e))

                def call(env, r=r, k=k):
                    log.append(("call", k, dict(env)))
                    return r(env)

                return call
            log.append((name, e, dict(args[0]) if args else None))
            return r

        return outer

    for name in NAMES:  # before any importer binds the names
        setattr(X, name, wrap(name, getattr(X, name)))
    from benchmarks.speed import kernel_check

    kernel_check.run(1)
    with open(path, "wb") as f:
        pickle.dump(log, f)
    return len(log)


def replay(path: str, collect: bool) -> float:
    import verify.model.expr as X
    from verify.errors import SpecError

    with open(path, "rb") as f:
        log = pickle.load(f)
    gc.collect()
    if not collect:
        gc.disable()
    fns: dict[Any, Callable[[Any], object]] = {}
    start = time.process_time()
    for kind, e, arg in log:
        try:
            if kind == "call":
                fns[e](arg)
            elif kind == "compiled":
                fns[e] = X.compiled(arg)
            elif arg is None:
                getattr(X, kind)(e)
            else:
                getattr(X, kind)(e, arg)
        except (SpecError, ValueError, ZeroDivisionError):
            pass
    return time.process_time() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--capture", help="record the expr calls of one kernel_check run here")
    parser.add_argument("--replay", help="replay the calls recorded here, print CPU seconds")
    parser.add_argument("--no-gc", action="store_true", help="replay with the collector off")
    args = parser.parse_args()
    sys.setrecursionlimit(100000)
    if args.capture:
        print(f"{capture(args.capture)} calls recorded")
    if args.replay:
        print(f"{replay(args.replay, not args.no_gc):.3f} CPU seconds in verify.model.expr")
    return 0


if __name__ == "__main__":
    sys.exit(main())
