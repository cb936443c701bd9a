"""What an integration serves: one database behind the strict guard, and optionally a model.

The MCP server and the LangChain tools call the agent's own typed tools through this, so every
statement a client sends is checked by the read-only guard first. Each call gets a fresh
``ToolContext``: the tools' result cache is per run, and a long-lived server must not answer a
query with rows read before the data changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from actsagent.db import Database, DbError, QueryResult
from actsagent.schema.model import SchemaInfo
from actsagent.tools import TOOLS, ToolContext, ToolInputError

SAMPLE_ROWS = 20


class SchemaRequest(BaseModel):
    """Arguments of the schema listing tool."""

    tables: list[str] = Field(default_factory=list, description="table names to list (default: every table)")


@dataclass
class Workspace:
    db: Database
    model: Any = None  # a ChatModel, or None: the agent takes its LLM-free path
    max_rows: int = 50

    def context(self) -> ToolContext:
        from actsagent.guard import Policy

        return ToolContext(
            db=self.db, policy=Policy.strict(max_rows=self.max_rows), model=self.model, max_rows=self.max_rows
        )

    def call(self, tool: str, inp: BaseModel) -> BaseModel:
        """Run one of the agent's tools (``actsagent.tools.TOOLS``) under the strict guard."""
        return TOOLS[tool].fn(inp, self.context())

    def schema(self, tables: list[str] | None = None) -> SchemaInfo:
        """The introspected schema, narrowed to ``tables``; an unknown name is a ToolInputError."""
        info = self.db.schema()
        if not tables:
            return info
        found = [info.table(t) for t in tables]
        missing = [t for t, f in zip(tables, found) if f is None]
        if missing:
            raise ToolInputError(
                f"unknown table(s): {', '.join(missing)}; known: {', '.join(t.name for t in info.tables)}"
            )
        keep = {f.name for f in found if f is not None}
        return info.model_copy(update={"tables": [t for t in info.tables if t.name in keep]})

    def render_schema(self, tables: list[str] | None = None) -> str:
        return self.schema(tables).render()

    def sample(self, table: str, rows: int = SAMPLE_ROWS) -> QueryResult | DbError:
        """The first rows of a known table, read through the guard (the name is looked up, never spliced)."""
        import sqlglot

        info = self.schema([table]).tables[0]
        name = sqlglot.exp.table_(info.name, db=info.schema_name, quoted=True).sql(dialect=self.db.dialect)
        from actsagent.guard import Policy, run_guarded

        return run_guarded(self.db, f"SELECT * FROM {name}", policy=Policy.strict(max_rows=rows))
