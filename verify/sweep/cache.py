"""Answers kept on disk, one JSON file per answer key (see `verify.sweep.key`).

Files live under a directory named after the code's fingerprint, so a run of
changed code starts afresh and the directories of older code can be deleted
whole. Only this process writes, so a cluster's workers need no shared disk;
each file is written aside and renamed, so concurrent sweeps never read half a file.
"""

from __future__ import annotations

import json
import os
import tempfile

from verify.sweep.key import code_fingerprint
from verify.sweep.question import Outcome


def default_directory() -> str:
    """$VERIFY_CACHE_DIR, else $XDG_CACHE_HOME/verify/sweep, else ~/.cache/verify/sweep."""
    if os.environ.get("VERIFY_CACHE_DIR"):
        return os.environ["VERIFY_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "verify", "sweep")


class Cache:
    def __init__(self, directory: str):
        self.directory = os.path.join(directory, code_fingerprint()[:16])

    def _path(self, key: str) -> str:
        return os.path.join(self.directory, key[:2], key + ".json")

    def get(self, key: str) -> Outcome | None:
        try:
            with open(self._path(key), encoding="utf-8") as f:
                return Outcome.from_json(json.load(f))
        except (OSError, ValueError, KeyError, TypeError):
            return None  # absent, or written by an incompatible version: ask again

    def put(self, key: str, outcome: Outcome):
        if not outcome.cacheable:
            return
        path = self._path(key)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, aside = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            # one string: json.dump to a file encodes piece by piece in Python, several
            # times slower (a kernel's answer of 200 results: a tenth of its check)
            f.write(json.dumps(outcome.to_json()))
        os.replace(aside, path)


class NoCache:
    """--no-cache: nothing is read or written."""

    def get(self, key: str) -> None:
        return None

    def put(self, key: str, outcome: Outcome):
        pass
