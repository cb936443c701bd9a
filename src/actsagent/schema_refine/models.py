"""Typed results of schema refinement: screened names, proposals, decisions and the refined schema."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field, field_validator

IDENT = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


class Candidate(BaseModel):
    """An identifier the screen found obscure (``column`` None: the table's own name)."""

    table: str
    column: str | None = None
    obscurity: float
    reasons: list[str] = Field(default_factory=list)


class Proposal(BaseModel):
    table: str
    column: str | None = None
    names: list[str]  # best first
    source: str  # "kb" | "llm" | "user"

    @field_validator("names")
    @classmethod
    def _plain(cls, v: list[str]) -> list[str]:
        """Only plain lower-case identifiers: a proposed name is never quoted, never SQL."""
        out = [n.strip().lower() for n in v if IDENT.match(n.strip().lower())]
        return list(dict.fromkeys(out))


class WorkloadItem(BaseModel):
    question: str = ""
    sql: str


class Decision(BaseModel):
    table: str
    column: str | None = None
    old: str
    new: str | None  # the kept name, None when rejected
    tried: list[str] = Field(default_factory=list)
    queries: int = 0  # workload queries touching the identifier
    reason: str


class TableMap(BaseModel):
    """One view of the refined schema: the base table it reads and its renamed columns (old -> new)."""

    base_schema: str = "public"
    table: str
    view: str
    columns: dict[str, str] = Field(default_factory=dict)

    def column_name(self, base: str) -> str:
        return self.columns.get(base, base)


class Refinement(BaseModel):
    """The refined schema: views over every base table, in ``schema``; base tables are never touched."""

    database: str
    schema_name: str = "refined"
    tables: list[TableMap] = Field(default_factory=list)
    decisions: list[Decision] = Field(default_factory=list)
    skipped_workload: list[str] = Field(default_factory=list)  # items the guard refused or that do not run

    def renamed(self) -> int:
        return sum(len(t.columns) + (t.view != t.table) for t in self.tables)

    def table_map(self) -> dict[str, str]:
        return {t.table.lower(): t.view for t in self.tables}

    def column_map(self) -> dict[tuple[str, str], str]:
        return {(t.table.lower(), c.lower()): new for t in self.tables for c, new in t.columns.items()}
