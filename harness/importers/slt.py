"""sqllogictest files: DataFusion's `.slt` and DuckDB's `.test` (one record grammar).

A record is a header line (`statement ok`, `query II rowsort`), its SQL, and for
a query `----` and the result lines, up to a blank line. `loop`/`foreach` blocks
are expanded (each iteration's records, `${var}` substituted); `onlyif`/`skipif`
keep a record only when the source engine would run it; `mode skip` ... `mode
unskip` skips what lies between; `halt` ends the file. Every other directive
(`require`, `load`, `restart`, `hash-threshold`, ...) changes nothing here and
is counted as skipped with its name, as is a result recorded as a hash.
"""

from __future__ import annotations

import re
from pathlib import Path

from harness.core.source_files import read_source
from harness.importers.records import Answer, Record, Skip, SourceFile

Line = tuple[int, str]  # (1-based line number in the file, text)

# The engine whose suite writes each suffix (`--source-engine` overrides it).
ENGINE_BY_SUFFIX = {".test": "duckdb", ".test_slow": "duckdb", ".test_coverage": "duckdb", ".slt": "datafusion"}
SUFFIXES = tuple(ENGINE_BY_SUFFIX)
SORT_MODES = ("nosort", "rowsort", "valuesort")
_LOOPS = ("loop", "foreach", "concurrentloop", "concurrentforeach")
_HASHED = re.compile(r"^\d+ values hashing to [0-9a-fA-F]+$")
# DuckDB's named value groups of `foreach`, those window tests use.
_GROUPS = {
    "<integral>": "tinyint smallint integer bigint hugeint utinyint usmallint uinteger ubigint",
    "<signed>": "tinyint smallint integer bigint hugeint",
    "<numeric>": "tinyint smallint integer bigint hugeint float double",
}
# The loop iterations kept; more is a generated stress test, not a window query worth a case each.
MAX_ITERATIONS = 100
# The lines all loops of a file may expand to: nested loops multiply, and a file
# of a few lines must not grow past what an import reads in seconds.
MAX_EXPANDED_LINES = 100_000


def read_slt(path: Path, origin: str, out_stem: Path, engine: str | None = None) -> SourceFile:
    source = SourceFile(path, origin, out_stem, engine or ENGINE_BY_SUFFIX.get(path.suffix, "duckdb"), "slt")
    lines = list(enumerate(read_source(path).splitlines(), start=1))
    _Reader(source).read(_Loops(source.skipped).expand(lines))
    return source


# -- loops ----------------------------------------------------------------------------------


def substitute(text: str, name: str, value: str) -> str:
    """A loop variable's value in a line of its body: the one place `${name}` is replaced."""
    return text.replace("${" + name + "}", value)


class _Loops:
    """Every loop block replaced by its iterations, within bounds: the first
    MAX_ITERATIONS of each loop, MAX_EXPANDED_LINES lines in all; what is left
    out is a skipped record at the loop's line."""

    def __init__(self, skipped: list[Skip]) -> None:
        self.skipped = skipped
        self.left = MAX_EXPANDED_LINES

    def expand(self, lines: list[Line]) -> list[Line]:
        out: list[Line] = []
        i = 0
        while i < len(lines):
            words = lines[i][1].split()
            if not words or words[0] not in _LOOPS:
                out.append(lines[i])
                i += 1
                continue
            end = _endloop(lines, i)
            if end is None:  # the body would be the rest of the file, once per iteration
                self.skipped.append(Skip(f"{words[0]} without its endloop: the rest of the file is not read",
                                         lines[i][0]))
                return out
            out.extend(self._iterations(lines[i][0], words, lines[i + 1:end]))
            i = end + 1
        return out

    def _iterations(self, no: int, words: list[str], body: list[Line]) -> list[Line]:
        values = _loop_values(words)
        if values is None:
            self.skipped.append(Skip(f"{words[0]} over values it cannot list", no))
            return []
        if len(values) > MAX_ITERATIONS:
            self.skipped.append(Skip(f"{words[0]} iterations past the first {MAX_ITERATIONS}", no))
        out: list[Line] = []
        for value in values[:MAX_ITERATIONS]:
            if len(body) + 1 > self.left:
                self.skipped.append(Skip(f"{words[0]} iterations past {MAX_EXPANDED_LINES} expanded lines", no))
                break
            self.left -= len(body) + 1
            out.extend(self.expand([(n, substitute(t, words[1], value)) for n, t in body]))
            out.append((no, ""))  # a record never runs on into the next iteration
        return out


def _endloop(lines: list[Line], start: int) -> int | None:
    """The index of the `endloop` closing the loop at `start`; None if there is none."""
    depth = 0
    for i in range(start, len(lines)):
        head = lines[i][1].split()[:1]
        if head and head[0] in _LOOPS:
            depth += 1
        elif head == ["endloop"]:
            depth -= 1
            if depth == 0:
                return i
    return None


def _loop_values(words: list[str]) -> list[str] | None:
    """The values a loop takes, at most one past MAX_ITERATIONS (a `loop` to a
    billion is not listed whole); None when they cannot be told."""
    if len(words) < 3:
        return None
    if words[0].endswith("loop"):
        try:
            return [str(v) for v in range(int(words[2]), int(words[3]))[:MAX_ITERATIONS + 1]]
        except (ValueError, IndexError):
            return None
    values: list[str] = []
    for word in words[2:]:
        if word.startswith("<"):
            if word not in _GROUPS:
                return None
            values.extend(_GROUPS[word].split())
        else:
            values.append(word)
    return values


# -- records ---------------------------------------------------------------------------------


class _Reader:
    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.skipping = False  # inside `mode skip`
        self.condition: str | None = None  # why an `onlyif`/`skipif` skips the next record

    def read(self, lines: list[Line]) -> None:
        i = 0
        while i < len(lines):
            no, text = lines[i]
            words = text.split()
            if not words:
                i += 1
            elif words[0].startswith("#"):
                self._comment(text)
                i += 1
            elif words[0] == "halt":
                self._skip("halt: the rest of the file is not read", no)
                return
            else:
                i = self._record(lines, i, words)

    def _comment(self, text: str) -> None:
        m = re.match(r"#\s*(name|description):\s*(.*\S)", text)
        if m and m[1] == "description" or (m and self.source.description is None):
            self.source.description = m[2]

    def _record(self, lines: list[Line], i: int, words: list[str]) -> int:
        no = lines[i][0]
        head = words[0]
        if head in ("onlyif", "skipif"):
            self._condition(head, words[1:2], no)
            return i + 1
        if head == "mode":
            self._mode(words[1:2], no)
            return i + 1
        if head in ("statement", "query"):
            return self._sql_record(lines, i, words)
        self._skip(_directive(head, words), no)
        return _block_end(lines, i + 1) if head not in _ONE_LINE else i + 1

    def _condition(self, head: str, engine: list[str], no: int) -> None:
        name = engine[0].lower() if engine else ""
        mine = name == self.source.engine
        if (head == "skipif") == mine:
            self.condition = f"{head} {name}"

    def _mode(self, mode: list[str], no: int) -> None:
        if mode == ["skip"]:
            self.skipping = True
        elif mode == ["unskip"]:
            self.skipping = False
        else:
            self._skip(f"mode {' '.join(mode)}", no)

    def _sql_record(self, lines: list[Line], i: int, words: list[str]) -> int:
        no = lines[i][0]
        sql_lines, i = _until(lines, i + 1, stop_at_dashes=True)
        result: list[str] = []
        if i < len(lines) and lines[i][1].strip() == "----":
            result, i = _until(lines, i + 1, stop_at_dashes=False)
        skip = "mode skip" if self.skipping else self.condition
        self.condition = None
        if skip is not None:
            self._skip(skip, no)
        elif not sql_lines:
            self._skip(f"{words[0]} without SQL", no)
        else:
            self._add("\n".join(sql_lines), no, words, result)
        return i

    def _add(self, sql: str, no: int, words: list[str], result: list[str]) -> None:
        if words[0] == "statement" or words[1:2] == ["error"]:
            error = _error(words, result)
            self.source.records.append(Record(sql, no, None if error is None else Answer(error=error), no + 1))
            return
        answer = _query_answer(words, result)
        if isinstance(answer, str):
            self._skip(answer, no)
        else:
            self.source.records.append(Record(sql, no, answer, no + 1))

    def _skip(self, reason: str, no: int) -> None:
        self.source.skipped.append(Skip(reason, no))


# Directives that are one line; any other unknown record runs to the next blank line.
_ONE_LINE = {"require", "require-env", "load", "restart", "reconnect", "hash-threshold", "sleep",
             "set", "reset", "endloop", "tags", "unzip", "continue", "include", "control", "skip",
             "mode", "test-env", "cache"}


def _directive(head: str, words: list[str]) -> str:
    """A skipped directive's reason: its name (with what `require` asks for, which matters)."""
    if head.startswith("require"):
        return " ".join(words[:2])
    return head if head in _ONE_LINE else f"unknown record {head!r}"


def _until(lines: list[Line], i: int, stop_at_dashes: bool) -> tuple[list[str], int]:
    out: list[str] = []
    while i < len(lines) and lines[i][1].strip() and not (stop_at_dashes and lines[i][1].strip() == "----"):
        out.append(lines[i][1])
        i += 1
    return out, i


def _block_end(lines: list[Line], i: int) -> int:
    return _until(lines, i, stop_at_dashes=False)[1]


def _error(words: list[str], result: list[str]) -> str | None:
    """The error a statement expects (None: `statement ok`): the message after
    `error` on the header (DataFusion) or after `----` (DuckDB), else ""."""
    if words[1:2] != ["error"]:
        return None
    return " ".join(words[2:]) or "\n".join(result).strip()


def _query_answer(words: list[str], result: list[str]) -> Answer | str:
    """The query's recorded rows, or why they cannot be read (a skip reason)."""
    if len(words) < 2:
        return "query without column types"
    types = words[1]
    sort = next((w for w in words[2:3] if w in SORT_MODES), "nosort")
    if any(_HASHED.match(line.strip()) for line in result):
        return "result recorded as a hash"
    rows = _rows(result, len(types))
    if isinstance(rows, str):
        return rows
    return Answer(rows=rows, sort=sort, types=types)


def _rows(lines: list[str], width: int) -> tuple[tuple[str | None, ...], ...] | str:
    """Result lines as rows of `width` values: tab-separated (DuckDB), else
    space-separated (DataFusion); one value a line (classic sqllogictest) when
    every line holds one."""
    split = [_fields(line, width) for line in lines]
    if width > 1 and split and all(len(f) == 1 for f in split) and len(split) % width == 0:
        flat = [f[0] for f in split]
        split = [flat[k:k + width] for k in range(0, len(flat), width)]
    for fields in split:
        if len(fields) != width:
            return f"a result row that does not split into {width} values"
    return tuple(tuple(cell_value(v) for v in fields) for fields in split)


def _fields(line: str, width: int) -> list[str]:
    if "\t" in line:
        return line.split("\t")
    if width == 1:
        return [line.strip()]
    return line.split()


def cell_value(text: str) -> str | None:
    """A printed cell as the reader keeps it: NULL as None, (empty) as ""."""
    if text == "NULL":
        return None
    return "" if text == "(empty)" else text
