"""The one interface every engine implements; nothing above ``db/`` imports a driver."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Literal

from actsagent.config import Limits
from actsagent.db.results import ExecResult

if TYPE_CHECKING:
    from actsagent.db.catalog import ServerCatalog
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

    def schema(self, *, refresh: bool = False) -> SchemaInfo:
        """Introspected tables, keys and value samples; cached per Database object."""
        if self._schema is None or refresh:
            from actsagent.schema.introspect import introspect

            self._schema = introspect(self)
        return self._schema

    def invalidate_schema(self) -> None:
        self._schema = None
        self._catalog = None

    def catalog(self) -> ServerCatalog | None:
        """Function, column and relation names the server resolves (for the guard); cached per Database object."""
        if getattr(self, "_catalog", None) is None:
            from actsagent.db.catalog import fetch_catalog

            self._catalog = fetch_catalog(self)
        return self._catalog

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.dialect} {self.name}>"
