"""Benchmark and campaign scripts, run from the repository root as `python -m benchmarks.NAME`.

A package so that the scripts import each other (`benchmarks.catalog`,
`oracle.spec_generator`) and the tests import them, without sys.path edits.
"""
