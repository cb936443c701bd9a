"""The one interface every engine implements; nothing above ``db/`` imports a driver."""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Self

from actsagent.config import Limits
from actsagent.db.catalog import ServerCatalog, catalog_query, parse_catalog
from actsagent.db.introspect import introspect
from actsagent.db.results import Column, DbError, ErrorClass, ExecResult, QueryResult
from actsagent.db.settings import SessionSettings, as_settings
from actsagent.errors import UserError
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
        self._catalog: ServerCatalog | None = None

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

    def with_settings(self, settings: SessionSettings | Mapping[str, object] | None) -> Database:
        """This database with per-caller settings applied in every transaction (PostgreSQL only)."""
        if as_settings(settings):
            raise UserError(f"per-caller settings (SET LOCAL) need PostgreSQL; {self.name} is {self.dialect}")
        return self

    def schema(self, *, refresh: bool = False) -> SchemaInfo:
        """Introspected tables, keys and value samples; cached per Database object."""
        if self._schema is None or refresh:
            self._schema = introspect(self)
        return self._schema

    def invalidate_schema(self) -> None:
        self._schema = None
        self._catalog = None

    def catalog(self) -> ServerCatalog | None:
        """Function, column and relation names the server resolves (for the guard); cached per Database object.
        None when the server refuses the query (the guard then decides without a catalog)."""
        if self._catalog is None:
            res = self.execute(catalog_query(self.dialect), max_rows=1)
            self._catalog = parse_catalog(res.rows[0]) if res.ok and res.rows else None
        return self._catalog

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.dialect} {self.name}>"


def refuse_nul(sql: str, engine: Literal["postgres", "sqlite"]) -> DbError | None:
    """The second layer for NUL bytes (the guard is the first): no driver sees SQL text holding one."""
    if "\x00" not in sql:
        return None
    return DbError(
        sql=sql.replace("\x00", "\\x00"),
        engine=engine,
        error_class=ErrorClass.SYNTAX,
        message="the SQL text contains a NUL byte (\\x00), which no SQL statement may hold",
        position=sql.index("\x00") + 1,
    )


@dataclass
class CappedRows:
    """Rows kept under a row cap and a byte cap, one at a time, and which cap cut them."""

    max_rows: int
    max_bytes: int
    rows: list[Any] = field(default_factory=list)
    truncated: Literal["rows", "bytes"] | None = None
    first_row_bytes: int | None = None  # set when the first row alone is over the byte cap
    size: int = 0

    def keep(self, row: Any) -> bool:
        """Keep ``row`` if both caps allow it; else note which cap cut the result and return False."""
        if len(self.rows) >= self.max_rows:
            self.truncated = "rows"
            return False
        n = row_bytes(row)
        if self.size + n > self.max_bytes:
            self.truncated = "bytes"
            self.first_row_bytes = n if not self.rows else None
            return False
        self.size += n
        self.rows.append(row)
        return True

    def result(self, sql: str, columns: list[Column], elapsed_ms: float, status: str) -> QueryResult:
        """The kept rows as the typed result, saying whether (and by which cap) they were cut."""
        return QueryResult(
            sql=sql,
            columns=columns,
            rows=[list(r) for r in self.rows],
            row_count=len(self.rows),
            truncated=self.truncated is not None,
            truncated_by=self.truncated,
            elapsed_ms=elapsed_ms,
            status=status,
        )

    def row_too_large(self, sql: str, engine: Literal["postgres", "sqlite"], elapsed_ms: float) -> DbError | None:
        """The typed error when the first row alone was over the byte cap (nothing could be kept)."""
        if self.first_row_bytes is None:
            return None
        mib = 1024 * 1024
        return DbError(
            sql=sql,
            engine=engine,
            error_class=ErrorClass.RESOURCE_LIMIT,
            elapsed_ms=elapsed_ms,
            message=f"one row of the result holds {self.first_row_bytes / mib:.1f} MiB, over the "
            f"{self.max_bytes / mib:g} MiB result cap",
        )


def row_bytes(row: tuple[Any, ...] | list[Any]) -> int:
    """Memory one fetched row holds in this process (the byte cap counts it): each value's size, a
    container (JSON, array) by its text."""
    return sum(len(repr(v)) if isinstance(v, list | tuple | dict) else sys.getsizeof(v) for v in row)
