"""A function's control flow: basic blocks, their edges, and the loops the back
edges close (found by depth-first search: an edge to a block still on the
search's stack). Loops the reader follows are natural loops with one back edge,
the do-while form nvcc and Triton emit; others are reported, not guessed."""

from __future__ import annotations

from dataclasses import dataclass, field

from verify.ptx import ir

_ENDS = ("bra", "ret", "exit", "trap", "brx")


@dataclass
class Block:
    index: int
    label: str | None
    instrs: list[ir.Instr] = field(default_factory=list)
    # (successor, guard): guard is (predicate register, negated, taken) or None
    succs: list[tuple[int, tuple[str, bool, bool] | None]] = field(default_factory=list)


@dataclass
class Loop:
    header: int
    latch: int
    body: set[int]


@dataclass
class Graph:
    blocks: list[Block]
    back_edges: set[tuple[int, int]]
    loops: dict[int, Loop]  # by header
    order: list[int]  # reverse postorder over forward edges
    problems: list[str]

    def preds(self, b: int) -> list[tuple[int, tuple[str, bool, bool] | None]]:
        return [
            (blk.index, guard)
            for blk in self.blocks
            for succ, guard in blk.succs
            if succ == b and (blk.index, b) not in self.back_edges
        ]


def _blocks(body: list[ir.Instr | ir.Label]) -> list[Block]:
    blocks = [Block(0, None)]
    for item in body:
        if isinstance(item, ir.Label):
            if blocks[-1].instrs or blocks[-1].label is not None:
                blocks.append(Block(len(blocks), item.name))
            else:
                blocks[-1].label = item.name
            continue
        blocks[-1].instrs.append(item)
        if item.parts[0] in _ENDS:
            blocks.append(Block(len(blocks), None))
    return [b for b in blocks if b.instrs or b.label is not None]


def build(fn: ir.Function) -> Graph:
    blocks = _blocks(fn.body)
    for i, b in enumerate(blocks):
        b.index = i
    by_label = {b.label: b.index for b in blocks if b.label is not None}
    problems = []
    for b in blocks:
        last = b.instrs[-1] if b.instrs else None
        head = last.parts[0] if last else ""
        fallthrough = b.index + 1 < len(blocks)
        if head == "bra" and last is not None:
            target = last.operands[0] if last.operands else None
            if not isinstance(target, ir.Sym) or target.name not in by_label:
                problems.append(f"line {last.line}: a branch to a target this reader cannot find")
                continue
            if last.guard is None:
                b.succs.append((by_label[target.name], None))
                continue
            reg, negated = last.guard
            b.succs.append((by_label[target.name], (reg, negated, True)))
            if fallthrough:
                b.succs.append((b.index + 1, (reg, negated, False)))
        elif head == "brx" and last is not None:
            problems.append(f"line {last.line}: an indirect branch (brx.idx)")
        elif head in ("ret", "exit", "trap") and last is not None and last.guard is not None:
            if fallthrough:  # `@%p ret`: the threads where %p is false go on
                reg, negated = last.guard
                b.succs.append((b.index + 1, (reg, negated, False)))
        elif head not in ("ret", "exit", "trap") and fallthrough:
            b.succs.append((b.index + 1, None))
    back, post = _search(blocks)
    loops: dict[int, Loop] = {}
    for latch, header in back:
        if header in loops:
            problems.append(f"the loop at {blocks[header].label} has more than one back edge")
            continue
        loops[header] = Loop(header, latch, _natural(blocks, header, latch))
    return Graph(blocks, back, loops, list(reversed(post)), problems)


def _search(blocks: list[Block]) -> tuple[set[tuple[int, int]], list[int]]:
    """Back edges and the postorder of an iterative depth-first search from block 0."""
    back: set[tuple[int, int]] = set()
    post: list[int] = []
    state = [0] * len(blocks)  # 0 new, 1 on the stack, 2 done
    stack = [(0, 0)]
    state[0] = 1
    while stack:
        node, i = stack.pop()
        succs = [s for s, _ in blocks[node].succs]
        if i < len(succs):
            stack.append((node, i + 1))
            nxt = succs[i]
            if state[nxt] == 1:
                back.add((node, nxt))
            elif state[nxt] == 0:
                state[nxt] = 1
                stack.append((nxt, 0))
        else:
            state[node] = 2
            post.append(node)
    return back, post


def _natural(blocks: list[Block], header: int, latch: int) -> set[int]:
    preds: dict[int, list[int]] = {b.index: [] for b in blocks}
    for b in blocks:
        for s, _ in b.succs:
            preds[s].append(b.index)
    body = {header, latch}
    work = [latch] if latch != header else []  # the walk stops at the header
    while work:
        n = work.pop()
        for p in preds[n]:
            if p not in body:
                body.add(p)
                work.append(p)
    return body


def immediate_post_dominators(graph: Graph) -> dict[int, int | None]:
    """Each block's immediate post-dominator: the first block every path from it to
    the function's end passes through, where two threads that left it by different
    edges meet again; None where that is the end itself (or no path ends)."""
    end = len(graph.blocks)
    succs = {b.index: [s for s, _ in b.succs] or [end] for b in graph.blocks}
    every = set(range(end + 1))
    pdom: dict[int, set[int]] = {b: set(every) for b in succs}
    pdom[end] = {end}
    changed = True
    while changed:
        changed = False
        for b in reversed(graph.order):
            new = {b} | set.intersection(*(pdom[s] for s in succs[b]))
            if new != pdom[b]:
                pdom[b], changed = new, True
    out: dict[int, int | None] = {}
    for b in succs:
        strict = pdom[b] - {b}
        nearest = [d for d in strict if pdom.get(d, every) == strict]
        out[b] = nearest[0] if nearest and nearest[0] != end else None
    return out
