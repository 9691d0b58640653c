"""A throwaway PostgreSQL server: a fresh cluster in a temporary directory,
listening on a free loopback port, for the tests and for `--postgres-local`.

    with LocalPostgres() as server:
        server.dsn  # "host=127.0.0.1 port=... user=window_harness dbname=postgres"

It uses the server binaries of the machine's PostgreSQL (Debian's
`postgresql` package: /usr/lib/postgresql/N/bin; or the directory
`pg_config --bindir` names; or $WINDOW_HARNESS_PG_BIN). The cluster trusts
local connections from its one user, fsync is off (nothing in it outlives
the `with` block), and it is removed when the server stops. A guardian
process (`harness.core.lifeline.Guardian`) stops the server and removes it
if this process is killed first.

initdb and postgres refuse to run as root. As root, they run as the
unprivileged `postgres` user that Debian's package creates (through
`runuser`), and the temporary directory is handed to that user.

`python -m harness.engines.postgres.local` starts one, prints its DSN and
keeps it up until Ctrl-C.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

from harness.core.errors import EngineUnavailable
from harness.core.lifeline import Guardian, remove_step, run_step
from harness.engines.ports import free_loopback_port

USER = "window_harness"
START_TIMEOUT = 60.0
ENV_BIN = "WINDOW_HARNESS_PG_BIN"
SERVICE_USER = "postgres"  # who runs the server when we are root
_LOG_TAIL = 5


def server_bin() -> Path | None:
    """The directory holding initdb, pg_ctl and postgres, or None."""
    candidates = []
    if os.environ.get(ENV_BIN):
        candidates.append(Path(os.environ[ENV_BIN]))
    pg_config = shutil.which("pg_config")
    if pg_config:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, timeout=10)
            candidates.append(Path(out.stdout.strip()))
    # Debian keeps the server binaries off PATH, one directory per major version.
    candidates += sorted((Path(p) for p in glob.glob("/usr/lib/postgresql/*/bin")),
                         key=lambda p: _major(p.parent.name), reverse=True)
    return next((c for c in candidates if (c / "initdb").is_file() and (c / "pg_ctl").is_file()), None)


def _major(text: str) -> int:
    return int(text) if text.isdigit() else -1


class LocalPostgres:
    """A PostgreSQL server on 127.0.0.1 at a free port, for as long as the `with`
    block (or until `stop()`)."""

    def __init__(self, timeout: float = START_TIMEOUT, password: str | None = None) -> None:
        self.timeout = timeout
        # With a password the cluster asks for it (scram-sha-256) instead of trusting
        # its user: the tests that check no secret is printed need a DSN that holds one.
        self.password = password
        self.port: int | None = None
        self._dir: Path | None = None
        self._bin: Path | None = None
        self._guardian: Guardian | None = None

    @property
    def dsn(self) -> str:
        if self.port is None:
            raise RuntimeError("the PostgreSQL server is not started")
        secret = f" password={self.password}" if self.password is not None else ""
        return f"host=127.0.0.1 port={self.port} user={USER} dbname=postgres{secret}"

    def __enter__(self) -> LocalPostgres:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()

    def start(self) -> None:
        """initdb, then pg_ctl start (which waits until it accepts connections);
        EngineUnavailable, with the log's tail, when either fails."""
        if self.port is not None:
            return
        self._bin = server_bin()
        if self._bin is None:
            raise EngineUnavailable("postgres", "no PostgreSQL server binaries found (install Debian's "
                                    f"`postgresql` package, or set ${ENV_BIN} to the directory "
                                    "holding initdb and pg_ctl)")
        self._dir = Path(tempfile.mkdtemp(prefix="window-harness-pg-"))
        atexit.register(self.stop)
        try:
            # Should this process be killed (kill -9 runs no atexit), the guardian
            # stops the server and removes its directory.
            self._guardian = Guardian([
                run_step(self._command("pg_ctl", "-D", str(self._data), "-m", "immediate", "-w", "stop"),
                         self.timeout),
                remove_step(self._dir)])
            self._hand_over(self._dir)
            self._run("initdb", "-D", str(self._data), "-U", USER, *self._auth(), "-E", "UTF8",
                      "--locale=C.UTF-8", "--no-sync")
            self.port = free_loopback_port()
            options = (f"-p {self.port} -k {self._dir} -c listen_addresses=127.0.0.1 "
                       "-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
            self._run("pg_ctl", "-D", str(self._data), "-o", options, "-l", str(self._log),
                      "-w", "-t", str(int(self.timeout)), "start")
        except BaseException:  # whatever stopped the start (Ctrl-C too): clean up, then propagate
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the server at once and remove its directory; idempotent."""
        atexit.unregister(self.stop)
        directory, self._dir = self._dir, None
        if directory is None:
            return
        if self.port is not None and (directory / "data" / "postmaster.pid").exists():
            with contextlib.suppress(EngineUnavailable):
                self._run("pg_ctl", "-D", str(directory / "data"), "-m", "immediate", "-w", "stop")
        self.port = None
        shutil.rmtree(directory, ignore_errors=True)
        guardian, self._guardian = self._guardian, None
        if guardian is not None:
            guardian.release()

    @property
    def _data(self) -> Path:
        assert self._dir is not None
        return self._dir / "data"

    @property
    def _log(self) -> Path:
        assert self._dir is not None
        return self._dir / "server.log"

    def _auth(self) -> list[str]:
        if self.password is None:
            return ["--auth=trust"]
        assert self._dir is not None
        pwfile = self._dir / "pwfile"
        pwfile.write_text(self.password + "\n", encoding="utf-8")
        pwfile.chmod(0o644)  # read by initdb, which runs as SERVICE_USER under root
        return ["--auth=scram-sha-256", f"--pwfile={pwfile}"]

    def _hand_over(self, directory: Path) -> None:
        if os.geteuid() != 0:
            return
        if shutil.which("runuser") is None:
            raise EngineUnavailable("postgres", "running as root, and `runuser` is missing: PostgreSQL "
                                    f"must run as an unprivileged user ({SERVICE_USER})")
        try:
            shutil.chown(directory, user=SERVICE_USER)
        except LookupError:
            raise EngineUnavailable("postgres", f"running as root, and there is no {SERVICE_USER!r} "
                                    "user to run PostgreSQL as (Debian's package creates it)") from None

    def _command(self, program: str, *args: str) -> list[str]:
        assert self._bin is not None
        command = [str(self._bin / program), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", SERVICE_USER, "--", *command]
        return command

    def _run(self, program: str, *args: str) -> None:
        try:
            done = subprocess.run(self._command(program, *args), capture_output=True, text=True,
                                  timeout=self.timeout, cwd=self._dir or "/")
        except (OSError, subprocess.TimeoutExpired) as e:
            raise EngineUnavailable("postgres", f"{program} failed: {e}") from None
        if done.returncode != 0:
            raise EngineUnavailable("postgres", f"{program} failed (exit {done.returncode}): "
                                    f"{self._tail(done.stderr or done.stdout)}")

    def _tail(self, output: str) -> str:
        text = output
        if self._dir is not None and self._log.exists():
            text += "\n" + self._log.read_text(errors="replace")
        lines = [line for line in text.splitlines() if line.strip()]
        return " | ".join(lines[-_LOG_TAIL:])


def main() -> None:
    with LocalPostgres() as server:
        print(server.dsn, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)


if __name__ == "__main__":
    main()
