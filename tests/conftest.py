"""Shared fixtures: the engines, each created once per test process.

`engines` is every registered engine (a sequence, in registry order, for code
that runs a case on all of them) and `engines.get(name)` is one of them. An
engine is created, and Spark's JVM started, only when first asked for; an
engine that cannot start (no Java, a missing library) skips the tests that
ask for it by name.

PostgreSQL runs on one throwaway local server for the whole session
(`harness.engines.postgres.local`), started when first needed; without the
server binaries, the postgres tests skip, saying how to get them.

`corpus_runs` runs each corpus case on each engine at most once per session,
for every test that reads corpus verdicts (test_corpus, test_profiles,
test_error_conformance).

Hypothesis's settings profile is loaded here, before any test module asks for
its example counts (`hypothesis_profiles.py`: $WH_HYPOTHESIS_PROFILE, `ci` by
default, `dev` for the fast loop).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from hypothesis_profiles import load_profile

from harness.cases.case import Case
from harness.core.errors import EngineUnavailable
from harness.engines.base import Engine
from harness.engines.postgres.adapter import PostgresEngine
from harness.engines.postgres.local import LocalPostgres, server_bin
from harness.engines.registry import engine_names, get_engine
from harness.judge.runner import Result, run_case

load_profile()

# The engines that run SQL text; Spark's and PostgreSQL's tests carry markers.
SQL_ENGINES = [
    pytest.param("duckdb", id="duckdb"),
    pytest.param("datafusion", id="datafusion"),
    pytest.param("spark", id="spark", marks=pytest.mark.spark),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]

NO_PG_BINARIES = ("no PostgreSQL server binaries: install Debian's postgresql (apt-get install "
                  "postgresql, as .ci/run does) or set WINDOW_HARNESS_PG_BIN")


class Engines(Sequence[Engine]):
    def __init__(self) -> None:
        self._made: dict[str, Engine | EngineUnavailable] = {}
        self._postgres: LocalPostgres | None = None

    def _make(self, name: str) -> Engine | EngineUnavailable:
        if name not in self._made:
            try:
                self._made[name] = get_engine(name, **self._options(name))
            except EngineUnavailable as e:
                self._made[name] = e
        return self._made[name]

    def _options(self, name: str) -> dict:
        return {"dsn": self.postgres_dsn()} if name == PostgresEngine.name else {}

    def postgres_dsn(self) -> str:
        """The session's throwaway PostgreSQL server, started on first use."""
        if self._postgres is None:
            if server_bin() is None:
                raise EngineUnavailable(PostgresEngine.name, NO_PG_BINARIES)
            server = LocalPostgres()
            server.start()
            self._postgres = server
        return self._postgres.dsn

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
        if self._postgres is not None:
            self._postgres.stop()


@pytest.fixture(scope="session")
def engines() -> Iterator[Engines]:
    pool = Engines()
    yield pool
    pool.close()


@pytest.fixture(params=SQL_ENGINES)
def sql_engine(request: pytest.FixtureRequest, engines: Engines) -> Engine:
    """Each SQL engine in turn (the shared suite runs on every one of them)."""
    return engines.get(request.param)


@pytest.fixture(scope="session")
def postgres_dsn(engines: Engines) -> str:
    """The DSN of the session's throwaway PostgreSQL server (tests skip without one)."""
    try:
        return engines.postgres_dsn()
    except EngineUnavailable as e:
        pytest.skip(str(e))


class CorpusRuns:
    """Corpus verdicts, each (case, engine) run once for the whole session.

    A corpus case holds its expected rows or error, so an engine's verdict on
    it does not depend on the engines run beside it (the suspect-reference
    check then reads only the reference's verdict on the case's own rows):
    a test asking for engines another test already ran gets those verdicts."""

    def __init__(self, engines: Engines) -> None:
        self._engines = engines
        self._results: dict[tuple[str, str], Result] = {}

    def results(self, names: Sequence[str], cases: Sequence[Case]) -> dict[tuple[str, str], Result]:
        """(case id, engine) -> verdict, for every case and engine named."""
        for case in cases:
            assert case.expected is not None or case.error is not None, (
                f"{case.id}: a corpus case without expected rows or error; its verdicts "
                "would depend on the engines run beside it, and cannot be shared")
            missing = [n for n in names if (case.id, n) not in self._results]
            if missing:
                for r in run_case(case, [self._engines.get(n) for n in missing]):
                    self._results[(case.id, r.engine)] = r
        return {(case.id, n): self._results[(case.id, n)] for case in cases for n in names}


@pytest.fixture(scope="session")
def corpus_runs(engines: Engines) -> CorpusRuns:
    return CorpusRuns(engines)


def missing_features(engine, *features):
    """The engine with features declared missing from its dialect (restriction tests)."""
    import dataclasses

    engine.dialect = dataclasses.replace(engine.dialect, unsupported=engine.dialect.unsupported | set(features))
    return engine


@pytest.fixture(scope="module")
def started():
    """`start(name, *missing)`: an engine with features declared missing, started,
    closed at the module's end."""
    from harness.engines.registry import get_engine

    made = []

    def start(name: str, *missing):
        engine = missing_features(get_engine(name), *missing)
        engine.start()
        made.append(engine)
        return engine

    yield start
    for engine in made:
        engine.close()
