"""The knowledge base as typed data (Reflect-SQL's JSON form): tables, columns, relationships,
verified examples and the history of changes, so every description says where it came from."""

from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, Field

Source = Literal["template", "comment", "glossary", "llm", "manual"]
# a description from a more trusted source is never replaced by a rebuild from a less trusted one
SOURCE_RANK = {"template": 0, "comment": 1, "llm": 2, "glossary": 3, "manual": 4}


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class ColumnEntry(BaseModel):
    name: str
    type: str = ""
    description: str = ""
    source: Source = "template"
    readable: str = ""  # the name as words, abbreviations expanded
    primary_key: bool = False
    references: str | None = None  # "table.column"
    samples: list[str] = Field(default_factory=list)  # a few frequent values, shown in the context
    values: list[str] = Field(default_factory=list)  # up to VALUE_CAP frequent text values, for matching only
    value_range: tuple[str, str] | None = None  # min and max of a numeric or date column


class Relationship(BaseModel):
    columns: list[str]
    ref_table: str
    ref_columns: list[str]


class TableEntry(BaseModel):
    name: str
    description: str = ""
    source: Source = "template"
    readable: str = ""
    row_count: int | None = None
    columns: list[ColumnEntry] = Field(default_factory=list)
    relationships: list[Relationship] = Field(default_factory=list)

    def column(self, name: str) -> ColumnEntry | None:
        low = name.lower()
        return next((c for c in self.columns if c.name.lower() == low), None)


class Provenance(BaseModel):
    """Who vouches for a verified example: a person, a benchmark's gold, or an accepted agent run."""

    source: Literal["user", "benchmark", "agent"]
    verified_by: str = Field(min_length=1, max_length=200)
    reference: str = Field(default="", max_length=500)  # a thread id, a benchmark key, a ticket


class VerifiedExample(BaseModel):
    id: str
    question: str
    sql: str
    tables: list[str] = Field(default_factory=list)
    columns: list[str] = Field(default_factory=list)  # "table.column"
    provenance: Provenance
    added_at: str = Field(default_factory=now)
    row_count: int = 0
    status: Literal["active", "retracted"] = "active"
    retracted_reason: str = ""


class Change(BaseModel):
    """One change a person or the enrichment made; ``undo`` reverses the latest not yet undone."""

    at: str = Field(default_factory=now)
    kind: Literal["edit", "example_add", "example_retract"]
    target: str  # "table", "table.column" or an example id
    before: str | None = None
    before_source: Source | None = None
    after: str | None = None
    by: str = ""
    undone: bool = False


class KnowledgeBase(BaseModel):
    database: str
    dialect: str
    fingerprint: str  # of the catalog it was built from (names and types)
    built_at: str = Field(default_factory=now)
    described_by: str = "template"  # "template" or "llm:<model>"
    glossary_terms: dict[str, str] = Field(default_factory=dict)
    tables: list[TableEntry] = Field(default_factory=list)
    examples: list[VerifiedExample] = Field(default_factory=list)
    history: list[Change] = Field(default_factory=list)

    def table(self, name: str) -> TableEntry | None:
        low = name.lower()
        return next((t for t in self.tables if t.name.lower() == low), None)

    def active_examples(self) -> list[VerifiedExample]:
        return [e for e in self.examples if e.status == "active"]
