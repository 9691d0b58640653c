"""Session settings (SET, PRAGMA, RESET) seen in a test file: a window query
after one that may change its answer (a default null order, a time zone, an
ANSI mode) is not imported, since a case cannot carry the setting; settings
that only tune how an engine runs (threads, memory, verification, planner
switches) change no answer and are let through."""

from __future__ import annotations

import re

from harness.sql.script import strip_comments

# Settings that change how a query runs, never its answer.
_TUNING = re.compile(
    r"(enable_|disable_|verify_|debug_|threads|external_threads|memory_limit|max_memory|work_mem|"
    r"temp_directory|wal_|checkpoint|force_|explain_output|profil|jit|max_parallel|parallel_|"
    r"random_page_cost|seq_page_cost|cpu_|datafusion\.(execution|optimizer)\.|"
    r"spark\.sql\.(codegen|adaptive|shuffle)|client_min_messages|statement_timeout)", re.IGNORECASE)
_SETTING = re.compile(r"^\s*(set|pragma|reset)\s+(?:(?:session|local|global)\s+)?([\w.]+)", re.IGNORECASE)


class Settings:
    def __init__(self) -> None:
        self.changed: list[str] = []  # the settings in force that may change an answer

    def apply(self, sql: str) -> None:
        m = _SETTING.match(strip_comments(sql))
        if m is None:
            return
        verb, name = m[1].lower(), m[2].lower()
        if _TUNING.match(name):
            return
        if verb == "reset" or name == "all":
            self.changed = [s for s in self.changed if s != name] if name != "all" else []
        elif name not in self.changed:
            self.changed.append(name)
