"""Hypothesis settings profiles, chosen by $WH_HYPOTHESIS_PROFILE (tests/conftest.py loads it).

- `ci` (the default, what the README's test command and .ci/run run): every
  property checks the examples it asks for (`examples(n)` is n; a property
  that asks for none gets Hypothesis's default, 100);
- `dev` (the fast developer loop): a fifth of each, at least 10.

Each property writes its count for `ci` as `max_examples=examples(n)`.
"""

from __future__ import annotations

import os

from hypothesis import settings

PROFILE_VARIABLE = "WH_HYPOTHESIS_PROFILE"
CI_EXAMPLES = 100

settings.register_profile("ci", max_examples=CI_EXAMPLES)
settings.register_profile("dev", max_examples=CI_EXAMPLES // 5)


def load_profile() -> str:
    """Load the profile $WH_HYPOTHESIS_PROFILE names (`ci` by default); an unknown
    name is Hypothesis's InvalidArgument, naming the registered ones."""
    name = os.environ.get(PROFILE_VARIABLE, "ci")
    settings.load_profile(name)
    return name


def examples(ci: int) -> int:
    """A property's example count: `ci` under the ci profile, scaled like the
    profile's default under another (at least 10)."""
    return max(10, ci * settings.default.max_examples // CI_EXAMPLES)
