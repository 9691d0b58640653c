"""Secrets out of everything the harness prints or writes.

A PostgreSQL DSN (`--postgres-dsn`) may hold a password, a Spark Connect URL
(`--spark-remote sc://HOST:PORT/;token=...`) a token. Commands to rerun, JUnit,
JSON, HTML, logs and error messages show where a server is, never its secret:
`redact` is the one function that hides it, in each of the forms libpq and
Spark Connect accept:

- URL user info: `postgresql://user:PASSWORD@host/db` -> `postgresql://user:***@host/db`;
- key/value words: `host=h password=PASSWORD` or `password='a b'` (libpq's quoted
  form) -> `password=***`;
- URL parameters: `?password=PASSWORD&...`, `;token=TOKEN;...` -> `password=***`.

It works on any text, so a secret stays hidden inside a longer message or a
command line; text holding none comes back unchanged.
"""

from __future__ import annotations

import re

MASK = "***"

# The keys whose value is a secret: libpq's password and sslpassword, Spark
# Connect's token, and the usual names of credentials in URL parameters.
_KEYS = r"(?:ssl)?password|passwd|pwd|token|access_token|secret|api_key|apikey"

# `scheme://user:SECRET@`: the password part of a URL's user info.
_USERINFO = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/@:]*:)(?P<secret>[^\s/@]*)(?=@)")

# `key=SECRET` or `key = 'SECRET'`, as a libpq word or a URL parameter; the value
# ends at white space, a quote, `&` or `;` (a quoted value at its closing quote).
_KEYED = re.compile(rf"(?P<head>(?<![A-Za-z0-9_])(?:{_KEYS})\s*=\s*)"
                    r"(?P<secret>'(?:[^'\\]|\\.)*'?|[^\s&;'\"]+)", re.IGNORECASE)


def redact(text: str) -> str:
    """`text` with every password or token in it replaced by `***` (see the module)."""
    if "=" not in text and "@" not in text:  # the common case: nothing to look at
        return text
    text = _USERINFO.sub(lambda m: m["head"] + MASK, text)
    return _KEYED.sub(lambda m: m["head"] + MASK, text)


def redact_words(words: list[str] | tuple[str, ...]) -> list[str]:
    """Each word of a command line redacted: the options of a command to rerun."""
    return [redact(word) for word in words]
