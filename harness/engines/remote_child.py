"""The other interpreter's side of a `RemoteEngine` (`harness.engines.remote`):
read which engine to run, build it through the registry, then serve it.

Apart from `remote.py` because it needs the registry, and the registry
builds its labelled engines on `RemoteEngine`.
"""

from __future__ import annotations

from multiprocessing.connection import Connection

from harness.core.lifeline import Parent, die_with
from harness.engines.registry import get_engine
from harness.engines.remote import ArrowChannel
from harness.engines.worker import serve


def child_main(fd: int, parent: str) -> None:
    """The child's side: the first message says what to run, then `serve`.
    `parent`: `Parent.as_arg()` of the process it must not outlive; the
    child leads its own process group (`start_new_session`)."""
    die_with(Parent.from_arg(parent), group=True)
    channel = ArrowChannel(Connection(fd))
    kind, name, options = channel.recv()
    assert kind == "start", kind
    serve(channel, lambda: get_engine(name, **options))
