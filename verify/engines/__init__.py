"""Deciding checks: the enumeration and solver engines over one domain, the choice
between them (`decide`), cp.async copies, witnesses replayed before printing,
explanations, and the runner that turns a parsed spec into results."""
