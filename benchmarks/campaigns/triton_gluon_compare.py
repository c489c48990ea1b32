"""verify against Triton's own ``bank_conflicts`` (Gluon) on every op of the
catalog kernels (specs/triton_kernels/*.ttgir) that Gluon can answer.

    python -m benchmarks.campaigns.triton_gluon_compare   # results/triton_gluon_compare.md

Gluon's figure is ``GluonOpBuilder.get_shared_bank_conflicts(register layout,
shared layout, shape, bitwidth)``, the call behind ``gl.bank_conflicts``
(triton/experimental/gluon/language/_semantic.py), here given the very layouts
Triton's TTGIR holds for the op (read with Triton's bindings as `verify ttgir`
reads them). Its docstring: "the excess number of memory accesses that each
wavefront needs ... using ld.shared/st.shared instructions". It cannot answer an
op on a subslice of its buffer (it raises NYI for those), nor a cp.async
(the register side is a tensor of pointers). verify's figures are those of its
``conflict_free`` check of the op: the instruction it decided Triton emits, the
worst instance's max-ways and wavefronts (and the ideal).
"""

from __future__ import annotations

import glob
import os
import sys

from verify.notation.triton_lowering import element_bits
from verify.ttgir import extract
from verify.ttgir.module import run_kernel

KERNELS = "specs/triton_kernels"
RESULTS = "benchmarks/results/triton_gluon_compare.md"


class GluonCounts(extract.Extractor):
    """The extractor, plus Gluon's bank-conflict count of each data op."""

    def _data_op(self, op, name: str) -> dict:
        entry = super()._data_op(op, name)
        memdesc, tensor = extract._operands(op, name)
        # Triton's count reads the module's warps through the insertion point
        # (without one it crashes): place it at the op, as tracing a kernel would.
        self.builder.set_insertion_point_after(op)
        entry["gluon"] = self._gluon_count(memdesc, tensor, entry)
        return entry

    def _gluon_count(self, memdesc, tensor, entry: dict):
        """Gluon's count, or why Gluon cannot answer (its own checks, mirrored from
        ``GluonSemantic.bank_conflicts``)."""
        if tensor is None or "register" not in (entry["tensor"] or {}):
            return "no register tensor (cp.async's operand is a tensor of pointers)"
        md = entry["memdesc"]
        if md["shape"] != md["alloc_shape"][len(md["alloc_shape"]) - len(md["shape"]) :]:
            return "a subslice of its buffer (Gluon: NYI for subslices)"
        shape = list(self.builder.get_shape_from_tensor(tensor))
        reg = self.builder.get_gluon_layout_from_tensor(tensor)._to_ir(self.builder)
        shared = self.builder.get_gluon_layout_from_memdesc(memdesc)._to_ir(self.builder)
        bits = element_bits(md["element"])
        try:
            return self.builder.get_shared_bank_conflicts(reg, shared, shape, bits)
        except Exception as e:  # noqa: BLE001 -- Gluon's refusal, reported as such
            return f"Gluon refuses: {type(e).__name__}: {e}"


def gluon_ops(path: str) -> dict[str, dict]:
    """Op label -> the op's extracted entry with Gluon's count."""
    from triton._C.libtriton import gluon_ir, ir

    context = ir.context()
    ir.load_dialects(context)
    module = ir.parse_mlir_module(path, context)
    with open(path, encoding="utf-8") as f:
        text_ops = extract._text_ops(f.read(), path)
    found = GluonCounts(module, gluon_ir.GluonOpBuilder(context), text_ops).run()
    return {
        f"{e['op'].split('.', 1)[1]} {e['name']}": e
        for e in found["ops"]
        if e["op"] in extract.DATA_OPS and e.get("name")
    }


def rows_of(path: str) -> list[dict]:
    """One row per data op with a register tensor: Gluon's answer and verify's."""
    checker = run_kernel(path)
    checks = {
        r.property.removeprefix("conflict_free "): r
        for r in checker.results
        if r.property.startswith("conflict_free ")
    }
    decided = {d["op"]: d["instruction"] for d in checker.decisions}
    unknown = {
        r.property.removeprefix("not modelled: "): r.reason
        for r in checker.results
        if r.property.startswith("not modelled: ")
    }
    rows = []
    for label, entry in gluon_ops(path).items():
        if entry["op"] == "ttg.async_copy_global_to_local" or entry["tensor"] is None:
            continue
        check = checks.get(label)
        rows.append(
            {
                "kernel": os.path.basename(path),
                "op": label,
                "line": (entry.get("loc") or {}).get("line"),
                "gluon": entry["gluon"],
                "instruction": decided.get(label),
                "max_ways": check.max_ways if check else None,
                "wavefronts": check.wavefronts if check else None,
                "ideal": check.ideal_wavefronts if check else None,
                "verify_note": "" if check else unknown.get(label, "no check"),
            }
        )
    return rows


def agreement(row: dict) -> str:
    """How the two figures relate: Gluon's count is per wavefront, so it is
    compared with verify's max-ways - 1 (benchmarks/results/gluon_compare.md
    found that relation on 208 of 238 synthetic patterns)."""
    if not isinstance(row["gluon"], int):
        return "Gluon cannot answer"
    if row["max_ways"] is None:
        return "verify lists it not modelled"
    if row["instruction"].startswith(("ldmatrix", "stmatrix")):
        return (
            "same" if row["gluon"] == row["max_ways"] - 1 else "differs"
        ) + f" (verify: {row['instruction']}; Gluon counts ld/st.shared)"
    return "same" if row["gluon"] == row["max_ways"] - 1 else "**differs**"


def table(rows: list[dict]) -> str:
    lines = [
        "| TTGIR | line | op | verify: instruction | max-ways | wavefronts (ideal) | "
        "Gluon bank_conflicts | |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        figure = (
            f"{r['wavefronts']} ({r['ideal']})" if r["wavefronts"] is not None else r["verify_note"]
        )
        lines.append(
            f"| `{r['kernel']}` | {r['line']} | `{r['op']}` | "
            f"{r['instruction'] or '-'} | {r['max_ways'] or '-'} | {figure} | "
            f"{r['gluon']} | {agreement(r)} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    import triton

    rows = []
    for path in sorted(glob.glob(f"{KERNELS}/*.ttgir")):
        rows += rows_of(path)
        print(path, flush=True)
    answered = [r for r in rows if isinstance(r["gluon"], int) and r["max_ways"] is not None]
    same = [r for r in answered if r["gluon"] == r["max_ways"] - 1]
    with open(RESULTS, "w") as f:
        f.write(
            f"# verify against Gluon's bank_conflicts on the catalog kernels\n\n"
            f"Triton {triton.__version__}; `python -m benchmarks.campaigns.triton_gluon_compare`. "
            f"Every local_alloc (with a value), local_store and local_load of "
            f"specs/triton_kernels/*.ttgir: {len(rows)} ops, of which Gluon answers "
            f"and verify models {len(answered)}; Gluon's count equals verify's "
            f"max-ways - 1 on {len(same)} of them.\n\n" + table(rows) + "\n" + EXPLANATIONS
        )
    return 0


EXPLANATIONS = """## The differences, explained

- **Same figure, per wavefront.** Where both answer and verify's instruction is
  ld/st.shared, Gluon's count is verify's max-ways - 1 on every op but the four
  below: 0 for the conflict-free ops, 31 for the plain Gluon transpose's column
  read and for the disagreeing transpose's read through its plain view (Gluon
  is asked about the view the load uses, as verify checks it).
- **Different instruction, same figure.** Where verify decided ldmatrix/stmatrix
  (the attention's operand loads on sm_80, the plain transpose's store on
  sm_90), Gluon still counts the ld/st.shared its docstring names; both give no
  conflict, so the figures agree although they describe different
  instructions.
- **Gluon cannot answer** the matmul's operand loads: each reads a 16-wide
  subslice of a 64-wide stage (`bank_conflicts` raises NYI for subslices);
  verify checks them at every position the subslice may take. cp.async writes
  and wgmma reads have no register tensor to ask about.
- **Gluon undercounts (4 ops).** `gluon_columns_swizzled_fp16` (both targets,
  store and load): verify 8-way (8 wavefronts for an ideal 1), Gluon 3. By
  hand: lane r holds row r, column c at halfword 64r + (c ^ (r % 8)); a row is
  128 bytes, so bank = (c ^ (r % 8)) / 2: the 8 phases fall on 4 banks, and
  each bank serves 8 rows' distinct words: 8-way, 7 excess. This is the
  pattern benchmarks/campaigns/gluon_compare.py found (vec 1, perPhase 1, maxPhase 8, one
  16-bit element per thread and row: Gluon 3, verify 7 excess), on which the
  H200 measured 8 wavefronts for both the store and the load
  (benchmarks/results/gluon_disputed_gpu.txt); benchmarks/hardware/triton_h200.py
  measures this kernel too.
"""


if __name__ == "__main__":
    sys.exit(main())
