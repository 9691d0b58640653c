"""The loaders take any bytes: random bytes and random mutations of the corpus's
case files (and of the baseline) come out as a loaded case or as the harness's
own error (`HarnessError`: InvalidCase naming the file), never as another
exception (a traceback at the command line).

And the fast YAML reader (`harness.cases.yamldoc`) gives what PyYAML's safe
loader gives: the same tag for every scalar, the same document for every file
of the corpus and for generated documents.
"""

from __future__ import annotations

import contextlib
import math
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from harness.baseline.known import DEFAULT_PATH, load_baseline
from harness.cases import tables
from harness.cases.case import list_case, load_case
from harness.cases.yamldoc import parse_yaml, resolve_scalar
from harness.core.errors import HarnessError, InvalidCase

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted((ROOT / "cases").rglob("*.yaml"))
PROPERTY = settings(max_examples=examples(150), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Pieces a mutation drops in: YAML's own syntax, values the loaders once choked on,
# and text no YAML parser likes.
TOKENS = [
    "2024-02-30", "2024-13-01 10:00:00", "interval", "decimal(40,2)", "decimal(²,1)", "hugeint",
    str(10**38), "1" * 5000, "1e400", ".nan", "-.inf", "0x1F", "0o17", "1:30", "~", "null", "yes",
    "&a", "*a", "*b", "<<: *a", "!!binary", "!!str", "!!python/object:os.system", "!!set", "!!omap",
    "[", "]", "{", "}", "- ", ": ", "? ", "---", "...", "%YAML 1.1", "|", ">", "#", "\t", "\x00",
    "\x1b[31m", "\"", "'", "\\", "é", "\U0001f600", "\ufeff", "\r\n", "[[[[[[[[[[", "{a: 1, a: 2}",
    "SELECT", "FROM", "OVER (", "ORDER BY", "zz", "(" * 300,
]


def _load_file(content: bytes) -> None:
    """load_case and list_case of a file holding `content`: a case or a HarnessError."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "case.yaml"
        path.write_bytes(content)
        for read in (load_case, lambda p: list_case(p, "case")):
            with contextlib.suppress(HarnessError):
                read(path)


@st.composite
def _mutated(draw: st.DrawFn, texts: list[str]) -> bytes:
    """A file's text with a few edits: a span dropped, copied elsewhere, or a token
    put in its place. Shrinks towards the file itself, untouched."""
    text = draw(st.sampled_from(texts))
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 40)))
        edit = draw(st.sampled_from(["drop", "copy", "token", "text"]))
        if edit == "drop":
            text = text[:i] + text[j:]
        elif edit == "copy":
            k = draw(st.integers(0, len(text)))
            text = text[:k] + text[i:j] + text[k:]
        elif edit == "token":
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[j:]
        else:
            text = text[:i] + draw(st.text(max_size=8)) + text[i:]
    encoding = draw(st.sampled_from(["utf-8", "utf-8", "utf-8", "utf-16", "latin-1"]))
    return text.encode(encoding, errors="replace")


@PROPERTY
@given(st.binary(max_size=300))
def test_random_bytes_load_or_raise_a_harness_error(content):
    _load_file(content)


@PROPERTY
@given(_mutated([p.read_text(encoding="utf-8") for p in CORPUS]))
def test_mutated_case_files_load_or_raise_a_harness_error(content):
    _load_file(content)


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_mutated([DEFAULT_PATH.read_text(encoding="utf-8")]))
def test_mutated_baselines_load_or_raise_a_harness_error(content):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "baseline.yaml"
        path.write_bytes(content)
        with contextlib.suppress(HarnessError):
            load_baseline(path)


# -- the fast reader is PyYAML's safe loader, faster ------------------------------------


def _pyyaml_tag(value: str) -> str:
    return yaml.SafeLoader.resolve(yaml.SafeLoader(""), yaml.ScalarNode, value, (True, False))


@settings(max_examples=examples(500), deadline=None)
@given(st.one_of(st.text(st.sampled_from("0123456789+-._:eExXoObB nN~yY"), max_size=12),
                 st.from_regex(r"[-+]?[0-9]{1,5}(\.[0-9]{0,3})?([eE][-+]?[0-9]{1,2})?", fullmatch=True),
                 st.from_regex(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([ tT][0-9]{1,2}:[0-9]{2}:[0-9]{2})?",
                               fullmatch=True),
                 st.text(max_size=6)))
def test_every_scalar_gets_the_tag_pyyaml_gives_it(value):
    assert resolve_scalar(value, (True, False), None) == _pyyaml_tag(value)


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return a == b


@pytest.mark.parametrize("path", [*CORPUS, DEFAULT_PATH], ids=lambda p: p.name)
def test_every_corpus_file_reads_as_pyyaml_reads_it(path):
    text = path.read_text(encoding="utf-8")
    assert _same(parse_yaml(path.read_bytes(), str(path)), yaml.safe_load(text))


_SCALARS = st.one_of(st.integers(), st.floats(), st.text(max_size=10), st.booleans(), st.none(),
                     st.dates(), st.sampled_from(["2024-02-30", "1e3", "0x1F", "1:30", "yes", "~", "<<"]))
_DOCUMENTS = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.text(max_size=5), inner, max_size=4), max_leaves=20)


@settings(max_examples=examples(300), deadline=None)
@given(_DOCUMENTS, st.sampled_from([None, True, False]))
def test_generated_documents_read_as_pyyaml_reads_them(doc, flow):
    text = yaml.safe_dump(doc, default_flow_style=flow, allow_unicode=True)
    try:
        expected = yaml.safe_load(text)
    except ValueError:  # PyYAML's own traceback (a date it cannot build): ours is an error
        with pytest.raises(HarnessError):
            parse_yaml(text, "doc")
        return
    assert _same(parse_yaml(text, "doc"), expected)


# -- a table's rows, a chunk at a time ------------------------------------------------


CHUNKED = """\
description: rows in chunks
tables:
  t:
    columns:
      id: bigint
      f: double
      s: varchar
      d: date
      b: boolean
      n: decimal(5,2)
    rows:
ROWS
sql: SELECT id FROM t
finding: {}
"""


def _rows_case(tmp_path: Path, rows: list[str]) -> Path:
    path = tmp_path / "chunked.yaml"
    path.write_text(CHUNKED.replace("ROWS", "\n".join(f"      - [{r}]" for r in rows)), encoding="utf-8")
    return path


def test_rows_read_a_chunk_at_a_time_are_the_rows_read_at_once(tmp_path, monkeypatch):
    rows = [f"{i}, {i / 3 if i % 4 else '.nan'}, s{i}, 2024-01-{i % 28 + 1:02d}, {str(i % 2 == 0).lower()}, "
            f"{i}.5" if i % 5 else f"{i}, null, null, null, null, null" for i in range(23)]
    path = _rows_case(tmp_path, rows)
    whole = load_case(path).tables["t"]
    monkeypatch.setattr(tables, "CHUNK_ROWS", 4)
    chunked = load_case(path).tables["t"]
    assert chunked.schema == whole.schema and whole.num_rows == 23
    assert repr(chunked.to_pylist()) == repr(whole.to_pylist())  # NaN != NaN: compared as text
    assert math.isnan(whole.column("f")[4].as_py()) and whole.column("f")[5].as_py() is None


@pytest.mark.parametrize(("row", "says"), [
    ("13, 1.5, x, 2024-01-01, true, 1.555", "tables.t.rows[13][5] (n): 1.555 is not a valid DECIMAL(5,2)"),
    ("13, 1.5, x, 2024-01-01, 1, 1.5", "tables.t.rows[13][4] (b): 1 is not a valid BOOLEAN"),
    ("13, 1.5, x", "tables.t.rows[13]: must be a list of 6 values"),
    (f"{2**63}, 1.5, x, 2024-01-01, true, 1.5", f"tables.t.rows[13][0] (id): {2**63} is out of BIGINT's range"),
])
def test_an_error_in_a_later_chunk_names_its_row(tmp_path, monkeypatch, row, says):
    monkeypatch.setattr(tables, "CHUNK_ROWS", 4)
    rows = ["1, 1.5, x, 2024-01-01, true, 1.5"] * 13 + [row] + ["1, 1.5, x, 2024-01-01, true, 1.5"] * 3
    path = _rows_case(tmp_path, rows)
    with pytest.raises(InvalidCase) as raised:
        load_case(path)
    assert f"{path}: {says}" in str(raised.value)
