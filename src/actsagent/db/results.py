"""Typed outcomes of one execution: rows, or an error the agent can reason about."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field


class ErrorClass(StrEnum):
    SYNTAX = "syntax"
    UNKNOWN_RELATION = "unknown_relation"
    UNKNOWN_COLUMN = "unknown_column"
    UNKNOWN_FUNCTION = "unknown_function"
    AMBIGUOUS_COLUMN = "ambiguous_column"
    TYPE_MISMATCH = "type_mismatch"
    TIMEOUT = "timeout"
    PERMISSION_DENIED = "permission_denied"
    RESOURCE_LIMIT = "resource_limit"  # result bytes, temp files, server memory
    GUARD_REJECTED = "guard_rejected"
    OTHER = "other"


class Column(BaseModel, frozen=True):
    name: str
    type: str = ""


class QueryResult(BaseModel, frozen=True):
    """Rows of a successful statement. ``row_count`` counts the rows fetched (at most the row cap,
    fewer when the byte cap cut the result first: ``truncated_by`` says which)."""

    ok: Literal[True] = True
    sql: str
    columns: list[Column] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    row_count: int = 0
    truncated: bool = False
    truncated_by: Literal["rows", "bytes"] | None = None  # which cap cut the rows
    elapsed_ms: float = 0.0
    status: str = ""  # e.g. "SELECT 3", "INSERT 0 1"

    @property
    def empty(self) -> bool:
        return self.row_count == 0


class DbError(BaseModel, frozen=True):
    """An engine error as data: class, code, message and the offending identifier when known."""

    ok: Literal[False] = False
    sql: str
    engine: Literal["postgres", "sqlite", "guard"]
    error_class: ErrorClass
    message: str
    code: str | None = None  # SQLSTATE for PostgreSQL, extended result name for SQLite
    identifier: str | None = None
    position: int | None = None  # 1-based character offset in ``sql``
    detail: str | None = None
    hint: str | None = None
    elapsed_ms: float = 0.0

    def describe(self) -> str:
        """One line an LLM or a person can act on."""
        parts = [f"{self.error_class.value}: {self.message}"]
        if self.identifier:
            parts.append(f"(identifier: {self.identifier})")
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return " ".join(parts)


ExecResult = QueryResult | DbError
