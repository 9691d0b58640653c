"""The other interpreter's side of a `RemoteEngine` (`harness.engines.remote`):
read which engine to run, build it through the registry, then serve it.

Apart from `remote.py` because it needs the registry, and the registry
builds its labelled engines on `RemoteEngine`.
"""

from __future__ import annotations

from multiprocessing.connection import Connection

from harness.engines.registry import get_engine
from harness.engines.remote import ArrowChannel
from harness.engines.worker import serve


def child_main(fd: int) -> None:
    """The child's side: the first message says what to run, then `serve`."""
    channel = ArrowChannel(Connection(fd))
    kind, name, options = channel.recv()
    assert kind == "start", kind
    serve(channel, lambda: get_engine(name, **options))
