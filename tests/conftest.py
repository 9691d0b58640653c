"""Shared fixtures: the engines, each created once per test process.

`engines` is every registered engine (a sequence, in registry order, for code
that runs a case on all of them) and `engines.get(name)` is one of them. An
engine is created, and Spark's JVM started, only when first asked for; an
engine that cannot start (no Java, a missing library) skips the tests that
ask for it by name.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from harness.engines.base import Engine
from harness.engines.registry import engine_names, get_engine
from harness.errors import EngineUnavailable

# The engines that run SQL text; Spark's tests carry the `spark` marker.
SQL_ENGINES = [
    pytest.param("duckdb", id="duckdb"),
    pytest.param("datafusion", id="datafusion"),
    pytest.param("spark", id="spark", marks=pytest.mark.spark),
]


class Engines(Sequence[Engine]):
    def __init__(self) -> None:
        self._made: dict[str, Engine | EngineUnavailable] = {}

    def _make(self, name: str) -> Engine | EngineUnavailable:
        if name not in self._made:
            try:
                self._made[name] = get_engine(name)
            except EngineUnavailable as e:
                self._made[name] = e
        return self._made[name]

    def get(self, name: str) -> Engine:
        made = self._make(name)
        if isinstance(made, EngineUnavailable):
            pytest.skip(str(made))
        return made

    def _available(self) -> list[Engine]:
        made = [self._make(name) for name in engine_names()]
        return [e for e in made if isinstance(e, Engine)]

    def __iter__(self) -> Iterator[Engine]:
        return iter(self._available())

    def __len__(self) -> int:
        return len(self._available())

    def __getitem__(self, index):  # type: ignore[override]
        return self._available()[index]

    def close(self) -> None:
        for made in self._made.values():
            if isinstance(made, Engine):
                made.close()


@pytest.fixture(scope="session")
def engines() -> Iterator[Engines]:
    pool = Engines()
    yield pool
    pool.close()


@pytest.fixture(params=SQL_ENGINES)
def sql_engine(request: pytest.FixtureRequest, engines: Engines) -> Engine:
    """Each SQL engine in turn (the shared suite runs on every one of them)."""
    return engines.get(request.param)
