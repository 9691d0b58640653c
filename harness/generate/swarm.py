"""Swarm testing: each query switches a random subset of constructs off.

A construct that is switched on may still not be drawn; one that is off is
never drawn. Switching constructs off per query (each independently) gives
engines with narrow feature tables (Spark has no GROUPS, EXCLUDE, FROM LAST,
DISTINCT window aggregates...) a good share of queries they can run, and
lets the constructs that are on appear more densely than a uniform draw
would.
"""

from __future__ import annotations

from enum import Enum

from harness.generate.draws import Draws

# The chance that a flag is on: even for the constructs some engines lack (so
# each of them is off in half of all queries, and several together in most),
# higher for the core of window semantics that every engine has.
ON_CHANCE = 0.5


class Swarm(Enum):
    """Constructs that swarm testing switches off for a whole query."""

    # FROM and around it
    WHERE = "WHERE/HAVING"
    JOIN = "joins"
    GROUP_BY = "GROUP BY"
    SUBQUERY = "subqueries"
    SCALAR_SUBQUERY = "scalar subqueries over window results"
    # windows
    PARTITION_BY = "PARTITION BY"
    WINDOW_ORDER_BY = "window ORDER BY"
    DEFAULT_NULLS = "ORDER BY keys without NULLS FIRST/LAST"
    NAMED_WINDOW = "WINDOW clause"
    REFINEMENT = "windows refining a named window"
    # frames
    FRAMES = "explicit frames"
    GROUPS = "GROUPS frames"
    RANGE_OFFSETS = "RANGE n PRECEDING/FOLLOWING"
    OFFSETS = "n PRECEDING/FOLLOWING"
    EMPTY_FRAMES = "frames that start after they end"
    EXCLUSION = "EXCLUDE"
    RANKING_FRAMES = "explicit frames on functions that ignore them"
    # calls
    NULL_TREATMENT = "IGNORE/RESPECT NULLS"
    FROM_LAST = "FROM FIRST/LAST"
    DISTINCT = "DISTINCT aggregates"
    FILTER = "FILTER"
    ORDERED_AGGREGATE = "aggregate ORDER BY"
    # function families (the ones some engines lack as a whole)
    STATISTICS = "stddev/var aggregates"
    BOOLEAN_AGGREGATES = "bool_and/bool_or"
    COLLECTING = "array_agg/string_agg"
    QUANTILES = "median, quantiles and percentiles"
    PAIR_STATISTICS = "covar/corr/regr_*"
    MORE_AGGREGATES = "mode, first/last, any_value, bit_*, count_if"
    # the top of the query
    LIMIT = "LIMIT/OFFSET"
    # t joined to a VALUES table or to generate_series/range (last: a flag
    # added at the end leaves the earlier flags' draws as they were)
    CONSTANT_SOURCES = "VALUES and table-function inputs"
    # expression-level syntax (issue 16)
    QUALIFY = "QUALIFY top-N filters"
    OFFSET_EXPRESSIONS = "frame offsets written as constant expressions"
    # query shapes where optimizer bugs live (issue 19, item 3)
    TOP_N = "top-N filters on a ranking column of a derived table"
    LOOKAHEAD_LIMIT = "LIMIT/OFFSET over lead/lag/nth_value ordered as the query"
    DEGENERATE_ORDER = "window ORDER BY NULL, a constant or a PARTITION BY key"
    UNORDERED_ROWS = "ROWS frames without ORDER BY"
    SHARED_PARTITIONS = "windows sharing PARTITION BY prefixes"
    UNION_SOURCE = "windows over UNION ALL"
    EXPRESSION_KEYS = "expressions as PARTITION BY/ORDER BY keys"
    # issue 19, item 8: offsets near 2^63 (ROWS, GROUPS, RANGE over integer
    # keys, lag/lead), and lag/lead offsets and defaults per row or NULL
    EXTREME_OFFSETS = "offsets near 2^63"
    ROW_OFFSETS = "per-row and NULL lag/lead offsets and defaults"
    # issue 19, item 8: `cume_dist(ORDER BY x) OVER (...)`, DuckDB's ORDER BY
    # inside ranking and distribution functions
    RANKING_ORDER_BY = "ORDER BY inside ranking functions"
    # Several frames over one PARTITION BY and ORDER BY (moving sums of several
    # widths): engines compute them in one window operator over one sort, and a
    # query covers several cells of the frame grid at once.
    FRAME_VARIANTS = "frames of their own over a shared window's keys"


CORE_ON_CHANCE = 0.85
CORE = frozenset({Swarm.PARTITION_BY, Swarm.WINDOW_ORDER_BY, Swarm.FRAMES, Swarm.OFFSETS, Swarm.FRAME_VARIANTS,
                  Swarm.RANGE_OFFSETS})


def random_swarm(rng: Draws) -> frozenset[Swarm]:
    """The flags switched on, each independently (ON_CHANCE, CORE_ON_CHANCE).

    Simpler means more flags on: a draw of 0.0 switches a flag on, so a
    Hypothesis-driven `rng` shrinks towards every construct allowed (and each
    construct's own generator towards not using it).
    """
    return frozenset(s for s in Swarm if rng.random() < (CORE_ON_CHANCE if s in CORE else ON_CHANCE))
