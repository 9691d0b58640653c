"""`--tables DIR`: the data files of a folder as tables, one a file, named by its stem.

Read: `*.parquet`, `*.csv` (a header line, types inferred by pyarrow's CSV
reader), `*.arrow` / `*.feather` / `*.ipc` (the Arrow IPC file format, or the
stream format). Each column's Arrow type becomes the model's column type
(`column_type`); one the model has no counterpart of is an InvalidInput
naming the file and the column, before any engine starts.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from harness.core.errors import InvalidInput
from harness.core.names import name_problem
from harness.core.types import (
    BOOL,
    DATE,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    TIMESTAMP,
    SqlType,
    decimal,
    to_arrow,
)

TABLE_SUFFIXES = (".parquet", ".csv", ".arrow", ".feather", ".ipc")
OPTION = "--tables"

# Arrow's types the model holds as they are, and the unsigned ones it holds in
# the next wider signed type (every value fits; uint64 has no such type).
_EXACT = {
    pa.bool_(): BOOL, pa.int8(): INT8, pa.int16(): INT16, pa.int32(): INT32, pa.int64(): INT64,
    pa.uint8(): INT16, pa.uint16(): INT32, pa.uint32(): INT64,
    pa.float32(): FLOAT32, pa.float64(): FLOAT64,
    pa.string(): STRING, pa.large_string(): STRING, pa.string_view(): STRING,
    pa.date32(): DATE, pa.date64(): DATE,
}


def read_table_dir(directory: str | Path) -> dict[str, pa.Table]:
    """Every data file of `directory` (not its subfolders) as a table named by the file's stem."""
    folder = Path(directory)
    if not folder.is_dir():
        raise InvalidInput(f"{folder} is not a directory", OPTION)
    tables: dict[str, pa.Table] = {}
    files: dict[str, Path] = {}
    for path in sorted(p for p in folder.iterdir() if p.suffix.lower() in TABLE_SUFFIXES and p.is_file()):
        if path.stem in files:
            raise InvalidInput(f"two files make the table {path.stem!r}: {files[path.stem].name} and {path.name}",
                               str(path))
        files[path.stem] = path
        tables[path.stem] = read_table_file(path)
    if not tables:
        raise InvalidInput(f"no {', '.join('*' + s for s in TABLE_SUFFIXES)} file in {folder}", OPTION)
    return tables


def read_table_file(path: Path) -> pa.Table:
    """One data file as a table of the model's column types (Arrow's counterparts of them)."""
    raw = _read(path)
    if raw.num_columns == 0:
        raise InvalidInput("the file has no columns", str(path))
    names = raw.column_names
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InvalidInput(f"column {repeated[0]!r} appears twice", str(path))
    problems = (name_problem(path.stem), *map(name_problem, names))
    if (problem := next((p for p in problems if p is not None), None)) is not None:
        raise InvalidInput(problem, str(path))
    columns = []
    for name, column in zip(names, raw.columns, strict=True):
        t = column_type(column.type, f"{path}: column {name!r}")
        try:
            columns.append(column.cast(to_arrow(t)))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            raise InvalidInput(f"its values do not fit {t}: {e}", f"{path}: column {name!r}") from None
    return pa.Table.from_arrays(columns, names=names).combine_chunks()


def column_type(t: pa.DataType, where: str) -> SqlType:
    """The model's type for an Arrow column type; InvalidInput at `where` when it has none."""
    if t in _EXACT:
        return _EXACT[t]
    if pa.types.is_decimal(t) and t.precision <= 38:
        return decimal(t.precision, t.scale)
    if pa.types.is_timestamp(t):
        if t.tz is not None:
            raise InvalidInput(f"Arrow type {t} has a time zone; the model's TIMESTAMP has none "
                               "(store it as UTC without a time zone)", where)
        return TIMESTAMP  # its unit becomes microseconds; a finer value that would be cut is refused
    if pa.types.is_null(t):
        raise InvalidInput("every value is empty, so it has no type (give it one value, or use "
                           "another format)", where)
    raise InvalidInput(f"Arrow type {t} has no counterpart among the model's column types "
                       "(booleans, integers, floats, decimal(p<=38,s), strings, date, timestamp)", where)


def _read(path: Path) -> pa.Table:
    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            return pq.read_table(path)
        if suffix == ".csv":
            import pyarrow.csv as pcsv

            return pcsv.read_csv(path)
        return _read_ipc(path)
    except (pa.ArrowException, OSError) as e:
        raise InvalidInput(f"cannot read it as a {suffix[1:]} file: {e}", str(path)) from None


def _read_ipc(path: Path) -> pa.Table:
    """The Arrow IPC file format (Feather v2), else the stream format."""
    import pyarrow.ipc as ipc

    try:
        with pa.memory_map(str(path)) as source:
            return ipc.open_file(source).read_all()
    except pa.ArrowInvalid:
        with pa.memory_map(str(path)) as source:
            return ipc.open_stream(source).read_all()
