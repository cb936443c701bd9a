"""A psycopg 3 connection that behaves like the psycopg2 connection BIRD-CRITIC's test cases were written for.

The official test cases receive ``conn`` and use it directly. The differences they can observe:
a multi-statement string exposes the result of its LAST statement (psycopg 3 positions on the
first; gold answers such as ``DROP INDEX ...; CREATE INDEX ...; SELECT ...`` would yield no rows),
parameters are bound client-side, ``with conn:`` ends the transaction but keeps the connection open,
and uuid/inet values come back as strings. The error classes a caller catches are exported under
psycopg2's names.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.types.string import TextLoader

Error = psycopg.Error
ProgrammingError = psycopg.ProgrammingError  # e.g. fetching after a statement that returned no rows
QueryCanceled = psycopg.errors.QueryCanceled  # statement_timeout


class CompatCursor(psycopg.ClientCursor):
    """Parameters bound client-side; a multi-statement string leaves the cursor on its last result."""

    def execute(self, query, params=None, **kwargs):
        super().execute(query, params, **kwargs)
        while self.nextset():
            pass
        return self


class CompatConnection:
    """psycopg 3 connection with psycopg2's observable behaviour for test code."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self._conn = conn
        conn.cursor_factory = CompatCursor
        for name in ("uuid", "inet", "cidr", "macaddr"):
            conn.adapters.register_loader(name, TextLoader)

    @classmethod
    def connect(cls, url: str, *, options: str = "") -> CompatConnection:
        return cls(psycopg.connect(url, autocommit=False, options=options))

    def cursor(self, *args: Any, **kwargs: Any):
        return self._conn.cursor(*args, **kwargs)

    def commit(self) -> None:
        self._conn.commit()

    def rollback(self) -> None:
        self._conn.rollback()

    def close(self) -> None:
        self._conn.close()

    @property
    def closed(self) -> bool:
        return self._conn.closed

    @property
    def autocommit(self) -> bool:
        return self._conn.autocommit

    @autocommit.setter
    def autocommit(self, value: bool) -> None:
        self._conn.autocommit = value

    def __enter__(self) -> CompatConnection:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self._conn.commit()
        else:
            self._conn.rollback()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)
