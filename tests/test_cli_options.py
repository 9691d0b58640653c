"""Bad option values are refused before any work, exit 2, naming the option:
every numeric option of every command (one argparse type per range, in
cli/options.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from harness.cli import options
from harness.cli.main import parser

# -- numbers ------------------------------------------------------------------------

# Every numeric option of every command, with a value out of its range; the
# completeness test below keeps this list in step with the parser.
OUT_OF_RANGE = [
    ("fuzz", "--minutes", "-1"), ("fuzz", "--minutes", "0"), ("fuzz", "--cases", "-1"),
    ("fuzz", "--seed", "-5"), ("fuzz", "--jobs", "0"), ("fuzz", "--reduce-seconds", "0"),
    ("fuzz", "--timeout", "0"), ("fuzz", "--timeout", "nan"), ("fuzz", "--metamorphic-share", "1.5"),
    ("fuzz", "--batch-size", "0"), ("fuzz", "--unbatched-share", "-0.1"), ("fuzz", "--reruns", "-1"),
    ("gate", "--budget-seconds", "-1"), ("gate", "--budget-cases", "-1"), ("gate", "--seed", "-1"),
    ("gate", "--timeout", "0"), ("gate", "--timeout", "inf"),
    ("reduce", "--seconds", "0"), ("reduce", "--seconds", "-2"),
]

POSITIONALS = {"reduce": ["case.yaml"]}


def _numeric_options() -> set[tuple[str, str]]:
    """(command, option) of every option whose value is converted by a type that is
    not a path or text: each must be one of options.NUMBER_TYPES."""
    found = set()
    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    for command, p in sub.choices.items():
        for action in p._actions:
            if action.type not in (None, str, Path):
                assert action.type in options.NUMBER_TYPES, (command, action.option_strings)
                found.add((command, action.option_strings[0]))
    return found


def test_every_numeric_option_has_a_range_and_an_out_of_range_test():
    assert _numeric_options() == {(c, o) for c, o, _ in OUT_OF_RANGE}


@pytest.mark.parametrize(("command", "option", "value"), OUT_OF_RANGE)
def test_an_out_of_range_number_exits_2_naming_the_option(capsys, command, option, value):
    with pytest.raises(SystemExit) as stop:  # refused as the options are read: no work starts
        parser().parse_args([command, *POSITIONALS.get(command, []), option, value])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}: must be " in err and repr(value) in err


@pytest.mark.parametrize(("kind", "good", "bad"), [
    (options.positive_int, ["1", "40"], ["0", "-1", "1.5", "x"]),
    (options.non_negative_int, ["0", "7"], ["-1", "2.0", ""]),
    (options.positive_float, ["0.001", "30"], ["0", "-1", "nan", "inf", "-inf"]),
    (options.non_negative_float, ["0", "2.5"], ["-0.5", "nan", "inf"]),
    (options.share, ["0", "0.5", "1"], ["-0.1", "1.01", "nan"]),
])
def test_the_number_types_accept_their_range_only(kind, good, bad):
    for text in good:
        assert kind(text) == float(text)
    for text in bad:
        with pytest.raises(argparse.ArgumentTypeError, match="must be"):
            kind(text)
