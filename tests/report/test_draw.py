"""Pictures, tested by rendering them: SVG that parses as XML and holds the cells
and labels expected, PNG with its signature, LaTeX and text grids like CuTe's."""

import os
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner
from conftest import SPECS

from verify.cli import main
from verify.draw.access import draw_access
from verify.draw.grid import latex_grid, layout_grid, text_grid
from verify.spec.parser import parse_file, parse_text

pytest.importorskip("matplotlib")

PLAIN = os.path.join(SPECS, "seed", "ldmatrix_x1_8x64_plain.spec")
SWIZZLED = os.path.join(SPECS, "seed", "ldmatrix_x1_8x64_swizzled.spec")
SVG = "{http://www.w3.org/2000/svg}"


def run(*args):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def svg_texts(path) -> list[str]:
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    return ["".join(t.itertext()).strip() for t in root.iter(f"{SVG}text")]


def touched(picture, panel=0):
    return {(c.row, c.col): (c.lanes, c.colliding) for c in picture.panels[panel].cells if c.lanes}


def test_the_seed_plain_tile_puts_lanes_0_to_7_down_bank_group_0_all_colliding():
    picture = draw_access(parse_file(PLAIN))
    assert picture.columns == tuple(f"G{g}" for g in range(8))
    assert picture.rows == tuple(128 * r for r in range(8))
    assert touched(picture) == {(r, 0): ((r,), True) for r in range(8)}
    assert picture.panels[0].words_per_column == (8, 0, 0, 0, 0, 0, 0, 0)
    assert "counterexample of 'conflict_free rd'" in picture.title


def test_the_swizzled_tile_puts_row_r_in_bank_group_r_xor_q():
    picture = draw_access(parse_file(SWIZZLED), instance="q=3,base=0")
    assert touched(picture) == {(r, r ^ 3): ((r,), False) for r in range(8)}
    assert picture.panels[0].words_per_column == (1,) * 8
    assert "the given instance" in picture.title


def test_a_proved_access_is_drawn_at_its_worst_instance():
    spec = parse_text(
        "dtype f16\nlayout A = (_8,_64):(_64,_1)\n"
        "access rd = ldmatrix.x1 A(lane * (q % 2), 8 * q) for q in 0..4\n"
        "check max_ways <= 8 rd\n",
        "w.spec",
    )
    picture = draw_access(spec)
    assert picture.instance["q"] in (1, 3)  # q even reads one row: 1-way
    assert picture.panels[0].ways == 8
    assert "the worst of 32 instances" in picture.title  # 4 q x 8 bases of 16 bytes


def test_one_panel_per_phase_and_element_cells():
    picture = draw_access(
        parse_file(os.path.join(SPECS, "seed", "ldmatrix_x4_16x16.spec")), access_name="plain"
    )
    assert [p.lanes for p in picture.panels] == [range(8 * i, 8 * i + 8) for i in range(4)]
    by_element = draw_access(parse_file(PLAIN), by="element")
    assert len(by_element.columns) == 64
    assert touched(by_element)[(5, 7)] == ((5,), True)  # lane 5's 8th half


def test_draw_writes_an_svg_with_every_lane_label_and_the_bank_groups(tmp_path):
    out = tmp_path / "plain.svg"
    code, text = run("draw", PLAIN, "-o", str(out))
    assert code == 0, text
    labels = svg_texts(out)
    assert {f"T{lane}" for lane in range(8)} <= set(labels)
    assert {f"G{g}" for g in range(8)} <= set(labels)
    assert "words/bank" in labels and "8" in labels
    assert "lanes 0-7: 8-way, lanes 0-7 collide in banks 0-3" in labels
    run("draw", PLAIN, "-o", str(tmp_path / "again.svg"))
    assert (tmp_path / "again.svg").read_bytes() == out.read_bytes()  # reproducible


def test_draw_writes_png_and_html(tmp_path):
    png = tmp_path / "x4.png"
    assert (
        run("draw", os.path.join(SPECS, "seed", "ldmatrix_x4_16x16.spec"), "-o", str(png))[0] == 0
    )
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert 600 < width < 3000 and 600 < height < 4000
    page = tmp_path / "plain.html"
    assert run("draw", PLAIN, "-o", str(page))[0] == 0
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html and ">T7<" in html


@pytest.mark.parametrize(
    "args,message",
    [
        (["--access", "rdd"], "unknown access 'rdd': expected one of ['rd']; did you mean 'rd'?"),
        (["--instance", "qq=1"], "--instance: unknown variable 'qq'"),
        (["--instance", "q=9"], "--instance: q=9 is outside 0..8"),
        (["--instance", "base=8"], "base 8 is not a multiple of the buffer's alignment 128"),
    ],
)
def test_draw_refuses_bad_arguments_with_exit_2(tmp_path, args, message):
    code, out = run("draw", PLAIN, *args, "-o", str(tmp_path / "x.svg"))
    assert code == 2 and message in out and "Traceback" not in out


def test_draw_refuses_an_unknown_picture_format(tmp_path):
    code, out = run("draw", PLAIN, "-o", str(tmp_path / "x.jpg"))
    assert code == 2 and "expected a file ending in .svg, .png, .html" in out


def test_map_draw_prints_a_print_layout_grid():
    code, out = run("map", "(4,2):(2,1)", "--draw")
    assert code == 0
    assert "    +---+---+\n 0  | 0 | 1 |\n    +---+---+\n 1  | 2 | 3 |" in out, out
    assert " 3  | 6 | 7 |" in out


def test_text_grid_is_cut_to_the_terminal_and_says_so():
    grid = layout_grid("t", [64, 64], list(range(4096)), None)
    text = text_grid(grid, width=80)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "(rows 0-31 of 64, columns 0-" in text and "of 64; -o FILE.svg" in text


def test_map_writes_latex_like_print_latex_and_svg(tmp_path):
    tex = tmp_path / "sw.tex"
    code, _ = run("map", "Sw<3,3,3> o (_8,_64):(_64,_1)", "--dtype", "f16", "-o", str(tex))
    text = tex.read_text()
    assert code == 0 and text.startswith("\\documentclass[convert]{standalone}")
    assert "\\node[fill=g1] at (1,0) {72};" in text  # byte 144: bank group 1
    assert text.count("\\node[fill=") == 512
    svg = tmp_path / "sw.svg"
    assert run("map", "Sw<3,3,3> o (_8,_64):(_64,_1)", "-o", str(svg))[0] == 0
    labels = svg_texts(svg)
    assert {"0", "72", "504", "511"} <= set(labels)


def test_latex_grid_matches_print_latex_layout():
    text = latex_grid(layout_grid("(2,2):(1,2)", [2, 2], [0, 1, 2, 3], None))
    assert "\\node[fill=g2] at (0,1) {2};" in text
    assert "grid (2,2);" in text
