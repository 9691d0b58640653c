"""Value semantics and exact arithmetic helpers of the reference.

The fast paths of `numeric` (fsum, integer-scaled sums, integer square
roots) are checked against plain Fraction arithmetic.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from harness.core import types as T
from harness.core.errors import EvaluationError
from reference_impl.numeric import (
    exact_sum,
    float_sum,
    round_float,
    round_half_up,
    sqrt_rounded,
    trunc_div,
    trunc_mod,
)
from reference_impl.ordering import SortSpec, compare_value
from reference_impl.values import and3, compare, equal3, group_key, not3, or3

TRUTH = [True, False, None]


def test_three_valued_logic_truth_tables():
    # Rows: a = TRUE, FALSE, NULL; columns: b = TRUE, FALSE, NULL.
    assert [[and3(a, b) for b in TRUTH] for a in TRUTH] == [
        [True, False, None],
        [False, False, False],
        [None, False, None],
    ]
    assert [[or3(a, b) for b in TRUTH] for a in TRUTH] == [
        [True, True, True],
        [True, False, None],
        [True, None, None],
    ]
    assert [not3(a) for a in TRUTH] == [False, True, None]


def test_nan_is_largest_and_equal_to_itself():
    assert compare(math.nan, math.inf) == 1
    assert compare(math.nan, math.nan) == 0
    assert compare(-0.0, 0.0) == 0
    assert equal3(math.nan, math.nan) is True
    assert equal3(None, None) is None


def test_values_of_different_families_do_not_compare():
    with pytest.raises(EvaluationError):
        compare("1", 1)


def test_group_keys():
    assert group_key(math.nan) == group_key(float("nan"))
    assert group_key(-0.0) == group_key(0.0)
    assert {group_key(v) for v in [None, None, 1, 1.0, Decimal("1.0")]} == {None, 1}


@pytest.mark.parametrize("nulls_first", [True, False])
@pytest.mark.parametrize("descending", [True, False])
def test_nulls_are_placed_independently_of_direction(nulls_first, descending):
    spec = SortSpec(descending=descending, nulls_first=nulls_first)
    assert compare_value(None, 5, spec) == (-1 if nulls_first else 1)
    assert compare_value(5, None, spec) == (1 if nulls_first else -1)
    assert compare_value(None, None, spec) == 0
    assert compare_value(1, 2, spec) == (1 if descending else -1)


def test_truncating_integer_division():
    assert [trunc_div(a, b) for a, b in [(7, 2), (-7, 2), (7, -2), (-7, -2)]] == [3, -3, -3, 3]
    assert [trunc_mod(a, b) for a, b in [(7, 2), (-7, 2), (7, -2), (-7, -2)]] == [1, -1, 1, -1]


def test_round_half_up():
    assert round_half_up(Fraction(5, 2), 0) == 3
    assert round_half_up(Fraction(-5, 2), 0) == -3
    assert round_half_up(Decimal("1.005"), 2) == Decimal("1.01")


finite = st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=examples(200))
@given(st.lists(finite, max_size=12))
def test_float_sum_is_the_exact_sum_rounded_once(values):
    exact = sum((Fraction(v) for v in values), Fraction(0))
    assert float_sum(values) == round_float(exact, T.FLOAT64)
    assert exact_sum(values) == exact


@settings(max_examples=examples(200))
@given(
    st.lists(
        st.one_of(
            st.integers(-(10**30), 10**30),
            st.decimals(allow_nan=False, allow_infinity=False, places=3),
        ),
        max_size=8,
    )
)
def test_exact_sum_of_exact_numbers(values):
    assert exact_sum(values) == sum((Fraction(v) for v in values), Fraction(0))


@settings(max_examples=examples(300))
@given(st.floats(min_value=0, allow_nan=False, allow_infinity=False))
def test_sqrt_rounded_agrees_with_ieee_sqrt(x):
    assert sqrt_rounded(Fraction(x)) == math.sqrt(x)  # IEEE sqrt is correctly rounded
