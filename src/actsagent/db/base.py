"""The one interface every engine implements; nothing above ``db/`` imports a driver."""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from actsagent.config import Limits
from actsagent.db.results import DbError, ErrorClass, ExecResult
from actsagent.errors import UserError

if TYPE_CHECKING:
    from actsagent.schema.model import SchemaInfo

Dialect = Literal["postgres", "sqlite"]


class Database(ABC):
    """A connection source with bounded execution and cached introspection.

    ``execute`` never raises for an error *of the statement*: it returns ``DbError``.
    It raises ``DatabaseUnavailable`` only when the database itself cannot be reached.
    """

    dialect: Dialect
    url: str
    name: str
    writable: bool = False  # True only for sandboxes

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self._schema: SchemaInfo | None = None

    @abstractmethod
    def execute(
        self,
        sql: str,
        *,
        max_rows: int | None = None,
        timeout_s: float | None = None,
        read_only: bool = True,
    ) -> ExecResult:
        """Run one statement in its own transaction (rolled back when read-only)."""

    def execute_script(self, statements: list[str], *, timeout_s: float | None = None) -> list[ExecResult]:
        """Run statements in order, committing each, stopping after the first error (sandboxes only)."""
        out: list[ExecResult] = []
        for stmt in statements:
            res = self.execute(stmt, timeout_s=timeout_s, read_only=False)
            out.append(res)
            if not res.ok:
                break
        return out

    @property
    def cache_key(self) -> str:
        """What a cache of query results may be keyed by: the URL, plus per-caller settings where they apply
        (two tenants of one database must never share cached values)."""
        return self.url

    def with_settings(self, settings: Mapping[str, object] | None) -> Database:
        """This database with per-caller settings applied in every transaction (PostgreSQL only)."""
        from actsagent.db.settings import as_settings

        if as_settings(settings):
            raise UserError(f"per-caller settings (SET LOCAL) need PostgreSQL; {self.name} is {self.dialect}")
        return self

    def schema(self, *, refresh: bool = False) -> SchemaInfo:
        """Introspected tables, keys and value samples; cached per Database object."""
        if self._schema is None or refresh:
            from actsagent.schema.introspect import introspect

            self._schema = introspect(self)
        return self._schema

    def invalidate_schema(self) -> None:
        self._schema = None

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.dialect} {self.name}>"


def refuse_nul(sql: str, engine: Literal["postgres", "sqlite"]) -> DbError | None:
    """The second layer for NUL bytes (the guard is the first): no driver sees SQL text holding one."""
    if "\x00" not in sql:
        return None
    return DbError(sql=sql.replace("\x00", "\\x00"), engine=engine, error_class=ErrorClass.SYNTAX,
                   message="the SQL text contains a NUL byte (\\x00), which no SQL statement may hold",
                   position=sql.index("\x00") + 1)


def row_bytes(row: tuple[Any, ...] | list[Any]) -> int:
    """Memory one fetched row holds in this process (the byte cap counts it): each value's size, a
    container (JSON, array) by its text."""
    return sum(len(repr(v)) if isinstance(v, list | tuple | dict) else sys.getsizeof(v) for v in row)
