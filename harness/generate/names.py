"""Column names: readable ones that say the type, and awkward ones that test quoting.

Every awkward name below was measured to survive the canonical writer, every
dialect's quoting, loading from Arrow and querying (as a select item, a
PARTITION BY and ORDER BY key, a WHERE operand and an aggregate argument) on
the reference, DuckDB 2.0, DataFusion 55, SQLite 3 and Spark 4.3, and a case
file round trip. Engines compare quoted names case-insensitively (DuckDB,
DataFusion's table registry), so names are told apart by `fold`, and no two
names here fold alike, nor like `id` or a generated alias (`w1`, `w2`, ...).
"""

from __future__ import annotations

import re

AWKWARD_NAMES: tuple[str, ...] = (
    # case
    "Mixed", "camelCase", "UPPER",
    # keywords of SQL, and of the window clause in particular
    "select", "order", "group", "range", "rows", "from", "partition", "window", "null",
    "current", "value",
    # spaces and punctuation, quotes of every dialect
    "a b", " lead", 'say "hi"', "back`tick", "it's", "a.b", "a-b", "$x", "[br]", "a;b",
    # unicode
    "é", "naïve", "日本", "Ω",
    # a leading digit
    "1st", "2",
)

# Names a generated query gives its own columns: a table column must not clash.
_GENERATED = re.compile(r"w\d+|id")


def fold(name: str) -> str:
    """The key under which engines that ignore case compare a name."""
    return name.casefold()


def clashes(name: str, taken: set[str]) -> bool:
    """Whether `name` folds like a name in `taken` (folded) or like a generated one."""
    return fold(name) in taken or _GENERATED.fullmatch(fold(name)) is not None
