"""The one error hierarchy of the harness.

Native engine exceptions are translated into these once, in the engine
adapter; everything downstream (verdicts, findings, exit codes) speaks only
these types.
"""

from __future__ import annotations


class HarnessError(Exception):
    """Base of every error the harness raises on purpose."""

    def __reduce__(self) -> tuple:
        # Rebuilt as it is (class, message, attributes), whatever its constructor
        # takes: a campaign's shard process sends its errors to the parent.
        return _rebuilt, (type(self), self.args, dict(self.__dict__))


def _rebuilt(cls: type[HarnessError], args: tuple, state: dict) -> HarnessError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class InvalidInput(HarnessError):
    """Bad input from a user: a case file, a query, a command-line value.

    `where` names the file, field or option so the message can point at it.
    """

    def __init__(self, message: str, where: str | None = None) -> None:
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class InvalidCase(InvalidInput):
    """A malformed case file."""


class InvalidQuery(InvalidInput):
    """SQL text the canonical parser cannot read, or a model that is not valid."""


class NestedTooDeeply(InvalidQuery):
    """SQL, or a model built in code, nested deeper than the harness reads
    (`harness.core.depth`): refused as input, before anything recursive over the
    model (the writer, the reference, the instrumenter) could overflow the stack."""

    def __init__(self, limit: int, where: str | None = None) -> None:
        self.limit = limit
        super().__init__(f"nested too deeply (limit {limit})", where)


class DirectoryInUse(InvalidInput):
    """An output directory another command is writing (it holds the directory's lock)."""


class CannotWrite(InvalidInput):
    """An output the harness cannot write: an unwritable path, a full disk.

    `where` names the path; `reason` says what went wrong (what the OS said).
    """

    def __init__(self, reason: str, where: str) -> None:
        self.reason = reason
        super().__init__(reason, where)

    @classmethod
    def from_os(cls, error: OSError, where: object) -> CannotWrite:
        """The OS's refusal to write `where`, in the OS's words."""
        return cls(f"cannot write: {error.strerror}", str(where))


class Unsupported(HarnessError):
    """A feature that a dialect or engine does not offer.

    Raised by a dialect when it cannot express a clause (nothing is ever
    dropped), or by an engine adapter when the engine rejects a feature that
    its dialect declares missing. The verdict is `unsupported`.
    """

    def __init__(self, feature: str, detail: str = "") -> None:
        self.feature = feature
        self.detail = detail
        super().__init__(f"unsupported: {feature}" + (f" ({detail})" if detail else ""))


class EngineError(HarnessError):
    """The engine rejected or failed a query it should have run."""

    def __init__(self, engine: str, message: str) -> None:
        self.engine = engine
        self.message = message
        super().__init__(f"{engine}: {message}")


class EngineCrash(EngineError):
    """The engine's process died while running a query."""


class EngineTimeout(EngineError):
    """The engine did not answer within the time limit."""


class FileAccessDenied(EngineError):
    """The engine refused a statement because file access is off: untrusted SQL
    (an imported test file's setup) runs on a connection that may read and write
    no file, attach no database and load no extension (`Engine.deny_file_access`)."""


class EngineUnavailable(HarnessError):
    """An engine that was asked for cannot be started (not installed, no Java...)."""

    def __init__(self, engine: str, reason: str) -> None:
        self.engine = engine
        self.reason = reason  # what a wrapper passes on: the message without the engine's name
        super().__init__(f"engine {engine!r} is not available: {reason}")


class ReferenceGap(HarnessError):
    """The reference implementation cannot evaluate a query (a gap in the oracle)."""


class ReferenceTimeout(ReferenceGap):
    """The reference did not finish within the time limit (--timeout, as for engines)."""


class EvaluationError(HarnessError):
    """A query that is invalid by definition (e.g. ntile(0)); engines should reject it too."""
