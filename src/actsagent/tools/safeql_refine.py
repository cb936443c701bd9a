"""safeql_refine: the LLM-free search-based refinement engine, behind the same guard as every tool.

The engine is imported lazily (its own package); when it is not installed the tool says so
instead of failing the run. The SQL is checked against the active policy before the engine sees
it, so refinement never starts from a statement the policy forbids, with one exception: a query
rejected only for an unreviewed function (SQLite's ``strftime`` on PostgreSQL) is what SafeQL's
function operator translates. The engine runs every query (the original included) through the
policy first (``refine``'s ``check`` hook), so a forbidden query never reaches the database.
Whatever the engine returns is checked again: a forbidden refinement is reported as rejected.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field

from actsagent.db import DbError
from actsagent.tools._context import ToolContext
from actsagent.tools._results import ToolOutput


class SafeqlRefineInput(BaseModel):
    sql: str


class SafeqlRefineOutput(ToolOutput):
    tool: Literal["safeql_refine"] = "safeql_refine"
    status: Literal["already_ok", "refined", "gave_up", "unavailable", "rejected"]
    sql: str | None = None
    edits: list[str] = Field(default_factory=list)
    rows_preview: list[list[Any]] = Field(default_factory=list)
    columns: list[str] = Field(default_factory=list)
    message: str = ""

    def produced_sql(self) -> str | None:
        return self.sql if self.status == "refined" and self.sql else None

    def executable_sql(self) -> str | None:
        return self.sql if self.status in ("refined", "already_ok") and self.sql else None

    def summary(self) -> str:
        if self.status == "refined":
            return f"refined to: {self.sql} (edits: {'; '.join(self.edits) or 'n/a'})"
        return f"{self.status}: {self.message or self.sql or ''}".strip()


# Guard rules whose rejection SafeQL may still repair: the function is not on the reviewed list,
# and the function operator can translate it to one that is (strftime -> to_char on PostgreSQL).
REFINABLE_REJECTIONS = frozenset({"unknown_function"})


def safeql_refine(inp: SafeqlRefineInput, ctx: ToolContext) -> SafeqlRefineOutput:
    """Refine through the active policy: SafeQL executes and returns only SQL that passed ``check_sql``."""
    from actsagent.guard import check_sql

    policy = ctx.active_policy()
    verdict = check_sql(inp.sql, ctx.db.dialect, policy=policy)
    if not verdict.ok and verdict.rule not in REFINABLE_REJECTIONS:
        return SafeqlRefineOutput(status="rejected", message=f"guard: {verdict.reason}")
    try:
        from actsagent.safeql import refine
    except ImportError as e:
        return SafeqlRefineOutput(status="unavailable", message=f"SafeQL refinement is not installed ({e})")
    # every query SafeQL would run (the original included) passes the policy first, or is not sent
    res = refine(ctx.db, inp.sql, check=_check_hook(ctx))
    out = SafeqlRefineOutput(
        status=_field(res, "status", "gave_up"),
        sql=_field(res, "sql", None),
        edits=[str(e) for e in (_field(res, "edits", None) or [])],
        rows_preview=[list(r) for r in (_field(res, "rows_preview", None) or _field(res, "rows", None) or [])][:10],
        columns=[str(c) for c in (_field(res, "columns", None) or [])],
        message=str(_field(res, "message", "") or _field(res, "why", "") or ""),
    )
    if out.status in ("refined", "already_ok") and out.sql:
        final = check_sql(out.sql, ctx.db.dialect, policy=policy)
        if not final.ok:  # whatever SafeQL did, SQL the policy forbids is not an answer
            return SafeqlRefineOutput(
                status="rejected",
                edits=out.edits,
                message=(
                    f"SafeQL's {'refinement' if out.status == 'refined' else 'query'} is forbidden by the "
                    f"policy ({final.rule}): {final.reason}; not used: {out.sql}"
                ),
            )
    return out


def _check_hook(ctx: ToolContext) -> Callable[[str], DbError | None]:
    """The policy as SafeQL's pre-execution hook: ``None`` lets ``sql`` run; a ``DbError`` is its outcome.

    A rejection for an unreviewed function comes back as an ``unknown_function`` error naming the
    function (``identifier``), so SafeQL's function operator can replace it without the query ever
    running; any other rejection is a ``guard_rejected`` error (the candidate is dead).
    """
    from actsagent.db import ErrorClass
    from actsagent.guard import check_sql
    from actsagent.guard.run import rejection_error

    policy = ctx.active_policy()

    def check(sql: str) -> DbError | None:
        verdict = check_sql(sql, ctx.db.dialect, policy=policy)
        if verdict.ok:
            return None
        err = rejection_error(verdict)
        if verdict.rule in REFINABLE_REJECTIONS:
            err = err.model_copy(update={"error_class": ErrorClass.UNKNOWN_FUNCTION})
        return err

    return check


def _field(obj: Any, name: str, default: Any) -> Any:
    """Read the engine's result by name; it is a pydantic model owned by another package."""
    return getattr(obj, name, default)
