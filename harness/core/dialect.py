"""What a SQL dialect is: a feature table plus a few spelling hooks.

A dialect never runs anything and never drops a clause: when the model holds
something the dialect's feature table lacks, rendering raises
`Unsupported(feature)`. The one SQL writer (`harness.sql.writer`) branches on
these fields, never on a dialect's name.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum

from harness.core.semantics import (  # noqa: F401 (re-exported for the dialect modules)
    NULLS_ALWAYS_LAST,
    NULLS_LARGEST,
    NULLS_SMALLEST,
    STANDARD,
    NullOrdering,
    SemanticsProfile,
)
from harness.core.types import SqlType, TypeKind, canonical_type_name
from harness.core.versions import version_range


class Feature(Enum):
    """Syntax and semantics a dialect may lack. The value is the name used in
    `Unsupported(feature)`, verdicts, reports and (later) the baseline."""

    GROUPS_FRAME = "frame.groups"
    RANGE_OFFSET = "frame.range-offset"  # RANGE n PRECEDING/FOLLOWING
    RANGE_INTERVAL = "frame.range-interval"  # RANGE over dates/timestamps with INTERVAL
    EXCLUDE = "frame.exclude"
    FRAME_ON_RANKING = "frame.on-ranking-function"  # an explicit frame on rank/lag/...
    IGNORE_NULLS = "null-treatment"
    NTH_VALUE_FROM_LAST = "nth_value.from-last"
    DISTINCT_WINDOW_AGGREGATE = "window.distinct-aggregate"
    FILTER_WINDOW_AGGREGATE = "window.filter"
    ORDERED_AGGREGATE = "aggregate.order-by"  # string_agg(x, ',' ORDER BY k)
    NULLS_ORDER = "order.nulls-first-last"
    NAMED_WINDOW = "window.named"
    LIMIT_OFFSET = "limit.offset"
    FULL_JOIN = "join.full"
    INTERVAL_LITERAL = "literal.interval"
    NAN_LITERAL = "literal.nan"
    # OVER (w ORDER BY ...) / OVER (w ROWS ...): a window refining a named one.
    NAMED_WINDOW_REFINEMENT = "window.refine-named"
    # A frame whose start comes after its end (ROWS BETWEEN 2 FOLLOWING AND 1
    # FOLLOWING): valid and empty by the standard, rejected by some engines.
    FRAME_START_AFTER_END = "frame.start-after-end"
    # RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW with no ORDER BY: valid
    # (every row of the partition is a peer), rejected by some engines.
    RANGE_WITHOUT_ORDER_BY = "frame.range-without-order-by"
    # RANGE BETWEEN INTERVAL '1' DAY PRECEDING AND INTERVAL '1' HOUR PRECEDING:
    # two offsets of different interval units in one frame.
    RANGE_MIXED_INTERVAL_UNITS = "frame.range-mixed-interval-units"
    # A frame offset that is a constant expression, not a bare literal
    # (`1 + 1 PRECEDING`, `INTERVAL '1' DAY * 2 PRECEDING`).
    FRAME_OFFSET_EXPRESSION = "frame.offset-expression"
    # An offset expression of interval type (`INTERVAL '1' DAY * 2 PRECEDING`).
    FRAME_OFFSET_INTERVAL_EXPRESSION = "frame.offset-interval-expression"
    # Integer division written `a // b`.
    INT_DIV_OPERATOR = "operator.integer-division"
    QUALIFY = "clause.qualify"
    GROUP_BY_ALL = "group-by.all"
    ORDER_BY_ALL = "order-by.all"
    # Sources: VALUES as a table, a derived table without an alias, a column
    # list after a derived table's or a WITH query's name, table functions.
    VALUES = "source.values"
    SUBQUERY_WITHOUT_ALIAS = "source.subquery-without-alias"
    COLUMN_ALIASES = "source.column-aliases"
    GENERATE_SERIES = "source.generate_series"
    RANGE_TABLE_FUNCTION = "source.range"
    # Subqueries in expressions.
    SCALAR_SUBQUERY = "subquery.scalar"
    IN_SUBQUERY = "subquery.in"
    EXISTS_SUBQUERY = "subquery.exists"
    CORRELATED_SUBQUERY = "subquery.correlated"
    # Finer places some engines refuse: `x IN (SELECT ...)` / `EXISTS (SELECT
    # ...)` outside a WHERE, HAVING or ON condition (in the select list, in a
    # window's arguments); a correlated subquery inside a window function or
    # window definition; a correlated scalar subquery whose SELECT does not
    # aggregate; a subquery reading a column of a query two or more levels out.
    SUBQUERY_PREDICATE_AS_VALUE = "subquery.in-exists-as-value"
    CORRELATED_SUBQUERY_IN_WINDOW = "subquery.correlated-in-window"
    CORRELATED_SCALAR_UNAGGREGATED = "subquery.correlated-scalar-unaggregated"
    CORRELATION_BEYOND_PARENT = "subquery.correlated-beyond-parent"
    # percentile_cont(0.5) WITHIN GROUP (ORDER BY x) [OVER (...)].
    WITHIN_GROUP = "aggregate.within-group"
    # An ordered-set aggregate over a window: percentile_cont(0.5) WITHIN
    # GROUP (ORDER BY x) OVER (...). PostgreSQL 15: "OVER is not supported for
    # ordered-set aggregate percentile_cont".
    WITHIN_GROUP_WINDOW = "aggregate.within-group-over"
    # A ROWS or GROUPS frame offset, or a lag/lead offset, past the largest
    # INTEGER (`ROWS BETWEEN 9223372036854775807 PRECEDING ...`, `lag(x,
    # 2147483648)`): Spark takes INT offsets only.
    OFFSET_BEYOND_INT = "offset.beyond-int"
    # A ROWS or GROUPS frame that starts n FOLLOWING and ends at an offset of
    # the largest INTEGER (2^31 - 1) or more FOLLOWING: SQLite 3.40 steps through
    # the end offset one row at a time and does not finish (`sqlite` dialect).
    FOLLOWING_FRAME_TO_HUGE_OFFSET = "frame.following-to-huge-offset"
    # lag/lead offsets and defaults that are not constants: `lag(x, k % 3)`
    # (an offset per row), `lag(x, 1, y)` (a default per row), and
    # `lag(x, CAST(NULL AS BIGINT))` (the result is NULL, as the offset is).
    LAG_ROW_OFFSET = "lag.row-offset"
    LAG_ROW_DEFAULT = "lag.row-default"
    LAG_NULL_OFFSET = "lag.null-offset"
    # An ORDER BY inside a ranking or distribution function, `cume_dist(ORDER BY
    # x) OVER (...)` (DuckDB's extension): the function is computed within the
    # row's frame, ordered by its own keys instead of the window's.
    RANKING_ORDER_BY = "ranking.order-by"


ALL_FEATURES = frozenset(Feature)


class IgnoreNullsPlacement(Enum):
    OUTSIDE = "outside"  # standard: lag(x) IGNORE NULLS OVER (...)
    INSIDE = "inside"  # DuckDB: lag(x IGNORE NULLS) OVER (...)


# Words that must be quoted when used as identifiers in any dialect we speak.
KEYWORDS = frozenset(
    # PostgreSQL's reserved words, plus the window vocabulary of the standard.
    """all analyse analyze and any array as asc asymmetric authorization between binary both
    by case cast check collate collation column concurrently constraint create cross current
    current_catalog current_date current_role current_schema current_time current_timestamp
    current_user date default deferrable desc distinct do else end except exclude false fetch
    filter first following for foreign freeze from full grant group groups having ignore ilike
    in initially inner interval intersect into is isnull join last lateral leading left like
    limit localtime localtimestamp natural not notnull null nulls offset on only or order
    others outer over overlaps partition placing preceding primary range references respect
    returning right row rows select session_user similar some symmetric system_user table
    tablesample then ties time timestamp to trailing true unbounded union unique user using
    values variadic verbose when where window with""".split()
) | {"qualify"}  # reserved by DuckDB, Spark and DataFusion, and by our parser


def _standard_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _standard_float(value: float, type_name: str) -> str:
    if math.isnan(value):
        return f"CAST('NaN' AS {type_name})"
    if math.isinf(value):
        return f"CAST('{'-' if value < 0 else ''}Infinity' AS {type_name})"
    if type_name == "DOUBLE PRECISION":
        return _float_e(value)
    return f"CAST({_float_e(value)} AS {type_name})"


def _float_e(value: float) -> str:
    """A double literal in E notation, which every dialect reads as a double."""
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    return f"{mantissa}E{exponent or '0'}"


@dataclass(frozen=True)
class Release:
    """How a range of an engine's releases differs from the release its dialect
    describes: what they lack, and the by-design choices they made otherwise.

    A dialect's `releases` list these; `Dialect.at(version)` applies every one
    whose range holds the version, so a build is judged by what its own
    version supports (a feature it lacks is `unsupported`, never an error or
    an A/B regression). Each entry says what it was measured on.
    """

    versions: str  # a PEP 440 range of the engine's versions: `<1.1`, `>=50,<52`
    measured: str  # on which releases, and what they answered
    lacks: frozenset[Feature] = frozenset()
    missing_functions: frozenset[str] = frozenset()
    # Aggregates these releases cannot compute over a moving frame start.
    no_moving_frame_start: frozenset[str] = frozenset()
    # The release's words for "not implemented" (regular expressions), beyond the dialect's.
    not_implemented: tuple[str, ...] = ()
    # SemanticsProfile fields that differ in these releases (`null_ordering`, ...).
    semantics: Mapping[str, object] = field(default_factory=dict)
    # Further Dialect fields, by name, whose values differ (`needs_order_by`, ...).
    fields: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        version_range(self.versions)  # a malformed range fails where the table is defined

    def holds_for(self, version: str) -> bool:
        return version_range(self.versions).contains(version)


@dataclass(frozen=True, eq=False)
class Dialect:
    """A dialect: data first, with overridable spelling methods for the rest.

    Subclass (or instantiate with other field values) per engine; list only
    what differs from the canonical dialect.
    """

    name: str
    unsupported: frozenset[Feature] = frozenset()
    # Function names in this dialect, where they differ from the canonical name.
    function_names: dict[str, str] = field(default_factory=dict)
    # Functions this dialect lacks entirely (canonical names).
    missing_functions: frozenset[str] = frozenset()
    ignore_nulls_placement: IgnoreNullsPlacement = IgnoreNullsPlacement.OUTSIDE
    # Window functions the dialect accepts only with an ORDER BY in the window.
    needs_order_by: frozenset[str] = frozenset()
    # Aggregates the engine cannot compute over a frame whose start moves from
    # row to row (it would have to retract rows leaving the frame).
    no_moving_frame_start: frozenset[str] = frozenset()
    # Aggregates the engine computes over a window only when it has no ORDER
    # BY and no frame (the whole partition).
    unordered_window_only: frozenset[str] = frozenset()
    # The engine's by-design choices; the reference judges it under them.
    semantics: SemanticsProfile = STANDARD
    identifier_quote: str = '"'
    type_names: dict[TypeKind, str] = field(default_factory=dict)
    # Types and values the engine cannot hold as they are (`type.decimal`,
    # `data.nan`): the names it raises `Unsupported` with.
    unrepresentable: frozenset[str] = frozenset()
    # The engine's own words for "I do not implement this" (regular
    # expressions): such a rejection is an `unsupported` verdict, not an error.
    not_implemented: tuple[str, ...] = ()
    # Valid queries the engine refuses though it implements the construct (the
    # empty frame ROWS BETWEEN 2 FOLLOWING AND 1 FOLLOWING): the feature, and
    # the engine's words for the refusal (a regular expression). Such a query
    # is sent, unlike an `unsupported` feature's; refused in these words, its
    # verdict is `wrongly-rejected` (error conformance); answered, it is judged.
    refusals: dict[Feature, str] = field(default_factory=dict)
    # The engine names a VALUES table's columns otherwise than column1,
    # column2, ... (DuckDB col0, Spark col1) or a table function's column
    # otherwise than by its alias or name (DataFusion `value`, Spark `id`): the
    # writer then always spells the names out, so they mean the same.
    explicit_source_columns: bool = False
    # The engine reads `(query) AS q(a, b)`; without it the writer renames the
    # columns through a WITH query's column list (SQLite 3.40 has only that).
    derived_column_lists: bool = True
    # A bug report's reproduction makes its tables as temporary views over
    # VALUES instead of CREATE TABLE + INSERT (Spark: a CREATE TABLE writes a
    # table of files into the session's warehouse directory).
    tables_as_views: bool = False
    # Older releases, and how each range differs from the release described above.
    releases: tuple[Release, ...] = ()
    # The engine version this dialect was narrowed to by `at` (None: the release
    # the fields above describe, and every release its `releases` do not name).
    version: str | None = None

    def at(self, version: str) -> Dialect:
        """This dialect as the engine's release `version` speaks it: the fields of
        every `Release` whose range holds `version` applied (see `Release`).
        The same dialect when none does."""
        return _at(self, version)

    def releases_for(self, version: str) -> tuple[Release, ...]:
        return tuple(r for r in self.releases if r.holds_for(version))

    def says_not_implemented(self, message: str) -> bool:
        return any(re.search(p, message) for p in self.not_implemented)

    def refused_feature(self, message: str) -> Feature | None:
        """The feature of `refusals` whose words `message` has, or None."""
        return next((f for f, pattern in self.refusals.items() if re.search(pattern, message)), None)

    @property
    def default_null_ordering(self) -> NullOrdering:
        return self.semantics.null_ordering

    def supports(self, feature: Feature) -> bool:
        return feature not in self.unsupported

    # -- identifiers ------------------------------------------------------

    def needs_quotes(self, name: str) -> bool:
        plain = name.isascii() and (name[:1].isalpha() or name[:1] == "_")
        plain = plain and all(c.islower() or c.isdigit() or c == "_" for c in name)
        return not plain or name in KEYWORDS

    def quote(self, name: str) -> str:
        if not self.needs_quotes(name):
            return name
        q = self.identifier_quote
        return q + name.replace(q, q + q) + q

    # -- types and literals ----------------------------------------------

    def type_name(self, t: SqlType) -> str:
        if t.kind in self.type_names:
            return self.type_names[t.kind]
        return canonical_type_name(t)

    def declared_type(self, t: SqlType) -> str:
        """A column's type in a CREATE TABLE the harness writes (its adapter's
        tables, an exported reproduction): `type_name`, unless the engine needs
        more there to compare as the reference does."""
        return self.type_name(t)

    def string_literal(self, value: str) -> str:
        return _standard_string(value)

    def float_literal(self, value: float, t: SqlType) -> str:
        return _standard_float(value, self.type_name(t))

    def decimal_literal(self, value: Decimal, t: SqlType) -> str:
        # A plain 1.50 is DECIMAL(3,2) in the standard; the CAST pins p and s.
        return f"CAST({format(value, 'f')} AS {self.type_name(t)})"

    def integer_literal(self, value: int, t: SqlType) -> str:
        return str(value)

    def date_literal(self, value: dt.date) -> str:
        return f"DATE '{value.isoformat()}'"

    def timestamp_literal(self, value: dt.datetime) -> str:
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"

    def interval_literal(self, count: int, unit: str) -> str:
        return f"INTERVAL '{count}' {unit}"

    def frame_offset_literal(self, value: object, t: SqlType) -> str | None:
        """How a literal frame offset is spelled, or None to spell it as any literal.

        For engines that accept only bare numbers in a frame clause.
        """
        return None

    def function_name(self, canonical: str) -> str:
        return self.function_names.get(canonical, canonical)


@functools.cache
def _at(dialect: Dialect, version: str) -> Dialect:
    releases = dialect.releases_for(version)
    if not releases:
        return dialect
    semantics: dict[str, object] = {}
    fields: dict[str, object] = {}
    for release in releases:
        semantics.update(release.semantics)
        fields.update(release.fields)
    profile = dialect.semantics
    if semantics:
        profile = dataclasses.replace(profile, name=f"{profile.name} {version}", **semantics)
    return dataclasses.replace(
        dialect,
        unsupported=dialect.unsupported.union(*(r.lacks for r in releases)),
        missing_functions=dialect.missing_functions.union(*(r.missing_functions for r in releases)),
        no_moving_frame_start=dialect.no_moving_frame_start.union(*(r.no_moving_frame_start for r in releases)),
        not_implemented=dialect.not_implemented + tuple(p for r in releases for p in r.not_implemented),
        semantics=profile,
        version=version,
        **fields,
    )
