"""One writer per output directory: an OS lock held for the command's life.

A campaign directory (`fuzz --out`) and a gate's directory are each written
by one command at a time. The command takes an exclusive `flock` on LOCK
inside the directory before it reads or changes anything there, and holds it
until it ends. The lock belongs to the open file, not to a file on disk that
someone must remember to delete: the OS drops it when the last process
holding the file exits, however it exits (kill -9 too), so a directory is
never left locked by a command that is gone. A second command on the same
directory is refused at once (`DirectoryInUse`), not queued. Every command
that writes a directory (`run --out`, `import --out`, `fuzz`, `gate`) holds it.

A command that writes one file (`report --out`, `--report`, `reduce --out`,
`export --out`) locks that file the same way, through a hidden `.NAME.lock`
beside it, removed when the command is done (`holding_file`): two commands
writing one file would share its temporary file and could mix their text.

The shard processes of `fuzz --jobs N` write into their campaign's directory
(a finding's case file) under their parent's lock: the parent hands them the
same open file (`DirectoryLock` pickles as a descriptor passed to a spawned
child), so the directory stays locked while any of them still runs, even
when the parent was killed first.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import time
from collections.abc import Iterator
from multiprocessing import reduction
from pathlib import Path

from harness.core.errors import CannotWrite, DirectoryInUse, InvalidInput

LOCK = ".lock"


class DirectoryLock:
    """The held lock on one directory; `release` (or the process's end) drops it."""

    def __init__(self, directory: Path, fd: int) -> None:
        self.directory = directory
        self.fd: int | None = fd

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # the lock goes with the last descriptor of the open file
            self.fd = None

    def __reduce__(self):  # to a spawned shard: the same open file, so the same lock
        if self.fd is None:
            raise ValueError(f"the lock on {self.directory} is released")
        return _inherited, (self.directory, reduction.DupFd(self.fd))


def _inherited(directory: Path, fd) -> DirectoryLock:
    return DirectoryLock(directory, fd.detach())


def lock_directory(directory: Path, command: str, option: str = "--out") -> DirectoryLock:
    """Lock `directory` (created if missing) for `command`, or raise DirectoryInUse
    naming the holder; CannotWrite when the directory cannot be made."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CannotWrite(f"cannot use it as an output directory: {e.strerror}", str(directory)) from None
    return DirectoryLock(directory, _locked(directory / LOCK, directory, command, option))


@contextlib.contextmanager
def holding(directory: Path | None, command: str, option: str = "--out",
            remove: bool = False) -> Iterator[DirectoryLock | None]:
    """`lock_directory` for the block (nothing when `directory` is None). `remove`:
    the lock file goes at the end, from a directory that is not the harness's own
    (`import --out` writes cases into a corpus, where a stray `.lock` does not belong)."""
    if directory is None:
        yield None
        return
    lock = lock_directory(directory, command, option)
    try:
        yield lock
    finally:
        if remove:
            with contextlib.suppress(OSError):
                (directory / LOCK).unlink()  # before the release, as `holding_file` does
        lock.release()


@contextlib.contextmanager
def holding_file(path: Path, command: str, option: str = "--out") -> Iterator[None]:
    """The output file `path` locked for the block, through `.NAME.lock` beside it
    (removed at the end: it holds nothing once the file is written)."""
    lock_file = path.with_name(f".{path.name}.lock")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CannotWrite(f"cannot write there: {e.strerror}", str(path)) from None
    fd = _locked(lock_file, path, command, option)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            lock_file.unlink()  # before the close: a command that waits opens a new one
        os.close(fd)


def _locked(lock_file: Path, target: Path, command: str, option: str) -> int:
    """An open descriptor of `lock_file` holding its exclusive flock, the holder
    written in it; DirectoryInUse naming `target` when another process holds it."""
    while True:
        try:
            fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise CannotWrite(f"cannot use it as an output: {e.strerror}", str(target)) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 300, 0).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise DirectoryInUse(f"{target} is in use by another window-harness command ({holder}) "
                                 f"or a process it started; wait for it to end, or choose another {option}",
                                 option) from None
        if _same_file(fd, lock_file):
            break
        os.close(fd)  # its holder removed it as we opened it (`holding_file`): take the new one
    with contextlib.suppress(OSError):  # who holds it, for the message above; only a courtesy
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{command}, pid {os.getpid()}, since {time.strftime('%Y-%m-%d %H:%M:%S')}\n"
                  .encode(), 0)
    return fd


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except OSError:
        return False


def contents(directory: Path) -> list[Path]:
    """What `directory` holds besides its lock (nothing when it does not exist)."""
    if not directory.is_dir():
        return []
    return [p for p in directory.iterdir() if p.name != LOCK]


def refuse_foreign(directory: Path, marker: str, holds: str, option: str = "--out") -> None:
    """Refuse an output directory that holds something but not `marker`: it is
    someone else's, and writing there could overwrite what they recorded."""
    if directory.exists() and not directory.is_dir():
        raise InvalidInput(f"{directory} exists and is not a directory; choose another {option}", option)
    if contents(directory) and not (directory / marker).exists():
        raise InvalidInput(f"{directory} exists and does not hold {holds}; choose another {option}",
                           option)


def remove(paths: list[Path]) -> None:
    """Delete these files and directories (those that exist)."""
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
