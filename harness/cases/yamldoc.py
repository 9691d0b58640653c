"""Read a YAML file (a case, a baseline) into Python values, strictly and fast.

Strict: a file that is not UTF-8 text, or not YAML, is refused with the
file's name; so is a mapping that gives a key twice (plain PyYAML keeps the
last value silently), with the key's path and line; and a value YAML cannot
build (an impossible date such as `2024-02-30`, an integer of more digits
than Python reads) is refused with its path and line.

Fast: libyaml's parser (when PyYAML has it) hands out events, and the values
are built straight from them, without the node graph and the per-scalar
resolver PyYAML's loader goes through (a 60 MB case: a sixth of the CPU time,
a twelfth of the memory; bench/load_speed.py). Every scalar gets the tag and
value PyYAML's safe loader gives it (the resolver's own rules, with shortcuts
for the shapes a case's rows hold: integers, decimals, dates;
tests/test_loader_properties.py holds the two to each other). What the fast
path does not build itself (a tag other than YAML's core scalar ones, a merge
key `<<`, an anchor given twice) is handed to PyYAML's safe loader, with the
same duplicate-key check.

`only` reads just some keys of the top mapping: the others are there, their
values left unbuilt (SKIPPED): listing the corpus needs each case's
description, not its rows.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Collection, Hashable
from pathlib import Path
from typing import Protocol

import yaml
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)
from yaml.nodes import MappingNode, ScalarNode

from harness.core.errors import InvalidInput

# libyaml's parser when PyYAML was built with it (`yaml.__with_libyaml__`).
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Deeper than any case or baseline needs; deeper still would recurse without end
# in the code that reads or prints the values.
MAX_DEPTH = 100

_STR, _INT, _FLOAT, _BOOL, _NULL, _TIMESTAMP = (
    f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "timestamp"))
# Shapes whose tag is known without trying the resolver's patterns in turn (the
# resolver tries float, then int, then timestamp; none of these is ambiguous).
_PLAIN_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")
_PLAIN_FLOAT = re.compile(r"[-+]?[0-9]+\.[0-9]*(?:[eE][-+][0-9]+)?\Z")
_PLAIN_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")
# The three at once (a row's cells, one match each); the group says which.
_PLAIN = re.compile(f"({_PLAIN_INT.pattern})|({_PLAIN_FLOAT.pattern})|({_PLAIN_DATE.pattern})")
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_RESOLVERS = LOADER.yaml_implicit_resolvers
_NO_KEY = object()


class _Skipped:
    def __repr__(self) -> str:
        return "<skipped>"


# The value of a key of the top mapping that `only` leaves out (PyYAML's loader,
# when the fast path hands over, builds every value).
SKIPPED = _Skipped()


class _Fallback(Exception):
    """Something the fast path leaves to PyYAML's loader."""


ErrorType = type[InvalidInput]


def read_yaml(path: Path, error: ErrorType = InvalidInput, only: Collection[str] | None = None,
              sinks: Sinks | None = None) -> object:
    """The document of the YAML file at `path`; `error` (a subclass of InvalidInput)
    names the file when it cannot be read. `only`: see the module's docstring;
    `sinks`: where some sequences' items go as they are read (see `Sinks`)."""
    where = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise error(f"cannot read: {e.strerror or e}", where) from None
    return parse_yaml(data, where, error, only, sinks)


def parse_yaml(data: bytes | str, where: str, error: ErrorType = InvalidInput,
               only: Collection[str] | None = None, sinks: Sinks | None = None) -> object:
    """The document of YAML text (bytes must be UTF-8); `where` names it in errors.
    Where the fast path hands over to PyYAML's loader, no sink is used: every
    sequence is a list."""
    if isinstance(data, bytes):
        _check_utf8(data, where, error)
    try:
        try:
            return _Builder(data, where, error, only, sinks).document()
        except _Fallback:
            return _strict_load(data, where, error)
    except yaml.YAMLError as e:
        raise error(f"not valid YAML: {e}", where) from None
    except RecursionError:
        raise error(f"nested deeper than {MAX_DEPTH} levels", where) from None


def _check_utf8(data: bytes, where: str, error: ErrorType) -> None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise error(f"not UTF-8 text: byte 0x{data[e.start]:02x} on line {line} (a binary file, "
                    "or another encoding?)", where) from None


def resolve_scalar(value: str, implicit: tuple[bool, bool], tag: str | None) -> str:
    """The tag PyYAML's safe loader gives a scalar (`implicit`, `tag`: the event's)."""
    if tag is not None and tag != "!":
        return tag
    if not implicit[0]:
        return _STR
    if _PLAIN_INT.match(value):
        return _INT
    if _PLAIN_FLOAT.match(value):
        return _FLOAT
    if _PLAIN_DATE.match(value):
        return _TIMESTAMP
    for resolved, pattern in _RESOLVERS.get(value[:1], ()):
        if pattern.match(value):
            return resolved
    return _STR


def construct_scalar(value: str, tag: str) -> object:
    """The Python value of a resolved scalar, as PyYAML's safe loader builds it.
    Raises ValueError for a value of the tag's shape that has no value (2024-02-30)."""
    if tag == _STR:
        return value
    if tag == _INT:
        return int(value) if _PLAIN_INT.match(value) else _CONSTRUCTOR.construct_yaml_int(_node(tag, value))
    if tag == _FLOAT and _PLAIN_FLOAT.match(value):
        return float(value)
    if tag == _TIMESTAMP and _PLAIN_DATE.match(value):
        return _date(value)
    if tag == _NULL:
        return None
    if tag in (_FLOAT, _BOOL, _TIMESTAMP):
        return _CONSTRUCTOR.yaml_constructors[tag](_CONSTRUCTOR, _node(tag, value))
    raise _Fallback(tag)  # merge keys, `=`, and any explicit tag: PyYAML's loader decides


def _date(value: str) -> dt.date:
    return dt.date(int(value[:4]), int(value[5:7]), int(value[8:]))


_PLAIN_BUILD: dict[int, Callable[[str], object]] = {1: int, 2: float, 3: _date}


def _node(tag: str, value: str) -> ScalarNode:
    return ScalarNode(tag, value)


class Sink(Protocol):
    """Takes the items of a sequence one at a time, as they are read, instead of a
    list holding them all; `done` gives what the document holds in its place."""

    def add(self, item: object) -> None: ...

    def done(self) -> object: ...


# Given a sequence's path of keys (a sequence directly under a mapping) and that
# mapping so far, a Sink for the sequence's items, or None for a plain list.
Sinks = Callable[[tuple[object, ...], dict], "Sink | None"]


class _Frame:
    """A sequence or mapping being built: its value, and for a mapping the key
    whose value comes next. `skip`: a value of the top mapping `only` leaves out;
    `sink`: the sequence's items go there."""

    __slots__ = ("value", "key", "skip", "sink")

    def __init__(self, value: list | dict | None, skip: bool = False, sink: Sink | None = None) -> None:
        self.value, self.key, self.skip, self.sink = value, _NO_KEY, skip, sink


class _Builder:
    def __init__(self, data: bytes | str, where: str, error: ErrorType,
                 only: Collection[str] | None, sinks: Sinks | None = None) -> None:
        self.parser = LOADER(data)
        self.where, self.error, self.only, self.sinks = where, error, only, sinks
        self.stack: list[_Frame] = []
        self.anchors: dict[str, object] = {}

    def document(self) -> object:
        try:
            self._expect(StreamStartEvent)
            if self.parser.check_event(StreamEndEvent):
                return None
            self._expect(DocumentStartEvent)
            value = self._value()
            self._expect(DocumentEndEvent)
            if not self.parser.check_event(StreamEndEvent):
                raise _Fallback("more than one document")  # PyYAML's loader says so
            return value
        finally:
            self.parser.dispose()

    def _expect(self, kind: type) -> None:
        event = self.parser.get_event()
        if not isinstance(event, kind):  # never from a parser's well-formed stream
            raise _Fallback(type(event).__name__)

    def _value(self) -> object:
        get, stack, plain = self.parser.get_event, self.stack, _PLAIN.match
        while True:
            event = get()
            kind = type(event)
            if kind is ScalarEvent:
                top = stack[-1] if stack else None
                # The bulk of a large case: a plain number or date in a row.
                if (top is not None and top.sink is None and type(top.value) is list
                        and event.tag is None and event.anchor is None and event.implicit[0]
                        and (shape := plain(event.value)) is not None):
                    try:
                        top.value.append(_PLAIN_BUILD[shape.lastindex](event.value))
                    except ValueError:
                        self._scalar(event)  # says where
                    continue
                value = self._scalar(event)
            elif kind is SequenceStartEvent or kind is MappingStartEvent:
                self._open(event, [] if kind is SequenceStartEvent else {})
                continue
            elif kind is SequenceEndEvent or kind is MappingEndEvent:
                frame = stack.pop()
                value = frame.value if frame.sink is None else frame.sink.done()
            elif kind is AliasEvent:
                if event.anchor not in self.anchors:
                    raise _Fallback(event.anchor)  # undefined, or defined in a skipped value
                value = self.anchors[event.anchor]
            else:
                raise _Fallback(kind.__name__)
            if not stack:
                return value
            self._add(value, event)

    def _scalar(self, event: ScalarEvent) -> object:
        if self.stack and self._skips(self.stack[-1]):
            return None
        value = event.value
        try:
            built = construct_scalar(value, resolve_scalar(value, event.implicit, event.tag))
        except ValueError as e:
            raise self.error(f"{_short(value)} is not a valid {_kind(event)}: {e}",
                             self._at(event)) from None
        if event.anchor is not None:
            self._anchor(event.anchor, built)
        return built

    def _open(self, event: SequenceStartEvent | MappingStartEvent, value: list | dict) -> None:
        if event.tag is not None and event.tag != "!":
            raise _Fallback(event.tag)
        if len(self.stack) >= MAX_DEPTH:
            raise self.error(f"nested deeper than {MAX_DEPTH} levels (line {event.start_mark.line + 1})",
                             self.where)
        top = self.stack[-1] if self.stack else None
        skip = top is not None and self._skips(top)
        sink = None
        if (self.sinks is not None and not skip and type(value) is list and top is not None
                and type(top.value) is dict and event.anchor is None):
            sink = self.sinks(self._keys(), top.value)
        self.stack.append(_Frame(None if skip else value, skip, sink))
        if event.anchor is not None and not skip:
            self._anchor(event.anchor, value)

    def _skips(self, top: _Frame) -> bool:
        """Whether the value that comes next in `top` is left unbuilt."""
        if top.skip:
            return True
        return (self.only is not None and top is self.stack[0] and top.key is not _NO_KEY
                and top.key not in self.only)

    def _anchor(self, name: str, value: object) -> None:
        if name in self.anchors:
            raise _Fallback(name)  # PyYAML's loader refuses it, naming both places
        self.anchors[name] = value

    def _add(self, value: object, event: object) -> None:
        frame = self.stack[-1]
        if frame.skip:
            return
        if frame.sink is not None:
            frame.sink.add(value)
        elif type(frame.value) is list:
            frame.value.append(value)
        elif frame.key is _NO_KEY:
            if not isinstance(value, Hashable) or isinstance(value, (list, dict)):
                raise self.error("a mapping's key must be a plain value, not a list or a mapping",
                                 self._at(event))
            if value in frame.value:
                raise self.error(f"duplicate key {value!r} (line {event.start_mark.line + 1}): a "
                                 "mapping gives each key once", self._path())
            frame.key = value
        else:
            frame.value[frame.key] = SKIPPED if self._skips(frame) else value
            frame.key = _NO_KEY

    def _keys(self) -> tuple[object, ...]:
        """The keys and indexes down to the value being built."""
        return tuple(len(f.value) if type(f.value) is list else f.key for f in self.stack)

    def _path(self) -> str:
        """`_keys` as the file's name and a path, for a message."""
        parts: list[str] = []
        for key in self._keys():
            if key is _NO_KEY:
                break
            parts.append(f"[{key}]" if isinstance(key, int) and not isinstance(key, bool)
                         else ("." if parts else "") + str(key))
        return f"{self.where}: {''.join(parts)}" if parts else self.where

    def _at(self, event: object) -> str:
        return f"{self._path()} (line {event.start_mark.line + 1})"


def _short(value: str, most: int = 40) -> str:
    """A scalar as an error message shows it: quoted, and cut when long."""
    return repr(value if len(value) <= most else value[:most] + "...")


def _kind(event: ScalarEvent) -> str:
    tag = resolve_scalar(event.value, event.implicit, event.tag)
    return {_INT: "integer", _FLOAT: "number", _TIMESTAMP: "date"}.get(tag, "value")


# -- PyYAML's own loader, for what the fast path leaves to it -----------------------


def _strict_load(data: bytes | str, where: str, error: ErrorType) -> object:
    loader = _StrictLoader(data)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


class _StrictLoader(LOADER):  # type: ignore[misc, valid-type]
    """PyYAML's safe loader that refuses a key given twice (a merge key's keys may
    be given again: that is what merging is for), and says where a value fails."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict:
        seen: dict[object, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if isinstance(key, Hashable) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (also on line {seen[key]}): a mapping gives "
                    "each key once", key_node.start_mark)
            if isinstance(key, Hashable):
                seen[key] = line
        return super().construct_mapping(node, deep=deep)

    def construct_object(self, node: object, deep: bool = False) -> object:
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, OverflowError) as e:
            raise yaml.constructor.ConstructorError(
                None, None, f"{_short(str(getattr(node, 'value', '')))} is not a valid value: {e}",
                node.start_mark) from None

