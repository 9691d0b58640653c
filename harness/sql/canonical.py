"""The canonical dialect: standard SQL as PostgreSQL reads it, every feature on.

Case files are written and stored in it; `harness.sql.parse` reads it back.
"""

from __future__ import annotations

from harness.core.dialect import Dialect

CANONICAL = Dialect(name="canonical")
