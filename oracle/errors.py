"""What the oracle raises instead of answering.

* `OracleRefusal` -- the spec is invalid by the oracle's own reading (a negative
  intermediate value, a byte address at or above 2^32, an unknown name, shapes
  that are not congruent, a construct the oracle does not read, a domain too large
  to enumerate). The message says which, and where when the parse tree knows.
* `OracleUnavailable` -- an oracle library the spec needs (Triton for
  ``#ttg.*`` encodings) is not installed.
"""

from __future__ import annotations


class OracleRefusal(Exception):
    """The oracle will not answer this spec; `message` says why."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class OracleUnavailable(OracleRefusal):
    """A library the oracle needs for this spec (triton, pycute) is missing."""
