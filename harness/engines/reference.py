"""The reference implementation as an engine: it reads the model directly."""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa

import harness
from harness.core.model import Query
from harness.engines.base import Engine
from harness.sql.canonical import CANONICAL


class ReferenceEngine(Engine):
    name = "reference"
    dialect = CANONICAL
    is_reference = True

    def version(self) -> str:
        return harness.__version__

    def deny_file_access(self) -> None:
        """Nothing to turn off: the reference reads only the tables it is given."""

    def execute(self, query: Query, tables: Mapping[str, pa.Table]) -> pa.Table:
        from reference_impl import evaluate

        return evaluate(query, tables).table

    def run(self, tables: Mapping[str, pa.Table], sql: str) -> pa.Table:
        from harness.sql import parse

        return self.execute(parse(sql), tables)
