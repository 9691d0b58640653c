"""Processes that do not outlive the harness process that started them.

A campaign's shards, the engines' worker processes, another Python's engine,
a throwaway PostgreSQL server and a local Spark Connect server all run
beside the command that started them. Killed by kill -9 or SIGTERM, that
command runs no `finally` and no `atexit`: without a guard its children go
on (writing findings nobody reads, then waiting forever on a dead pipe).

- A Python child calls `die_with(parent)` first thing, `parent` being what
  its parent said of itself (`Parent.this()`, passed along with the child's
  other arguments). On Linux the kernel then kills the child the moment its
  parent dies (prctl PR_SET_PDEATHSIG), even when the child is stuck in
  native code holding the GIL. Everywhere, a daemon thread also checks the
  parent every `POLL` seconds: an orphan is re-parented, so `os.getppid()`
  changes, and the thread kills the child, with its whole process group
  when it leads one (a JVM it started goes too).
- What is no Python child of ours (a server that `pg_ctl` detaches, a JVM
  in a session of its own) gets a `Guardian`: a small process that waits
  for its parent to let it go, and if the parent dies first, undoes what the
  parent set up (stops the server, removes its directory, kills a group).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

POLL = 0.5  # seconds between the watchdog thread's looks at its parent
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


@dataclass(frozen=True)
class Parent:
    """The process a child must not outlive, as the parent describes itself."""

    pid: int
    # PR_SET_PDEATHSIG fires when the *thread* that started the child exits,
    # not the process: it is set only for a child started by the main thread,
    # which lives as long as its process.
    main_thread: bool

    @classmethod
    def this(cls) -> Parent:
        """This process, as the parent of a child started now, from this thread."""
        return cls(os.getpid(), threading.current_thread() is threading.main_thread())

    def as_arg(self) -> str:
        """For a child's command line (`from_arg` reads it back)."""
        return f"{self.pid}:{int(self.main_thread)}"

    @classmethod
    def from_arg(cls, text: str) -> Parent:
        pid, main_thread = text.split(":")
        return cls(int(pid), main_thread == "1")


def die_with(parent: Parent, group: bool = False) -> None:
    """Make this process die with `parent` (see the module docstring). `group`:
    kill this process's whole group, which it must lead (after `os.setsid()`)."""
    if parent.main_thread:
        _kernel_death_signal()
    if os.getppid() != parent.pid:  # it died before the guard was up
        _die(group)
    watchdog = threading.Thread(target=_watch, args=(parent.pid, group), name="parent watchdog",
                                daemon=True)
    watchdog.start()


def _kernel_death_signal() -> None:
    if not sys.platform.startswith("linux"):
        return
    # Lazily: a Python built without ctypes (another environment's) keeps the watchdog.
    with contextlib.suppress(ImportError, OSError, AttributeError):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _watch(parent: int, group: bool) -> None:
    while os.getppid() == parent:
        time.sleep(POLL)
    _die(group)


def _die(group: bool) -> None:
    if group and os.getpgrp() == os.getpid():
        os.killpg(os.getpid(), signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)


# -- guardians ------------------------------------------------------------------------

# Run by `sys.executable -I`: it imports nothing of the harness. It holds
# no directory (a step may run as another user), ignores Ctrl-C (the
# terminal sends it to the whole foreground group: the parent decides), reads its stdin to the end (the parent holds the other end: EOF
# comes when it lets go or dies), and undoes, unless it was let go.
_GUARDIAN = """\
import json, os, shutil, signal, subprocess, sys, time
os.chdir("/")
signal.signal(signal.SIGINT, signal.SIG_IGN)
if sys.stdin.buffer.read() == b"released":
    sys.exit(0)
for kind, *args in json.loads(sys.argv[1]):
    if kind == "run":
        try:
            subprocess.run(args[0], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=args[1])
        except (OSError, subprocess.SubprocessError):
            pass
    elif kind == "remove":
        if os.path.isdir(args[0]):
            shutil.rmtree(args[0], ignore_errors=True)
        elif os.path.lexists(args[0]):
            os.remove(args[0])
    elif kind == "kill-group":
        group, grace = args
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(group, sig)
            except OSError:
                break
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline:
                try:
                    os.killpg(group, 0)
                except OSError:
                    break
                time.sleep(0.1)
"""

Step = tuple


def run_step(command: Sequence[str], timeout: float) -> Step:
    """A guardian's step: run `command` (at most `timeout` seconds)."""
    return ("run", list(command), timeout)


def remove_step(path: str | os.PathLike[str]) -> Step:
    """A guardian's step: remove the file `path`, or the directory and all it holds."""
    return ("remove", os.fspath(path))


def kill_group_step(group: int, grace: float) -> Step:
    """A guardian's step: SIGTERM the process group, SIGKILL it after `grace` seconds."""
    return ("kill-group", group, grace)


class Guardian:
    """A process that carries out `steps` (`run_step`, `remove_step`,
    `kill_group_step`, in order) if this process dies before `release()`.

    It runs in a session of its own, so a signal to this process's group
    does not take it along before it has done its work."""

    def __init__(self, steps: Sequence[Step]) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-I", "-c", _GUARDIAN, json.dumps(list(steps))],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)

    @property
    def pid(self) -> int:
        return self._process.pid

    def release(self) -> None:
        """The parent undid it all itself: the guardian exits without a step."""
        stdin = self._process.stdin
        if stdin is not None and not stdin.closed:
            with contextlib.suppress(OSError):
                stdin.write(b"released")
            with contextlib.suppress(OSError):
                stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(10)
