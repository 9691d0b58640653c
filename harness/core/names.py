"""What a user's table or column may not be named, and names that only letter
case tells apart.

The harness adds hidden columns of its own to every table and query (the row
id `__wh_rowid`, witnesses `__wh_rn_<i>`, ...: `harness.judge.instrument`),
so a user's name with that prefix would meet one of them; engines that fold
or compare names case-insensitively (DuckDB, SQLite, Spark) meet it as
`__WH_ROWID` too. A NUL character can stand in no engine's SQL text (SQLite:
"the query contains a null character"; PostgreSQL refuses it in any text), so
a name holding one could be loaded but never named in a query.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pyarrow as pa

HIDDEN_PREFIX = "__wh_"

# What an engine that compares names case-insensitively cannot hold (in its
# dialect's `unrepresentable`): two names of one scope told apart only by
# letter case, columns "a" and "A" of one table or tables "t" and "T". They are
# distinct names by the standard (a quoted name keeps its case), and in
# PostgreSQL and DataFusion.
CASE_ONLY_NAMES = "identifier.told-apart-by-case-only"


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a user's table or column name, or None when it can."""
    if "\x00" in name:
        return "holds a NUL character (U+0000), which no engine's SQL text can carry"
    if name.lower().startswith(HIDDEN_PREFIX):
        return (f"starts with {HIDDEN_PREFIX!r}, which the harness keeps for the hidden columns "
                "it adds (its row id, witnesses)")
    return None


def folded_clashes(names: Iterable[str]) -> list[tuple[str, str]]:
    """Each pair of `names` that differ but are equal ignoring letter case, the
    first of each pair as it came first."""
    first: dict[str, str] = {}
    clashes = []
    for name in names:
        seen = first.setdefault(name.casefold(), name)
        if seen != name:
            clashes.append((seen, name))
    return clashes


def case_only_clash(tables: Mapping[str, pa.Table]) -> str | None:
    """The first two names of one scope in `tables` (their names, or one table's
    columns) that differ only in letter case, said for a message; None when
    every name is told apart without case."""
    scopes = [("tables", list(tables))]
    scopes += [(f"columns of table {name!r}", t.column_names) for name, t in tables.items()]
    for scope, names in scopes:
        clashes = folded_clashes(names)
        if clashes:
            a, b = clashes[0]
            return f"{scope} {a!r} and {b!r} differ only in letter case"
    return None
