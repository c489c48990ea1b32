"""Pictures to files with matplotlib (the `draw` extra): SVG, PNG, or an HTML page
around the SVG. SVG text stays text (searchable, and what the tests read), and the
output does not change from run to run, so a committed picture diffs cleanly."""

from __future__ import annotations

import io
import os

from verify.draw import GROUP_COLOURS
from verify.draw.access import Picture
from verify.draw.grid import Grid
from verify.errors import SpecError

FORMATS = (".svg", ".png", ".html")
COLLISION = "#d62728"
CELL_INCHES = 0.55


def _figure_class():
    try:
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError:
        raise SpecError(
            "drawing needs matplotlib: pip install 'verify-smem[draw]' "
            "(or pip install -e '.[draw]' in a checkout)"
        ) from None
    matplotlib.rcParams.update(
        {"svg.fonttype": "none", "svg.hashsalt": "verify", "font.family": "DejaVu Sans Mono"}
    )
    return Figure


def format_of(path: str, allowed=FORMATS) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext not in allowed:
        raise SpecError(f"-o {path}: expected a file ending in {', '.join(allowed)}")
    return ext


def save_picture(picture: Picture, path: str):
    """The access picture, one panel per phase stacked top to bottom."""
    figure = _access_figure(picture)
    _save(figure, path, picture.title)


def save_grid(grid: Grid, path: str):
    figure = _grid_figure(grid)
    _save(figure, path, grid.title)


def _save(figure, path: str, title: str):
    ext = format_of(path)
    if ext == ".html":
        with open(path, "w", encoding="utf-8") as f:
            f.write(_html(title, _svg_text(figure)))
        return
    figure.savefig(path, format=ext[1:], metadata=_metadata(ext), dpi=100)


def _metadata(ext: str) -> dict:
    """No creation date, so the same picture gives the same bytes."""
    return {"Date": None} if ext == ".svg" else {}


def _svg_text(figure) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    svg = buffer.getvalue()
    return svg[svg.index("<svg") :]


def _html(title: str, svg: str) -> str:
    from html import escape

    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8">'
        f"<title>{escape(title)}</title></head>\n<body>\n<h1>{escape(title)}</h1>\n"
        f"{svg}\n</body>\n</html>\n"
    )


def _access_figure(picture: Picture):
    Figure = _figure_class()
    columns, rows = len(picture.columns), len(picture.rows)
    panels = len(picture.panels)
    # Narrow (16-byte) panels go two abreast, so a 4-phase instruction stays readable.
    across = 2 if panels > 1 and columns <= 8 else 1
    down = -(-panels // across)
    width = CELL_INCHES * (columns + 3) * across
    figure = Figure(figsize=(width, CELL_INCHES * (rows + 3) * down + 0.8), layout="constrained")
    figure.suptitle(_wrap(picture.title, width), fontsize=9)
    axes = figure.subplots(down, across, squeeze=False).ravel()
    for ax, panel in zip(axes, picture.panels):
        _draw_panel(ax, picture, panel)
    for ax in axes[panels:]:
        ax.axis("off")
    return figure


def _draw_panel(ax, picture: Picture, panel):
    from matplotlib.patches import Rectangle

    columns, rows = len(picture.columns), len(picture.rows)
    for cell in panel.cells:
        colour = GROUP_COLOURS[cell.bank_group]
        touched = bool(cell.lanes)
        ax.add_patch(
            Rectangle(
                (cell.col, cell.row),
                1,
                1,
                facecolor=colour,
                alpha=1.0 if touched else 0.3,
                edgecolor=COLLISION if cell.colliding else "white",
                linewidth=2.5 if cell.colliding else 1.0,
                zorder=2 if cell.colliding else 1,
            )
        )
        if touched:
            ax.text(
                cell.col + 0.5,
                cell.row + 0.5,
                _lanes_label(cell.lanes),
                ha="center",
                va="center",
                fontsize=7,
                zorder=3,
                fontweight="bold" if cell.colliding else "normal",
                color=COLLISION if cell.colliding else "black",
            )
    for c, label in enumerate(picture.columns):
        ax.text(c + 0.5, -0.3, label, ha="center", va="bottom", fontsize=7)
    for r, start in enumerate(picture.rows):
        ax.text(-0.2, r + 0.5, f"{start}", ha="right", va="center", fontsize=7)
    for c, words in enumerate(panel.words_per_column):
        ax.text(
            c + 0.5,
            rows + 0.5,
            str(words),
            ha="center",
            va="center",
            fontsize=7,
            color=COLLISION if words == panel.ways and panel.ways > 1 else "black",
        )
    ax.text(-0.2, rows + 0.5, "words/bank", ha="right", va="center", fontsize=7)
    ax.set_title(panel.title, fontsize=8)
    ax.set_xlim(-3, columns)
    ax.set_ylim(rows + 1, -1)
    ax.set_aspect("equal")
    ax.axis("off")


def _lanes_label(lanes: tuple[int, ...]) -> str:
    """T5, T5,T9, or T5+3 when more lanes share the cell."""
    if len(lanes) <= 2:
        return ",".join(f"T{lane}" for lane in lanes)
    return f"T{lanes[0]}+{len(lanes) - 1}"


def _wrap(text: str, inches: float) -> str:
    """Lines that fit a figure `inches` wide at 9-point monospace.

    About 11 characters an inch, with margins."""
    import textwrap

    return "\n".join(textwrap.wrap(text, max(40, int(inches * 11))))


def _grid_figure(grid: Grid):
    from matplotlib.patches import Rectangle

    Figure = _figure_class()
    rows, columns = len(grid.values), len(grid.values[0])
    width = CELL_INCHES * (columns + 2)
    figure = Figure(figsize=(width, CELL_INCHES * (rows + 2) + 0.6), layout="constrained")
    ax = figure.add_subplot()
    for r, row in enumerate(grid.values):
        for c, value in enumerate(row):
            ax.add_patch(
                Rectangle(
                    (c, r),
                    1,
                    1,
                    facecolor=GROUP_COLOURS[grid.colour(value)],
                    edgecolor="black",
                    linewidth=0.5,
                )
            )
            ax.text(c + 0.5, r + 0.5, str(value), ha="center", va="center", fontsize=7)
    for c in range(columns):
        ax.text(c + 0.5, -0.2, str(c), ha="center", va="bottom", fontsize=7)
    for r in range(rows):
        ax.text(-0.2, r + 0.5, str(r), ha="right", va="center", fontsize=7)
    ax.set_title(_wrap(grid.title, width) + "\n" + _wrap(grid.colour_key, width), fontsize=8)
    ax.set_xlim(-1.5, columns)
    ax.set_ylim(rows, -1)
    ax.set_aspect("equal")
    ax.axis("off")
    return figure
