"""Error conformance: the kinds of window query that are invalid by definition.

An engine conforms when it refuses such a query (`rejected-as-expected`) and
does not when it answers it (`wrongly-accepted`); the other half, a valid
query refused, is in each dialect's `refusals` (`wrongly-rejected`).

Each kind names what makes a query invalid, and the words the reference uses
when it refuses it (`reference_impl` raises EvaluationError, citing the
standard's rule). The kind of a refusal is read back from those words, so a
corpus case, a generated one (`harness.generate.invalid` makes each kind on
purpose) and a recorded result are all placed in the same row of the report's
matrix. The words are the reference's, not an engine's: engines word their
refusals as they like.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class InvalidKind:
    name: str  # stable: tags of generated cases, tests
    label: str  # the row of the report's matrix
    reference_says: str  # a regular expression searched in the reference's reason
    # A data exception, raised when the function meets a row (ntile(0)); else a
    # syntax rule, which refuses the query whatever its data.
    data: bool = False

    def describes(self, reason: str) -> bool:
        return re.search(self.reference_says, reason) is not None


INVALID_KINDS = (
    InvalidKind("frame-from-unbounded-following", "frame starts at UNBOUNDED FOLLOWING",
                r"cannot start at UNBOUNDED FOLLOWING"),
    InvalidKind("frame-to-unbounded-preceding", "frame ends at UNBOUNDED PRECEDING",
                r"end at UNBOUNDED PRECEDING"),
    InvalidKind("frame-bounds-reversed", "frame ends before it starts (CURRENT ROW AND 1 PRECEDING)",
                r"a frame starting at .* cannot end at"),
    InvalidKind("negative-offset", "negative ROWS/GROUPS offset",
                r"a (ROWS|GROUPS) frame offset must not be negative", data=True),
    InvalidKind("negative-range-offset", "negative RANGE offset",
                r"a RANGE frame offset must not be negative", data=True),
    InvalidKind("null-offset", "NULL frame offset", r"a frame offset must not be NULL", data=True),
    InvalidKind("range-offset-keys", "RANGE offset without exactly one ORDER BY key",
                r"RANGE with an offset needs exactly one ORDER BY key"),
    InvalidKind("range-offset-key-type", "RANGE offset over a string key",
                r"RANGE with an offset needs a numeric or datetime key"),
    InvalidKind("ntile-not-positive", "ntile(n) with n < 1",
                r"argument of ntile\(\) must be greater than zero", data=True),
    InvalidKind("nth-value-not-positive", "nth_value(x, n) with n < 1",
                r"argument of nth_value\(\) must be greater than zero", data=True),
    InvalidKind("window-in-where", "window function in WHERE, GROUP BY or HAVING",
                r"a window function is not allowed here"),
    InvalidKind("nested-window", "window function inside a window function",
                r"window functions cannot be nested"),
    # Refused by the standard, answered by design under some engines' profiles
    # (harness.core.semantics: date_from_string, datetime_vs_string, string_agg_argument).
    InvalidKind("invalid-date-string", "a string that is not a date cast to DATE",
                r"invalid date '", data=True),
    InvalidKind("datetime-vs-string", "a DATE or TIMESTAMP compared with a character string",
                r"cannot compare (DATE|TIMESTAMP) with VARCHAR|cannot compare VARCHAR with (DATE|TIMESTAMP)"),
    InvalidKind("string-agg-not-text", "string_agg over a non-string argument",
                r"string_agg\(\) needs text"),
    InvalidKind("groups-without-order-by", "GROUPS frame without ORDER BY",
                r"a GROUPS frame needs an ORDER BY"),
    InvalidKind("framed-window-copy", "OVER (w) or WINDOW w2 AS (w) copying a framed window",
                r"has a frame and cannot be copied"),
)

KINDS_BY_NAME = {k.name: k for k in INVALID_KINDS}


def invalid_kind(reason: str) -> InvalidKind | None:
    """The kind the reference's reason for refusing a query names, or None
    (the query is invalid otherwise, e.g. an overflow or a division by zero)."""
    return next((k for k in INVALID_KINDS if k.describes(reason)), None)
