"""One generator, two drivers: a seeded `random.Random` or a Hypothesis draw.

The table generators (`schemas`, `data`) ask for randomness only through the
narrow `Draws` interface below. `random.Random` already has it, so fuzz
campaigns pass a seeded `Random` (fast, replayed from its seed). Property tests
drive the very same code through `HypothesisDraws`, which turns each call into
a Hypothesis draw, so a failing example shrinks: integers towards 0 (or the
bound nearest it), `choice` and `sample` towards the first items, `random()`
towards 0.0. Generators are written so that those directions mean "simpler"
(the simplest option first; `chance(p)` is False when `random()` is 0).

`as_strategy(generator, ...)` wraps a generator as a Hypothesis strategy.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from hypothesis.strategies import DrawFn, SearchStrategy

V = TypeVar("V")

# HypothesisDraws.random() steps: fine enough for chances and weights, and
# small enough that Hypothesis draws it near-uniformly (it skews wide integer
# ranges towards small values, which would make every chance() False).
_RANDOM_STEPS = 1000


class Draws(Protocol):
    """The randomness a generator may use (a subset of `random.Random`)."""

    def randint(self, a: int, b: int) -> int: ...

    def choice(self, seq: Sequence[V]) -> V: ...

    def random(self) -> float: ...

    def sample(self, population: Sequence[V], k: int) -> list[V]: ...


class HypothesisDraws:
    """`Draws` over a Hypothesis draw function (of `st.composite` or `st.data()`)."""

    def __init__(self, draw: DrawFn) -> None:
        self._draw = draw

    def randint(self, a: int, b: int) -> int:
        return self._draw(_integers(a, b))

    def choice(self, seq: Sequence[V]) -> V:
        return seq[self._draw(_integers(0, len(seq) - 1))]

    def random(self) -> float:
        return self._draw(_integers(0, _RANDOM_STEPS - 1)) / _RANDOM_STEPS

    def sample(self, population: Sequence[V], k: int) -> list[V]:
        indices = self._draw(_unique_indices(len(population), k))
        return [population[i] for i in indices]


@functools.lru_cache(maxsize=1024)
def _integers(a: int, b: int) -> SearchStrategy[int]:
    from hypothesis import strategies as st

    return st.integers(a, b)


@functools.lru_cache(maxsize=256)
def _unique_indices(n: int, k: int) -> SearchStrategy[list[int]]:
    from hypothesis import strategies as st

    return st.lists(st.integers(0, n - 1), min_size=k, max_size=k, unique=True)


def as_strategy(generator: Callable[..., V], *args: Any, **kwargs: Any) -> SearchStrategy[V]:
    """`generator(draws, *args, **kwargs)` as a strategy: each example runs the
    generator over a fresh `HypothesisDraws`; it shrinks as the generator says."""
    from hypothesis import strategies as st

    @st.composite
    def run(draw: DrawFn) -> V:
        return generator(HypothesisDraws(draw), *args, **kwargs)

    return run()


# -- helpers over the four primitives (so both drivers give them) ----------------


def chance(draws: Draws, p: float) -> bool:
    """True with probability `p`; False when `random()` shrinks to 0."""
    return p > 0 and draws.random() >= 1 - p


def weighted(draws: Draws, options: Sequence[tuple[V, int]]) -> V:
    """One of `(value, weight)` pairs by weight; shrinks towards the first."""
    point = draws.random() * sum(w for _, w in options)
    for value, weight in options:
        point -= weight
        if point < 0:
            return value
    return options[-1][0]


def exponential(draws: Draws, mean: float) -> float:
    """An exponential variate of the given mean; shrinks towards 0."""
    return -mean * math.log(1.0 - draws.random())
