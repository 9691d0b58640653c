"""The one SQL script splitter (harness.sql.script), which tables a statement
reads and writes (harness.sql.tables), and the construct a query stops the
parser at (harness.sql.constructs)."""

from __future__ import annotations

import pytest

from harness.core.errors import InvalidCase, InvalidQuery
from harness.sql import parse
from harness.sql.constructs import construct_at
from harness.sql.script import split_statements
from harness.sql.tables import tables_read, target_table

# -- cutting a script -------------------------------------------------------------------


def test_a_semicolon_in_a_dollar_quote_ends_nothing():
    text = "SELECT $$a;b$$ AS x;\nSELECT $fn$ it's $$; $fn$ AS y;\nSELECT a$b$ FROM t;"
    assert [s.text for s in split_statements(text, "f.sql")] == [
        "SELECT $$a;b$$ AS x", "SELECT $fn$ it's $$; $fn$ AS y", "SELECT a$b$ FROM t"]


def test_a_psql_meta_command_is_a_statement_of_its_own():
    text = "\\pset null '(null)'\nSELECT 1;\n  \\set x 3\nSELECT 2\n;\n"
    statements = split_statements(text, "f.sql", psql=True)
    assert [(s.text, s.meta, s.line, s.end_line) for s in statements] == [
        ("\\pset null '(null)'", True, 1, 1), ("SELECT 1", False, 2, 2),
        ("\\set x 3", True, 3, 3), ("SELECT 2", False, 4, 5)]
    # A plain .sql file has no meta-commands: the backslash is the statement's (and the parser's) error.
    assert [s.text for s in split_statements(text, "f.sql")][0] == "\\pset null '(null)'\nSELECT 1"


def test_psql_counts_parentheses_and_nests_comments():
    text = "/* a /* b; */ c; */ CREATE RULE r AS ON INSERT TO t DO ALSO (INSERT INTO u VALUES (1); " \
           "INSERT INTO u VALUES (2));\nSELECT 1;"
    assert [s.text[:11] for s in split_statements(text, "f.sql", psql=True)] == ["CREATE RULE", "SELECT 1"]


def test_the_place_of_a_statement_after_a_multi_line_comment():
    text = "SELECT 1; /* one;\n  two; 'three\n*/\n\n   -- the ranks\n   SELECT rank() OVER () AS r;"
    second = split_statements(text, "f.sql")[1]
    assert (second.line, second.column, second.comment, second.text) == (
        6, 4, "the ranks", "SELECT rank() OVER () AS r")
    assert second.at(1, 8) == (6, 11)


@pytest.mark.parametrize(("text", "where", "what"), [
    ("/* x\n*/ SELECT 1;\nSELECT\n  'a;", "f.sql:4:3", "unterminated string starting with '"),
    ("SELECT 1;\n  SELECT $q$abc;", "f.sql:2:10", "unterminated dollar-quoted string starting with $q$"),
    ("SELECT 1 /* a /* b */", "f.sql:1:10", "unterminated comment /*"),
])
def test_an_unterminated_quote_names_its_line_and_column(text, where, what):
    with pytest.raises(InvalidCase) as e:
        split_statements(text, "f.sql", psql=True)
    assert str(e.value) == f"{where}: {what}"


# -- tables --------------------------------------------------------------------------------


@pytest.mark.parametrize(("sql", "target"), [
    ("CREATE TABLE t (a int)", "t"),
    ("-- note\ncreate or replace temp table if not exists S.Emp as select 1", "emp"),
    ('INSERT INTO "Emp" VALUES (1)', "Emp"),
    ("UPDATE t SET a = 1", "t"),
    ("DELETE FROM only t", "t"),
    ("DROP TABLE IF EXISTS t", "t"),
    ("CREATE VIEW v AS SELECT 1", "v"),
    ("CREATE INDEX i ON t (a)", None),
    ("SELECT * FROM t", None),
])
def test_target_table(sql, target):
    assert target_table(sql) == target


def test_tables_read_leaves_out_with_queries_unless_a_table_has_the_name():
    query = parse("WITH w AS (SELECT a FROM t) SELECT a FROM w JOIN u ON w.a = u.a "
                  "WHERE a IN (SELECT b FROM v)")
    assert tables_read(query) == {"t", "u", "v"}
    assert tables_read(query, {"w"}) == {"t", "u", "v", "w"}


# -- constructs ----------------------------------------------------------------------------


@pytest.mark.parametrize(("sql", "construct"), [
    ("SELECT a FROM t INTERSECT SELECT 1", "INTERSECT"),
    ("SELECT DISTINCT ON (a) a FROM t", "DISTINCT ON"),
    ("SELECT a, rank() OVER (ORDER BY a)\nFROM t s1 NATURAL JOIN t s2", "NATURAL JOIN"),
    ("SELECT 1L AS x", "1L"),
    ("SELECT a FROM t UNION SELECT a FROM t", "UNION"),
    ("SELECT a FROM t WHERE a ILIKE 'x'", "ILIKE"),
    ("SELECT a FROM t JOIN u USING (a)", "USING"),
    ("SELECT a FROM (SELECT 1", "("),
])
def test_the_construct_at_the_parsers_place(sql, construct):
    with pytest.raises(InvalidQuery) as e:
        parse(sql)
    line, column = (int(x) for x in e.value.where.split(":"))
    assert construct_at(sql, line, column) == construct


def test_the_construct_where_the_lexer_stops_and_past_the_end():
    assert construct_at("SELECT `a` FROM t", 1, 8) == "`A`"
    assert construct_at("SELECT a FROM", 1, 14) == "the end of the statement"
