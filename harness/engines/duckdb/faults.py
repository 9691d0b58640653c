"""Every deliberately faulty DuckDB, by engine name (the registry looks names up here).

`faulty` holds the faults of one clause and the peer-shuffle control;
`faulty_plans` the faults that fire only under a plan shape or past a size.
"""

from __future__ import annotations

from harness.engines.base import Engine
from harness.engines.duckdb.faulty import CLAUSE_FAULTS
from harness.engines.duckdb.faulty_plans import FAULTY_PLANS

FAULTY: dict[str, type[Engine]] = {**CLAUSE_FAULTS, **{cls.name: cls for cls in FAULTY_PLANS}}
