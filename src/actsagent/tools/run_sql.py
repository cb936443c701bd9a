"""run_sql: guarded execution of one statement or a statement list, rows capped.

Every statement the agent sends goes through ``actsagent.guard.run_guarded`` with the active
policy, so a forbidden statement comes back as a ``guard_rejected`` error and never reaches the
database. Under a write-permitting policy, a list that changes data runs in a disposable copy of
the database (when the engine supports one), so trying candidates never alters the task database.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator

from actsagent.db import DbError, QueryResult
from actsagent.tools._context import ToolContext
from actsagent.tools._results import ExecSummary, ToolOutput
from actsagent.tools._sqltext import is_read


class RunSqlInput(BaseModel):
    sql: str | list[str]
    max_rows: int = Field(default=20, gt=0, le=1000)
    isolate: bool = True  # run writing lists in a throwaway copy (sandbox policy only)

    @field_validator("sql")
    @classmethod
    def _non_empty(cls, v: str | list[str]) -> str | list[str]:
        stmts = [v] if isinstance(v, str) else v
        if not stmts or not all(s.strip() for s in stmts):
            raise ValueError("sql must be a non-empty statement or list of statements")
        return v


class RunSqlOutput(ToolOutput):
    tool: Literal["run_sql"] = "run_sql"
    ok: bool
    statements: list[ExecSummary]
    isolated: bool = False

    @property
    def last(self) -> ExecSummary:
        return self.statements[-1]

    @property
    def error(self) -> DbError | None:
        return next((s.error for s in self.statements if s.error is not None), None)

    def executed(self) -> list[ExecSummary]:
        return self.statements

    def summary(self) -> str:
        if len(self.statements) == 1:
            return self.last.describe()
        parts = [f"[{i + 1}] {s.describe()}" for i, s in enumerate(self.statements)]
        return "\n".join(parts)


def execute_statements(
    ctx: ToolContext, statements: list[str], *, isolate: bool = True
) -> tuple[list[QueryResult | DbError], bool]:
    """Run statements in order through the guard, stopping at the first error."""
    from actsagent.guard import run_guarded

    policy = ctx.active_policy()
    writes = not policy.read_only and any(not is_read(s, ctx.db.dialect) for s in statements)
    isolated = writes and isolate and ctx.db.dialect == "postgres" and getattr(ctx.db, "writable", False)
    # Within one run the data only changes through isolated copies, so equal statements give equal
    # results: the plan's first look, a run_sql node and the final result share one execution.
    key = (policy.name, tuple(s.strip().rstrip(";").strip() for s in statements))
    if (isolated or not writes) and key in ctx.exec_cache:
        return ctx.exec_cache[key]
    if isolated:
        out = (_run_isolated(ctx, statements, policy, run_guarded), True)
    else:
        out = (_run_all(ctx.db, statements, policy, run_guarded), False)
    if isolated or not writes:
        ctx.exec_cache[key] = out
    return out


def _run_isolated(ctx: ToolContext, statements: list[str], policy, run_guarded) -> list[QueryResult | DbError]:
    from actsagent.db.postgres import PostgresDatabase
    from actsagent.db.sandbox import sandbox

    if not isinstance(ctx.db, PostgresDatabase):
        raise TypeError(f"an isolated run copies a PostgreSQL database, not {ctx.db!r}")
    with sandbox(ctx.db, limits=ctx.db.limits) as copy:
        return _run_all(copy, statements, policy, run_guarded)


def _run_all(db, statements, policy, run_guarded) -> list[QueryResult | DbError]:
    out: list[QueryResult | DbError] = []
    for s in statements:
        res = run_guarded(db, s, policy=policy)
        out.append(res)
        if not res.ok:
            break
    return out


def run_sql(inp: RunSqlInput, ctx: ToolContext) -> RunSqlOutput:
    statements = [inp.sql] if isinstance(inp.sql, str) else list(inp.sql)
    results, isolated = execute_statements(ctx, statements, isolate=inp.isolate)
    summaries = [ExecSummary.of(r, max_rows=inp.max_rows) for r in results]
    return RunSqlOutput(
        ok=all(s.ok for s in summaries) and len(summaries) == len(statements), statements=summaries, isolated=isolated
    )
