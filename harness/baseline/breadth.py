"""How broad a baseline entry's matcher may be.

An entry explains every observation it matches, so a field that matches
(nearly) everything hides most of an engine's differences while looking like
a narrow entry: `error: ""` or `error: ".*"`, `case: "*"`, `case: "fuzz/*"`
(every fuzz case of a gate), every frame mode, `feature: "*"`. Each such field
is refused when the file is loaded, saying which field and why; a real
entry names its cases, messages and features.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from harness.core.errors import InvalidInput

CORPUS = Path(__file__).resolve().parents[2] / "cases"
# A case glob may match at most this share of the corpus: the repository's
# baseline names at most 4 of its 381 cases in one entry (1%); a directory
# such as `functions/*` is 40 (10%).
MAX_CASE_SHARE = 0.05
# An error pattern that finds each of these (one character of each kind,
# and messages of each kind an entry is searched in) matches any message.
_MESSAGES = ("x", "Q", "7", " ", "#", "\u00dc",
             'Binder Error: Referenced column "zq9" not found in FROM clause!',
             "engine 1, expected 2", "invalid number 'abc'")
# Case ids of each kind the harness makes; a glob that matches all of one kind
# matches every such case: a corpus case, a `.sql` file's query, a gate's fuzz
# case, a generated or reduced case, a batched one.
_CASE_KINDS = {
    "every case": ("x", "Q7", "a/b/c", "t/q1", "fuzz/0/0", "generated/0", "x#batched",
                   "findings/duckdb-mismatch-0a1b2c3d4e"),
    "every fuzz case of a gate": ("fuzz/0/0", "fuzz/42/17", "fuzz/987654321/123456"),
    "every generated case": ("generated/0", "generated/4242", "generated/987654321"),
    "every reduced finding": ("findings/duckdb-mismatch-0a1b2c3d4e", "findings/sqlite-error-ffffffffff"),
}


def refuse_broad(case: Sequence[str], frame: Sequence[str], feature: Sequence[str],
                 error: re.Pattern | None, frames: Sequence[str], features: Iterable[str],
                 where: str) -> None:
    """InvalidInput naming the first field of a matcher that matches (nearly)
    everything. `frames`, `features`: every frame mode and every known feature."""
    if error is not None:
        _refuse_broad_error(error, f"{where}.error")
    _refuse_broad_cases(case, f"{where}.case")
    if frame and set(frames) <= set(frame):
        raise InvalidInput("too broad: lists every frame mode, so it narrows nothing", f"{where}.frame")
    known = list(features)
    for glob in feature:
        if len(fnmatch.filter(known, glob)) * 2 > len(known):
            raise InvalidInput(f"too broad: {glob!r} matches most of the known features, which "
                               "nearly every case exercises", f"{where}.feature")


def _refuse_broad_error(error: re.Pattern, where: str) -> None:
    if all(error.search(message) for message in _MESSAGES):
        raise InvalidInput(f"too broad: {error.pattern!r} matches any message (it is found in "
                           f"{', '.join(repr(m) for m in _MESSAGES[:4])}, ...): give words of the "
                           "message it is about", where)


def _refuse_broad_cases(globs: Sequence[str], where: str) -> None:
    for glob in globs:
        for kind, ids in _CASE_KINDS.items():
            if all(fnmatch.fnmatchcase(i, glob) for i in ids):
                raise InvalidInput(f"too broad: {glob!r} matches {kind}: name the cases", where)
    corpus = corpus_ids()
    matched = sum(any(fnmatch.fnmatchcase(i, g) for g in globs) for i in corpus)
    if corpus and matched > MAX_CASE_SHARE * len(corpus):
        raise InvalidInput(f"too broad: matches {matched} of the corpus's {len(corpus)} cases "
                           f"(more than {MAX_CASE_SHARE:.0%}; {CORPUS}): name the cases", where)


@functools.cache
def corpus_ids() -> tuple[str, ...]:
    """The ids of the repository's corpus cases (none when it is not there: an
    installed harness without its cases checks the kinds of ids alone)."""
    from harness.cases.case import case_id, discover

    if not CORPUS.is_dir():
        return ()
    return tuple(case_id(p, [CORPUS]) for p in discover([CORPUS]))
