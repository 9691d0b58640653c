"""No secret in any output (issue 33, item 1).

A gate on a PostgreSQL server that asks for a password, given as
`--postgres-dsn postgresql://USER:PASSWORD@...`, prints commands to rerun its
failures, writes JUnit, an HTML report and its results directory: the password
is in none of them, nor in stdout or stderr. `core.secrets.redact` is the one
function that hides it, in every form libpq and Spark Connect accept.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.core.secrets import redact
from harness.engines.postgres.local import USER, LocalPostgres, server_bin

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "Sekr3t-pw_42"

# The reference's expected rows are wrong, so every engine's verdict fails the gate
# and each failure prints its replay and reduce commands, postgres's with the DSN.
WRONG_CASE = """\
description: expected rows deliberately wrong, so the gate prints its rerun commands
tables:
  t:
    columns: {id: bigint, x: bigint}
    rows: [[1, 10], [2, 20]]
sql: |
  SELECT id, sum(x) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS s
  FROM t ORDER BY id ASC NULLS LAST
expected:
  columns: [id, s]
  rows: [[1, 10], [2, 31]]
"""


@pytest.mark.parametrize("text, shown", [
    ("postgresql://u:PW@h:5432/db", "postgresql://u:***@h:5432/db"),
    ("postgres://u:PW@h/db?sslmode=require", "postgres://u:***@h/db?sslmode=require"),
    ("postgresql://u@h/db?password=PW&sslmode=require", "postgresql://u@h/db?password=***&sslmode=require"),
    ("host=h user=u password=PW dbname=d", "host=h user=u password=*** dbname=d"),
    ("host=h password = 'P W\\' x' dbname=d", "host=h password = *** dbname=d"),
    ("host=h PASSWORD=PW", "host=h PASSWORD=***"),
    ("host=h sslpassword=PW", "host=h sslpassword=***"),
    ("sc://h:15002/;token=PW;user_id=me", "sc://h:15002/;token=***;user_id=me"),
    ("--postgres-dsn 'host=h password=PW'", "--postgres-dsn 'host=h password=***'"),
    ("no secret: x = 1, a@b, sc://h:15002", "no secret: x = 1, a@b, sc://h:15002"),
])
def test_redact_hides_the_secret_of_each_form(text, shown):
    assert redact(text) == shown


@pytest.fixture(scope="module")
def password_server() -> Iterator[LocalPostgres]:
    if server_bin() is None:
        pytest.skip("no PostgreSQL server binaries: install Debian's postgresql or set WINDOW_HARNESS_PG_BIN")
    with LocalPostgres(password=PASSWORD) as server:
        yield server


def _url(server: LocalPostgres, password: str = PASSWORD) -> str:
    return f"postgresql://{USER}:{password}@127.0.0.1:{server.port}/postgres"


def _harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "WINDOW_HARNESS_POSTGRES_DSN"}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=300)


def _files_holding(root: Path, secret: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def test_the_server_refuses_a_wrong_password(password_server):
    """The DSN's password is real: without it the server refuses the connection."""
    import psycopg

    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(_url(password_server, "wrong"), connect_timeout=10).close()


@pytest.mark.parametrize("output", ["table", "json"])
def test_a_gate_with_a_password_in_its_dsn_prints_and_writes_it_nowhere(password_server, tmp_path, output):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "wrong.yaml").write_text(WRONG_CASE, encoding="utf-8")
    baseline = tmp_path / "baseline.yaml"
    baseline.write_text("entries: []\n", encoding="utf-8")
    out = tmp_path / "written"
    done = _harness("gate", "--engines", "reference,duckdb,postgres", "--postgres-dsn", _url(password_server),
                    "--corpus", str(corpus), "--baseline", str(baseline), "--budget-cases", "3",
                    "--jobs", "1", "--out", str(out / "gate"), "--junit", str(out / "junit.xml"),
                    "--report", str(out / "report.html"), "--format", output, cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-2000:]
    # The commands to rerun postgres's failure are there (in the table and JUnit), the DSN
    # with them, its password hidden.
    if output == "table":
        assert "--postgres-dsn" in done.stdout and f"{USER}:***@127.0.0.1" in done.stdout, done.stdout[-3000:]
    assert PASSWORD not in done.stdout and PASSWORD not in done.stderr
    assert (out / "junit.xml").exists() and (out / "report.html").exists() and (out / "gate").is_dir()
    assert "--postgres-dsn" in (out / "junit.xml").read_text(encoding="utf-8")
    assert _files_holding(tmp_path, PASSWORD) == []


def test_an_error_message_holding_a_url_shows_it_without_its_secrets(tmp_path):
    done = _harness("fuzz", "--cases", "1", "--on-spark", "--spark-remote", "http://u:Sekr3t@h:1/;token=Tok3n",
                    "--out", str(tmp_path / "fuzz"), cwd=tmp_path)
    assert done.returncode == 2
    assert "http://u:***@h:1/;token=***" in done.stderr, done.stderr
    assert "Sekr3t" not in done.stderr + done.stdout and "Tok3n" not in done.stderr + done.stdout
