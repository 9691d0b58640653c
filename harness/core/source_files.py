"""The one reader of the text files a user hands in as SQL: `.sql` files and
every imported test file (sqllogictest, pg_regress's `.sql` and `.out`, Spark's
`.sql` and `.sql.out`)."""

from __future__ import annotations

from pathlib import Path


def read_source(path: Path, strict: bool = False) -> str:
    """The file's text as UTF-8 without a leading byte order mark (U+FEFF, which
    editors on Windows write): left in, it would be the first statement's first
    character, and the statement, with every one the splitter reads after it,
    would fail. `strict`: bytes that are not UTF-8 raise UnicodeDecodeError
    (else each becomes U+FFFD)."""
    return path.read_text(encoding="utf-8-sig", errors="strict" if strict else "replace")
