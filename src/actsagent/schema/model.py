"""What introspection learns about a database, as typed data."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ColumnInfo(BaseModel):
    name: str
    type: str
    nullable: bool = True
    primary_key: bool = False
    comment: str | None = None
    references: str | None = None  # "table.column" of a foreign key
    sample_values: list[str] = Field(default_factory=list)  # distinct values of low-cardinality text columns
    distinct_estimate: int | None = None


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

    def tables_with_column(self, column: str) -> list[TableInfo]:
        return [t for t in self.tables if t.column(column) is not None]

    def render(self, *, tables: list[str] | None = None, samples: bool = True) -> str:
        from actsagent.schema.render import render_schema

        return render_schema(self, tables=tables, samples=samples)
