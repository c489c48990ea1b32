"""Issue 18, wired in: cp.async (rule C, bound G) and 64/128-bit loads (rule L) in
`verify wavefronts` / `verify.wavefronts`; the measured rules themselves are tested
against every H200 measurement in tests/model/test_hw_rules.py."""

import json

import pytest
from click.testing import CliRunner

import verify
from verify.cli import main
from verify.errors import SpecError
from verify.model.instructions import parse_instruction

CONTIGUOUS_WORDS = [4 * lane for lane in range(32)]


def run(*args):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


@pytest.mark.parametrize(
    "name,canonical,phase",
    [
        ("cp.async.ca.shared.global.4", "cp.async.ca.4", 32),
        ("cp.async.ca.shared::cta.global.L2::128B.8", "cp.async.ca.8", 16),
        ("cp.async.ca.16", "cp.async.ca.16", 8),
        ("cp.async.cg.shared.global.16", "cp.async.cg.16", 8),
    ],
)
def test_cp_async_spellings(name, canonical, phase):
    instr = parse_instruction(name)
    assert (instr.name, instr.family, instr.phase_lanes, instr.address_lanes) == (
        canonical,
        "cp.async",
        phase,
        32,
    )


@pytest.mark.parametrize(
    "sources,expected",
    [
        (CONTIGUOUS_WORDS, 1),  # contiguous source
        ([16 * lane for lane in range(32)], 4),  # 16-byte-strided source
        ([0] * 32, 32),  # every lane reads one global word
    ],
)
def test_the_source_decides_a_4_byte_copy(sources, expected):
    """docs/hardware.md: 1, 4 and 32 wavefronts into the same 32 contiguous words."""
    assert verify.wavefronts("cp.async.ca.shared.global.4", CONTIGUOUS_WORDS, sources) == expected


def test_cp_async_needs_its_sources():
    with pytest.raises(SpecError, match="expected sources"):
        verify.wavefronts("cp.async.ca.4", CONTIGUOUS_WORDS)
    with pytest.raises(SpecError, match="sources are given only for cp.async"):
        verify.wavefronts("ld.shared.b32", CONTIGUOUS_WORDS, CONTIGUOUS_WORDS)
    with pytest.raises(SpecError, match="lane 3 source address 6"):
        verify.wavefronts("cp.async.ca.4", CONTIGUOUS_WORDS, [0, 4, 8, 6] + [0] * 28)


def test_a_128_bit_load_is_answered_by_rule_l():
    """Neighbouring lanes in pairs over 16 distinct chunks: the phase model's 4
    phases merge two by two (rule L), exact."""
    pairs = [16 * (lane // 2) for lane in range(32)]
    assert verify.wavefronts("ld.shared.v4.b32", pairs) == 2
    code, out = run("wavefronts", "--json", "ld.shared.v4.b32", *map(str, pairs))
    doc = json.loads(out)
    assert (code, doc["wavefronts"], doc["phase_model_wavefronts"], doc["exact"]) == (0, 2, 4, True)
    assert "rule L" in doc["model_fidelity"]


def test_wavefronts_command_with_sources():
    strided = ",".join(str(16 * lane) for lane in range(32))
    code, out = run(
        "wavefronts", "cp.async.ca.4", *map(str, CONTIGUOUS_WORDS), "--sources", strided
    )
    lines = out.strip().splitlines()
    assert code == 0 and lines[-1] == "4"
    assert lines[0] == "lanes  0-31: 4 (source bank 0 -> shared bank 0)"
    assert "exact (rule C" in lines[1]


def cg_wavefronts(destinations: list[int], sources: list[int]) -> dict:
    code, out = run(
        "wavefronts",
        "--json",
        "cp.async.cg.shared.global.16",
        *map(str, destinations),
        "--sources",
        ",".join(map(str, sources)),
    )
    assert code == 0
    return json.loads(out)


def test_cp_async_cg_is_exact_by_rule_s_where_it_applies():
    chunks = [16 * lane for lane in range(32)]
    doc = cg_wavefronts(chunks, chunks)  # four lines, each copied to a line: 1 each
    assert (doc["wavefronts"], doc["exact"]) == (4, True)
    assert doc["model_fidelity"].startswith("exact (rule S")


def test_cp_async_cg_is_exact_where_a_chunk_is_copied_twice_into_a_line():
    # Every lane copies global chunk 0: rule S's rounds (hw_cg.md) make it exact, 8
    # a line (four rounds of two halves that land with different swaps).
    doc = cg_wavefronts([16 * lane for lane in range(32)], [0] * 32)
    assert (doc["wavefronts"], doc["exact"]) == (32, True)
    assert doc["model_fidelity"].startswith("exact (rule S")


def test_wavefronts_command_refuses_a_cp_async_without_sources():
    code, out = run("wavefronts", "cp.async.ca.4", *map(str, CONTIGUOUS_WORDS))
    assert code == 2 and "expected sources (one per lane)" in out


# -- cp.async in specs ----------------------------------------------------------------

import numpy as np  # noqa: E402

from verify.engines import cp_async as copies  # noqa: E402
from verify.engines import decide, enumeration  # noqa: E402
from verify.engines.runner import run_spec  # noqa: E402
from verify.model.bank import hardware_copy_cost  # noqa: E402
from verify.model.program import Program  # noqa: E402
from verify.smt.solve import Budget, Status  # noqa: E402
from verify.spec.parser import parse_text  # noqa: E402

TILES = """\
dtype f32
layout S = (32,32):(32,1)
layout G = (32,32):(1024,1)
layout Gs = (32,32):(4096,4)
"""


def results(body: str, engine: str = "auto"):
    return {r.property: r for r in run_spec(parse_text(TILES + body, "t.spec"), engine=engine)}


def test_the_source_decides_a_copy_in_a_spec():
    got = results(
        "access cp = cp.async.ca.shared.global.4 S(r, lane) from G(r, lane) "
        "for r in 0..32\n"
        "access st = cp.async.ca.4 S(r, lane) from Gs(r, lane) for r in 0..32\n"
        "check conflict_free cp\ncheck wavefronts == 4 st\ncheck conflict_free st\n"
    )
    assert got["conflict_free cp"].status == Status.PROVED
    assert (got["wavefronts == 4 st"].status, got["wavefronts == 4 st"].wavefronts) == (
        Status.PROVED,
        4,
    )
    refuted = got["conflict_free st"]
    assert refuted.status == Status.REFUTED and refuted.engine == "enumeration"
    assert "read source bank 0 and write shared bank 0" in refuted.counterexample.summary
    assert refuted.fidelity.startswith("exact (rule C")
    assert {"in_bounds cp from G", "aligned 4 cp from G"} <= set(got)


def test_the_global_side_is_checked_like_an_access():
    got = results("access cp = cp.async.ca.4 S(r, lane) from G(r + 1, lane) for r in 0..32\n")
    assert got["in_bounds cp from G"].status == Status.REFUTED
    got = results(
        "access cp = cp.async.ca.8 S(r, 2 * (lane % 16)) from G(r, lane) "
        "for r in 0..32\ncheck wavefronts <= 2 cp\n"
    )
    assert got["aligned 8 cp from G"].status == Status.REFUTED
    assert got["wavefronts <= 2 cp"].status == Status.REFUTED  # figures undefined


# One shared line per r, filled from one global row: at global base 0 the line is
# copied to a line (1 wavefront); a base 16 bytes on splits it over two global lines.
LINE_COPY = (
    "access cg = cp.async.cg.16 S(r, 4 * (lane % 8)) from G(r, 4 * (lane % 8)) for r in 0..32\n"
)


@pytest.mark.parametrize(
    "align,worst,base",
    [(16, 4, 48), (32, 2, 32), (64, 2, 64), (128, 1, 0), (256, 1, 0), (48, 4, 48)],
)
def test_rule_s_quantifies_the_global_base_modulo_128(align, worst, base):
    """Rule S reads which 128-byte global line each source lies in, so every base
    residue that `global align N` allows is evaluated (0, gcd(N, 128), ... < 128);
    the worst instance is shown with its base. Costs per base 0..112 by 16:
    1, 3, 2, 4, 2, 4, 2, 3 (verify.model.bank.cg_cost)."""
    got = results(
        f"buffer align 128\nglobal align {align}\n"
        + LINE_COPY
        + f"check wavefronts <= 1 cg\ncheck wavefronts == {worst} cg\n"
    )
    one, equal = got["wavefronts <= 1 cg"], got[f"wavefronts == {worst} cg"]
    assert (equal.status, equal.wavefronts) == (Status.PROVED, worst)
    assert equal.fidelity.startswith("exact (rule S")
    if worst == 1:
        assert one.status == Status.PROVED
        return
    assert one.status == Status.REFUTED and one.engine == "enumeration"
    assert one.counterexample.instance["gbase"] == base
    assert f"{worst} wavefronts by rule S" in one.counterexample.summary
    sources = [row.address for row in one.counterexample.rows if row.lane is None]
    assert sources and all(a % 128 // 16 == (base // 16 + i) % 8 for i, a in enumerate(sources))


def test_cp_async_cg_copying_one_chunk_into_a_line_is_exact_by_rounds():
    """Every lane copies global chunk 0 into one shared line: rule S's rounds give
    8 exactly (four copies into each half of the line's sectors, so four rounds of
    two halves that land with different swaps), which bound G (8) equals."""
    got = results(
        "buffer align 128\naccess cg = cp.async.cg.16 S(r, 4 * (lane % 8)) from G(r, 0) "
        "for r in 0..32\ncheck wavefronts <= 4 cg\ncheck wavefronts <= 8 cg\n"
        "check wavefronts == 9 cg\ncheck wavefronts == 8 cg\n"
    )
    assert got["wavefronts <= 4 cg"].status == Status.REFUTED
    assert "8 wavefronts by rule S" in got["wavefronts <= 4 cg"].counterexample.summary
    assert got["wavefronts <= 8 cg"].status == Status.PROVED
    assert got["wavefronts == 9 cg"].status == Status.REFUTED
    assert got["wavefronts == 8 cg"].status == Status.PROVED
    assert got["wavefronts <= 8 cg"].fidelity.startswith("exact (rule S")


def test_a_cg_copy_mixing_line_copies_and_repeated_chunks_is_exact():
    """Odd rows copy a line into a line (rule S: 1), even rows copy one chunk into
    eight destinations (rule S's rounds: 8): '<= 1' is refuted at an even row."""
    got = results(
        "buffer align 128\nglobal align 128\naccess cg = cp.async.cg.16 S(r, 4 * (lane % 8)) "
        "from G(r, 4 * (lane % 8) * (r % 2)) for r in 0..32\n"
        "check wavefronts <= 1 cg\ncheck wavefronts <= 8 cg\ncheck wavefronts == 1 cg\n"
    )
    one = got["wavefronts <= 1 cg"]
    assert one.status == Status.REFUTED and one.counterexample.instance["r"] % 2 == 0
    assert one.fidelity.startswith("exact (rule S")
    assert got["wavefronts <= 8 cg"].status == Status.PROVED
    assert got["wavefronts == 1 cg"].status == Status.REFUTED


@pytest.mark.parametrize("align", [16, 128])
def test_the_solver_decides_cg_by_rule_s_as_enumeration_does(align):
    """The solver encodes rule S (verify.engines.solver.RuleSQuery) with the global base
    residue symbolic: its verdicts and figures are enumeration's, refutations too."""
    body = f"buffer align 128\nglobal align {align}\n" + LINE_COPY
    body += "check wavefronts <= 1 cg\ncheck wavefronts <= 8 cg\ncheck wavefronts == 9 cg\n"
    solver, enumerated = results(body, "z3"), results(body, "enumeration")
    expected = Status.PROVED if align == 128 else Status.REFUTED
    assert solver["wavefronts <= 1 cg"].status == expected
    for check in ("wavefronts <= 1 cg", "wavefronts <= 8 cg", "wavefronts == 9 cg"):
        assert solver[check].status == enumerated[check].status != Status.UNKNOWN
        assert solver[check].wavefronts == enumerated[check].wavefronts


def test_sources_known_modulo_128_bytes_keep_bound_g():
    """verify ttgir writes each source term modulo 128 bytes (enough for banks):
    the lines rule S reads are then unknown, so a .cg copy gets bound G, one base."""
    spec = parse_text(TILES + "buffer align 128\n" + LINE_COPY + "check wavefronts <= 1 cg\n", "t")
    spec.sources_modulo_128 = True
    (got,) = [r for r in run_spec(spec, engine="enumeration") if not r.implicit]
    assert got.status == Status.UNKNOWN and "bound G gives 8" in got.reason
    assert Program(spec).global_bases(Program(spec).access("cg", None)) == range(0, 1)


def test_auto_enumerates_cg_copies_on_larger_domains():
    """Only enumeration evaluates rule S, so `auto` enumerates a .cg copy's figure up
    to CG_ENUMERATION_LIMIT lane evaluations (global bases counted), rule C up to the
    common line."""
    program = Program(parse_text(TILES + LINE_COPY, "t.spec"))
    cg = program.access("cg", None)
    assert decide.copy_points(program, cg) == 8 * decide.access_points(program, cg)
    points = decide.ENUMERATION_LIMIT * 2
    assert decide.engine_for("auto", points, decide.copy_limit(cg)) == "enumeration"
    assert decide.engine_for("auto", 8 * points, decide.copy_limit(cg)) == "z3"
    ca = Program(parse_text(TILES + LINE_COPY.replace("cg.16", "ca.16"), "t.spec")).access(
        "cg", None
    )
    assert decide.engine_for("auto", points, decide.copy_limit(ca)) == "z3"
    assert len(program.global_bases(ca)) == 1  # rule C: base 0 stands for every base


@pytest.mark.parametrize(
    "body,message",
    [
        ("access cp = cp.async.ca.4 S(r, lane) for r in 0..32\n", "expected 'from G"),
        (
            "access cp = ld.shared.b32 S(r, lane) from G(r, lane) for r in 0..32\n",
            "only cp.async has one",
        ),
        (
            "global align 8\naccess cp = cp.async.ca.16 S(r, 4 * (lane % 8)) "
            "from G(r, 4 * (lane % 8)) for r in 0..32\n",
            "expected 'global align N' with N a multiple of 16, found 8",
        ),
        (
            "access cp = cp.async.ca.4 S(r, lane) from G(r, lane) for r in 0..32\n"
            "check max_ways <= 1 cp\n",
            "max_ways is not defined for cp.async.ca.4",
        ),
    ],
)
def test_copies_verify_cannot_decide_are_located_errors(body, message):
    with pytest.raises(SpecError, match=message) as caught:
        results(body)
    assert caught.value.pos.line >= 5


def test_the_solver_decides_copies_as_enumeration_does():
    body = (
        "access cp = cp.async.ca.4 S(r, lane) from G(r, lane) for r in 0..32\n"
        "access st = cp.async.ca.4 S(r, lane) from Gs(r, lane) for r in 0..32\n"
        "check conflict_free cp\ncheck conflict_free st\n"
    )
    by_z3, by_enumeration = results(body, engine="z3"), results(body, engine="enumeration")
    for prop in ("conflict_free cp", "conflict_free st"):
        mine, theirs = by_z3[prop], by_enumeration[prop]
        assert (mine.engine, theirs.engine) == ("z3", "enumeration")
        assert (mine.status, mine.wavefronts) == (theirs.status, theirs.wavefronts), prop
    cex = by_z3["conflict_free st"].counterexample
    assert cex is not None and cex.summary.startswith("cp.async.ca.4: 4 wavefronts")


def test_a_copy_above_the_enumeration_limit_goes_to_the_solver():
    """2^25 lane evaluations: `auto` asks the solver (enumeration refused it before)."""
    got = results(
        "access cp = cp.async.ca.4 S(r, lane) from G(r, lane) for r in 0..32, k in 0..32768\n"
        "check wavefronts <= 1 cp\n"
    )["wavefronts <= 1 cp"]
    assert (got.status, got.engine, got.wavefronts) == (Status.PROVED, "z3", 1)


@pytest.mark.parametrize(
    "instr", ["cp.async.ca.4", "cp.async.ca.8", "cp.async.ca.16", "cp.async.cg.16"]
)
def test_vectorised_copy_costs_equal_verify_bank(instr):
    """The enumeration engine's numpy rule C / rule S against
    `verify.model.bank.hardware_copy_cost` (figure and exactness), on random destinations
    and sources with many repeats (broadcasts, collisions, chunks copied twice into
    a line: rule S's rounds) and on permutations."""
    access = Program(parse_text(TILES + f"access cp = {instr} S(0, 0) from G(0, 0)\n")).access(
        "cp", None
    )
    size = access.instruction.bytes_per_address
    rng = np.random.default_rng(18)
    dst = rng.integers(0, 64, size=(400, 32)) * size
    src = rng.integers(0, 64, size=(400, 32)) * size
    dst[:100] %= 4 * size
    src[100:200] %= 8 * size
    dst[200:300] = rng.permuted(np.tile(np.arange(64), (100, 1)), axis=1)[:, :32] * size
    src[300:] = rng.permuted(np.tile(np.arange(32), (100, 1)), axis=1) * size
    costs, exact = enumeration.copy_costs(access.instruction, dst, src)
    for d, s, cost, is_exact in zip(dst, src, costs, exact):
        want = hardware_copy_cost(access.instruction, list(d), list(s))
        assert (cost, is_exact) == (want.wavefronts, want.exact)
    if instr.endswith("cg.16"):
        assert exact.all()  # rule S, rounds included, is exact on every pattern


def test_the_oracle_answers_copies_as_verify_does():
    """The independent oracle reads copies with its own rule C (it used to refuse
    them): every check it answers agrees with verify's verdict."""
    from oracle import answers

    text = (
        TILES
        + "access cp = cp.async.ca.4 S(r, lane) from G(r, lane) for r in 0..32\n"
        + "check wavefronts <= 1 cp\ncheck conflict_free cp\n"
    )
    theirs = answers(text)
    mine = {r.property: r for r in verify.check_text(text, name="t.spec")}
    assert {"wavefronts <= 1 cp", "conflict_free cp"} <= theirs.keys()
    for prop, answer in theirs.items():
        assert answer.holds == (mine[prop].status.value == "proved"), prop


def test_a_copy_search_out_of_time_is_unknown():
    """No instance evaluated before the budget ran out: UNKNOWN with the reason."""
    program = Program(parse_text(TILES + LINE_COPY, "t.spec"))
    access = program.access("cg", None)
    figures = enumeration.copy_wavefronts(program, access, Budget(0))
    assert (figures.exact, figures.bound, figures.complete) == (None, None, False)
    check = parse_text(TILES + LINE_COPY + "check wavefronts <= 1 cg\n", "t.spec").checks[0]
    answer = copies.decide_copy(program, access, check, figures)
    assert answer.status == Status.UNKNOWN and answer.reason.startswith("timeout after 0 s")
