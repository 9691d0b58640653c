"""Engines run by another Python (engine A/B).

`RemoteEngine` (a `harness.engines.worker.WorkerEngine`: a crash or a hang
is a verdict, and the next query restarts it) gates a locally built engine against the released one:
`--engines duckdb,duckdb@candidate --engine-python duckdb@candidate=VENV/bin/python`
runs `duckdb` in this process and `duckdb@candidate` with the SAME adapter
(harness/engines/duckdb/adapter.py) in a child of the other interpreter, with the
duckdb installed there. The child loads this checkout's `harness` and
`reference_impl` packages by a finder of their own, not through sys.path, so
neither this environment's site-packages nor a window-harness installed over
there can shadow the other environment's packages. So the other environment
needs only (measured: `python -m venv V && V/bin/pip install duckdb==1.5.6 pyarrow`,
nothing else; numpy and cloudpickle, which pyarrow imports when present, are
not needed):

- Python >= 3.11 (the harness's requires-python);
- pyarrow >= 15 (the adapters and the Arrow IPC below);
- the engine's own Python package (duckdb, datafusion, pyspark; none for sqlite).

The protocol: a socketpair, multiprocessing's length-prefixed framing, and in
each frame a pickle (protocol 4) of a plain tuple (str, bytes, int, float,
None, lists and dicts of them). A pyarrow Table inside crosses as Arrow IPC
stream bytes (a persistent id), and the unpickler refuses every class, so two
pyarrow versions never exchange pickled objects. The child's stdout and
stderr share one pipe, never the protocol's socket; its last lines are kept
and shown when the child cannot start.
"""

from __future__ import annotations

import collections
import contextlib
import io
import os
import pickle
import socket
import subprocess
import threading
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import pyarrow as pa

from harness.core.errors import EngineUnavailable, InvalidInput
from harness.core.lifeline import Guardian, Parent, kill_group_step
from harness.engines.worker import (
    DEFAULT_TIMEOUT,
    Channel,
    Worker,
    WorkerEngine,
)

# -- another interpreter ---------------------------------------------------------------

# This checkout: the directory that holds the `harness` package, and the
# project's top-level packages in it (pyproject's packages.find).
_ROOT = Path(__file__).resolve().parent.parent.parent
_PACKAGES = ("harness", "reference_impl")
_NEEDS = "Python >= 3.11, pyarrow and the engine's own Python package (for DuckDB: `pip install duckdb pyarrow`)"
_OUTPUT_LINES = 40

# Run by the other interpreter with `-I` (no PYTHON* variables, no user site,
# not the working directory): it must say plainly when it is too old, so this
# much is written for any Python 3.
_BOOT = """\
import sys
if sys.version_info < (3, 11):
    sys.exit("window-harness needs Python 3.11 or later; this is " + sys.version.split()[0])
import importlib.machinery
ROOT, PACKAGES = sys.argv[1], sys.argv[2].split(",")
class ProjectPackages:
    @staticmethod
    def find_spec(name, path=None, target=None):
        return importlib.machinery.PathFinder.find_spec(name, [ROOT]) if name in PACKAGES else None
sys.meta_path.insert(0, ProjectPackages)
from harness.engines.remote_child import child_main
child_main(int(sys.argv[3]), sys.argv[4])
"""


class RemoteEngine(WorkerEngine):
    """A registered engine's adapter run by another Python interpreter (module docstring).

    The registry makes one subclass per spec (`duckdb[threads=1]@candidate`)
    with that spec's name, dialect, profiles and implementation, and `target`:
    the spec the child runs (`duckdb[threads=1]`). `options` go to the
    target's constructor in the child; they must be plain values.
    """

    target: str

    def __init__(self, python: str | os.PathLike[str] | None = None, timeout: float = DEFAULT_TIMEOUT,
                 **options: Any) -> None:
        if python is None:
            raise InvalidInput(f"missing for {self.name!r}, which runs in another Python environment: "
                               f"pass --engine-python {self.name}=PATH (that environment's bin/python)",
                               "--engine-python")
        super().__init__(timeout)
        # Absolute but not resolved: a virtualenv's python is a symlink, and
        # only through it does the interpreter find that environment.
        self.python = os.path.abspath(os.fspath(python))
        self.options = options
        self._child: _Child | None = None
        self._guardian: Guardian | None = None
        if not (os.path.isfile(self.python) and os.access(self.python, os.X_OK)):
            raise self._unavailable("no executable file there")

    @property
    def pid(self) -> int | None:
        """The running child's process id (None before it starts)."""
        return self._process.pid if self._process is not None else None

    def start(self) -> None:
        try:
            super().start()
        finally:  # ready (its own lifeline is up: `remote_child`), or killed already
            guardian, self._guardian = self._guardian, None
            if guardian is not None:
                guardian.release()

    def _spawn(self) -> tuple[Worker, Channel]:
        ours, theirs = socket.socketpair()
        with theirs:
            try:
                popen = subprocess.Popen(
                    [self.python, "-I", "-c", _BOOT, str(_ROOT), ",".join(_PACKAGES), str(theirs.fileno()),
                     Parent.this().as_arg()],
                    pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT, start_new_session=True, env=self._environment())
            except OSError as e:
                ours.close()
                raise self._unavailable(f"cannot start it: {e.strerror}") from None  # the path follows
        self._child = _Child(popen)
        # Until it is ready, the child has no lifeline of its own: an interpreter that
        # hangs before it runs ours would outlive a shard killed meanwhile.
        self._guardian = Guardian([kill_group_step(popen.pid, 1.0)])
        channel = ArrowChannel(Connection(ours.detach()))
        with contextlib.suppress(OSError):  # it died at once: the first receive says so
            channel.send(("start", self.target, self.options))
        return self._child, channel

    def _environment(self) -> dict[str, str] | None:
        """The child's environment variables: this process's, except that a Spark
        child starts the Spark of its own pyspark: a SPARK_HOME set for this
        environment's would launch that release's JVM under the other pyspark
        (measured: pyspark 3.5.9 with 4.3.0's SPARK_HOME cannot start)."""
        if not self.runs_on_spark or "SPARK_HOME" not in os.environ:
            return None
        return {k: v for k, v in os.environ.items() if k != "SPARK_HOME"}

    def _unavailable(self, reason: str) -> EngineUnavailable:
        output = self._child.tail() if self._child is not None else ""
        shown = f"; its output ended with:\n{output}" if output else ""
        return EngineUnavailable(self.name, f"{reason} [interpreter {self.python}; it needs {_NEEDS}]{shown}")


class _Child:
    """A subprocess as a `Worker`, its output drained into a bounded tail."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self.popen = popen
        self.pid: int | None = popen.pid
        self._lines: collections.deque[str] = collections.deque(maxlen=_OUTPUT_LINES)
        self._reader = threading.Thread(target=self._drain, name=f"output of {popen.pid}", daemon=True)
        self._reader.start()

    @property
    def exitcode(self) -> int | None:
        return self.popen.poll()

    def is_alive(self) -> bool:
        return self.popen.poll() is None

    def join(self, timeout: float | None = None) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout)

    def tail(self) -> str:
        self.join(2)
        self._reader.join(2)  # a grandchild holding the pipe open must not hang us
        return "".join(self._lines).rstrip()

    def _drain(self) -> None:
        assert self.popen.stdout is not None
        with self.popen.stdout as output:
            for line in output:
                self._lines.append(line.decode(errors="replace"))


class ArrowChannel:
    """A `Channel` over a socket whose messages are plain tuples and Arrow tables
    (see the module docstring): no class crosses, whatever either side's pyarrow."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def send(self, obj: Any) -> None:
        buffer = io.BytesIO()
        _Pickler(buffer, protocol=4).dump(obj)
        self._conn.send_bytes(buffer.getbuffer())

    def recv(self) -> Any:
        return _Unpickler(io.BytesIO(self._conn.recv_bytes())).load()

    def poll(self, timeout: float | None = 0.0) -> bool:
        return self._conn.poll(timeout)

    def close(self) -> None:
        self._conn.close()


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, pa.Table):
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, obj.schema) as writer:
                writer.write_table(obj)
            return ("arrow", sink.getvalue().to_pybytes())
        return None


class _Unpickler(pickle.Unpickler):
    def persistent_load(self, pid: Any) -> Any:
        kind, data = pid
        if kind != "arrow":
            raise pickle.UnpicklingError(f"unknown persistent id {kind!r}")
        return pa.ipc.open_stream(data).read_all()

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"a message holds a {module}.{name}; only plain values may cross")
