"""Commands that look at one thing: ``verify wavefronts`` (one warp instruction's
cost), ``verify map`` (a layout's offsets and formula) and ``verify draw`` (an
access's tile as a picture)."""

from __future__ import annotations

import json

import click

from verify.cli.common import fail, parse_int, parse_shape, timeout_option


@click.command("wavefronts")
@click.argument("instr")
@click.argument("addresses", nargs=-1, required=True)
@click.option(
    "--sources",
    "sources",
    default=None,
    metavar="A0,A1,...",
    help="cp.async: each lane's global source byte address (32, comma-separated).",
)
@click.option("--json", "as_json", is_flag=True)
def wavefronts_cmd(instr, addresses, sources, as_json):
    """Predicted wavefronts of one warp instruction, from each lane's byte offset, by
    the H200's measured rules (the phase model; rule L for 64/128-bit loads; rule C
    for cp.async.ca, rule S or bound G for .cg; cp.async needs --sources)."""
    from verify import api
    from verify.errors import SpecError

    try:
        shared = [parse_int(a) for a in addresses]
        source_list = None if sources is None else [parse_int(a) for a in sources.split(",")]
        total = api.wavefronts(instr, shared, source_list)
        if source_list is not None:
            _print_copy(api.copy_wavefront_cost(instr, shared, source_list), as_json)
        else:
            _print_bank(api.wavefront_cost(instr, shared), total, as_json)
    except SpecError as e:
        fail(f"<args>: error: {e.message}")


def _print_bank(cost, total: int, as_json: bool):
    """Per phase, the phase model's ways; then the hardware's total (rule L may merge
    phase pairs of 64/128-bit loads below the phase model's sum)."""
    instruction = cost.instruction
    if as_json:
        click.echo(
            json.dumps(
                {
                    "instruction": instruction.name,
                    "wavefronts": total,
                    "phase_model_wavefronts": cost.wavefronts,
                    "ideal": cost.ideal,
                    "max_ways": cost.max_ways,
                    "exact": instruction.hardware_exact,
                    "model_fidelity": instruction.fidelity,
                    "phases": [
                        {
                            "lanes": [p.lanes.start, p.lanes.stop - 1],
                            "ways": p.ways,
                            "worst_bank": p.worst_bank,
                        }
                        for p in cost.phases
                    ],
                },
                indent=2,
            )
        )
        return
    for p in cost.phases:
        click.echo(
            f"lanes {p.lanes.start:2}-{p.lanes.stop - 1:2}: {p.ways}-way (bank {p.worst_bank})"
        )
    merged = f", phase model {cost.wavefronts}" if total != cost.wavefronts else ""
    click.echo(
        f"{instruction.name}: max_ways {cost.max_ways}, ideal {cost.ideal}{merged}; "
        f"model {instruction.fidelity}"
    )
    click.echo(str(total))


def _print_copy(cost, as_json: bool):
    """Per phase, rule C's cost and the source -> destination bank edge attaining it."""
    instruction = cost.instruction
    if as_json:
        click.echo(
            json.dumps(
                {
                    "instruction": instruction.name,
                    "wavefronts": cost.wavefronts,
                    "ideal": cost.ideal,
                    "exact": cost.exact,
                    "model_fidelity": cost.fidelity,
                    "phases": [
                        {
                            "lanes": [p.lanes.start, p.lanes.stop - 1],
                            "wavefronts": p.cost,
                            "edge": list(p.edge),
                        }
                        for p in cost.phases
                    ],
                },
                indent=2,
            )
        )
        return
    for p in cost.phases:
        click.echo(
            f"lanes {p.lanes.start:2}-{p.lanes.stop - 1:2}: {p.cost} (source bank "
            f"{p.edge[0]} -> shared bank {p.edge[1]})"
        )
    click.echo(f"{instruction.name}: ideal {cost.ideal}; model {cost.fidelity}")
    click.echo(str(cost.wavefronts))


@click.command("map")
@click.argument("layout")
@click.option(
    "--dtype",
    default=None,
    help="Element type: checked against the layout's element width; adds byte offsets.",
)
@click.option(
    "--shape",
    default=None,
    metavar="D0,D1,...",
    help="Tensor shape, for a Triton encoding (#ttg.swizzled_shared<...>).",
)
@click.option("--json", "as_json", is_flag=True)
@click.option(
    "--draw",
    is_flag=True,
    help="Show the offsets as a grid, as CuTe's print_layout does (cut to the terminal).",
)
@click.option(
    "-o",
    "--output",
    default=None,
    metavar="FILE.svg|.png|.html|.tex",
    help="Draw the whole grid into a file: a picture, or LaTeX like print_latex.",
)
def map_cmd(layout, dtype, shape, as_json, draw, output):
    """Offsets L(0), ..., L(size-1) of a layout, in CuTe's 1-D index order.

    Every figure says its unit: offsets are elements; the formula is in the unit
    the layout's swizzle acts on (bytes at base 0 for smem_ptr, GMMA atoms and TMA
    boxes, elements otherwise), as a call of the layout in a spec expression is."""
    from verify import api
    from verify.errors import SpecError
    from verify.model.dtypes import DTYPE_BYTES, canonical_dtype
    from verify.model.expr import Var
    from verify.model.layout import coordinate_vars, domain_shape

    try:
        ldef = api.parse_layout(layout, parse_shape(shape) if shape else None, dtype)
        offs = api.offsets(ldef, dtype)
        dtype = dtype and canonical_dtype(dtype)
    except SpecError as e:
        fail(str(e))
    domain = coordinate_vars(ldef.function)
    names = [Var(n) for n, _ in domain]
    formula_unit = "elements" if ldef.pointer_swizzle is None else "bytes at base 0"
    from verify.report.formula import formula  # sympy: loaded only for `verify map`

    doc = {
        "layout": layout,
        "shape": domain_shape(ldef.function),
        "unit": "elements",
        "formula": f"L({', '.join(v.name for v in names)}) = {formula(ldef.value(names), domain)}",
        "formula_unit": formula_unit,
        "offsets": offs,
    }
    if dtype:
        doc["byte_offsets"] = [DTYPE_BYTES[dtype] * o for o in offs]
    if as_json:
        click.echo(json.dumps(doc))
        return
    why = "" if ldef.pointer_swizzle is None else " (the swizzle acts on byte addresses)"
    click.echo(f"{layout}\nshape {doc['shape']}, {len(offs)} offsets")
    click.echo(f"formula, in {formula_unit}{why}: {doc['formula']}")
    swizzle = ldef.pointer_swizzle or ldef.function.outer_swizzle()
    if swizzle is not None:
        on = "element offsets" if ldef.pointer_swizzle is None else "byte addresses"
        click.echo(f"{swizzle} on {on}:\n{swizzle.diagram()}")
    if draw or output:
        _draw_map(layout, domain, offs, dtype, output)
        return
    if dtype:
        click.echo(f"byte offsets, in bytes: {' '.join(map(str, doc['byte_offsets']))}")
    click.echo(f"offsets, in elements: {' '.join(map(str, offs))}")


def _draw_map(layout: str, domain, offs: list[int], dtype: str | None, output: str | None):
    """print_layout's grid on the terminal, or the whole grid into `output`."""
    import shutil

    from verify.draw import grid as grids
    from verify.errors import SpecError
    from verify.model.dtypes import DTYPE_BYTES

    title = f"{layout}, offsets in elements" + (f" of {dtype}" if dtype else "")
    grid = grids.layout_grid(
        title, [r.size for _, r in domain], offs, DTYPE_BYTES[dtype] if dtype else None
    )
    if output is None:
        click.echo(grids.text_grid(grid, shutil.get_terminal_size((100, 24)).columns))
        return
    if len(offs) > grids.MAX_PICTURE_CELLS:
        fail(
            f"<args>: error: -o: the layout has {len(offs)} cells: expected at most "
            f"{grids.MAX_PICTURE_CELLS} to draw"
        )
    try:
        if output.lower().endswith(".tex"):
            with open(output, "w", encoding="utf-8") as f:
                f.write(grids.latex_grid(grid))
        else:
            from verify.draw.render import save_grid

            save_grid(grid, output)
    except (SpecError, OSError) as e:
        fail(f"<args>: error: {getattr(e, 'message', e)}")
    click.echo(f"wrote {output}")


@click.command("draw")
@click.argument("spec")
@click.option(
    "--access", "access_name", default=None, help="The access to draw (default: the first)."
)
@click.option(
    "--instance",
    default=None,
    metavar="q=3,stage=1,base=0",
    help="Loop values, stage and base (bytes) to draw; default: a refuted bank "
    "check's counterexample, else the worst instance.",
)
@click.option(
    "--by",
    type=click.Choice(["chunk", "element"]),
    default=None,
    help="Cells of 16 bytes (the bank groups G0-G7) or of one element; default: "
    "chunks for 16-byte accesses, elements otherwise.",
)
@click.option("-o", "--output", required=True, metavar="FILE.svg|.png|.html")
@timeout_option("Seconds per check run to find the counterexample.")
def draw_cmd(spec, access_name, instance, by, output, timeout):
    """Draw an access's tile as the seed articles do: rows of 128 bytes, cells
    coloured by bank group and labelled with the lanes that touch them, one panel
    per phase, colliding lanes marked (needs the draw extra: matplotlib)."""
    from verify.draw.access import draw_access
    from verify.draw.render import format_of, save_picture
    from verify.errors import SpecError
    from verify.spec.parser import parse_file

    try:
        format_of(output)
        picture = draw_access(parse_file(spec), access_name, instance, by, timeout)
        save_picture(picture, output)
    except SpecError as e:
        fail(str(e.located(spec)))
    except OSError as e:
        fail(f"<args>: error: -o {output}: {e.strerror}")
    click.echo(picture.title)
    for panel in picture.panels:
        click.echo(f"  {panel.title}")
    click.echo(f"wrote {output}")
