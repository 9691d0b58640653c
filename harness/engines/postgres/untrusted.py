"""Untrusted SQL on PostgreSQL (`Engine.deny_file_access`): run as a role that
may touch no server file.

What reads or writes the server's files (`COPY ... TO/FROM 'file'` and `PROGRAM`,
`pg_read_file`, `lo_import`/`lo_export`, untrusted extensions) is reserved to
superusers and the members of pg_read_server_files, pg_write_server_files and
pg_execute_server_program. When the DSN's user is none of these (nor may make
itself one: CREATEROLE), the SQL runs as it is. Otherwise a login role of the
adapter's own is made (no superuser, no CREATEROLE, no CREATEDB, member of
nothing, allowed only into the adapter's schema) and the SQL runs on a
connection of its own as that role, so no `RESET ROLE` inside a function the
SQL creates can hand the session back to the DSN's user.
"""

from __future__ import annotations

import contextlib
import secrets
from typing import TYPE_CHECKING

from harness.engines.postgres.dialect import POSTGRES

if TYPE_CHECKING:
    import psycopg

# Whether the connected user may reach the server's files, or make itself able to.
_MAY_TOUCH_FILES = """
SELECT r.rolsuper OR r.rolcreaterole OR EXISTS (
    SELECT 1 FROM pg_roles f
    WHERE f.rolname IN ('pg_read_server_files', 'pg_write_server_files', 'pg_execute_server_program')
      AND pg_has_role(current_user, f.oid, 'MEMBER'))
FROM pg_roles r WHERE r.rolname = current_user
"""
_ROLE_OPTIONS = "LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS"


class UntrustedRole:
    """The role untrusted SQL runs as, made on first use and dropped by `drop`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._password = secrets.token_urlsafe(24)  # letters, digits, - and _: a safe literal
        self._made = False

    def login(self, admin: psycopg.Connection, dsn: str, schema: str) -> str | None:
        """The DSN the untrusted SQL connects with, given `admin` on `dsn` owning
        `schema` (quoted): None when the DSN's own user touches no file."""
        from psycopg.conninfo import make_conninfo

        if not admin.execute(_MAY_TOUCH_FILES).fetchone()[0]:
            return None
        role = POSTGRES.quote(self.name)
        if not self._made:
            admin.execute(f"CREATE ROLE {role} {_ROLE_OPTIONS} PASSWORD '{self._password}'")
            self._made = True
        admin.execute(f"GRANT USAGE, CREATE ON SCHEMA {schema} TO {role}")
        return make_conninfo(dsn, user=self.name, password=self._password)

    def drop(self, admin: psycopg.Connection, psycopg_error: type[Exception]) -> None:
        """Drop the role (its tables went with the schema); a server gone already keeps nothing to drop."""
        if self._made:
            with contextlib.suppress(psycopg_error):
                admin.execute(f"DROP ROLE IF EXISTS {POSTGRES.quote(self.name)}")
            self._made = False
