"""What the local Spark daemons share (`standalone.LocalCluster`, `connect.LocalConnectServer`):
how a JVM daemon's process group is stopped, and what its log says."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from contextlib import AbstractContextManager
from pathlib import Path

from harness.core.errors import EngineUnavailable

STOP_GRACE = 10.0  # seconds a daemon's JVM gets to clean up after SIGTERM
LOG_TAIL = 3  # the log lines an error quotes
_STACK_FRAME = re.compile(r"at |\.\.\. \d+ more|Caused by: ")


def end_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the daemon's process group (the JVM deletes its temporary
    directories; a worker's executors and their Python workers are in the group),
    SIGKILL what lingers, and the rest of the group (while it starts,
    spark-submit's launcher JVM runs beside the script that leads the group)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        try:
            process.wait(STOP_GRACE)
            break
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def log_tail(log: Path | None, skip_info: bool = False) -> str:
    """The last lines of a daemon's log that say something: no Java stack frames
    (and no INFO lines with `skip_info`)."""
    text = log.read_text(errors="replace") if log is not None and log.exists() else ""
    lines = [line.strip() for line in text.splitlines()]
    said = [line for line in lines if line and not _STACK_FRAME.match(line)
            and not (skip_info and " INFO " in line)]
    return " | ".join(said[-LOG_TAIL:]) or "no output"


def serve(daemon: AbstractContextManager) -> None:
    """Start `daemon` (a local cluster or server whose `url` says where it is),
    print its URL on stdout and keep it up until Ctrl-C or SIGTERM, which both
    leave the `with` and so stop it; exit naming the cause when it will not start."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        with daemon as up:
            print(up.url, flush=True)
            while True:
                signal.pause()
    except EngineUnavailable as e:
        sys.exit(str(e))
    except KeyboardInterrupt:
        pass
