"""The semantics profile in force for the evaluation under way.

Expression and aggregate compilers sit many calls below `evaluate`, and only
a few of them consult the profile (integer division, sum overflow, the type
of avg), so it travels in a context variable, the way `decimal`'s context
does, instead of through every signature.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from harness.core.semantics import STANDARD, SemanticsProfile

_ACTIVE: ContextVar[SemanticsProfile] = ContextVar("semantics_profile", default=STANDARD)


def active_profile() -> SemanticsProfile:
    return _ACTIVE.get()


@contextmanager
def using_profile(profile: SemanticsProfile) -> Iterator[None]:
    token = _ACTIVE.set(profile)
    try:
        yield
    finally:
        _ACTIVE.reset(token)
