"""Issue 16's aggregates in the reference: quantiles by the standard's rules,
mode and any_value (ReferenceGap exactly when the answer is undetermined),
first/last, the two-variable statistics, bit_* and count_if; and reading
WITHIN GROUP and the aliases."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import pyarrow as pa
import pytest

from harness.core.errors import EvaluationError, InvalidQuery, ReferenceGap
from harness.core.model import FuncCall, SortKey
from harness.sql import parse, write
from reference_impl.statistics import percentile_cont, percentile_disc
from reference_impl.testing import call, col, lit, over, table, window_values


def whole(name, data, *args, **clauses):
    return window_values(over(call(name, *args, **clauses)), data)[0]


def ints(*values):
    return table(v=("integer", list(values)))


@pytest.mark.parametrize(("p", "expected"), [
    (Fraction(0), 1.0), (Fraction(1), 10.0), (Fraction(1, 2), 3.0), (Fraction(1, 4), 2.0),
    (Fraction(1, 3), 7 / 3), (Fraction(7, 8), 7.0),
])
def test_percentile_cont_interpolates_between_rn_floor_and_ceiling(p, expected):
    # RN = 1 + p * (n - 1) over 1, 2, 3, 4, 10 (n = 5): p = 1/3 is RN 7/3, a third
    # of the way from row 2 (2) to row 3 (3); p = 7/8 is RN 4.5, halfway from 4 to 10.
    assert percentile_cont([1, 2, 3, 4, 10], p) == expected


def test_percentile_cont_weights_the_ceiling_row():
    # n = 4, p = 0.35: RN - 1 = 1.05, between 2 and 4: 2 + 2 * 0.05 = 2.1
    assert percentile_cont([1, 2, 4, 4], Fraction(35, 100)) == 2.1


def test_percentile_disc_takes_the_first_value_whose_cume_dist_reaches_p():
    values = [1, 2, 4, 4, 6, 7]  # cume_dist 1/6, 2/6, ...
    assert percentile_disc(values, Fraction(35, 100)) == 4  # 2/6 < 0.35 <= 3/6
    assert percentile_disc(values, Fraction(1, 3)) == 2
    assert percentile_disc(values, Fraction(0)) == 1
    assert percentile_disc(values, Fraction(1)) == 7


def test_median_of_integers_is_a_double_and_skips_nulls():
    assert whole("median", ints(1, None, 4, 2, 10), col("v")) == 3.0
    assert whole("median", ints(None, None), col("v")) is None


def test_quantiles_read_the_constant_fraction_exactly():
    data = ints(1, 2, 4, 4)
    # 0.35 as written (a DECIMAL): RN - 1 = 1.05, 2 + (4 - 2) * 0.05 = 2.1 exactly,
    # rounded once; the double nearest 0.35 is a little less, and so is its answer.
    assert whole("quantile_cont", data, col("v"), lit(Decimal("0.35"))) == 2.1
    assert whole("quantile_cont", data, col("v"), lit(0.35)) == 2.0999999999999996
    assert whole("quantile_disc", data, col("v"), lit(Decimal("0.35"))) == 2


@pytest.mark.parametrize("p", [1.5, -0.25])
def test_a_fraction_outside_zero_to_one_is_an_error(p):
    with pytest.raises(EvaluationError, match="not between 0 and 1"):
        whole("quantile_cont", ints(1, 2), col("v"), lit(p))


def test_the_fraction_must_be_a_constant():
    with pytest.raises(EvaluationError, match="constant"):
        whole("quantile_cont", ints(1, 2), col("v"), col("v"))


def test_within_group_descending_reverses_the_order():
    data = ints(1, 2, 4, 4)
    asc = FuncCall("percentile_cont", (lit(0.25),), within_group=(SortKey(col("v")),))
    desc = FuncCall("percentile_cont", (lit(0.25),), within_group=(SortKey(col("v"), True),))
    assert window_values(over(asc), data)[0] == 1.75
    assert window_values(over(desc), data)[0] == 4.0


def test_mode_is_the_most_frequent_and_a_gap_when_tied():
    assert whole("mode", ints(3, 1, 3, None, None, None), col("v")) == 3
    with pytest.raises(ReferenceGap):
        whole("mode", ints(3, 1), col("v"))


def test_any_value_is_the_one_non_null_value_or_a_gap():
    assert whole("any_value", ints(None, 5, 5), col("v")) == 5
    assert whole("any_value", ints(None, None), col("v")) is None
    with pytest.raises(ReferenceGap):
        whole("any_value", ints(5, 6), col("v"))


def test_first_and_last_keep_nulls():
    assert whole("first", ints(None, 5), col("v")) is None
    assert whole("last", ints(5, None), col("v")) is None


def test_pair_statistics_skip_pairs_with_a_null():
    data = table(y=("integer", [1, 2, 3, None, 9]), x=("integer", [1, 2, 4, 5, None]))
    y, x = col("y"), col("x")
    assert whole("regr_count", data, y, x) == 3
    # pairs (1,1) (2,2) (3,4): mean y 2, mean x 7/3; Sxy = 4/3 + 0 + 5/3 = 3,
    # Sxx = (16 + 1 + 25) / 9 = 14/3, Syy = 2
    assert whole("covar_pop", data, y, x) == 1.0
    assert whole("covar_samp", data, y, x) == 1.5
    assert whole("regr_slope", data, y, x) == 9 / 14
    assert whole("regr_intercept", data, y, x) == 0.5  # 2 - 9/14 * 7/3
    assert whole("corr", data, y, x) == math.sqrt(27 / 28)  # 3 / sqrt(14/3 * 2)


def test_corr_and_slope_are_null_when_a_variance_is_zero():
    data = table(y=("integer", [1, 2]), x=("integer", [3, 3]))
    assert whole("corr", data, col("y"), col("x")) is None
    assert whole("regr_slope", data, col("y"), col("x")) is None
    assert whole("covar_samp", table(y=("integer", [1]), x=("integer", [3])), col("y"), col("x")) is None


def test_bitwise_aggregates_and_count_if():
    data = ints(12, None, 10, -1)
    assert whole("bit_and", data, col("v")) == 8
    assert whole("bit_or", data, col("v")) == -1
    assert whole("bit_xor", data, col("v")) == 12 ^ 10 ^ -1
    flags = table(b=("boolean", [True, None, False, True]))
    assert whole("count_if", flags, col("b")) == 2


@pytest.mark.parametrize(("text", "canonical"), [
    ("variance(v)", "var_samp(v)"), ("stddev(v)", "stddev_samp(v)"), ("every(b)", "bool_and(b)"),
    ("first(v)", "first(v)"), ("last(v)", "last(v)"),
])
def test_aliases_are_folded_and_first_last_are_names(text, canonical):
    q = parse(f"SELECT {text} OVER () AS x FROM t")
    assert f"{canonical} OVER ()" in write(q)


def test_within_group_round_trips_with_filter_and_over():
    sql = ("SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY v DESC NULLS LAST) "
           "FILTER (WHERE v > 1) OVER (PARTITION BY k) AS x FROM t")
    q = parse(sql)
    assert q.items[0].expr.func.within_group == (SortKey(col("v"), True, q.items[0].expr.func.within_group[0].nulls),)
    assert parse(write(q)) == q
    assert "WITHIN GROUP (ORDER BY v DESC NULLS LAST) FILTER (WHERE v > 1) OVER" in write(q)


@pytest.mark.parametrize("sql", [
    "SELECT percentile_cont(0.5) AS x FROM t",
    "SELECT median(v) WITHIN GROUP (ORDER BY v ASC) AS x FROM t",
    "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY v ASC, k ASC) AS x FROM t",
])
def test_within_group_misuse_is_refused_when_read(sql):
    with pytest.raises(InvalidQuery):
        parse(sql)


def test_mode_within_group_breaks_ties_by_its_order():
    data = ints(3, 1, 1, 3, None)
    first = FuncCall("mode", (), within_group=(SortKey(col("v")),))
    last = FuncCall("mode", (), within_group=(SortKey(col("v"), True),))
    assert window_values(over(first), data)[0] == 1
    assert window_values(over(last), data)[0] == 3


@pytest.mark.parametrize("sql", [
    "SELECT mode() AS m FROM t",
    "SELECT mode(v) WITHIN GROUP (ORDER BY v ASC) AS m FROM t",
])
def test_mode_takes_an_argument_or_within_group(sql):
    with pytest.raises(InvalidQuery):
        parse(sql)
    assert parse("SELECT mode() WITHIN GROUP (ORDER BY v ASC) AS m FROM t").items[0].expr.args == ()


def test_interpolating_with_an_infinity_is_that_infinity():
    assert percentile_cont([1.0, math.inf], Fraction(1, 2)) == math.inf
    assert percentile_cont([-math.inf, 5.0], Fraction(1, 4)) == -math.inf
    assert math.isnan(percentile_cont([-math.inf, math.inf], Fraction(1, 2)))
    assert math.isnan(percentile_cont([5.0, math.nan], Fraction(1, 2)))
    assert percentile_cont([math.inf, math.inf], Fraction(1, 2)) == math.inf


def test_a_zero_spread_gives_null_before_a_non_finite_value_gives_nan():
    # One pair (-inf, 0): x's spread is zero, so the standard's NULL, not NaN.
    data = table(y=("double precision", [-math.inf]), x=("integer", [0]))
    assert whole("regr_intercept", data, col("y"), col("x")) is None
    assert whole("corr", data, col("y"), col("x")) is None
    spread = table(y=("double precision", [math.nan, 1.0]), x=("integer", [0, 1]))
    assert math.isnan(whole("regr_slope", spread, col("y"), col("x")))


def test_a_spread_past_the_largest_double_is_no_internal_error() -> None:
    """Values near 1e300 square past the largest double: the exact slope and correlation
    of y = x are 1 (a campaign found the reference failing its own tolerance's
    magnitude there: `OverflowError: integer division result too large for a float`)."""
    import pyarrow as pa

    from reference_impl import evaluate

    t = pa.table({"p": pa.array([1, 1], pa.int64()), "f": pa.array([4.0, 1e300])})
    q = parse("SELECT regr_slope(f, f) OVER (PARTITION BY p) AS s, corr(f, f) OVER (PARTITION BY p) AS c FROM t")
    assert evaluate(q, {"t": t}).table.to_pylist() == [{"s": 1.0, "c": 1.0}] * 2


@pytest.mark.parametrize("func", ["regr_intercept", "regr_slope", "corr", "covar_pop"])
def test_infinities_of_both_signs_are_answered_not_a_gap(func):
    """A campaign found `regr_intercept(f, f)` over a frame holding -inf and +inf
    answered by no row: the error scale summed the values with math.fsum, which
    refuses -inf + inf (`internal error of the reference: ValueError`)."""
    from reference_impl import evaluate

    data = {"t": pa.table({"id": [1, 2, 3], "f": [math.inf, -math.inf, 1.0]})}
    query = parse(f"SELECT id, {func}(f, f) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING "
                  "AND CURRENT ROW) AS w FROM t")
    answer = evaluate(query, data)  # no ReferenceGap
    assert answer.table.num_rows == 3 and len(answer.magnitudes["w"]) == 3
