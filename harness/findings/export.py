"""A case as a regression test in an engine's own test format, ready to hand
upstream (the command `window-harness export CASE --to FORMAT` is harness/cli/export.py).

The expected rows are the reference's answer (the oracle), never the engine's,
computed under the engine's semantics profile. The parts: `export_formats`
(the formats as data, and how each prints a value), `export_expect` (the
expected answer, and whether it is the only valid one), `export_file` (the
file's text); this module is their face.
"""

from __future__ import annotations

from harness.findings.export_expect import Expectation, expectation
from harness.findings.export_file import Build, export_case, finding_record
from harness.findings.export_formats import (
    FORMATS,
    TestFormat,
    duckdb_cell,
    plain_decimal,
    shortest_float32,
    slt_cell,
    slt_letter,
)

__all__ = [
    "FORMATS", "Build", "Expectation", "TestFormat", "duckdb_cell", "expectation", "export_case",
    "finding_record", "plain_decimal", "shortest_float32", "slt_cell", "slt_letter",
]
