"""What introspection learns about a database, as typed data, and its compact, commented listing for prompts."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, Field
from sqlglot import exp


class ColumnInfo(BaseModel):
    name: str
    type: str
    nullable: bool = True
    primary_key: bool = False
    comment: str | None = None
    references: str | None = None  # "table.column" of a foreign key
    sample_values: list[str] = Field(default_factory=list)  # distinct values of low-cardinality text columns
    distinct_estimate: int | None = None

    def sql_name(self, dialect: str) -> str:
        """The column as SQL names it: quoted."""
        return exp.to_identifier(self.name, quoted=True).sql(dialect)


class ForeignKey(BaseModel):
    columns: list[str]
    ref_table: str
    ref_columns: list[str]


class TableInfo(BaseModel):
    name: str
    schema_name: str | None = None
    comment: str | None = None
    row_estimate: int | None = None
    columns: list[ColumnInfo] = Field(default_factory=list)
    primary_key: list[str] = Field(default_factory=list)
    foreign_keys: list[ForeignKey] = Field(default_factory=list)

    @property
    def qualified(self) -> str:
        return f"{self.schema_name}.{self.name}" if self.schema_name and self.schema_name != "public" else self.name

    def sql_name(self, dialect: str) -> str:
        """The table as SQL names it: quoted, and schema-qualified when it has a schema."""
        return exp.table_(self.name, db=self.schema_name, quoted=True).sql(dialect)

    def column(self, name: str) -> ColumnInfo | None:
        low = name.lower()
        return next((c for c in self.columns if c.name.lower() == low), None)


class SchemaInfo(BaseModel):
    dialect: str
    database: str
    tables: list[TableInfo] = Field(default_factory=list)
    reserved_words: list[str] = Field(default_factory=list)  # names that must be quoted (the engine's own list)

    def table(self, name: str) -> TableInfo | None:
        low = name.lower().split(".")[-1]
        return next((t for t in self.tables if t.name.lower() == low), None)

    def render(self, *, tables: list[str] | None = None, samples: bool = True) -> str:
        return render_schema(self, tables=tables, samples=samples)


def _render_table(t: TableInfo, samples: bool, _quote: Callable[[str], str]) -> str:
    head = "Table " + (_quote(t.name) if t.qualified == t.name else f"{t.schema_name}.{_quote(t.name)}")
    notes = []
    if t.comment:
        notes.append(t.comment)
    if t.row_estimate is not None and t.row_estimate >= 0:
        notes.append(f"~{t.row_estimate} rows")
    if notes:
        head += " -- " + "; ".join(notes)
    lines = [head]
    width = max((len(_quote(c.name)) for c in t.columns), default=0)
    twidth = max((len(c.type) for c in t.columns), default=0)
    for c in t.columns:
        tags = []
        if c.primary_key:
            tags.append("PK")
        if c.references:
            tags.append(f"FK -> {c.references}")
        if not c.nullable and not c.primary_key:
            tags.append("NOT NULL")
        comment = []
        if c.comment:
            comment.append(c.comment)
        if samples and c.sample_values:
            shown = ", ".join(repr(v) if len(v) < 40 else repr(v[:37] + "...") for v in c.sample_values[:8])
            more = "" if len(c.sample_values) <= 8 else ", ..."
            comment.append(f"values: {shown}{more}")
        line = f"  {_quote(c.name):<{width}}  {c.type:<{twidth}}"
        if tags:
            line += "  " + " ".join(tags)
        if comment:
            line += "  -- " + "; ".join(comment)
        lines.append(line.rstrip())
    return "\n".join(lines)


def render_schema(schema: SchemaInfo, *, tables: list[str] | None = None, samples: bool = True) -> str:
    """The compact, commented listing the safety note recommends for prompts: every table, or ``tables``."""
    wanted = {t.lower() for t in tables} if tables else None
    reserved = frozenset(w.upper() for w in schema.reserved_words)

    def quote(name: str) -> str:  # names the engine reserves (``order``) or folds are shown quoted
        plain = name.isidentifier() and name == name.lower() and name.upper() not in reserved
        return name if plain else exp.to_identifier(name, quoted=True).sql(schema.dialect)

    return "\n\n".join(
        _render_table(t, samples, quote) for t in schema.tables if wanted is None or t.name.lower() in wanted
    )
