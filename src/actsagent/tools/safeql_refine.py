"""safeql_refine: the LLM-free search-based refinement engine, behind the same guard as every tool.

The engine is imported lazily (its own package); when it is not installed the tool says so
instead of failing the run. The SQL is checked against the active policy before the engine sees
it, so refinement never starts from a statement the policy forbids.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from actsagent.tools._context import ToolContext


class SafeqlRefineInput(BaseModel):
    sql: str


class SafeqlRefineOutput(BaseModel):
    status: Literal["already_ok", "refined", "gave_up", "unavailable", "rejected"]
    sql: str | None = None
    edits: list[str] = Field(default_factory=list)
    rows_preview: list[list[Any]] = Field(default_factory=list)
    columns: list[str] = Field(default_factory=list)
    message: str = ""

    def summary(self) -> str:
        if self.status == "refined":
            return f"refined to: {self.sql} (edits: {'; '.join(self.edits) or 'n/a'})"
        return f"{self.status}: {self.message or self.sql or ''}".strip()


def safeql_refine(inp: SafeqlRefineInput, ctx: ToolContext) -> SafeqlRefineOutput:
    from actsagent.guard import check_sql

    verdict = check_sql(inp.sql, ctx.db.dialect, policy=ctx.active_policy())
    if not verdict.ok:
        return SafeqlRefineOutput(status="rejected", message=f"guard: {verdict.reason}")
    try:
        from actsagent.safeql import refine
    except ImportError as e:
        return SafeqlRefineOutput(status="unavailable", message=f"SafeQL refinement is not installed ({e})")
    res = refine(ctx.db, inp.sql)
    return SafeqlRefineOutput(
        status=_field(res, "status", "gave_up"), sql=_field(res, "sql", None),
        edits=[str(e) for e in (_field(res, "edits", None) or [])],
        rows_preview=[list(r) for r in (_field(res, "rows_preview", None) or _field(res, "rows", None) or [])][:10],
        columns=[str(c) for c in (_field(res, "columns", None) or [])],
        message=str(_field(res, "message", "") or ""))


def _field(obj: Any, name: str, default: Any) -> Any:
    """Read the engine's result by name; it is a pydantic model owned by another package."""
    return getattr(obj, name, default)
