"""The launches of benchmarks/hardware/ptx's kernels, and the pairing of the
addresses they recorded on the H200 with the PTX interpreter's.

`LAUNCHES[name]` is the launch runner.cu makes (one block); `run_kernel(name)` runs
the interpreter on the committed PTX with it. Each kernel writes, beside each shared
access, `REC(site, instance, value)` on the access's own source line (kernels.cu);
`recorded_lines` finds those lines, and `paired(name, records)` gives, per line and
kind (shared address, or cp.async global source offset), the multiset of (thread,
value) the GPU recorded and the multiset the interpreter produced for the
instructions the PTX's .loc puts on that statement.
"""

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from oracle.ptx_interpreter import BlockRun, run_block

ROOT = Path(__file__).resolve().parent.parent
KERNEL_DIR = ROOT / "benchmarks" / "hardware" / "ptx"
PTX = KERNEL_DIR / "ptx" / "kernels_sm90.ptx"
SOURCE = KERNEL_DIR / "kernels.cu"
# Pointer parameters: any global addresses; cp.async sources are recorded relative to IN.
IN, OUT, REC = 1 << 32, 2 << 32, 3 << 32
# The H200 placed every kernel's first shared byte (static or dynamic) at 1024: the
# recorded addresses of the first run (the 1 KB the driver reserves at the start).
SHARED_BASE = 1024


@dataclass(frozen=True)
class Launch:
    block: tuple[int, int, int]
    params: dict[int | str, int | bytes] = field(default_factory=dict)
    dynamic_shared_bytes: int = 0


def _pointers(*rest: int) -> dict[int | str, int | bytes]:
    values = [IN, OUT, *rest, REC]
    return dict(enumerate(values))


LAUNCHES = {
    "transpose_unpadded": Launch((32, 8, 1), _pointers()),
    "transpose_padded": Launch((32, 8, 1), _pointers()),
    "transpose_xor": Launch((32, 8, 1), _pointers()),
    "ldmatrix_plain": Launch((32, 1, 1), _pointers()),
    "ldmatrix_sw333": Launch((32, 1, 1), _pointers()),
    "vector_ldst": Launch((32, 1, 1), _pointers()),
    "pipeline_double": Launch((128, 1, 1), _pointers(4)),
    "pipeline_triple_mod": Launch((128, 1, 1), _pointers(5)),
    "pipeline_shift": Launch((128, 1, 1), _pointers(4), 16384),
    "tail_dynamic": Launch((256, 1, 1), _pointers(200), 2048),
}


def run_kernel(name: str, ptx: Path = PTX) -> BlockRun:
    launch = LAUNCHES[name]
    return run_block(
        ptx.read_text(),
        f"{len(name)}{name}P",  # the mangled name: _Z<len><name>P...
        block=launch.block,
        params=launch.params,
        shared_base=SHARED_BASE,
        dynamic_shared_bytes=launch.dynamic_shared_bytes,
    )


def load_records(path: Path) -> list[tuple[int, int, int, int]]:
    """runner.cu's rec_<kernel>.txt: (site, instance, thread, value) per line."""
    out = []
    for line in path.read_text().splitlines():
        site, inst, thread, value = (int(w) for w in line.split())
        out.append((site, inst, thread, value))
    return out


@dataclass(frozen=True)
class RecordedLine:
    first: int  # the first line of the recorded access's statement
    line: int  # the line holding REC(...)
    sites: dict[int, str]  # site -> "address" or "source"


def _function_ranges(lines: list[str]) -> dict[str, tuple[int, int]]:
    starts = [
        (i + 1, m.group(1))
        for i, text in enumerate(lines)
        if (m := re.match(r"^(?:__global__|__device__)[^(]*?\b(\w+)\(", text))
    ]
    ends = [s for s, _ in starts[1:]] + [len(lines) + 1]
    return {name: (start, end) for (start, name), end in zip(starts, ends, strict=True)}


def _statement_start(lines: list[str], line: int) -> int:
    first = line
    while first > 1 and not lines[first - 2].rstrip().endswith((";", "{", "}")):
        first -= 1
    return first


def _copy_loop_bound(lines: list[str], lo: int, line: int) -> int:
    """N of the `for (int c = 0; c < N; ...)` enclosing `line` (sites written 2 * c
    and 2 * c + 1), or 1 where the line is outside such a loop."""
    depth = 0
    for number in range(line, lo - 1, -1):
        text = lines[number - 1]
        depth += text.count("}") - (text.count("{") if number != line else 0)
        m = re.search(r"for \(int c = 0; c < (\d+);", text)
        if m and depth < 0:
            return int(m.group(1))
        depth = min(depth, 0) if m else depth
    return 1


def recorded_lines(kernel: str, source: str | None = None) -> list[RecordedLine]:
    """The REC lines of `kernel`'s body and of the helpers it calls."""
    lines = (source or SOURCE.read_text()).splitlines()
    ranges = _function_ranges(lines)
    start, end = ranges[kernel]
    body = "\n".join(lines[start - 1 : end - 1])
    spans = [(start, end)] + [r for n, r in ranges.items() if n != kernel and f"{n}<" in body]
    out = []
    for lo, hi in spans:
        for number in range(lo, hi):
            text = lines[number - 1]
            if "REC(" not in text or text.lstrip().startswith("#define"):
                continue
            sites: dict[int, str] = {}
            copies = _copy_loop_bound(lines, lo, number)
            for call in text.split("REC(")[1:]:
                site_expr, _, rest = call.partition(",")
                kind = "source" if "src" in rest.split(";")[0] else "address"
                for c in range(copies):
                    sites[eval(site_expr, {}, {"c": c})] = kind  # noqa: S307 (our file)
            out.append(RecordedLine(_statement_start(lines, number), number, sites))
    return out


def paired(
    kernel: str, records: list[tuple[int, int, int, int]], run: BlockRun | None = None
) -> dict[tuple[int, str], tuple[Counter[tuple[int, int]], Counter[tuple[int, int]]]]:
    """(REC line, kind) -> (GPU multiset, interpreter multiset) of (thread, value)."""
    run = run or run_kernel(kernel)
    out = {}
    for rec in recorded_lines(kernel):
        for kind in sorted(set(rec.sites.values())):
            sites = {s for s, k in rec.sites.items() if k == kind}
            gpu = Counter((t, v) for s, _, t, v in records if s in sites)
            ours: Counter[tuple[int, int]] = Counter()
            for acc in run.accesses:
                if not acc.loc or Path(acc.loc[0]).name != SOURCE.name:
                    continue
                if not rec.first <= acc.loc[1] <= rec.line:
                    continue
                for t in acc.threads:
                    if not t.active:
                        continue
                    if kind == "address":
                        ours[(t.thread, t.address)] += 1
                    elif t.source is not None:
                        ours[(t.thread, t.source - IN)] += 1
            out[(rec.line, kind)] = (gpu, ours)
    return out
