"""The throwaway PostgreSQL server (harness/engines/postgres/local.py): it starts
a real cluster on a loopback port, answers, and leaves nothing behind."""

from __future__ import annotations

import socket

import pytest

from harness.core.errors import EngineUnavailable
from harness.engines.postgres import local as postgres_local
from harness.engines.postgres.local import LocalPostgres, server_bin


@pytest.fixture
def needs_server() -> None:
    if server_bin() is None:
        pytest.skip("no PostgreSQL server binaries: install Debian's postgresql (as .ci/run does) "
                    "or set WINDOW_HARNESS_PG_BIN")


def test_a_local_server_answers_and_leaves_nothing_behind(needs_server) -> None:
    import psycopg

    with LocalPostgres() as server:
        directory, port = server._dir, server.port
        with psycopg.connect(server.dsn) as con:
            number = con.execute("SHOW server_version_num").fetchone()[0]
            assert int(number) >= 110000  # GROUPS and EXCLUDE: PostgreSQL 11 and later
            assert con.execute("SHOW fsync").fetchone()[0] == "off"
    assert not directory.exists()
    with socket.socket() as s, pytest.raises(OSError):
        s.settimeout(2)
        s.connect(("127.0.0.1", port))
    server.stop()  # idempotent


def test_two_servers_run_side_by_side(needs_server) -> None:
    with LocalPostgres() as a, LocalPostgres() as b:
        assert a.port != b.port and a.dsn != b.dsn


def test_no_server_binaries_is_a_clear_error(monkeypatch) -> None:
    monkeypatch.setattr(postgres_local, "server_bin", lambda: None)
    with pytest.raises(EngineUnavailable, match="install Debian's `postgresql` package"):
        LocalPostgres().start()


def test_a_server_that_cannot_start_says_why(needs_server, monkeypatch) -> None:
    import shutil
    import tempfile
    from pathlib import Path

    # Not under tmp_path: as root the server programs run as `postgres`, who must reach them.
    fake = Path(tempfile.mkdtemp(prefix="window-harness-fake-pg-"))
    fake.chmod(0o755)
    monkeypatch.setattr(postgres_local, "server_bin", lambda: fake)
    for name in ("initdb", "pg_ctl"):
        (fake / name).write_text("#!/bin/sh\necho 'broken on purpose' >&2\nexit 3\n")
        (fake / name).chmod(0o755)
    server = LocalPostgres()
    try:
        with pytest.raises(EngineUnavailable, match="initdb failed \\(exit 3\\): broken on purpose"):
            server.start()
    finally:
        shutil.rmtree(fake)
    assert server._dir is None  # cleaned up
