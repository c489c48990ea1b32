"""Pictures of shared memory: an access's tile as the seed articles draw it
(`access`), and a layout's offsets as CuTe's print_layout / print_latex draw them
(`grid`). Both build plain data first; `render` turns it into SVG, PNG or HTML
with matplotlib (the `draw` extra), and the text and LaTeX forms need nothing.
"""

# Bank groups G0-G7 (16 bytes, four banks each), light enough for black labels:
# matplotlib's tab10, lightened. Shared by the SVG/PNG and the LaTeX pictures.
GROUP_COLOURS = (
    "#aec7e8",
    "#ffbb78",
    "#98df8a",
    "#ff9896",
    "#c5b0d5",
    "#c49c94",
    "#f7b6d2",
    "#dbdb8d",
)
