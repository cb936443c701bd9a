"""A database as one question's prompts should see it: only the knowledge base's context.

The agent renders ``db.schema()`` into every prompt (``tools._schema_context``). Until the
prompts take a ``SchemaContext`` directly, wrapping the database is how a caller (the ask
benchmark) gives the agent the retrieved tables and columns, with the knowledge base's notes
as column comments. Statements still run on the real database.
"""

from __future__ import annotations

import hashlib

from actsagent.db.base import Database
from actsagent.db.results import ExecResult
from actsagent.kb.models import KnowledgeBase
from actsagent.kb.retrieve import SchemaContext, column_note, table_note
from actsagent.schema.model import SchemaInfo


def scoped_schema(info: SchemaInfo, ctx: SchemaContext, kb: KnowledgeBase) -> SchemaInfo:
    """``info`` cut to the context's tables and columns; notes from the knowledge base as comments."""
    shown = {c.lower() for c in ctx.columns}
    tables = []
    for t in info.tables:
        if not ctx.contains(t.name):
            continue
        entry = kb.table(t.name)
        cols = []
        for c in t.columns:
            if f"{t.name}.{c.name}".lower() not in shown:
                continue
            ce = entry.column(c.name) if entry is not None else None
            note = column_note(ce) if ce is not None else ""
            cols.append(
                c.model_copy(update={"comment": note or c.comment, "sample_values": [] if note else c.sample_values})
            )
        note = table_note(entry) if entry is not None else ""
        tables.append(t.model_copy(update={"columns": cols, "comment": note or t.comment}))
    return info.model_copy(update={"tables": tables})


class KbScopedDatabase(Database):
    """Delegates execution to ``inner``; ``schema()`` is the scoped catalog. The URL differs per
    context so caches keyed by URL (SafeQL's catalog) never mix two questions' scopes."""

    def __init__(self, inner: Database, ctx: SchemaContext, kb: KnowledgeBase) -> None:
        super().__init__(inner.limits)
        self.inner = inner
        self.dialect = inner.dialect
        self.name = inner.name
        self.writable = inner.writable
        key = hashlib.sha1(ctx.text.encode()).hexdigest()[:12]
        self.url = f"{inner.url}#kb-{key}"
        self._schema = scoped_schema(inner.schema(), ctx, kb)

    def execute(
        self, sql: str, *, max_rows: int | None = None, timeout_s: float | None = None, read_only: bool = True
    ) -> ExecResult:
        return self.inner.execute(sql, max_rows=max_rows, timeout_s=timeout_s, read_only=read_only)

    def schema(self, *, refresh: bool = False) -> SchemaInfo:
        assert self._schema is not None
        return self._schema

    def close(self) -> None:
        """The inner database belongs to the caller."""
