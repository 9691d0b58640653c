"""What the Spark adapter needs that older pyspark releases lack, probed
rather than assumed (an A/B of two Spark releases runs this module under
each: `--engine-python spark@old=PATH`).

pyspark 4.0 added `DataFrame.toArrow()`, `createDataFrame(pyarrow.Table)`,
`pyspark.logger` and `PySparkException.getCondition()`; pyspark 3.5 has
none of them (measured on 3.5.9). There the same Arrow paths are reached
as 4.x reaches them itself: Arrow IPC batches handed to the JVM
(`PythonSQLUtils.toDataFrame`) and collected from it
(`_collect_as_arrow`), so no value goes through pandas.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# pyspark (4.x) logs every failed query as a JSON ERROR line (with the JVM
# stack trace) on stderr through these Python loggers.
_QUERY_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")


def quiet_python_loggers() -> None:
    try:
        from pyspark.logger import PySparkLogger
    except ImportError:  # pyspark < 4.0 has no such loggers, nor logs failed queries
        return
    for name in _QUERY_LOGGERS:
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL + 1)


def has_arrow_api() -> bool:
    """Whether this pyspark reads and writes Arrow tables itself (4.0 and later)."""
    from pyspark.sql import DataFrame

    return hasattr(DataFrame, "toArrow")


def from_arrow(spark: SparkSession, table: pa.Table) -> DataFrame:
    """`table` as a DataFrame of the classic session `spark`."""
    if has_arrow_api():
        return spark.createDataFrame(table)
    return _from_arrow_ipc(spark, table)


def to_arrow(frame: DataFrame) -> pa.Table:
    """A classic DataFrame's rows as an Arrow table (timestamps as UTC ones, as 4.x gives them)."""
    if has_arrow_api():
        return frame.toArrow()
    from pyspark.sql.pandas.types import to_arrow_schema

    schema = to_arrow_schema(frame.schema)
    batches = frame._collect_as_arrow()
    # The batches say `not null` where Spark knows so; the schema is what
    # toArrow gives on 4.x (which casts the same way).
    return (pa.Table.from_batches(batches) if batches else schema.empty_table()).cast(schema)


def _from_arrow_ipc(spark: SparkSession, table: pa.Table) -> DataFrame:
    """pyspark 3.5: the batches cross to the JVM as 4.x's createDataFrame(Table) sends them."""
    from pyspark.sql import DataFrame
    from pyspark.sql.pandas.serializers import ArrowStreamSerializer
    from pyspark.sql.pandas.types import from_arrow_schema

    table = _spark_arrow_types(table)
    schema = from_arrow_schema(table.schema)
    jvm = spark._jvm
    assert jvm is not None
    batches = table.to_batches() or [pa.RecordBatch.from_pylist([], table.schema)]
    iterator = spark.sparkContext._serialize_to_jvm(
        batches, ArrowStreamSerializer(), jvm.PythonSQLUtils.readArrowStreamFromFile, jvm.ArrowIteratorServer)
    return DataFrame(jvm.PythonSQLUtils.toDataFrame(iterator, schema.json(), spark._jsparkSession), spark)


def _spark_arrow_types(table: pa.Table) -> pa.Table:
    """Arrow types as pyspark 3.5's JVM reads them: a naive timestamp is Spark's
    TIMESTAMP (LTZ, microseconds, UTC in Arrow), as 4.x's createDataFrame makes it
    (the session zone is UTC, so the wall clock is unchanged); large strings and
    lists as plain ones."""
    fields = [pa.field(f.name, _spark_type(f.type), f.nullable) for f in table.schema]
    schema = pa.schema(fields)
    return table if schema == table.schema else table.cast(schema)


def _spark_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz="UTC")
    if pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_large_binary(t):
        return pa.binary()
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(pa.field(t.value_field.name, _spark_type(t.value_type), t.value_field.nullable))
    return t
