"""The solver boundary: bit-vector lowering (`bv`) and the one place solver answers
become verdicts (`solve`). Z3 terms are built only here (and by synthesis's
Boolean encodings); tests/house/test_z3_confined.py enforces it."""
