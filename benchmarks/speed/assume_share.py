"""The CPU share of `verify.ptx.assume`'s searches (the least alignment and the
least residue class of a failed check) in `check_ptx` over kernel_check's cases.

    python -m benchmarks.speed.assume_share [--assume-module OLD.py] [--record F]

`--assume-module` runs the cases with another assume.py in its place (an older
one, `git show REV:verify/ptx/assume.py > OLD.py`; one without `state_classes`
gets a no-op), so before and after are measured on one tree; `--record` writes
every result with its `proved_under` and `proved_when` for comparing two runs.
Results: benchmarks/results/assume_search.md.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import sys
import time

from benchmarks.speed import kernel_check as kc
from verify.engines.options import RunOptions
from verify.ptx import check


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--assume-module", help="an assume.py to run in verify's place")
    parser.add_argument("--record", help="write every case's results here (JSON)")
    args = parser.parse_args()
    if args.assume_module:
        spec = importlib.util.spec_from_file_location("assume_given", args.assume_module)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if not hasattr(module, "state_classes"):
            module.state_classes = lambda *a: None  # type: ignore[attr-defined]
        check.assume = module
        check.Assumptions = module.Assumptions  # type: ignore[misc]
    spent: collections.defaultdict[str, float] = collections.defaultdict(float)
    case = [""]
    for name in ("state_proved_under", "state_classes"):
        real = getattr(check.assume, name)

        def timed(*a, _real=real):
            start = time.process_time()
            _real(*a)
            spent[case[0]] += time.process_time() - start

        setattr(check.assume, name, timed)
    found, seconds = {}, {}
    for path, options in kc.CASES:
        case[0] = key = kc._key(path, options)
        start = time.process_time()
        results = check.check_ptx(path, check.Options(run=RunOptions(seconds=30), **options))
        seconds[key] = time.process_time() - start
        found[key] = [
            [*kc.record(r), r.facts.get("proved_under"), r.facts.get("proved_when")]
            for r in results
        ]
    for key, s in seconds.items():
        print(f"{s:8.3f} {spent[key]:8.3f}  {key}")
    total, searched = sum(seconds.values()), sum(spent.values())
    print(f"{total:8.3f} {searched:8.3f}  all cases: {100 * searched / total:.1f}% in the searches")
    if args.record:
        with open(args.record, "w") as f:
            json.dump(found, f, indent=0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
