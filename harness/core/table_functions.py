"""The set-returning functions a query may read as a table (`TableFunctionRef`).

generate_series(start, stop[, step]) counts from start to stop, stop included
(PostgreSQL, DuckDB, DataFusion); range(start, stop[, step]) stops before stop
(DuckDB, DataFusion, Spark). The step defaults to 1; a negative step counts
down; the series is empty when start is past stop in the step's direction.

The one output column is named by the column list (`AS g(x)`), else by the
table alias (`AS g`: PostgreSQL's and DuckDB's rule for a function returning
one value per row), else by the function's name; the table is named by the
alias, else by the function's name.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.core.errors import InvalidQuery
from harness.core.model import TableFunctionRef


@dataclass(frozen=True)
class TableFunctionSpec:
    name: str
    includes_stop: bool
    min_args: int = 2
    max_args: int = 3

    def series(self, start: int, stop: int, step: int = 1) -> range:
        """The values, as Python's range (step 0 is the caller's error to raise)."""
        if self.includes_stop:
            stop += 1 if step > 0 else -1
        return range(start, stop, step)


TABLE_FUNCTIONS = {
    "generate_series": TableFunctionSpec("generate_series", includes_stop=True),
    "range": TableFunctionSpec("range", includes_stop=False),
}


def lookup_table_function(name: str) -> TableFunctionSpec:
    spec = TABLE_FUNCTIONS.get(name)
    if spec is None:
        raise InvalidQuery(f"{name!r} is not a table function (known: {sorted(TABLE_FUNCTIONS)})")
    return spec


def check_table_function(ref: TableFunctionRef) -> TableFunctionSpec:
    """The spec of a well-formed reference; InvalidQuery for a malformed one."""
    spec = lookup_table_function(ref.name)
    if not spec.min_args <= len(ref.args) <= spec.max_args:
        raise InvalidQuery(
            f"{ref.name} takes {spec.min_args} to {spec.max_args} arguments, got {len(ref.args)}")
    if len(ref.columns) > 1:
        raise InvalidQuery(f"{ref.name} returns one column, {len(ref.columns)} names given")
    if ref.columns and ref.alias is None:
        raise InvalidQuery("a column list needs a table alias before it")
    return spec


def table_name(ref: TableFunctionRef) -> str:
    return ref.alias or ref.name


def column_name(ref: TableFunctionRef) -> str:
    return ref.columns[0] if ref.columns else table_name(ref)
