"""Which combinations ask the same question, and which cached answers still hold.

Two spec texts ask the same question when they parse to the same spec, positions
aside: whitespace, comments and spellings that name one thing (``half`` and
``f16``, ``_64`` and ``64``) do not matter, because the parsed spec is what the
checks read. The key is a digest of that canonical form.

A cached answer is valid for the code that computed it, the engine choice and the
per-check timeout. The code is fingerprinted by the bytes of verify's own source
(not the commit or the version number, which say nothing of uncommitted edits)
and Z3's version (which model, hence which counterexample, the solver finds).
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import os
from functools import lru_cache

import z3

from verify.engines.options import RunOptions
from verify.errors import InternalError, Pos
from verify.spec.ast import Spec

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE_SUFFIXES = (".py", ".lark", ".cu")


def canonical(value):
    """`value` (a parsed spec or part of one) as JSON-ready nested lists, each
    dataclass tagged with its type; positions, the file name and the functions
    a parsed object carries (a thread map's expression reader) are left out."""
    if dataclasses.is_dataclass(value):
        fields = [
            f.name
            for f in dataclasses.fields(value)
            if not isinstance(getattr(value, f.name), Pos)
            and not (isinstance(value, Spec) and f.name == "file")
            and not inspect.isroutine(getattr(value, f.name))
        ]
        return [type(value).__qualname__, *([f, canonical(getattr(value, f))] for f in fields)]
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if isinstance(value, dict):
        return [[canonical(k), canonical(v)] for k, v in value.items()]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    # A parsed spec is plain data; anything else would need its own canonical form.
    raise InternalError(f"no canonical form for a {type(value).__name__} in a parsed spec")


def question_key(spec: Spec) -> str:
    return _digest(canonical(spec))


def answer_key(question: str, options: RunOptions) -> str:
    """Where the answer to `question` is cached: it depends on the code and on the
    run's options as well (an UNKNOWN is never cached, but a PROVED by enumeration
    and one by the solver are different answers to report)."""
    return _digest([question, *options.key(), code_fingerprint()])


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A digest of Z3's version and of every source file of the package."""
    digest = hashlib.sha256(z3.get_version_string().encode())
    for root, dirs, files in os.walk(PACKAGE_ROOT):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(f for f in files if f.endswith(SOURCE_SUFFIXES)):
            path = os.path.join(root, name)
            digest.update(os.path.relpath(path, PACKAGE_ROOT).encode())
            with open(path, "rb") as f:
                digest.update(f.read())
    return digest.hexdigest()


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, separators=(",", ":")).encode()).hexdigest()
