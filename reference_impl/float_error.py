"""The scale a float result's error is judged against (its *magnitude*).

An engine computes a float aggregate in floating point, in its own order of
the terms; the reference computes it exactly and rounds once. The
comparator (`harness.judge.cells`) accepts an engine value within
FLOAT_ULPS units in the last place of the magnitude: for one rounding, or a
sum of a few terms, that is ample and far below any real error.

A sum of n terms accumulated one by one (or by Welford's update, as engines
compute variances) errs by up to (n - 1) units of roundoff of the sum of the
terms' absolute values, the textbook bound for recursive summation. So the
magnitude of a result that sums n terms grows with n (`summed`): over a
frame of 50,000 rows an engine's stddev may be 20-odd ulps from the exact
one, and that is no bug; a frame that lost or gained a row moves the value
by about 1/n of it, thousands of times more than the bound at any size the
campaigns draw.
"""

from __future__ import annotations

FLOAT_ULPS = 16


def summed(scale: float, terms: int) -> float:
    """The magnitude of a result that sums `terms` terms of this scale."""
    return scale * max(1.0, (terms - 1) / FLOAT_ULPS)
