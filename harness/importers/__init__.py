"""Import an engine's own test suite as cases (`window-harness import`).

One module per source format reads its files into `records.Record`s (`slt`,
`pg_regress`, `spark_golden`); the rest is shared: which records are window
queries and which setup they depend on (`setup`), materialising those tables
on an engine (`materialise`), and writing one case per query (`write`), all
driven by `pipeline.import_paths`.
"""

from __future__ import annotations

from harness.importers.pipeline import FORMATS, ImportCounts, import_paths

__all__ = ["FORMATS", "ImportCounts", "import_paths"]
