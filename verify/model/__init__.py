"""The semantics: expressions, layouts, dtypes, instructions, the bank model and
the resolved program. Plain integers and expression trees; no solver, no printing."""
