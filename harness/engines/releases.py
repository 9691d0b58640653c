"""An engine's releases, from the package registry, each in a virtualenv of its own.

`releases(engine)` lists the releases of the engine's Python package (duckdb,
datafusion, pyspark) as pip's configured index has them (`pip index
versions`), oldest first; `environment(engine, version)` is the Python of a
cached virtualenv holding that release and pyarrow, made on first use
(`python -m venv` + `pip install PACKAGE==VERSION pyarrow`), for a labelled
engine to run (`--engine-python duckdb@1.2.0=PATH`, `harness.engines.remote`).

The cache is $WINDOW_HARNESS_ENV_CACHE, else
${XDG_CACHE_HOME:-~/.cache}/window-harness/envs, one directory per release:
`duckdb-1.0.0/`, `datafusion-50.0.0/`, `pyspark-3.5.9/`. A release is ready
when its environment's site-packages hold the package's dist-info of that
version and pyarrow's, so environments made by hand the same way are used as
they are. One is built under a lock file (`duckdb-1.0.0.lock`, flock) in a
directory beside it and renamed into place when pip has finished, so two
commands asking at once build it once, and a build cut short never looks
ready. pip's output goes to `duckdb-1.0.0.log`.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from harness.core.errors import EngineUnavailable, InvalidInput
from harness.core.versions import parse_version

ENV_CACHE = "WINDOW_HARNESS_ENV_CACHE"

# Engine -> its Python package, and what its environment needs besides
# (pyspark's Arrow path needs pandas and numpy).
PACKAGES: dict[str, str] = {"duckdb": "duckdb", "datafusion": "datafusion", "spark": "pyspark"}
_ALSO: dict[str, tuple[str, ...]] = {"spark": ("pyarrow", "pandas", "numpy")}
_DEFAULT_ALSO = ("pyarrow",)

_AVAILABLE = re.compile(r"^Available versions:\s*(.*)$", re.MULTILINE)
_TAIL_LINES = 15

Say = Callable[[str], None]


def _stderr(line: str) -> None:
    print(f"window-harness: {line}", file=sys.stderr, flush=True)


def package_of(engine: str, where: str = "--engine") -> str:
    """The Python package of `engine`; InvalidInput naming `where` for an engine
    that has none to install (sqlite is Python's own, postgres a server)."""
    if engine not in PACKAGES:
        raise InvalidInput(f"{engine!r} has no releases to install (engines with releases: "
                           f"{', '.join(PACKAGES)})", where)
    return PACKAGES[engine]


def release_key(version: str) -> tuple:
    """The order of releases: by release numbers, then the text (a pre-release's
    suffix; pip lists none unless asked)."""
    numbers = parse_version(version) or ()
    return (numbers + (0,) * (8 - len(numbers)), version)


def parse_pip_versions(output: str) -> list[str]:
    """The releases of `pip index versions` output, oldest first."""
    found = _AVAILABLE.search(output)
    if found is None:
        return []
    return sorted({v.strip() for v in found.group(1).split(",") if v.strip()}, key=release_key)


@functools.cache
def releases(engine: str) -> tuple[str, ...]:
    """The releases of `engine`'s package on pip's configured index, oldest first.
    EngineUnavailable when the index cannot be asked."""
    package = package_of(engine)
    command = [sys.executable, "-m", "pip", "index", "versions", package,
               "--disable-pip-version-check"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise EngineUnavailable(engine, f"cannot list the releases of {package}: {e}") from None
    found = parse_pip_versions(done.stdout)
    if done.returncode != 0 or not found:
        tail = _tail(done.stdout + done.stderr)
        raise EngineUnavailable(engine, f"cannot list the releases of {package} "
                                f"(pip index versions {package} exit {done.returncode}): {tail}")
    return tuple(found)


# -- environments ----------------------------------------------------------------------


def env_cache() -> Path:
    """Where the environments are (the module docstring)."""
    own = os.environ.get(ENV_CACHE)
    if own:
        return Path(own).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "window-harness" / "envs"


def env_dir(engine: str, version: str) -> Path:
    return env_cache() / f"{package_of(engine)}-{version}"


def python_of(env: Path) -> Path:
    return env / "bin" / "python"


def is_ready(env: Path, engine: str, version: str) -> bool:
    """Whether `env` holds `engine`'s package at `version` and what else it needs."""
    if not python_of(env).exists():
        return False
    sites = list(env.glob("lib/python*/site-packages"))
    wanted = [(package_of(engine), version)] + [(p, None) for p in _ALSO.get(engine, _DEFAULT_ALSO)]
    return all(any(_has_dist(site, name, v) for site in sites) for name, v in wanted)


def _has_dist(site: Path, name: str, version: str | None) -> bool:
    pattern = f"{name}-{version}.dist-info" if version else f"{name}-*.dist-info"
    return any(site.glob(pattern))


def environment(engine: str, version: str, say: Say = _stderr) -> Path:
    """The Python of the cached environment of `engine` at `version`, made first
    when there is none (progress lines through `say`, stderr by default).
    EngineUnavailable naming the engine and version when it cannot be made."""
    env = env_dir(engine, version)
    if is_ready(env, engine, version):
        return python_of(env)
    env.parent.mkdir(parents=True, exist_ok=True)
    with _locked(env.with_name(env.name + ".lock")):
        if is_ready(env, engine, version):  # another command made it while we waited
            return python_of(env)
        _build(engine, version, env, say)
    return python_of(env)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build(engine: str, version: str, env: Path, say: Say) -> None:
    """Make the environment beside `env` and rename it into place (under the lock)."""
    package = package_of(engine)
    spec = [f"{package}=={version}", *_ALSO.get(engine, _DEFAULT_ALSO)]
    partial = env.with_name(env.name + ".partial")
    log = env.with_name(env.name + ".log")
    shutil.rmtree(partial, ignore_errors=True)  # a build cut short, under this same lock
    t0 = time.monotonic()
    say(f"installing {engine} {version} into {env} (python -m venv; pip install {' '.join(spec)})")
    steps = [
        ("making the virtualenv", [sys.executable, "-m", "venv", str(partial)]),
        (f"pip install {' '.join(spec)}", [str(python_of(partial)), "-m", "pip", "install",
                                           "--disable-pip-version-check", *spec]),
    ]
    with open(log, "w") as out:
        for what, command in steps:
            say(f"  {engine} {version}: {what}")
            out.write(f"$ {' '.join(command)}\n")
            out.flush()
            done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            if done.returncode != 0:
                shutil.rmtree(partial, ignore_errors=True)
                raise EngineUnavailable(f"{engine}@{version}", f"cannot install {package} {version}: "
                                        f"{what} failed (exit {done.returncode}); its output ended "
                                        f"with:\n{_tail(log.read_text(errors='replace'))}\n(all of it: {log})")
    if env.exists():  # a directory without the release (a failed hand-made one): replaced
        shutil.rmtree(env)
    os.replace(partial, env)
    if not is_ready(env, engine, version):
        raise EngineUnavailable(f"{engine}@{version}", f"pip installed {' '.join(spec)} into {env}, "
                                f"but {package}-{version}.dist-info is not there (see {log})")
    say(f"  {engine} {version}: ready in {time.monotonic() - t0:.0f} s")


def _tail(text: str) -> str:
    return "\n".join(text.strip().splitlines()[-_TAIL_LINES:])
