"""Build and run the CUDA probe (probe.cu), and read back what it and ncu saw.

The probe is compiled with nvcc on first use into a cache folder keyed by the
source's hash and the GPU's architecture. Missing nvcc, no GPU, or an
architecture without the instruction are `GpuError`s with a clear message.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass, field
from importlib import resources

from verify.model.instructions import Instruction

SMEM_BYTES = 48 * 1024
SOURCE_BYTES = 64 * 1024  # the probe's global buffer that cp.async copies from
NCU_METRIC = "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_{}.sum"
OPCODES = ("ld", "st", "ldsm", "stsm", "ldgsts")


class GpuError(Exception):
    """The spot check cannot run here (no nvcc, no GPU, too old a GPU, probe failure)."""


def op_name(instr: Instruction) -> str:
    """The probe's name for an instruction, e.g. 'ldsm4t', 'ld128', 'cpa16'."""
    if instr.family == "cp.async":  # the probe's cpa16 is .cg, cpa16ca the 16-byte .ca
        ca16 = instr.cache == "ca" and instr.bytes_per_address == 16
        return f"cpa{instr.bytes_per_address}{'ca' if ca16 else ''}"
    if instr.family in ("ldmatrix", "stmatrix"):
        head = "ldsm" if instr.family == "ldmatrix" else "stsm"
        return f"{head}{instr.address_lanes // 8}{'t' if instr.trans else ''}"
    return f"{instr.family}{8 * instr.bytes_per_address}"


def ncu_opcode(op: str) -> str:
    """The ncu opcode class whose wavefront metric counts this probe op."""
    for prefix, opcode in (
        ("ldsm", "ldsm"),
        ("stsm", "stsm"),
        ("cpa", "ldgsts"),
        ("ld", "ld"),
        ("st", "st"),
    ):
        if op.startswith(prefix):
            return opcode
    raise ValueError(f"unknown probe op {op!r}")


def min_arch(op: str) -> tuple[int, int]:
    if op.startswith("stsm"):
        return (9, 0)
    if op.startswith("ldsm"):
        return (7, 5)
    return (8, 0) if op.startswith("cpa") else (5, 0)


@dataclass
class Case:
    op: str
    addresses: list[int]  # byte offsets from the start of the probe's buffer
    measure: bool = True
    data: bool = True
    dump_bytes: int = 0
    timing: bool = False  # clock64 loop, the fallback when ncu is missing
    fill: dict[int, int] | None = None  # byte offset -> 16-bit tag; None = address tags
    sources: list[int] | None = None  # cp.async's global byte offsets; None = 16 * lane

    def line(self) -> str:
        offs = list(self.addresses) + [self.addresses[0]] * (32 - len(self.addresses))
        mode = (1 if self.measure else 0) | (2 if self.data else 0) | (4 if self.timing else 0)
        if self.sources is not None:
            mode |= 8
            offs += list(self.sources)
        head = f"{self.op} {mode} {self.dump_bytes} {0 if self.fill is None else 1} "
        text = head + " ".join(map(str, offs))
        if self.fill is not None:
            text += f" {len(self.fill)} " + " ".join(f"{b} {t}" for b, t in self.fill.items())
        return text


@dataclass
class Outcome:
    registers: list[list[int]] = field(default_factory=list)  # [lane][reg]
    shared: bytes = b""
    wavefronts: int | None = None
    cycles: int | None = None
    estimated: bool = False  # wavefronts from clock64 timing, not from ncu


def address_tag_fill() -> bytearray:
    """The probe's FILL 0 pattern: halfword i holds i + 1."""
    buf = bytearray(SMEM_BYTES)
    for i in range(SMEM_BYTES // 2):
        buf[2 * i], buf[2 * i + 1] = (i + 1) & 0xFF, ((i + 1) >> 8) & 0xFF
    return buf


def explicit_fill(fill: dict[int, int]) -> bytearray:
    buf = bytearray(b"\xff" * SMEM_BYTES)
    for byte, tag in fill.items():
        buf[byte], buf[byte + 1] = tag & 0xFF, (tag >> 8) & 0xFF
    return buf


class Probe:
    def __init__(self, cache_dir: str | None = None):
        nvcc = shutil.which("nvcc")
        if nvcc is None:
            raise GpuError("nvcc not found on PATH: the spot check compiles a CUDA probe")
        self.nvcc: str = nvcc
        self.arch = self._gpu_arch()
        self.cache_dir = cache_dir or os.path.join(
            os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "verify"
        )
        self.binary = self._build()
        self.smem_base = self._smem_base()
        self.has_ncu = shutil.which("ncu") is not None  # else clock64 estimates

    @staticmethod
    def source() -> str:
        return resources.files("verify.gpu").joinpath("probe.cu").read_text()

    def _gpu_arch(self) -> tuple[int, int]:
        smi = shutil.which("nvidia-smi")
        if smi is None:
            raise GpuError("no NVIDIA GPU found (nvidia-smi is not on PATH)")
        r = subprocess.run(
            [smi, "--query-gpu=compute_cap", "--format=csv,noheader"],
            capture_output=True,
            text=True,
        )
        if r.returncode != 0 or not r.stdout.strip():
            said = r.stderr.strip() or r.stdout.strip()
            raise GpuError(f"no NVIDIA GPU found: nvidia-smi says {said}")
        major, minor = r.stdout.split()[0].split(".")
        return int(major), int(minor)

    def _build(self) -> str:
        src = self.source()
        arch = f"sm_{self.arch[0]}{self.arch[1]}"
        key = hashlib.sha256((src + arch).encode()).hexdigest()[:16]
        binary = os.path.join(self.cache_dir, f"probe-{arch}-{key}")
        if os.path.exists(binary):
            return binary
        os.makedirs(self.cache_dir, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            cu = os.path.join(tmp, "probe.cu")
            with open(cu, "w") as f:
                f.write(src)
            r = subprocess.run(
                [self.nvcc, "-O2", "-std=c++17", f"-arch={arch}", "-o", binary + ".tmp", cu],
                capture_output=True,
                text=True,
            )
        if r.returncode != 0:
            raise GpuError(f"nvcc failed to build the probe for {arch}:\n{r.stderr[-2000:]}")
        os.replace(binary + ".tmp", binary)
        return binary

    def _smem_base(self) -> int:
        r = subprocess.run([self.binary, "info"], capture_output=True, text=True)
        if r.returncode != 0:
            raise GpuError(f"the probe could not run on the GPU: {r.stderr.strip()}")
        return int(r.stdout.split()[1])

    def supports(self, op: str) -> bool:
        return self.arch >= min_arch(op)

    def run(self, cases: list[Case], use_ncu: bool = True) -> list[Outcome]:
        for c in cases:
            if not self.supports(c.op):
                need = ".".join(map(str, min_arch(c.op)))
                raise GpuError(
                    f"{c.op} needs compute capability {need}; this GPU is "
                    f"{self.arch[0]}.{self.arch[1]}"
                )
        if not cases:
            return []
        with tempfile.TemporaryDirectory() as tmp:
            cases_path, out_path = os.path.join(tmp, "cases.txt"), os.path.join(tmp, "out.bin")
            with open(cases_path, "w") as f:
                f.write(f"{len(cases)}\n" + "\n".join(c.line() for c in cases) + "\n")
            command = [self.binary, "run", cases_path, out_path]
            wants = use_ncu and self.has_ncu and any(c.measure for c in cases)
            ncu = shutil.which("ncu") if wants else None
            if ncu:
                metrics = ",".join(NCU_METRIC.format(o) for o in OPCODES)
                command = [
                    ncu,
                    "--clock-control",
                    "none",
                    "--kernel-name",
                    "regex:measure",
                    "--metrics",
                    metrics,
                    "--csv",
                    "--page",
                    "raw",
                    *command,
                ]
            r = subprocess.run(command, capture_output=True, text=True)
            if r.returncode != 0:
                raise GpuError(f"probe failed (exit {r.returncode}): {r.stderr.strip()[-2000:]}")
            with open(out_path, "rb") as f:
                raw = f.read()
        outcomes = _read_outputs(cases, raw)
        if ncu:
            _attach_wavefronts(cases, outcomes, r.stdout)
        return outcomes


def _read_outputs(cases: list[Case], raw: bytes) -> list[Outcome]:
    outcomes, pos = [], 0
    for c in cases:
        o = Outcome()
        if c.data:
            words = struct.unpack_from("<128I", raw, pos)
            pos += 512
            o.registers = [list(words[4 * lane : 4 * lane + 4]) for lane in range(32)]
            o.shared = raw[pos : pos + c.dump_bytes]
            pos += c.dump_bytes
        if c.timing:
            (o.cycles,) = struct.unpack_from("<q", raw, pos)
            pos += 8
        outcomes.append(o)
    return outcomes


def _attach_wavefronts(cases: list[Case], outcomes: list[Outcome], ncu_csv: str):
    start = ncu_csv.find('"ID"')
    if start < 0:
        raise GpuError("ncu printed no metrics (is profiling permitted on this machine?)")
    rows = [
        r
        for r in csv.DictReader(io.StringIO(ncu_csv[start:]))
        if "measure_kernel" in r.get("Kernel Name", "")
    ]
    measured = [c for c in cases if c.measure]
    if len(rows) != len(measured):
        raise GpuError(f"ncu reported {len(rows)} launches, expected {len(measured)}")
    row_of = iter(rows)
    for c, o in zip(cases, outcomes):
        if c.measure:
            row = next(row_of)
            o.wavefronts = int(float(row[NCU_METRIC.format(ncu_opcode(c.op))]))
