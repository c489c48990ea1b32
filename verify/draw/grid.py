"""A layout's offsets as a grid, as CuTe's print_layout (text) and print_latex
(TikZ) draw it: row m, column n holds L(m, n). Modes past the first are folded
into columns, colexicographically, as CuTe's 1-D index runs."""

from __future__ import annotations

from dataclasses import dataclass

from verify.draw import GROUP_COLOURS

CHUNK_BYTES = 16
# Text grids are cut to a terminal; pictures are refused past this many cells.
MAX_TEXT_ROWS = 32
MAX_PICTURE_CELLS = 1 << 14


@dataclass(frozen=True)
class Grid:
    title: str
    values: tuple[tuple[int, ...], ...]  # values[m][n]: element offset of (m, n)
    elem_bytes: int | None  # colour by bank group when known

    def colour(self, value: int) -> int:
        """Bank group (16-byte chunk mod 8) of the element's byte offset with a
        dtype; without one, the value mod 8, as print_latex colours."""
        if self.elem_bytes is None:
            return value % len(GROUP_COLOURS)
        return (value * self.elem_bytes // CHUNK_BYTES) % len(GROUP_COLOURS)

    @property
    def colour_key(self) -> str:
        if self.elem_bytes is None:
            return "colour: offset mod 8 (give --dtype to colour by bank group)"
        return (
            f"colour: bank group of the byte offset (16-byte chunk mod 8, "
            f"{self.elem_bytes}-byte elements)"
        )


def layout_grid(
    title: str, mode_sizes: list[int], offsets: list[int], elem_bytes: int | None
) -> Grid:
    """Rows are the first mode (a rank-1 layout is one row)."""
    rows = mode_sizes[0] if len(mode_sizes) > 1 else 1
    columns = len(offsets) // rows
    values = tuple(tuple(offsets[m + rows * n] for n in range(columns)) for m in range(rows))
    return Grid(title, values, elem_bytes)


def text_grid(grid: Grid, width: int, max_rows: int = MAX_TEXT_ROWS) -> str:
    """print_layout's picture, cut to `width` characters and `max_rows` rows with
    '...' where it was cut and a line saying how much is shown."""
    rows, columns = len(grid.values), len(grid.values[0])
    cell = len(str(max(max(row) for row in grid.values))) + 2
    shown_columns = max(1, min(columns, (width - 8) // (cell + 1)))
    shown_rows = min(rows, max_rows)
    more_columns = " ..." if shown_columns < columns else ""
    rule = "    " + f"+{'-' * cell}" * shown_columns + "+" + more_columns
    lines = [grid.title, "    " + "".join(f" {n:>{cell - 1}} " for n in range(shown_columns))]
    for m in range(shown_rows):
        lines.append(rule)
        cells = "".join(f"|{v:>{cell - 1}} " for v in grid.values[m][:shown_columns])
        lines.append(f"{m:>2}  {cells}|{more_columns}")
    lines.append(rule)
    if shown_rows < rows:
        lines.append("    ...")
    if shown_rows < rows or shown_columns < columns:
        lines.append(
            f"(rows 0-{shown_rows - 1} of {rows}, columns 0-{shown_columns - 1} of "
            f"{columns}; -o FILE.svg or FILE.tex draws them all)"
        )
    return "\n".join(lines)


def latex_grid(grid: Grid) -> str:
    """A standalone TikZ picture in print_latex's form: x runs down the rows, y
    across the columns, one 1 cm node per cell, indices around the edge."""
    rows, columns = len(grid.values), len(grid.values[0])
    lines = [
        r"\documentclass[convert]{standalone}",
        r"\usepackage{tikz}",
        "",
        f"% {_latex_comment(grid.title)}",
        f"% {grid.colour_key}",
    ]
    lines += [
        rf"\definecolor{{g{i}}}{{HTML}}{{{c.lstrip('#').upper()}}}"
        for i, c in enumerate(GROUP_COLOURS)
    ]
    lines += [
        "",
        r"\begin{document}",
        r"\begin{tikzpicture}[x={(0cm,-1cm)},y={(1cm,0cm)},"
        r"every node/.style={minimum size=1cm, outer sep=0pt}]",
        "",
    ]
    for m, row in enumerate(grid.values):
        lines += [
            rf"\node[fill=g{grid.colour(v)}] at ({m},{n}) {{{v}}};" for n, v in enumerate(row)
        ]
    lines.append(rf"\draw[color=black,thick,shift={{(-0.5,-0.5)}}] (0,0) grid ({rows},{columns});")
    lines.append("")
    lines += [rf"\node at ({m},-1) {{\Large{{\texttt{{{m}}}}}}};" for m in range(rows)]
    lines += [rf"\node at (-1,{n}) {{\Large{{\texttt{{{n}}}}}}};" for n in range(columns)]
    lines += [r"\end{tikzpicture}", r"\end{document}", ""]
    return "\n".join(lines)


def _latex_comment(text: str) -> str:
    return " ".join(text.split())
