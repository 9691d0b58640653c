"""One imported query as a case file: its tables as data, its canonical SQL,
where it came from, and the source's recorded answer as `source_answer`
(cases/README.md). The case is loaded back before it is written, so every file
written is one `window-harness run` accepts."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from harness.cases.case import case_from_doc
from harness.cases.casefile import dump_doc, table_doc
from harness.core.model import Query, With
from harness.importers.records import Answer, Record, SourceFile
from harness.sql import write


def case_document(source: SourceFile, record: Record, query: Query, tables: dict[str, pa.Table]) -> dict:
    assert record.answer is not None
    origin = f"{source.origin}:{record.line}"
    about = f": {source.description}" if source.description else ""
    answer = {"engine": source.engine, "origin": origin, "format": source.format,
              "sort": record.answer.sort or _sort(query), **record.answer.doc()}
    return {
        "description": f"imported from {origin} ({source.engine}'s {source.format} suite){about}",
        "tags": ["imported", source.format, source.engine],
        "tables": {name: table_doc(table) for name, table in tables.items()},
        "sql": write(query) + "\n",
        "source_answer": answer,
    }


def _sort(query: Query) -> str:
    """How a source without sort modes compares: in order under a top-level ORDER BY."""
    body = query.body if isinstance(query, With) else query
    return "nosort" if getattr(body, "order_by", ()) else "rowsort"


def write_case(doc: dict, path: Path) -> None:
    """Check the case loads (InvalidInput says why not), then write it atomically."""
    case_from_doc(doc, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(dump_doc(doc), encoding="utf-8")
    tmp.replace(path)


def answer_error(answer: Answer | None) -> bool:
    return answer is not None and answer.error is not None
