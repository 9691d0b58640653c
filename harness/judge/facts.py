"""What a verdict is about, as typed fields.

A verdict's `detail` is text for people, built from these fields; every
program that needs to know which column differed, which feature was
refused, what the engine said or what the verdict against the reference
was reads them here (never the detail: a column may be named `a b` or
`x: y`). Every JSON document that records a verdict holds them under the key
`facts` (`as_json`, the fields that are set), read back with `recorded`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

from harness.judge.compare import Verdict


@dataclass(frozen=True)
class Facts:
    # The output column the shown difference is pinned on: the first column in
    # select order that differs in the row the detail shows.
    column: str | None = None
    # A wrong value's difference as shown, without the column's name or the row's
    # context: `engine 0.0, expected nan` (the comparator), `left None, right ''`
    # (a metamorphic relation). What a baseline entry's `error` pattern reads for
    # a wrong value.
    difference: str | None = None
    # The feature refused: a dialect's declared gap (`unsupported`), or a valid
    # construct the engine refused (`wrongly-rejected`).
    feature: str | None = None
    # The refusal's own words: the engine's message (error, crash, timeout,
    # rejections, an `unsupported` in the engine's words), or the harness's
    # when it could not render or evaluate the query.
    message: str | None = None
    # The reference's reason the query is invalid by definition
    # (rejected-as-expected, wrongly-accepted).
    invalid: str | None = None
    # For a verdict made suspect-reference: what it was against the reference.
    against_reference: Verdict | None = None
    # The reference's verdict against the case's own expected rows (or error),
    # on the reference's result and on the engine verdicts it made suspect.
    against_case: Verdict | None = None
    # True: the verdict is on the bare query (the user's own, without the
    # harness's row id and witness columns, `harness.judge.bare`), judged
    # beside the instrumented one; a finding of its own kind when that passed.
    bare: bool | None = None
    # What the engine ran instead of the case's query (`harness.judge.restrict`):
    # each SELECT item it left out, as (output column, feature its dialect
    # lacks); an item of a derived table or WITH query is named `s.d`, and an
    # item left out because it reads such a column has the reason
    # `reads left-out s.d` for a feature; the ORDER BY keys left out with them; and spellings that
    # differ from the case's but mean the same. The verdict is judged against the
    # reference on that same restricted query.
    left_out: tuple[tuple[str, str], ...] | None = None
    order_keys_left_out: tuple[str, ...] | None = None
    respelled: tuple[str, ...] | None = None

    @property
    def restricted(self) -> bool:
        """Whether the engine ran the query with items left out."""
        return bool(self.left_out)

    def as_json(self) -> dict:
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self) if getattr(self, f.name) is not None}

    @classmethod
    def from_json(cls, doc: Mapping) -> Facts:
        values = {f.name: doc.get(f.name) for f in fields(cls)}
        for name in ("against_reference", "against_case"):
            if values[name] is not None:
                values[name] = Verdict(values[name])
        if values["left_out"] is not None:
            values["left_out"] = tuple((o["column"], o["feature"]) for o in values["left_out"])
        for name in ("order_keys_left_out", "respelled"):
            if values[name] is not None:
                values[name] = tuple(values[name])
        return cls(**values)


def _plain(value: object) -> object:
    if isinstance(value, Verdict):
        return value.value
    if isinstance(value, tuple):  # left_out's pairs are objects, the other tuples lists
        return [{"column": v[0], "feature": v[1]} if isinstance(v, tuple) else v for v in value]
    return value


def recorded(doc: Mapping) -> Facts:
    """The facts a recorded verdict (a JSON object) holds under `facts`; none
    for a record written before they were."""
    return Facts.from_json(doc.get("facts") or {})


NO_FACTS = Facts()  # a verdict recorded without any (a default argument)
