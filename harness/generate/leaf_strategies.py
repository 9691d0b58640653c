"""Hypothesis strategies for the leaves of query models: names and literals, plus
the swarm-testing feature flags and the small cached builders the query
strategies in `model_strategies` draw through.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import string
from decimal import Decimal
from enum import Enum

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from harness.core import types as T
from harness.core.dialect import KEYWORDS
from harness.core.model import Interval, IntervalUnit, Literal
from harness.sql.literals import natural_integer_type

# Strategies are built once per distinct argument tuple: building them inside
# draws is what makes a generator slow.
cached = functools.lru_cache(maxsize=4096)


class Toggle(Enum):
    """Features that swarm testing switches off as a group."""

    AWKWARD_NAMES = "awkward names"
    NAMED_WINDOWS = "named windows"
    FRAMES = "frames"
    GROUPS = "GROUPS frames"
    EXCLUSION = "EXCLUDE"
    NULL_TREATMENT = "IGNORE/RESPECT NULLS"
    FROM_LAST = "FROM FIRST/LAST"
    FILTER = "FILTER"
    DISTINCT = "DISTINCT"
    ORDERED_AGGREGATE = "ordered aggregates"
    WITHIN_GROUP = "WITHIN GROUP"
    NULLS_ORDER = "NULLS FIRST/LAST"
    INTERVALS = "intervals"
    SPECIAL_FLOATS = "NaN and infinities"
    JOINS = "joins"
    SUBQUERIES = "subqueries"
    EXPR_SUBQUERIES = "subqueries in expressions"  # scalar, IN and EXISTS
    SET_OPS = "UNION ALL and WITH"
    SOURCES = "VALUES, table functions, column lists, derived tables without alias"
    GROUP_BY = "GROUP BY"
    LIMIT = "LIMIT/OFFSET"
    QUALIFY = "QUALIFY"
    ALL_KEYS = "GROUP BY ALL and ORDER BY ALL"
    OFFSET_EXPRESSIONS = "constant expressions as frame offsets"


@st.composite
def feature_flags(draw: st.DrawFn) -> frozenset[Toggle]:
    """The toggles switched on; shrinks towards all on (each off-switch towards False)."""
    return frozenset(t for t in Toggle if not draw(st.booleans()))


# Cached builders of the small strategies that draws need: building a strategy
# inside a draw costs far more than drawing from it. (Plain names: they are
# shared with `model_strategies`, not part of what a caller needs.)


@cached
def none_or(strategy: SearchStrategy) -> SearchStrategy:
    return st.none() | strategy


@cached
def empty_or(strategy: SearchStrategy) -> SearchStrategy:
    return st.just(()) | strategy


@cached
def sampled(values: tuple) -> SearchStrategy:
    return st.sampled_from(values)


@cached
def ints(lo: int, hi: int) -> SearchStrategy[int]:
    return st.integers(lo, hi)


@cached
def tuples(strategy: SearchStrategy, min_size: int, max_size: int) -> SearchStrategy[tuple]:
    return st.lists(strategy, min_size=min_size, max_size=max_size).map(tuple)


def maybe(flag: bool, strategy: SearchStrategy) -> SearchStrategy:
    """None when the flag is off, else None or a value; shrinks towards None."""
    return st.none() | strategy if flag else st.none()


def integer_literal(n: int) -> Literal:
    return Literal(n, natural_integer_type(n))


# -- names -------------------------------------------------------------------------

_AWKWARD = ["A", "Mixed Case", 'say "hi"', "it's", "ünïcödé", "名前", "tab\there", "1st", "x y"]


@cached
def simple_names() -> SearchStrategy[str]:
    """Lower-case ASCII names that need no quotes; shrinks towards 'a'."""
    first = st.sampled_from(string.ascii_lowercase + "_")
    rest = st.text(string.ascii_lowercase + string.digits + "_", max_size=6)
    return st.builds(str.__add__, first, rest).filter(_not_keyword)


def _not_keyword(name: str) -> bool:
    return name not in KEYWORDS


@cached
def names(on: frozenset[Toggle]) -> SearchStrategy[str]:
    """Names, awkward ones (keywords, case, quotes, spaces, unicode) when switched on;
    shrinks towards a simple name."""
    if Toggle.AWKWARD_NAMES not in on:
        return simple_names()
    anything = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)),
                       min_size=1, max_size=10)
    return st.one_of(simple_names(), st.sampled_from(sorted(KEYWORDS)), st.sampled_from(_AWKWARD),
                     simple_names().map(str.upper), anything)


# -- literals ----------------------------------------------------------------------


@cached
def integer_literals(kind: T.SqlType | None = None) -> SearchStrategy[Literal]:
    """Integer literals of every width (or of `kind`); shrinks towards INTEGER 0."""
    kinds = [kind] if kind else [T.INT32, T.INT64, T.INT16, T.INT8]
    bounds = {t: (-(2 ** (_BITS[t] - 1)), 2 ** (_BITS[t] - 1) - 1) for t in kinds}
    return st.one_of([st.builds(Literal, st.integers(*bounds[t]), st.just(t)) for t in kinds])


_BITS = {T.INT8: 8, T.INT16: 16, T.INT32: 32, T.INT64: 64}


@cached
def decimal_literals(min_value: int | None = None) -> SearchStrategy[Literal]:
    """DECIMAL(p,s) literals holding exactly s places; shrinks towards DECIMAL(1,0) 0."""

    @st.composite
    def draw_one(draw: st.DrawFn) -> Literal:
        p = draw(ints(1, 38))
        s = draw(ints(0, p))
        n = draw(ints(min_value if min_value is not None else 1 - 10**p, 10**p - 1))
        # Built from text: Decimal arithmetic would round to the context's 28 digits.
        negative_zero = n == 0 and min_value is None and draw(st.booleans())
        value = Decimal(f"{'-' if negative_zero else ''}{n}E-{s}")
        return Literal(value, T.decimal(p, s))

    return draw_one()


@cached
def float_literals(on: frozenset[Toggle],
                   finite_min: float | None = None) -> SearchStrategy[Literal]:
    """REAL and DOUBLE PRECISION literals incl. -0.0 and, when on, NaN and infinities;
    shrinks towards DOUBLE 0.0."""
    special = Toggle.SPECIAL_FLOATS in on and finite_min is None
    doubles = st.floats(min_value=finite_min, allow_nan=special, allow_infinity=special)
    singles = st.floats(min_value=finite_min, width=32, allow_nan=special, allow_infinity=special)
    if special:  # st.floats draws these rarely; they matter, so draw them often
        doubles = doubles | st.sampled_from(_SPECIAL_FLOATS)
        singles = singles | st.sampled_from(_SPECIAL_FLOATS)
    return st.one_of(st.builds(Literal, doubles, st.just(T.FLOAT64)),
                     st.builds(Literal, singles, st.just(T.FLOAT32)))


_SPECIAL_FLOATS = [math.nan, math.inf, -math.inf, -0.0]

SQL_TYPES = [T.INT32, T.INT64, T.INT8, T.INT16, T.BOOL, T.FLOAT64, T.FLOAT32, T.decimal(10, 2),
          T.STRING, T.DATE, T.TIMESTAMP, T.INTERVAL]


@cached
def literals(on: frozenset[Toggle]) -> SearchStrategy[Literal]:
    """Literals of every type, typed and untyped NULLs; shrinks towards INTEGER 0."""
    return st.one_of(
        integer_literals(),
        st.builds(Literal, st.booleans(), st.just(T.BOOL)),
        st.just(Literal(None, None)),
        st.builds(Literal, st.text(st.characters(blacklist_characters="\x00",
                                                 blacklist_categories=("Cs",))), st.just(T.STRING)),
        decimal_literals(),
        float_literals(on),
        st.builds(Literal, st.dates(), st.just(T.DATE)),
        # fold=1 is meaningless for naive datetimes and only muddles their repr.
        st.builds(Literal, st.datetimes().map(_fold0), st.just(T.TIMESTAMP)),
        st.builds(Literal, st.none(), st.sampled_from(SQL_TYPES)),
    )


def _fold0(value: dt.datetime) -> dt.datetime:
    return value.replace(fold=0)


@cached
def intervals() -> SearchStrategy[Interval]:
    """INTERVAL 'n' UNIT constants; shrinks towards INTERVAL '0' YEAR."""
    return st.builds(Interval, st.integers(0, 10_000), st.sampled_from(IntervalUnit))
